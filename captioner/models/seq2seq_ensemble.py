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

import keras
import tensorflow as tf

from captioner.decoding.ensemble import COMBINES, EnsembleDecoder
from captioner.decoding.generator import Generator
from captioner.decoding.rescoring import rescorer_from_config
from captioner.models.ensemble_members import check_members
from captioner.models.seq2seq import Seq2Seq
from captioner.models.shared_config import join_shared, split_shared
from captioner.text.vocabulary import PAD_ID, START_ID

_SHARED = ("source_tokenizer", "target_tokenizer", "kind")
_SETTINGS = ("beam_size", "alpha", "max_length", "replace_unk", "coverage_penalty", "no_repeat_ngram", "copy_distinct")


@keras.saving.register_keras_serializable(package="captioner")
class Seq2SeqEnsemble(Seq2Seq):
    """members: `Seq2Seq` models (or their serialized configs) with the same vocabularies,
    tokenizers and kind; combine: "product" or "mixture"; decoding settings: None for the
    first member's; rescorer: an n-best rescorer or its config (`captioner.decoding.rescoring`), the
    ensemble's own (None: none); shared: what the members' saved configs share, saved once
    (`captioner.models.shared_config`)."""

    SHARED = ("source_vocabulary", "target_vocabulary", "source_tokenizer", "target_tokenizer")

    def __init__(self, members, combine="product", beam_size=None, alpha=None, max_length=None, replace_unk=None,
                 coverage_penalty=None, no_repeat_ngram=None, copy_distinct=None, rescorer=None, training_config=None,
                 shared=None, **kwargs):
        keras.Model.__init__(self, **kwargs)  # not Seq2Seq's: the members hold every layer
        members = [m if isinstance(m, Seq2Seq) else keras.saving.deserialize_keras_object(join_shared(m, shared))
                   for m in members]
        if combine not in COMBINES:
            raise ValueError(f"combine must be one of {COMBINES}, got {combine!r}")
        members = check_members(members, Seq2Seq, {
            "vocabularies": lambda m: (tuple(m.source_vocabulary.tokens), tuple(m.target_vocabulary.tokens)),
            **{name: (lambda m, name=name: getattr(m, name)) for name in _SHARED}}, what="a translator ensemble",
            exclude=Seq2SeqEnsemble)
        first = members[0]
        self.members = members
        self.combine = combine
        self.source_vocabulary, self.target_vocabulary = first.source_vocabulary, first.target_vocabulary
        self.kind = first.kind
        self.source_tokenizer, self.target_tokenizer = first.source_tokenizer, first.target_tokenizer
        self.max_source_length = min(m.max_source_length for m in members)
        given = dict(beam_size=beam_size, alpha=alpha, max_length=max_length, replace_unk=replace_unk,
                     coverage_penalty=coverage_penalty, no_repeat_ngram=no_repeat_ngram, copy_distinct=copy_distinct)
        for name in _SETTINGS:
            value = getattr(first, name) if given[name] is None else given[name]
            setattr(self, name, type(getattr(first, name))(value))
        self.attention_lambda = 0.0
        self.pointer = any(m.pointer for m in members)  # a member copies by pointing (each through its own encode)
        self.rescorer = rescorer_from_config(rescorer)  # the ensemble's own (members' are not used)
        self.training_config = training_config or {}
        self.ensemble = EnsembleDecoder([(m.decoder, m.encode) for m in members], combine)
        self.generator = Generator(self.ensemble, self.ensemble.encode, banned_ids=(PAD_ID, START_ID),
                                   input_signature=[tf.TensorSpec((None, None), tf.int32)])  # source ids
        self.built = True

    def call(self, inputs, training=False):
        raise NotImplementedError("an ensemble is trained member by member; load a member to train it")

    def encode(self, source, training=False):
        return self.ensemble.encode(source)

    def get_config(self):
        return {
            **keras.Model.get_config(self),
            **dict(zip(("members", "shared"), split_shared([keras.saving.serialize_keras_object(m) for m in self.members],
                                                           self.SHARED))),
            "combine": self.combine, **{name: getattr(self, name) for name in _SETTINGS},
            **self._rescorer_config(), "training_config": self.training_config,
        }
