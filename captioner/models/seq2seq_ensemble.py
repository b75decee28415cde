"""An ensemble of `Seq2Seq` models (translators, transliterators, headline models) saved as one
`.keras` file and used exactly like one model::

    import captioner, keras
    from captioner.models.seq2seq_ensemble import Seq2SeqEnsemble
    ensemble = Seq2SeqEnsemble([keras.models.load_model(p) for p in paths])   # same vocabularies
    ensemble.save("ensemble.keras")
    keras.models.load_model("ensemble.keras").translate(["namaste"])

The members decode together in the one beam search (`captioner.decoding.ensemble`): at every
step their next-token distributions are combined (a product of experts by default), so the
beam, n-best lists, attention heat maps, `<unk>` copy and every CLI work on the ensemble as on
a single model. Decoding settings default to the first member's. Training is per member.
"""

from __future__ import annotations

import dataclasses

import keras
import tensorflow as tf

from captioner.decoding.ensemble import EnsembleDecoder
from captioner.decoding.generator import Generator
from captioner.decoding.rescoring import rescorer_from_config
from captioner.models.ensemble import MemberEnsemble
from captioner.models.seq2seq import Seq2Seq, Seq2SeqOutput, Translator
from captioner.text.vocabulary import PAD_ID, START_ID

_SHARED = ("source_tokenizer", "target_tokenizer", "kind", "extractive")
_SETTINGS = tuple(f.name for f in dataclasses.fields(Seq2SeqOutput))  # beam_size, alpha, ..., copy_distinct

# the ensemble's own output settings: `Seq2SeqOutput`'s fields, each None for the first member's
EnsembleOutput = dataclasses.make_dataclass("EnsembleOutput", [(name, object, None) for name in _SETTINGS],
                                            frozen=True)
EnsembleOutput.__doc__ = "`Seq2SeqOutput`'s settings for an ensemble: each None for the first member's."


@keras.saving.register_keras_serializable(package="captioner")
class Seq2SeqEnsemble(MemberEnsemble, Translator):
    """members: `Seq2Seq` models (or their serialized configs) with the same vocabularies,
    tokenizers and kind; combine: "product" or "mixture"; decoding settings: None for the
    first member's; rescorer: an n-best rescorer or its config (`captioner.decoding.rescoring`), the
    ensemble's own (None: none); shared: what the members' saved configs share, saved once
    (`captioner.models.shared_config`)."""

    member_class = Seq2Seq
    what = "a translator ensemble"
    SHARED = ("source_vocabulary", "target_vocabulary", "source_tokenizer", "target_tokenizer")

    def same_reading(self):
        return {"vocabularies": lambda m: (tuple(m.source_vocabulary.tokens), tuple(m.target_vocabulary.tokens)),
                **{name: (lambda m, name=name: getattr(m, name)) for name in _SHARED}}

    GROUPS = {"output": EnsembleOutput}  # `Seq2SeqEnsemble.of(members, beam_size=4)`: flat settings

    def __init__(self, members, combine="product", output: EnsembleOutput | None = None, rescorer=None,
                 training_config=None, shared=None, **kwargs):
        super().__init__(**kwargs)
        members = self.take_members(members, shared, combine)
        first = members[0]
        self.source_vocabulary, self.target_vocabulary = first.source_vocabulary, first.target_vocabulary
        self.kind = first.kind
        self.source_tokenizer, self.target_tokenizer = first.source_tokenizer, first.target_tokenizer
        self.max_source_length = min(m.max_source_length for m in members)
        given = dataclasses.asdict(output or EnsembleOutput())
        for name in _SETTINGS:
            value = getattr(first, name) if given[name] is None else given[name]
            setattr(self, name, type(getattr(first, name))(value))
        self.attention_lambda = 0.0
        self.extractive, self._first_position = first.extractive, first._first_position  # the same in each
        self.pointer = any(m.pointer for m in members)  # a member copies by pointing (each through its own encode)
        self.rescorer = rescorer_from_config(rescorer)  # the ensemble's own (members' are not used)
        self.training_config = training_config or {}
        self.ensemble = EnsembleDecoder([(m.decoder, m.encode) for m in members], self.combine)
        self.generator = Generator(self.ensemble, self.ensemble.encode, banned_ids=(PAD_ID, START_ID),
                                   input_signature=[tf.TensorSpec((None, None), tf.int32)])  # source ids
        self.built = True

    def encode(self, source, training=False):
        return self.ensemble.encode(source)

    def get_config(self):
        return {**super().get_config(), **self.members_config(),
                **{name: getattr(self, name) for name in _SETTINGS}, **self._rescorer_config(),
                "training_config": self.training_config}
