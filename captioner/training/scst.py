"""Self-critical sequence training (SCST) of a caption decoder: REINFORCE with CIDEr-D as the
reward and the model's own captions as the baseline.

Rennie et al. 2017 ("Self-critical sequence training for image captioning"): sample captions
from the current model, reward each by its CIDEr-D against the image's references, subtract
the reward of the model's greedy caption (the baseline), and raise the log-probability of the
samples that beat it while lowering the others'. Luo 2020 ("A better variant of self-critical
sequence training"): draw K samples per image and let each sample's baseline be the mean
reward of the OTHER K - 1 (no greedy decoding needed).

It is one training step, run by Keras fit inside a captioning recipe's Trainer run
(`captioner.training.self_critical`: images for `train caption --scst`, clips for `train
video-caption --scst`); the batches are the training rows: the decoder's sources (its
`source_inputs`: an image's annotations, or a clip's frame features and mask), their rows in the
training set and a seed:

    sources (B, ...) -> K samples per row, one batched call of the model's Generator
        (sampling rule, seed keyed by (run seed, epoch, batch)); greedy: one more call (B rows)
    -> rewards: CIDEr-D of each caption against its row's training references, document
       frequencies from all training references [+ bleu_weight * its sentence BLEU-4]
       (`tf.numpy_function`, Python)
    -> advantage = reward - baseline                                            (B * K,)
    -> loss = -sum(advantage * log p(sampled token), masked) / number of sampled tokens
       [+ xe_weight * cross-entropy of one reference caption per row, teacher forced]

Everything happens inside the step, so the samples come from the weights the step updates
(exactly on-policy) and a run is a pure function of its seed, also across `--resume`. The
decoder runs in inference mode here (no dropout, and no doubly stochastic attention penalty,
which the caption model adds in training mode only): the log-probabilities trained are those of
the distribution the samples were drawn from.
"""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from captioner.decoding import Decoding
from captioner.metrics.bleu import SentenceBleu
from captioner.text.vocabulary import END_ID, PAD_ID, START_ID

BASELINES = ("greedy", "mean")


def advantages(rewards, greedy=None, baseline="greedy"):
    """rewards (B, K) of K samples per image -> advantages (B, K).

    baseline "greedy": reward - the image's greedy caption reward `greedy` (B,) (Rennie et al.);
    "mean": reward - the mean reward of the image's OTHER K - 1 samples (Luo 2020; K >= 2)."""
    rewards = np.asarray(rewards, np.float64)
    if baseline == "greedy":
        return rewards - np.asarray(greedy, np.float64)[:, None]
    if baseline == "mean":
        k = rewards.shape[1]
        if k < 2:
            raise ValueError("the mean baseline needs at least 2 samples per image")
        return rewards - (rewards.sum(axis=1, keepdims=True) - rewards) / (k - 1)
    raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")


def caption_words(vocab_tokens, ids):
    """Generated ids -> words, up to (not including) <end>; <pad> after it dropped."""
    words = []
    for i in ids:
        i = int(i)
        if i == END_ID:
            break
        if i != PAD_ID:
            words.append(vocab_tokens[i])
    return words


