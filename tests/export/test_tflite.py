"""TFLite conversion of a tiny captioner: the backbone alone (builtin ops) and the whole
captioner (the one beam search, Flex ops) give the Keras model's features and tokens."""

import numpy as np
import pytest

from captioner.export import tflite


@pytest.fixture(scope="module")
def tiny():
    from support.tiny_captioner import build_tiny_captioner

    model = build_tiny_captioner(max_length=6)
    rng = np.random.default_rng(0)
    pixels = [rng.integers(0, 256, (1, *model.input_size, 3), dtype=np.uint8) for _ in range(3)]
    return model, pixels


def test_backbone_converts_and_gives_the_keras_features(tiny, tmp_path):
    model, pixels = tiny
    size = tflite.write_tflite(model, tmp_path / "backbone.tflite", "backbone")
    assert size == (tmp_path / "backbone.tflite").stat().st_size > 0
    runner = tflite.Runner(tmp_path / "backbone.tflite", "backbone")
    for x in pixels:
        want = model.backbone(x.astype("float32"))["grid"].numpy()
        np.testing.assert_allclose(runner(x)["grid"], want, atol=1e-4)


def test_whole_captioner_converts_and_gives_the_keras_tokens(tiny):
    model, pixels = tiny
    runner = tflite.Runner(tflite.convert(model, "captioner"), "captioner")
    for x in pixels:
        got, want = runner(x), model.generate(x)
        np.testing.assert_array_equal(got["tokens"], want["tokens"])
        np.testing.assert_array_equal(got["lengths"], want["lengths"])
        np.testing.assert_allclose(got["scores"], want["scores"], atol=1e-4)
        np.testing.assert_allclose(got["attention"], want["attention"], atol=1e-4)


def test_unknown_part():
    with pytest.raises(ValueError, match="kind must be one of"):
        tflite.convert(None, "decoder")


def test_dynamic_range_quantisation_stores_int8_weights_and_still_captions(tiny, tmp_path, capsys):
    """--quantize dynamic: a smaller flat buffer (int8 weights) whose captioner still decodes (its
    figures against float32 are measured by scripts/bench_quantized.py, not assumed here)."""
    from captioner.cli import main

    model, pixels = tiny
    f32 = tflite.convert(model, "captioner")
    int8 = tflite.convert(model, "captioner", quantize="dynamic")
    assert len(int8) < len(f32)
    out = tflite.Runner(int8, "captioner")(pixels[0])
    assert out["tokens"].shape[:2] == (1, model.beam_size) and np.isfinite(out["scores"]).any()
    with pytest.raises(ValueError, match="quantize must be one of"):
        tflite.convert(model, "backbone", quantize="float16")
    path = tmp_path / "tiny.keras"
    model.save(path)
    assert main(["export", str(path), "--format", "saved_model", "--output", str(tmp_path / "sm"),
                 "--quantize", "dynamic"]) == 2
    assert "a TFLite option" in capsys.readouterr().err
    assert main(["export", str(path), "--format", "tflite", "--part", "backbone", "--quantize", "dynamic",
                 "--output", str(tmp_path / "b.tflite")]) == 0
