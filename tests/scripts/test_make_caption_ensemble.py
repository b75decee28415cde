"""scripts/make_caption_ensemble.py: two captioners of one backbone and vocabulary become one
.keras file that loads in safe mode and decodes both decoders together; members that cannot be
joined (another vocabulary, an ensemble) are refused by name."""

import json
import warnings

import keras
import numpy as np
import pytest
from script_support import load_script
from support.backbones import tiny_backbone
from support.tiny_captioner import build_tiny_captioner, save_tiny_captioner



@pytest.fixture(scope="module")
def script():
    return load_script("make_caption_ensemble")


@pytest.fixture()
def members(tmp_path):
    paths = [str(save_tiny_captioner(tmp_path / f"s{seed}.keras", seed=seed)) for seed in (0, 1)]
    card = {"model": "s0.keras", "task": "caption", "command": ["captioner extract x", "captioner train caption --seed 0"],
            "seed": 0, "data": {"train_images": 6}}
    (tmp_path / "s0.json").write_text(json.dumps(card))  # s1 has no card
    return paths


def test_two_captioners_become_one_file(script, members, tmp_path):
    from captioner.models.caption_decoder_ensemble import CaptionDecoderEnsemble

    out = tmp_path / "ensemble.keras"
    assert script.main([*members, "--output", str(out), "--alpha", "0.7"]) == 0
    model = keras.models.load_model(out)
    assert isinstance(model.decoder, CaptionDecoderEnsemble) and model.decoder.combine == "product"
    first = keras.models.load_model(members[0])
    assert (model.beam_size, model.alpha, model.max_length) == (first.beam_size, 0.7, first.max_length)
    assert model.training_config["ensemble_of"] == ["s0.keras", "s1.keras"]
    for x, y in zip(first.decoder.get_weights(), model.decoder.members[0].get_weights()):  # stored float16
        np.testing.assert_array_equal(y, x.astype(np.float16).astype(np.float32))
    pixels = np.random.default_rng(0).integers(0, 256, (2, 32, 32, 3)).astype(np.uint8)
    assert model.generate(pixels)["tokens"].shape[:2] == (2, first.beam_size)
    card = json.loads((tmp_path / "ensemble.json").read_text())  # the members' commands, then the join
    assert card["command"][:2] == ["captioner extract x", "captioner train caption --seed 0"]
    assert card["command"][-1].startswith("python scripts/make_caption_ensemble.py ") and "--alpha 0.7" in card["command"][-1]
    assert card["config"]["members"] == ["s0.keras", "s1.keras"] and card["config"]["alpha"] == 0.7
    assert card["extra"]["members"]["s0.keras"]["seed"] == 0 and card["extra"]["members_without_card"] == ["s1.keras"]
    assert card["data"] == {"train_images": 6}


def test_members_that_cannot_be_joined_are_refused(script, members, tmp_path, capsys):
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.text.vocabulary import SPECIAL_TOKENS, Vocabulary

    other = build_tiny_captioner(seed=2)
    words = Vocabulary(SPECIAL_TOKENS + tuple(f"w{i}" for i in range(len(other.vocabulary) - len(SPECIAL_TOKENS))))
    renamed = ImageCaptioner(tiny_backbone(), other.decoder, words, beam_size=2, max_length=6)
    path = tmp_path / "other_vocab.keras"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        renamed.save(path)
    with pytest.raises(SystemExit, match="other_vocab.keras: its vocabulary differs"):
        script.main([members[0], str(path), "--output", str(tmp_path / "x.keras")])
    joined = tmp_path / "joined.keras"
    assert script.main([*members, "--output", str(joined)]) == 0
    with pytest.raises(SystemExit, match="joined.keras: its decoder is a CaptionDecoderEnsemble"):
        script.main([members[0], str(joined), "--output", str(tmp_path / "y.keras")])
    with pytest.raises(SystemExit):
        script.main([members[0], "--output", str(tmp_path / "z.keras")])  # one member
    assert not (tmp_path / "x.keras").exists() and not (tmp_path / "y.keras").exists()
