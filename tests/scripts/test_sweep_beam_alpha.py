"""scripts/sweep_beam_alpha.py on a tiny captioner of drawn shapes: the choice is made on the tune
half by the figure asked for, and every setting says what its captions look like."""

import json

import pytest
from script_support import load_script


@pytest.fixture(scope="module")
def sweep():
    return load_script("sweep_beam_alpha")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from support.training import train_caption, write_shapes_flickr8k

    data = write_shapes_flickr8k(tmp_path_factory.mktemp("shapes8k"))
    out = tmp_path_factory.mktemp("xe")
    assert train_caption(data, out, "--epochs", "1", "--final-eval-beams", "") == 0
    return data, out / "features.h5", out / "run" / "model.keras"


def test_the_choice_is_the_best_tune_half_setting_by_the_figure_asked_for(sweep, tiny, tmp_path):
    select, other = "CIDEr", "BLEU-4"
    data, features, model = tiny
    out = tmp_path / "sweep.json"
    assert sweep.main(["--model", str(model), "--features", str(features), "--data-dir", str(data),
                       "--beams", "1,2", "--alphas", "0,1", "--select", select, "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    rows = result["results"]
    assert [(r["beam"], r["alpha"]) for r in rows] == [(1, 0.0), (2, 0.0), (2, 1.0)]  # greedy once
    best = max(rows, key=lambda r: (r["tune"][select], r["tune"][other]))
    assert result["chosen"] == {"beam": best["beam"], "alpha": best["alpha"]}
    assert result["selected_by"] == f"tune-half {select}"
    assert result["tune_images"] + result["report_images"] == 6
    for r in rows:
        assert 1 <= r["dev"]["distinct_captions"] <= 6 and r["dev"]["caption_length"] > 0
        assert r["dev"]["vocabulary"] >= 1
