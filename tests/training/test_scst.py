"""Self-critical sequence training: advantages by hand, the REINFORCE step's direction on a tiny
decoder, and `captioner train caption --scst` end to end (saved model, resume)."""

import json

import numpy as np
import pytest
import tensorflow as tf

from captioner.decoding import Decoding

from captioner.text.vocabulary import END_ID, PAD_ID, Vocabulary
from captioner.training.scst import SelfCriticalCaptioner, advantages, caption_words

WORDS = ("a", "red", "blue", "square", "circle")
VOCAB = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + WORDS)


def test_greedy_baseline_by_hand():
    rewards = [[1.0, 0.5, 0.0], [2.0, 2.0, 3.0]]
    np.testing.assert_allclose(advantages(rewards, [0.5, 2.5], "greedy"), [[0.5, 0.0, -0.5], [-0.5, -0.5, 0.5]])


def test_mean_of_the_other_samples_baseline_by_hand():
    # image 1: baselines (0.5+0)/2, (1+0)/2, (1+0.5)/2 = 0.25, 0.5, 0.75
    # image 2: (2+3)/2, (2+3)/2, (2+2)/2 = 2.5, 2.5, 2
    got = advantages([[1.0, 0.5, 0.0], [2.0, 2.0, 3.0]], baseline="mean")
    np.testing.assert_allclose(got, [[0.75, 0.0, -0.75], [-0.5, -0.5, 1.0]])
    assert abs(got.sum()) < 1e-12  # the mean baseline's advantages of an image sum to 0
    with pytest.raises(ValueError, match="2 samples"):
        advantages([[1.0], [2.0]], baseline="mean")
    with pytest.raises(ValueError, match="baseline"):
        advantages([[1.0]], [0.0], baseline="max")


def test_caption_words_stop_at_end():
    a, red, square = 4, 5, 7
    assert caption_words(VOCAB.tokens, [a, red, square, END_ID, PAD_ID]) == ["a", "red", "square"]
    assert caption_words(VOCAB.tokens, [a, red]) == ["a", "red"]  # unfinished within max_length


def test_rewards_are_cider_d_plus_the_weighted_sentence_bleu():
    from captioner.metrics import CiderD, sentence_bleu
    from captioner.training.scst import CaptionRewards

    refs = [[["a", "red", "square", "a", "circle"], ["a", "red", "circle"]], [["a", "blue", "circle"], ["blue", "circle"]]]
    ids = np.array([[4, 5, 7, 4, 8, END_ID], [4, 6, 8, END_ID, PAD_ID, PAD_ID], [6, 8, END_ID, PAD_ID, PAD_ID, PAD_ID]],
                   np.int32)
    rows = np.array([0, 1, 0])
    scorer = CiderD(refs)
    cider = CaptionRewards(scorer, refs, VOCAB.tokens)(ids, rows)
    words = [caption_words(VOCAB.tokens, t) for t in ids]
    np.testing.assert_allclose(cider, [scorer.score(w, refs[r]) for w, r in zip(words, rows)], rtol=1e-6)
    mixed = CaptionRewards(scorer, refs, VOCAB.tokens, bleu_weight=0.5)(ids, rows)
    bleu = [sentence_bleu(w, refs[r]) for w, r in zip(words, rows)]
    np.testing.assert_allclose(mixed, cider + 0.5 * np.array(bleu), rtol=1e-6)
    assert bleu[0] == pytest.approx(1.0) and mixed[0] > cider[0]  # an exact reference gains the full weight
    with pytest.raises(ValueError, match="BLEU reward weight"):
        CaptionRewards(scorer, refs, VOCAB.tokens, bleu_weight=-1)


