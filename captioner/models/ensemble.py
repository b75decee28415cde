"""The one ensemble family: models trained apart (seeds, backbones), joined into one `.keras` file
that is used exactly like one model.

Every ensemble of the project (`Seq2SeqEnsemble` of translators, `CaptionDecoderEnsemble` of
caption decoders, `EntailmentEnsemble` of entailment classifiers, `DocumentEnsemble` of document
classifiers) is a `MemberEnsemble` before
the task's own API in its bases, and says only what differs::

    class EntailmentEnsemble(ClassifierEnsemble, _TextPairAPI, keras.Model):
        member_class = EntailmentClassifier
        what = "an entailment ensemble"
        SHARED = ("vocabulary", "lexicon", "relations")   # saved once, not per member

        def same_reading(self):                            # what every member reads as member 1
            return {"vocabulary": lambda m: tuple(m.vocabulary.tokens), ...}

        vocabulary = from_member("vocabulary")             # how it reads: member 1's

(`ClassifierEnsemble` is a `MemberEnsemble` whose constructor and config are its members, the
rule, what they share and a training config; a decoder ensemble calls `take_members` itself.)

What the family does once for all of them:

* members given as built models or as their serialized configs (a file being loaded), with what
  they share put back (`captioner.models.shared_config`);
* the checks (`captioner.models.ensemble_members.check_members`): enough members, each of the
  kind combined and none an ensemble itself, each reading its input as member 1 does; members
  are numbered from 1 in every message;
* the rule that combines the members' distributions (`captioner.decoding.ensemble.COMBINES`:
  a product of experts or a mixture), the same for a decoder's next token and a classifier's
  labels (`combine_log_probs`);
* the config: members (without what they share), shared, combine;
* training: refused as a whole (each member is trained by its recipe; `captioner model
  ensemble` joins them).
"""

from __future__ import annotations

import keras
import tensorflow as tf

from captioner.decoding.ensemble import COMBINES, combine_log_probs
from captioner.models.ensemble_members import check_members
from captioner.models.shared_config import join_shared, split_shared


class MemberEnsemble:
    """A mixin before the task's API and `keras.Model` in an ensemble's bases."""

    member_class = None        # the class every member is
    what = "an ensemble"       # what messages call it
    SHARED = ()                # member config keys saved once when every member has the same value
    minimum = 1                # members at least
    default_combine = "product"

    def same_reading(self) -> dict:
        """{name: function of a member} of what every member must share with member 1."""
        return {}

    def take_members(self, members, shared=None, combine=None):
        """Build (from configs), check and keep `members` and the `combine` rule; returns the members."""
        combine = self.default_combine if combine is None else combine
        if combine not in COMBINES:
            raise ValueError(f"{self.what}: combine must be one of {COMBINES}, got {combine!r}")
        members = [m if isinstance(m, self.member_class) or not isinstance(m, dict)
                   else keras.saving.deserialize_keras_object(join_shared(m, shared)) for m in members]
        self.members = check_members(members, self.member_class, self.same_reading(), minimum=self.minimum,
                                     what=self.what, exclude=MemberEnsemble)
        self.combine = combine
        return self.members

    def combine_logits(self, logits):
        """[(B, K) logits of each member] -> (B, K) log-probabilities of the ensemble (float32)."""
        log_probs = tf.stack([tf.nn.log_softmax(tf.cast(x, tf.float32), -1) for x in logits])
        return combine_log_probs(log_probs, self.combine)

    def members_config(self) -> dict:
        """The members' part of the ensemble's config: {"members", "combine"} and, for an ensemble
        with SHARED keys, "shared"."""
        members = [keras.saving.serialize_keras_object(m) for m in self.members]
        config = {"combine": self.combine}
        if self.SHARED:
            members, config["shared"] = split_shared(members, self.SHARED)
        return {"members": members, **config}

    def call(self, inputs, training=False):
        raise NotImplementedError(f"{self.what} is trained member by member: train each {self.member_class.__name__}, "
                                  "then join them (`captioner model ensemble`)")


def from_member(name):
    """A property that is member 1's `name` (what `same_reading` checked every member shares)."""
    return property(lambda self: getattr(self.members[0], name))


class ClassifierEnsemble(MemberEnsemble):
    """The members, the combine rule, what they share and a training config are a classifier
    ensemble's whole constructor and config (`EntailmentEnsemble`, `DocumentEnsemble`); its label
    distributions are mixed by default."""

    default_combine = "mixture"

    def __init__(self, members, combine=None, training_config=None, shared=None, **kwargs):
        super().__init__(**kwargs)
        self.take_members(members, shared, combine)
        self.training_config = training_config or {}
        self.built = True

    def get_config(self):
        return {**super().get_config(), **self.members_config(), "training_config": self.training_config}
