"""scripts/set_decoding_defaults.py: an image captioner's beam width and alpha are rewritten in
place, weights and outputs otherwise unchanged, and its card records the step."""

import json

import keras
import numpy as np
import pytest
from script_support import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("set_decoding_defaults")


@pytest.fixture()
def captioner_file(tmp_path):
    from support.tiny_captioner import save_tiny_captioner

    path = tmp_path / "tiny.keras"
    save_tiny_captioner(path)
    (tmp_path / "tiny.json").write_text(json.dumps({"model": "tiny.keras", "task": "caption",
                                                    "command": ["captioner train caption --x 1"]}))
    return path


def test_an_image_captioners_beam_and_alpha_change_and_nothing_else(script, captioner_file):
    import captioner  # noqa: F401

    before = keras.models.load_model(captioner_file)
    assert (before.beam_size, before.alpha) == (2, 0.0)
    assert script.main(["--model", str(captioner_file), "--beam-size", "3", "--alpha", "1"]) == 0
    after = keras.models.load_model(captioner_file)
    assert (after.beam_size, after.alpha, after.max_length) == (3, 1.0, before.max_length)
    for x, y in zip(before.get_weights(), after.get_weights()):  # the same weights, stored float16
        np.testing.assert_array_equal(y, x.astype(np.float16).astype(np.float32))
    before.set_weights(after.get_weights())
    pixels = np.random.default_rng(0).integers(0, 255, size=(2, 32, 32, 3)).astype(np.float32)
    a, b = before.generate(pixels, beam_size=3, alpha=1.0), after.generate(pixels)  # its new defaults
    np.testing.assert_array_equal(a["tokens"], b["tokens"])
    card = json.loads(captioner_file.with_suffix(".json").read_text())
    assert card["command"][-1].startswith("python scripts/set_decoding_defaults.py --model")
    assert card["extra"]["decoding_defaults"] == {"before": {"beam_size": 2, "alpha": 0.0},
                                                  "after": {"beam_size": 3, "alpha": 1.0}}


def test_an_image_captioner_refuses_seq2seq_only_settings(script, captioner_file):
    with pytest.raises(SystemExit):
        script.main(["--model", str(captioner_file), "--no-repeat-ngram", "3"])
    import captioner  # noqa: F401

    assert keras.models.load_model(captioner_file).beam_size == 2  # untouched