class CaptionRewards:
    """CIDEr-D rewards of generated ids against the training references of their images, plus
    `bleu_weight` times their sentence BLEU-4 (coco-caption's per-image BLEU) when it is > 0, as
    in ruotianluo/self-critical.pytorch's --cider_reward_weight / --bleu_reward_weight.

    scorer: a `captioner.metrics.CiderD` (df from all training references); references: one
    list of tokenized references per training image (row order of the training features).
    Several corpora (CIDEr-D per corpus): `scorer` a list of CiderD (each with its corpus's df) and
    `groups` (one per row of references) the index of each row's scorer."""

    def __init__(self, scorer, references, vocab_tokens, bleu_weight=0.0, groups=None):
        if not 0 <= float(bleu_weight) < float("inf"):
            raise ValueError(f"the BLEU reward weight must be a finite number >= 0, got {bleu_weight}")
        self.scorers = [scorer] if groups is None else list(scorer)
        self.groups = np.zeros(len(references), np.int64) if groups is None else np.asarray(groups, np.int64)
        g = self.groups
        if len(g) != len(references) or not 0 <= g.min(initial=0) <= g.max(initial=0) < len(self.scorers):
            raise ValueError(f"groups: one index into the {len(self.scorers)} scorers per row of references "
                             f"({len(references)} rows)")
        self.references = [self.scorers[g].prepare(refs) for refs, g in zip(references, self.groups)]  # once
        self.vocab_tokens = list(vocab_tokens)
        self.bleu_weight = float(bleu_weight)
        self.bleu = SentenceBleu(4) if self.bleu_weight else None
        self.bleu_references = [self.bleu.prepare(refs) for refs in references] if self.bleu else None

    def __call__(self, ids, rows):
        """ids (N, T) generated ids, rows (N,) training image of each -> rewards (N,) float32."""
        out = np.empty(len(ids), np.float32)
        for i, (t, r) in enumerate(zip(ids, rows)):
            words = caption_words(self.vocab_tokens, t)
            out[i] = self.scorers[self.groups[int(r)]].score(words, self.references[int(r)])
            if self.bleu:
                out[i] += self.bleu_weight * self.bleu.score(words, self.bleu_references[int(r)])
        return out


