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
from captioner.decoding.ensemble import EnsembleDecoder
from captioner.models.caption_decoder_model import CaptionDecoderModel, CaptionSearchMixin
from captioner.models.ensemble import MemberEnsemble
from captioner.text.vocabulary import PAD_ID, START_ID, UNK_ID


@keras.saving.register_keras_serializable(package="captioner")
class CaptionDecoderEnsemble(MemberEnsemble, CaptionSearchMixin, keras.Model):
    """members: `CaptionDecoderModel`s (or their serialized configs) of one vocabulary size,
    annotation size and kind; combine: "product" or "mixture"."""

    member_class = CaptionDecoderModel
    what = "a decoder ensemble"
    minimum = 2

    def same_reading(self):
        return {name: (lambda m, name=name: getattr(m, name)) for name in ("vocab_size", "annotation_dim", "kind")}

    def __init__(self, members, combine="product", **kwargs):
        super().__init__(**kwargs)
        first = self.take_members(members, combine=combine)[0]
        self.vocab_size, self.annotation_dim, self.kind = first.vocab_size, first.annotation_dim, first.kind
        self.ensemble = EnsembleDecoder([(m.decoder, self._encoder_of(m)) for m in self.members], self.combine)
        self.generator = Generator(self.ensemble, self.ensemble.encode, banned_ids=(PAD_ID, UNK_ID, START_ID))
        self.built = True

    @staticmethod
    def _encoder_of(member):
        return lambda x: (member.project(x), None, None)

    def get_config(self):
        return {**super().get_config(), **self.members_config()}
