"""Several trained caption decoders decoded as one, inside the one beam search.

    ensemble = CaptionDecoderEnsemble([captioner_a.decoder, captioner_b.decoder])
    captioner = ImageCaptioner(captioner_a.backbone, ensemble, captioner_a.vocabulary)   # one .keras file

The members are `CaptionDecoderModel`s trained on the same backbone's features with the same
vocabulary (two seeds, say, each with its own self-critical phase). Each projects the annotations
with its own projection and runs its own recurrence; at every step of the search their
next-token distributions are combined (`captioner.decoding.ensemble`: a product of experts by
default), and the attention shown is their mean (they attend over the same grid). It stands
wherever an `ImageCaptioner` holds its decoder: `caption`, the batch CLI, the app, `captioner
export` and the server decode it as they decode a single decoder. It is not trained as a whole:
train each member, then join them (``captioner model ensemble``).
"""

import keras

from captioner.decoding import Generator
from captioner.decoding.ensemble import COMBINES, EnsembleDecoder
from captioner.models.caption_decoder_model import CaptionDecoderModel, CaptionSearchMixin
from captioner.models.ensemble_members import check_members
from captioner.models.pixel_model import deserialize
from captioner.text.vocabulary import PAD_ID, START_ID, UNK_ID


@keras.saving.register_keras_serializable(package="captioner")
class CaptionDecoderEnsemble(CaptionSearchMixin, keras.Model):
    """members: `CaptionDecoderModel`s (or their serialized configs) of one vocabulary size,
    annotation size and kind; combine: "product" or "mixture"."""

    def __init__(self, members, combine="product", **kwargs):
        super().__init__(**kwargs)
        members = [deserialize(m) for m in members]
        if combine not in COMBINES:
            raise ValueError(f"combine must be one of {COMBINES}, got {combine!r}")
        members = check_members(members, CaptionDecoderModel, {name: (lambda m, name=name: getattr(m, name))
                                                               for name in ("vocab_size", "annotation_dim", "kind")},
                                minimum=2, what="a decoder ensemble")
        first = members[0]
        self.members = members
        self.combine = combine
        self.vocab_size, self.annotation_dim, self.kind = first.vocab_size, first.annotation_dim, first.kind
        self.ensemble = EnsembleDecoder([(m.decoder, self._encoder_of(m)) for m in members], combine)
        self.generator = Generator(self.ensemble, self.ensemble.encode, banned_ids=(PAD_ID, UNK_ID, START_ID))
        self.built = True

    @staticmethod
    def _encoder_of(member):
        return lambda x: (member.project(x), None, None)

    def call(self, inputs, training=False):
        raise NotImplementedError("a decoder ensemble is trained member by member: train each CaptionDecoderModel, "
                                  "then join them (`captioner model ensemble`)")

    def get_config(self):
        return {**super().get_config(), "members": [keras.saving.serialize_keras_object(m) for m in self.members],
                "combine": self.combine}