class SelfCriticalCaptioner(keras.Model):
    """Trains `captioner` (a `CaptionDecoderModel`, or a `VideoCaptionModel`) by SCST; see the module
    docstring.

    fit batches: ({the decoder's source inputs by name ("annotations": (B, R, D); a video captioner's
    "features": (B, N, D) and "mask": (B, N)), "seed": (B,) int32 (one value)[, "tokens": (B, L) one
    reference caption of each row when xe_weight > 0][, "start": (B,) int32 each row's first input
    token instead of <start>: its corpus's style token, for a decoder trained on several corpora]},
    rows (B,) int32 the training row (image, clip) of each). Never saved itself: `inference_copy()`
    is the decoder's."""

    def __init__(self, captioner, rewards, samples=5, baseline="greedy", max_length=20, temperature=1.0,
                 xe_weight=0.0, **kwargs):
        super().__init__(**kwargs)
        if baseline not in BASELINES:
            raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")
        if baseline == "mean" and samples < 2:
            raise ValueError("the mean baseline needs --scst-samples >= 2")
        if not 0 < float(temperature) < float("inf"):
            raise ValueError(f"the sampling temperature must be a finite number > 0, got {temperature}")
        if not 0 <= float(xe_weight) < float("inf"):
            raise ValueError(f"the cross-entropy weight must be a finite number >= 0, got {xe_weight}")
        self.captioner, self.rewards = captioner, rewards
        self.samples, self.baseline, self.max_length = int(samples), baseline, int(max_length)
        self.temperature, self.xe_weight = float(temperature), float(xe_weight)
        self.xe_tracker = keras.metrics.Mean(name="xe_loss")
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.reward_tracker = keras.metrics.Mean(name="sample_reward")
        self.greedy_tracker = keras.metrics.Mean(name="greedy_reward")
        self.length_tracker = keras.metrics.Mean(name="sample_length")
        self.built = True  # every weight is the captioner's, built already: checkpoints save and load at once

    @property
    def metrics(self):
        trackers = [self.loss_tracker, self.reward_tracker, self.length_tracker]
        trackers += [self.greedy_tracker] if self.baseline == "greedy" else []
        return trackers + ([self.xe_tracker] if self.xe_weight else [])

    def call(self, inputs, training=False):
        return self.captioner(inputs, training=training)

    def _rewards_and_advantages(self, sampled, greedy, rows):
        """numpy: sampled (B*K, T), greedy (B, T) or (0, T), rows (B,) -> rewards (B*K,),
        greedy rewards (B,), advantages (B*K,), all float32."""
        k = self.samples
        rows = np.asarray(rows)
        sample_rewards = self.rewards(sampled, np.repeat(rows, k))
        greedy_rewards = self.rewards(greedy, rows) if self.baseline == "greedy" else np.zeros(len(rows), np.float32)
        adv = advantages(sample_rewards.reshape(-1, k), greedy_rewards, self.baseline).reshape(-1)
        return sample_rewards, greedy_rewards, adv.astype(np.float32)

    @property
    def source_names(self):
        """The decoder's source inputs, in the order its generator takes them: ("annotations",) for an
        image caption decoder, ("features", "mask") for a video captioner's."""
        return tuple(self.captioner.source_inputs)

    def sources(self, inputs):
        """A batch's source inputs as the generator takes them (a list): `inputs` is the fit batch's
        dict, or the sources themselves (one tensor, or a list in `source_names` order). Floating
        features in the decoder's compute dtype; a mask as it is."""
        if isinstance(inputs, dict):
            inputs = [inputs[k] for k in self.source_names]
        elif not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        out = []
        for x in inputs:
            x = tf.convert_to_tensor(x)
            out.append(tf.cast(x, self.captioner.compute_dtype) if x.dtype.is_floating else x)
        return out

    def _teacher_forced(self, sources, tokens):
        """The decoder's logits (N, T, V) of input tokens (N, T) after `sources`, in inference mode."""
        return self.captioner({**dict(zip(self.source_names, self.sources(sources))), "tokens": tokens},
                              training=False)

    def sample(self, sources, seed, start=None):
        """K sampled captions per row (one batched call of the Generator): the sources tiled K times
        (a list; row b*K + k is sample k of row b) and the ids (B*K, T) with <end> then <pad>.
        ``start`` (B,): each row's first input token (a style token), None: <start>."""
        tiled = [tf.repeat(x, self.samples, axis=0) for x in self.sources(sources)]  # (B*K, ...) each
        out = self.captioner.generator.search(
            *tiled, *self._starts(start, self.samples),
            decoding=Decoding(1, 0.0, self.max_length, temperature=self.temperature), seed=seed)
        return tiled, out["tokens"][:, 0]  # [(B*K, ...)], (B*K, T)

    @staticmethod
    def _starts(start, repeats=1):
        """The generator's extra start-token input: [] for <start>, else [start (B,) repeated]."""
        if start is None:
            return []
        return [tf.repeat(tf.cast(start, tf.int32), repeats, axis=0)]

    def sampling_log_probs(self, sources, sampled, start=None):
        """Teacher-forced log-probabilities (N, T) of the sampled ids under the distribution they
        were drawn from (inference mode): the softmax over the tokens the generator may write, its
        banned ids (<pad>, <unk>, <start>) left out, at the sampling temperature T (softmax(logits / T):
        the policy trained is the tempered one, whose most probable caption is the model's own).
        Over the full softmax instead, the expected gradient of log p under the samples would not be
        0 but point away from the sampled tokens towards the banned ones, scaled by the baseline:
        with the greedy baseline (most advantages negative) that bias pushed probability into
        <unk>/<pad> and away from <end> until the captions fell apart (on Flickr8k, the greedy
        captions' training CIDEr-D 0.71 -> below 0.2 in one epoch). ``start`` (N,): each row's first
        input token (None: <start>), as it was sampled."""
        n = tf.shape(sampled)[0]
        first = tf.fill([n, 1], START_ID) if start is None else tf.reshape(tf.cast(start, tf.int32), [n, 1])
        inputs = tf.concat([first, sampled[:, :-1]], axis=1)  # (N, T): <start> (or a style token) w1 ..
        logits = tf.cast(self._teacher_forced(sources, inputs), tf.float32)  # (N, T, V)
        banned = self.captioner.generator.banned_ids
        if banned:
            vocab = logits.shape[-1]
            logits = logits + tf.constant(np.isin(np.arange(vocab), banned) * -1e9, tf.float32)  # (N, T, V)
        if self.temperature != 1.0:
            logits = logits / self.temperature
        return -tf.nn.sparse_softmax_cross_entropy_with_logits(sampled, logits)  # (N, T)

    def reinforce_loss(self, sources, sampled, adv, start=None):
        """-sum(advantage * log p(token)) over the sampled tokens / their number (teacher forcing
        on the samples, inference mode). sources: annotations (N, R, D) or the decoder's sources,
        sampled (N, T), adv (N,), start (N,) or None."""
        log_p = self.sampling_log_probs(sources, sampled, start)  # (N, T)
        mask = tf.cast(sampled != PAD_ID, tf.float32)  # the sampled tokens, <end> included
        return -tf.reduce_sum(adv[:, None] * log_p * mask) / tf.maximum(tf.reduce_sum(mask), 1.0)

    def reference_loss(self, sources, tokens):
        """Cross-entropy of reference captions `tokens` (B, L): <start> w1 .. <end> <pad>.., teacher
        forced in inference mode (the policy's own distribution, no dropout), mean over their words
        and <end>: the "mixed objective" that keeps the model near the references' language while
        the reward is maximized (Paulus et al. 2018, sec. 3.3; Ranzato et al. 2016)."""
        from captioner.models.caption_decoder_model import masked_sparse_ce  # the cross-entropy phase's loss

        logits = self._teacher_forced(sources, tokens[:, :-1])
        return tf.reduce_mean(masked_sparse_ce(tokens[:, 1:], logits))  # (B, L - 1) -> the masked mean

    def train_step(self, data):
        inputs, rows = data[0], data[1]
        sources = self.sources(inputs)  # [(B, R, D)] or [(B, N, D), (B, N)]
        seed = tf.cast(inputs["seed"][0], tf.int32)
        start = inputs.get("start")  # (B,) style tokens, or None: <start>
        tiled, sampled = self.sample(sources, seed, start)  # [(B*K, ...)], (B*K, T)
        if self.baseline == "greedy":
            greedy = self.captioner.generator.search(
                *sources, *self._starts(start), decoding=Decoding(1, 0.0, self.max_length))["tokens"][:, 0]  # (B, T)
        else:
            greedy = tf.zeros([0, self.max_length], tf.int32)
        sample_rewards, greedy_rewards, adv = tf.numpy_function(
            self._rewards_and_advantages, [sampled, greedy, rows], [tf.float32, tf.float32, tf.float32],
            stateful=False)
        for t in (sample_rewards, greedy_rewards, adv):
            t.set_shape([None])  # (B*K,), (B,), (B*K,)
        with tf.GradientTape() as tape:
            tiled_start = None if start is None else self._starts(start, self.samples)[0]
            loss = self.reinforce_loss(tiled, sampled, adv, tiled_start)
            if self.xe_weight:
                xe = self.reference_loss(sources, tf.cast(inputs["tokens"], tf.int32))
                loss = loss + self.xe_weight * xe
        variables = self.captioner.trainable_variables
        self.optimizer.apply(tape.gradient(loss, variables), variables)
        self.loss_tracker.update_state(loss)
        self.reward_tracker.update_state(sample_rewards)
        words = tf.logical_and(sampled != PAD_ID, sampled != END_ID)  # (B*K, T)
        self.length_tracker.update_state(tf.reduce_sum(tf.cast(words, tf.float32), axis=1))
        if self.baseline == "greedy":
            self.greedy_tracker.update_state(greedy_rewards)
        if self.xe_weight:
            self.xe_tracker.update_state(xe)
        return {m.name: m.result() for m in self.metrics}

    def inference_copy(self):
        """The trained decoder as an uncompiled float32 copy (what the saved model holds)."""
        from captioner.models.pixel_model import inference_copy

        return inference_copy(self.captioner)
