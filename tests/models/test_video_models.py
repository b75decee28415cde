"""Video models: masking, s0 = h_T, beam search over frames, save -> load in a fresh process."""

import json
import textwrap

import keras
import pytest
import numpy as np
import tensorflow as tf

from captioner.layers.frame_encoder import FrameEncoder
from captioner.models.video_caption_model import VideoCaptionModel
from captioner.models.video_captioner import VideoCaptioner
from captioner.models.video_classifier import VideoClassifier
from captioner.models.video_classifier_model import VideoClassifierModel
from captioner.text import Vocabulary
from support.backbones import tiny_backbone
from support import fresh_python

N, D = 5, 12
# a stand-in for EfficientNet: pixels (B, 32, 32, 3) -> {"grid" (B, 4, 4, 6), "pooled" (B, 6)}
VIDEO_BACKBONE = {"channels": 6, "preprocess": "rescale", "two_layers": False, "kernel": 3}


def features(batch=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batch, N, D)).astype("float32")
    mask = np.ones((batch, N), bool)
    mask[1, 3:] = False  # a short clip: 3 real frames
    mask[2, 1:] = False  # a one-frame clip
    return x, mask


def vocab():
    return Vocabulary.build([["a", "red", "circle", "moves", "left"], ["a", "blue", "square", "grows"]], min_count=1)


def test_encoder_state_is_last_real_frame_and_masked_steps_are_ignored():
    enc = FrameEncoder(D, units=8, projection_dim=7)
    enc.build()
    x, mask = features()
    out, state = enc(x, mask=mask)
    garbage = x.copy()
    garbage[~mask] = 1e3  # whatever sits at masked frames must not matter
    out2, state2 = enc(garbage, mask=mask)
    np.testing.assert_allclose(state["h"], state2["h"], atol=1e-5)
    np.testing.assert_allclose(out, out2, atol=1e-5)
    assert np.all(np.asarray(out)[~mask] == 0)
    # h_T of the 3-frame clip = the state after running on its 3 frames alone
    _, short = enc(x[1:2, :3], mask=np.ones((1, 3), bool))
    np.testing.assert_allclose(state["h"][1], short["h"][0], atol=1e-5)


def test_grid_encoder_shapes():
    enc = FrameEncoder(6, units=8, projection_dim=7, grid_regions=16, grid_channels=3)
    enc.build()
    out, state = enc(np.random.rand(2, N, 16, 6).astype("float32"), mask=np.ones((2, N), bool))
    assert out.shape == (2, N, 8) and state["h"].shape == (2, 8)


def test_caption_model_masks_frames_and_attends_only_to_real_ones():
    v = vocab()
    model = VideoCaptionModel(len(v), D, units=16, projection_dim=8, embedding_dim=8, attention_units=8)
    x, mask = features()
    tokens = np.array([[1, 4, 5, 6], [1, 4, 5, 0], [1, 4, 0, 0]], np.int32)
    logits = model({"features": x, "mask": mask, "tokens": tokens})
    assert logits.shape == (3, 4, len(v))
    garbage = x.copy()
    garbage[~mask] = -50.0
    np.testing.assert_allclose(logits, model({"features": garbage, "mask": mask, "tokens": tokens}), atol=1e-4)
    out = model.generate(x, mask, beam_size=2, max_length=6)
    assert out["tokens"].shape == (3, 2, 6)
    attention = out["attention"].numpy()  # (B, K, T, N)
    assert attention.shape == (3, 2, 6, N)
    lengths = out["lengths"].numpy()
    for b in range(3):
        steps = lengths[b, 0]
        np.testing.assert_allclose(attention[b, 0, :steps].sum(-1), 1.0, atol=1e-5)
        assert np.all(attention[b, :, :, ~mask[b]] == 0)


def test_caption_model_never_generates_unk_or_start():
    v = vocab()
    model = VideoCaptionModel(len(v), D, units=16, projection_dim=8, embedding_dim=8, attention_units=8)
    out_layer = model.decoder.vocab_dense
    kernel, bias = out_layer.get_weights()
    bias[:] = 0.0
    bias[[1, 3]] = 50.0  # <start> and <unk> would win every step
    out_layer.set_weights([kernel * 0.0, bias])
    x, mask = features()
    tokens = model.generate(x, mask, beam_size=2, max_length=6)["tokens"].numpy()
    assert not np.isin(tokens, [1, 3]).any()