def test_rewards_per_corpus_score_each_row_with_its_corpus_df():
    """Several corpora: each row's CIDEr-D uses its own corpus's document frequencies."""
    from captioner.metrics import CiderD
    from captioner.training.scst import CaptionRewards

    refs = [[["a", "red", "square"]], [["a", "red", "circle"]], [["a", "blue", "circle"]]]
    groups = [0, 0, 1]
    scorers = [CiderD(refs[:2]), CiderD(refs[2:] + [[["a", "red", "square"]]])]
    ids = np.array([[4, 5, 7, END_ID], [4, 6, 8, END_ID], [4, 5, 7, END_ID]], np.int32)
    rows = np.array([0, 2, 1])
    got = CaptionRewards(scorers, refs, VOCAB.tokens, groups=groups)(ids, rows)
    words = [caption_words(VOCAB.tokens, t) for t in ids]
    want = [scorers[groups[r]].score(w, refs[r]) for w, r in zip(words, rows)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    one_df = CaptionRewards(CiderD(refs), refs, VOCAB.tokens)(ids, rows)
    assert not np.allclose(got, one_df)  # the df differs per corpus, so the rewards do
    with pytest.raises(ValueError, match="one index into the 2 scorers"):
        CaptionRewards(scorers, refs, VOCAB.tokens, groups=[0, 2, 1])


def _decoder(seed=0):
    import keras

    from captioner.models.caption_decoder_model import CaptionDecoderModel

    keras.utils.set_random_seed(seed)
    return CaptionDecoderModel.of(len(VOCAB), annotation_dim=10, projection_dim=8, embedding_dim=8, units=8,
                               attention_units=8, dropout=0.0)


class FixedRewards:
    """With the greedy baseline each step asks for the samples' rewards, then the greedy
    captions': reward 1 to the samples and 0 to the greedy captions (advantages all +1), or the
    opposite (all -1). Remembers the sampled ids."""

    def __init__(self, sign):
        self.sign, self.seen, self.calls = sign, [], 0

    def __call__(self, ids, rows):
        is_sample = self.calls % 2 == 0
        self.calls += 1
        if is_sample:
            self.seen.append(np.array(ids))
        return np.full(len(ids), float(is_sample == (self.sign > 0)), np.float32)


def _log_probs(decoder, feats, ids, renormalize=True):
    """Summed log-probability of each caption `ids` (N, T) given its features (N, R, D): over the
    tokens the generator may write (renormalize) or over the full softmax."""
    n = len(ids)
    inputs = np.concatenate([np.full((n, 1), 1, np.int32), ids[:, :-1]], axis=1)
    logits = decoder({"annotations": feats, "tokens": inputs}, training=False).numpy()
    if renormalize:
        logits[..., list(decoder.generator.banned_ids)] = -1e9
    log_p = -tf.nn.sparse_softmax_cross_entropy_with_logits(ids, logits).numpy()
    return (log_p * (ids != PAD_ID)).sum(axis=1)


@pytest.mark.parametrize("sign", [1, -1])
def test_one_step_moves_the_sampled_captions_log_prob_with_the_advantage(sign):
    import keras

    decoder = _decoder()
    rewards = FixedRewards(sign)
    model = SelfCriticalCaptioner(decoder, rewards, samples=3, baseline="greedy", max_length=6)
    model.compile(optimizer=keras.optimizers.SGD(0.5))
    feats = np.random.default_rng(1).normal(size=(2, 4, 10)).astype(np.float32)
    batch = ({"annotations": feats, "seed": np.full(2, 7, np.int32)}, np.array([0, 1], np.int32))
    before = decoder.get_weights()
    logs = model.train_on_batch(*batch, return_dict=True)
    sampled = rewards.seen[0]  # (6, T): 3 samples of each of the 2 images
    assert sampled.shape[0] == 6
    assert logs["sample_reward"] == pytest.approx(1.0 if sign > 0 else 0.0)
    assert logs["greedy_reward"] == pytest.approx(0.0 if sign > 0 else 1.0)
    tiled = np.repeat(feats, 3, axis=0)
    after = _log_probs(decoder, tiled, sampled)
    decoder.set_weights(before)
    start = _log_probs(decoder, tiled, sampled)
    # every sample beat its greedy caption (or lost to it): together they become more (less)
    # likely; one alone may not, as the samples share one renormalized distribution per step
    if sign > 0:
        assert after.sum() > start.sum()
    else:
        assert after.sum() < start.sum()


def test_the_loss_is_the_advantage_weighted_token_mean():
    decoder = _decoder()
    model = SelfCriticalCaptioner(decoder, FixedRewards(1), samples=1)
    feats = np.random.default_rng(2).normal(size=(2, 4, 10)).astype(np.float32)
    ids = np.array([[4, 5, 7, END_ID], [4, END_ID, PAD_ID, PAD_ID]], np.int32)
    adv = np.array([2.0, -1.0], np.float32)
    per_caption = _log_probs(decoder, feats, ids)
    want = -(2.0 * per_caption[0] - 1.0 * per_caption[1]) / 6  # 4 + 2 sampled tokens (<end> included)
    assert float(model.reinforce_loss(feats, ids, adv)) == pytest.approx(want, rel=1e-5)


# -- end to end: `captioner train caption --scst` on drawn shapes ------------------------------

@pytest.fixture(scope="module")
def xe_model(tmp_path_factory):
    """A shapes dataset, its features and a cross-entropy model (1 epoch) to start SCST from."""
    from support.training import TINY_CAPTION, train_caption, write_shapes_flickr8k

    data = write_shapes_flickr8k(tmp_path_factory.mktemp("shapes8k"))
    out = tmp_path_factory.mktemp("xe")
    assert train_caption(data, out, "--epochs", "2", "--final-eval-beams", "", *TINY_CAPTION[-2:]) == 0
    return data, out / "features.h5", out / "run" / "model.keras"


def _scst(xe_model, out, *extra):
    from captioner.cli import main

    data, features, init = xe_model
    return main(["train", "caption", "--scst", "--init-model", str(init), "--data-dir", str(data),
                 "--features", str(features), "--output-dir", str(out), "--batch-size", "6", "--beam-size", "2",
                 "--max-length", "8", "--scst-samples", "3", "--scst-learning-rate", "0.001",
                 "--final-eval-beams", "1", *extra])


def check_saved_run(run, xe_model):
    """An SCST run (greedy baseline, one epoch or more) saved what it should, and its model loads
    safely and captions."""
    import keras

    import captioner  # noqa: F401

    history = json.loads((run / "history.json").read_text())
    for key in ("dev_CIDEr", "dev_BLEU-4", "sample_reward", "greedy_reward", "sample_length", "loss",
                "dev_caption_length", "dev_distinct_captions", "dev_vocabulary"):
        assert key in history[0], key
    metrics = json.loads((run / "metrics.json").read_text())
    assert "dev_CIDEr" in metrics["before_scst"] and metrics["selection"].startswith("dev CIDEr")
    card = json.loads((run / "model.json").read_text())
    assert card["extra"]["scst"]["baseline"] == "greedy" and card["config"]["scst"] is True
    init = keras.models.load_model(xe_model[2])
    assert json.loads((run / "vocabulary.json").read_text())["tokens"] == list(init.vocabulary.tokens)
    model = keras.models.load_model(run / "model.keras")  # safe mode
    assert model.backbone.name == init.backbone.name
    image = sorted((xe_model[0] / "Images").iterdir())[0]
    caption = model.caption([str(image)])[0]
    assert isinstance(caption.text, str) and caption.tokens


def test_scst_defaults_are_the_mean_baseline_at_temperature_half_and_a_cross_entropy_term_is_logged(xe_model,
                                                                                                   tmp_path):
    assert _scst(xe_model, tmp_path / "run", "--epochs", "1", "--scst-xe-weight", "0.5", "--final-eval-beams", "",
                 "--scst-bleu-weight", "0.25") == 0
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    assert "sample_reward" in history[0] and "greedy_reward" not in history[0]
    assert history[0]["xe_loss"] > 0
    scst = json.loads((tmp_path / "run" / "model.json").read_text())["extra"]["scst"]
    assert (scst["baseline"], scst["temperature"], scst["xe_weight"], scst["bleu_weight"]) == ("mean", 0.5, 0.5, 0.25)


def test_scst_resume_is_the_straight_run(xe_model, tmp_path, monkeypatch):
    import keras

    from support.training import assert_resume_replays_batches

    assert_resume_replays_batches(lambda out, *extra: _scst(xe_model, out, "--final-eval-beams", "", "--scst-baseline",
                                                            "greedy", *extra),
                                  tmp_path, monkeypatch)
    straight = json.loads((tmp_path / "straight" / "history.json").read_text())
    resumed = json.loads((tmp_path / "resumed" / "history.json").read_text())
    for a, b in zip(straight, resumed):  # the same samples, rewards and dev figures
        for key in ("sample_reward", "greedy_reward", "dev_CIDEr"):
            assert a[key] == pytest.approx(b[key], rel=1e-5), key
    check_saved_run(tmp_path / "straight", xe_model)  # the straight run is also the one whose saved model is read
    w1 = keras.models.load_model(tmp_path / "straight" / "model.keras").decoder.get_weights()
    w2 = keras.models.load_model(tmp_path / "resumed" / "model.keras").decoder.get_weights()
    for x, y in zip(w1, w2):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def test_scst_needs_an_init_model(xe_model, tmp_path):
    from captioner.cli import main

    data, features, _ = xe_model
    code = main(["train", "caption", "--scst", "--data-dir", str(data), "--features", str(features),
                 "--output-dir", str(tmp_path / "run")])
    assert code != 0


def test_scst_refuses_an_ensemble_as_its_init_model(xe_model, tmp_path, capsys):
    """An ensemble file (`captioner model ensemble`) is decoded, not trained: SCST names it."""
    import keras

    import captioner  # noqa: F401
    from captioner.models.caption_decoder_ensemble import CaptionDecoderEnsemble
    from captioner.models.image_captioner import ImageCaptioner

    data, features, init = xe_model
    single = keras.models.load_model(init)
    ensemble = ImageCaptioner(single.backbone, CaptionDecoderEnsemble([single.decoder, single.decoder]),
                              single.vocabulary, beam_size=2, max_length=8)
    path = tmp_path / "ensemble.keras"
    ensemble.save(path)
    assert _scst((data, features, path), tmp_path / "run", "--epochs", "1") != 0
    assert f"--init-model {path}: its decoder is a CaptionDecoderEnsemble" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--scst-temperature 0", "--scst-bleu-weight -1"])
def test_scst_refuses_a_temperature_or_bleu_weight_out_of_range(xe_model, tmp_path, capsys, flag):
    assert _scst(xe_model, tmp_path / "run", "--epochs", "1", *flag.split()) != 0
    assert flag.split()[0] in capsys.readouterr().err
    assert not (tmp_path / "run").exists() or not any((tmp_path / "run").iterdir())


def test_trained_log_probs_are_those_of_the_sampling_distribution():
    """The teacher-forced log-probabilities the loss weighs are the ones the generator drew the
    samples with (inference mode: no dropout), token for token."""
    decoder = _decoder()
    model = SelfCriticalCaptioner(decoder, FixedRewards(1), samples=4, max_length=6)
    feats = np.random.default_rng(3).normal(size=(3, 4, 10)).astype(np.float32)
    tiled = np.repeat(feats, 4, axis=0)
    out = decoder.generator.search(tf.constant(tiled), decoding=Decoding(1, 0.0, 6, temperature=1.0), seed=9)
    _, sampled = model.sample(tf.constant(feats), tf.constant(9))
    np.testing.assert_array_equal(sampled.numpy(), out["tokens"][:, 0].numpy())  # K copies of each image, in order
    # the generator's scores are full-softmax log-probabilities (banned ids only masked); the loss
    # renormalizes over the allowed tokens: the same sampling distribution, token for token
    np.testing.assert_allclose(_log_probs(decoder, tiled, sampled.numpy(), renormalize=False),
                               out["log_probs"][:, 0].numpy(), rtol=1e-4)
    step = model.sampling_log_probs(tf.constant(tiled), sampled).numpy()  # (N, T)
    ids = sampled.numpy()
    assert not np.isin(ids[ids != PAD_ID], decoder.generator.banned_ids).any()  # <pad> only after <end>
    assert ((step <= 0) | (ids == PAD_ID)).all()


@pytest.mark.parametrize("temperature", [1.0, 0.5])
def test_expected_score_function_is_zero_under_the_sampling_distribution(temperature):
    """E_{w ~ p}[grad log p(w)] = 0 for the distribution the samples are drawn from (so a
    constant baseline adds no bias): with banned ids that hold probability mass, this holds for
    the renormalized log-probabilities the loss uses, and not for the full softmax; at a sampling
    temperature, for the tempered distribution."""
    decoder = _decoder(seed=4)
    model = SelfCriticalCaptioner(decoder, FixedRewards(1), samples=1, max_length=1, temperature=temperature)
    feats = tf.constant(np.random.default_rng(5).normal(size=(1, 4, 10)).astype(np.float32))
    banned = list(decoder.generator.banned_ids)
    allowed = [i for i in range(len(VOCAB)) if i not in banned]
    ids = tf.constant(np.array(allowed, np.int32)[:, None])  # every one-token caption (N, 1)
    tiled = tf.repeat(feats, len(allowed), axis=0)
    variables = decoder.trainable_variables
    with tf.GradientTape(persistent=True) as tape:
        log_p = model.sampling_log_probs(tiled, ids)[:, 0]  # (N,)
        weights = tf.stop_gradient(tf.exp(log_p))  # the sampling probabilities, summing to 1
        expected = tf.reduce_sum(weights * log_p)
    assert float(tf.reduce_sum(weights)) == pytest.approx(1.0, abs=1e-5)
    grads = [g for g in tape.gradient(expected, variables) if g is not None]
    assert max(float(tf.reduce_max(tf.abs(g))) for g in grads) < 1e-5


def test_a_sampling_temperature_draws_and_trains_the_tempered_policy():
    """--scst-temperature T: the samples are the generator's at T, and the log-probabilities the
    loss weighs are log softmax(allowed logits / T), token for token."""
    decoder = _decoder(seed=2)
    model = SelfCriticalCaptioner(decoder, FixedRewards(1), samples=3, max_length=6, temperature=0.5)
    feats = np.random.default_rng(8).normal(size=(2, 4, 10)).astype(np.float32)
    tiled = np.repeat(feats, 3, axis=0)
    out = decoder.generator.search(tf.constant(tiled), decoding=Decoding(1, 0.0, 6, temperature=0.5), seed=4)
    _, sampled = model.sample(tf.constant(feats), tf.constant(4))
    np.testing.assert_array_equal(sampled.numpy(), out["tokens"][:, 0].numpy())
    ids = sampled.numpy()
    inputs = np.concatenate([np.full((len(ids), 1), 1, np.int32), ids[:, :-1]], axis=1)
    logits = decoder({"annotations": tiled, "tokens": inputs}, training=False).numpy().astype(np.float64)
    logits[..., list(decoder.generator.banned_ids)] = -np.inf
    tempered = logits / 0.5
    expected = tempered - np.log(np.exp(tempered - tempered.max(-1, keepdims=True)).sum(-1, keepdims=True)) \
        - tempered.max(-1, keepdims=True)
    want = np.take_along_axis(expected, ids[..., None], axis=-1)[..., 0]
    got = model.sampling_log_probs(tf.constant(tiled), sampled).numpy()
    keep = ids != PAD_ID
    np.testing.assert_allclose(got[keep], want[keep], rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="temperature"):
        SelfCriticalCaptioner(decoder, FixedRewards(1), temperature=0.0)


class ConstantRewards:
    def __call__(self, ids, rows):
        return np.ones(len(ids), np.float32)


def test_the_cross_entropy_term_is_the_references_mean_token_loss_and_trains_them():
    """xe_weight > 0: the step adds xe_weight x the teacher-forced cross-entropy of the batch's
    reference captions (mean over their words and <end>); with every advantage 0 (equal rewards,
    mean baseline) one step is pure cross-entropy and makes the references more probable."""
    import keras

    decoder = _decoder(seed=6)
    model = SelfCriticalCaptioner(decoder, ConstantRewards(), samples=2, baseline="mean", max_length=6, xe_weight=1.0)
    feats = np.random.default_rng(1).normal(size=(2, 4, 10)).astype(np.float32)
    a, red, square = (VOCAB.tokens.index(w) for w in ("a", "red", "square"))
    refs = np.array([[1, a, red, square, END_ID, PAD_ID], [1, red, END_ID, PAD_ID, PAD_ID, PAD_ID]], np.int32)
    got = float(model.reference_loss(tf.constant(feats), tf.constant(refs)))
    logits = decoder({"annotations": feats, "tokens": refs[:, :-1]}, training=False).numpy()
    xe = tf.nn.sparse_softmax_cross_entropy_with_logits(refs[:, 1:], logits).numpy()
    assert got == pytest.approx(xe[refs[:, 1:] != PAD_ID].mean(), rel=1e-5)
    before = _log_probs(decoder, feats, refs[:, 1:], renormalize=False).sum()
    model.compile(optimizer=keras.optimizers.SGD(0.5))
    logs = model.train_on_batch({"annotations": feats, "seed": np.zeros(2, np.int32), "tokens": refs},
                                np.arange(2, dtype=np.int32), return_dict=True)
    assert logs["xe_loss"] == pytest.approx(got, rel=1e-4)
    assert _log_probs(decoder, feats, refs[:, 1:], renormalize=False).sum() > before + 0.1
    with pytest.raises(ValueError, match="cross-entropy weight"):
        SelfCriticalCaptioner(decoder, ConstantRewards(), xe_weight=-1.0)


@pytest.mark.parametrize("sign", [1, -1])
def test_the_same_step_trains_a_video_captioner_from_features_and_frame_masks(sign):
    """The one SCST step over a `VideoCaptionModel`: its sources are (features, mask), tiled K
    times for the samples (a masked frame stays masked); the samples' log-probability moves with
    the advantage as for the image decoder."""
    import keras

    from captioner.models.video_caption_model import VideoCaptionModel

    keras.utils.set_random_seed(3)
    video = VideoCaptionModel(len(VOCAB), 10, units=8, projection_dim=8, embedding_dim=8, attention_units=8,
                              dropout=0.0)
    rewards = FixedRewards(sign)
    model = SelfCriticalCaptioner(video, rewards, samples=3, baseline="greedy", max_length=6)
    model.compile(optimizer=keras.optimizers.SGD(0.5))
    feats = np.random.default_rng(4).normal(size=(2, 5, 10)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)  # clip 1 has 3 frames
    tiled, sampled = model.sample({"features": feats, "mask": mask}, tf.constant(7))
    np.testing.assert_array_equal(tiled[1].numpy(), np.repeat(mask, 3, axis=0))
    before = [w.copy() for w in video.get_weights()]
    logs = model.train_on_batch({"features": feats, "mask": mask, "seed": np.full(2, 7, np.int32)},
                                np.array([0, 1], np.int32), return_dict=True)
    assert logs["sample_reward"] == pytest.approx(1.0 if sign > 0 else 0.0)
    sampled = rewards.seen[0]
    sources = [np.repeat(feats, 3, axis=0), np.repeat(mask, 3, axis=0)]
    keep = sampled != PAD_ID
    after = float((model.sampling_log_probs(sources, tf.constant(sampled)).numpy() * keep).sum())
    video.set_weights(before)
    start = float((model.sampling_log_probs(sources, tf.constant(sampled)).numpy() * keep).sum())
    assert (after > start) if sign > 0 else (after < start)