def test_caption_model_learns_captions_from_features():
    v = vocab()
    keras.utils.set_random_seed(0)
    model = VideoCaptionModel(len(v), D, units=32, projection_dim=16, embedding_dim=16, attention_units=16,
                              dropout=0.0)
    x = np.random.default_rng(1).normal(size=(2, N, D)).astype("float32")
    mask = np.ones((2, N), bool)
    seqs = [v.encode("a red circle moves left".split(), add_start=True, add_end=True),
            v.encode("a blue square grows".split(), add_start=True, add_end=True)]
    toks = np.zeros((2, 7), np.int32)
    for i, s in enumerate(seqs):
        toks[i, :len(s)] = s
    from captioner.models.caption_decoder_model import masked_sparse_ce

    model.compile(optimizer=keras.optimizers.Adam(0.01), loss=masked_sparse_ce)
    data = tf.data.Dataset.from_tensors(({"features": x, "mask": mask, "tokens": toks[:, :-1]}, toks[:, 1:]))
    model.fit(data.repeat(), steps_per_epoch=60, epochs=1, verbose=0)
    out = model.generate(x, mask, beam_size=2, max_length=8)["tokens"].numpy()[:, 0]
    assert [v.decode(r.tolist()) for r in out] == [s.split() for s in ("a red circle moves left", "a blue square grows")]


def test_classifier_uses_last_state_and_per_frame_predictions():
    model = VideoClassifierModel(3, D, units=8, projection_dim=8)
    x, mask = features()
    logits, frame_logits = model.classify(x, mask)
    assert logits.shape == (3, 3) and frame_logits.shape == (3, N, 3)
    # V h_T + b: the final logits equal the per-frame logits at each clip's last real frame
    last = mask.sum(1) - 1
    np.testing.assert_allclose(logits, np.asarray(frame_logits)[np.arange(3), last], atol=1e-5)


def _pixels(batch=2, size=32, seed=0):
    rng = np.random.default_rng(seed)
    frames = rng.integers(0, 256, size=(batch, N, size, size, 3)).astype("uint8")
    mask = np.ones((batch, N), bool)
    mask[1, 2:] = False
    frames[1, 2:] = 0
    return frames, mask


def _fresh_process_outputs(paths, frames, mask, tmp_path):
    """Load each saved model in ONE new Python process and run it on the same inputs."""
    np.save(tmp_path / "frames.npy", frames)
    np.save(tmp_path / "mask.npy", mask)
    script = textwrap.dedent(f"""
        import json, numpy as np
        from captioner.models.loading import load_video_model
        frames, mask = np.load({str(tmp_path / 'frames.npy')!r}), np.load({str(tmp_path / 'mask.npy')!r})
        result = {{}}
        for path in {[str(p) for p in paths]!r}:
            out = load_video_model(path)({{"frames": frames, "mask": mask}})
            result[path] = {{k: np.asarray(v).tolist() for k, v in out.items()}}
        print(json.dumps(result))
    """)
    return json.loads(fresh_python.last_line(script))


def test_video_models_save_load_in_a_fresh_process_give_same_outputs(tmp_path):
    v = vocab()
    captioner_model = VideoCaptioner(
        tiny_backbone(**VIDEO_BACKBONE),
        VideoCaptionModel(len(v), 6, units=8, projection_dim=8, embedding_dim=8, attention_units=8),
        v, num_frames=N, beam_size=2, max_length=5)
    classifier = VideoClassifier(
        tiny_backbone(**VIDEO_BACKBONE), VideoClassifierModel(4, 6, feature="grid", grid_regions=16, grid_channels=2, units=8,
                                              projection_dim=8),  # the grid path, through the (4, 4, 6) grid
        ["Bounce", "Grow", "MoveLeft", "MoveRight"], num_frames=N)
    frames, mask = _pixels()
    paths = [tmp_path / "video_caption.keras", tmp_path / "video_classify.keras"]
    expected = []
    for model, path in zip((captioner_model, classifier), paths):
        expected.append({k: np.asarray(t) for k, t in model({"frames": frames, "mask": mask}).items()})
        model.save(path)
    np.testing.assert_allclose(expected[1]["probabilities"].sum(-1), 1.0, atol=1e-5)
    got = _fresh_process_outputs(paths, frames, mask, tmp_path)
    cap, cls = got[str(paths[0])], got[str(paths[1])]
    np.testing.assert_array_equal(expected[0]["tokens"], cap["tokens"])
    np.testing.assert_allclose(expected[0]["scores"], cap["scores"], atol=1e-5)
    np.testing.assert_allclose(expected[0]["attention"], cap["attention"], atol=1e-5)
    np.testing.assert_allclose(expected[1]["probabilities"], cls["probabilities"], atol=1e-5)
    np.testing.assert_allclose(expected[1]["frame_probabilities"], cls["frame_probabilities"], atol=1e-5)
    loaded = keras.models.load_model(paths[0])
    assert loaded.vocabulary_tokens == v.to_config()["tokens"]
    assert keras.models.load_model(paths[1]).class_names == ["Bounce", "Grow", "MoveLeft", "MoveRight"]


def test_backbone_runs_only_on_real_frames_padding_is_ignored():
    v = vocab()
    inner = VideoCaptionModel(len(v), 6, units=8, projection_dim=8, embedding_dim=8, attention_units=8)
    model = VideoCaptioner(tiny_backbone(**VIDEO_BACKBONE), inner, v, num_frames=N, beam_size=2, max_length=5)
    frames, mask = _pixels()
    a = model({"frames": frames, "mask": mask})
    frames2 = frames.copy()
    frames2[1, 2:] = 255  # different pixels at masked frames
    b = model({"frames": frames2, "mask": mask})
    np.testing.assert_array_equal(a["tokens"], b["tokens"])
    np.testing.assert_allclose(a["scores"], b["scores"], atol=1e-5)


def test_describe_arrays_returns_frames_and_attention():
    v = vocab()
    inner = VideoCaptionModel(len(v), 6, units=8, projection_dim=8, embedding_dim=8, attention_units=8)
    model = VideoCaptioner(tiny_backbone(**VIDEO_BACKBONE), inner, v, num_frames=4, beam_size=2, max_length=5)
    clip = np.random.default_rng(0).integers(0, 256, size=(3, 40, 50, 3)).astype("uint8")  # 3 frames < N
    result = model.describe(clip)
    assert result.frames.shape == (3, 32, 32, 3)
    assert result.attention.shape == (len(result.tokens) + 1 if len(result.tokens) < 5 else 5, 3)
    np.testing.assert_allclose(result.attention.sum(-1), 1.0, atol=1e-5)
    assert json.dumps(result.to_json())
    cls = VideoClassifier(tiny_backbone(**VIDEO_BACKBONE), VideoClassifierModel(2, 6, units=8, projection_dim=8), ["a", "b"],
                          num_frames=4)
    label = cls.describe(clip)
    assert label.label in ("a", "b") and abs(sum(label.probabilities.values()) - 1) < 1e-5
    assert label.frame_probabilities.shape == (3, 2)


def test_weights_load_into_fresh_models_before_any_call(tmp_path):
    """What `--resume` does: load a checkpoint into a just-constructed model."""
    v = vocab()
    for make in (lambda: VideoCaptionModel(len(v), D, units=8, projection_dim=8, embedding_dim=8, attention_units=8),
                 lambda: VideoClassifierModel(3, D, units=8, projection_dim=8)):
        a, b = make(), make()
        path = tmp_path / "w.weights.h5"
        a.save_weights(path)
        b.load_weights(path)
        for wa, wb in zip(a.weights, b.weights):
            np.testing.assert_array_equal(np.asarray(wa), np.asarray(wb))


@pytest.mark.parametrize("special", ["<pad>", "<start>", "<unk>"])
def test_a_special_token_is_never_generated_so_each_word_keeps_its_attention_row(special):
    """Even a model that scores `special` highest at every step writes real words only: a
    generated <pad> used to be dropped from the words and leave its attention row behind, so
    the frame-attention strip of `captioner video --attention-dir` failed on the clip."""
    from captioner.text.vocabulary import SPECIAL_TOKENS

    v = vocab()
    keras.utils.set_random_seed(0)
    inner = VideoCaptionModel(len(v), 6, units=8, projection_dim=8, embedding_dim=8, attention_units=8)
    kernel, bias = inner.decoder.vocab_dense.get_weights()
    bias[SPECIAL_TOKENS.index(special)] = 100.0
    inner.decoder.vocab_dense.set_weights([kernel, bias])
    model = VideoCaptioner(tiny_backbone(**VIDEO_BACKBONE), inner, v, num_frames=4, beam_size=2, max_length=5)
    clip = np.random.default_rng(0).integers(0, 256, size=(4, 32, 32, 3)).astype("uint8")
    result = model.describe(clip)
    assert special not in result.tokens and len(result.tokens) >= 1
    assert result.attention.shape == (min(len(result.tokens) + 1, 5), 4)
