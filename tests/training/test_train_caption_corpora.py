"""`captioner train caption --corpus ... --corpus ...`: one decoder on two corpora (Flickr8k and the
img2dataset layout), each caption started by its corpus's style token; the saved model writes either
style on request, never a style token, and loads in a fresh process."""

import json

import keras
import numpy as np
import pytest

from captioner.cli import main
from support import fresh_python
from support.training import TINY_CAPTION, write_shapes_flickr8k, write_shapes_img2dataset


@pytest.fixture(scope="module")
def two_corpora(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpora")
    flickr = write_shapes_flickr8k(root / "flickr8k")
    web = write_shapes_img2dataset(root / "web", start=500)
    out = root / "out"
    argv = ["train", "caption", "--corpus", str(flickr), "--features", str(out / "features.h5"),
            "--output-dir", str(out / "run"), *TINY_CAPTION, "--epochs", "8", "--patience", "8",
            "--corpus", f"img2dataset:{web}:train=00000:dev=00001:share=0.5"]
    argv[3] = f"flickr8k:{flickr}"
    assert main(argv) == 0
    return out / "run", flickr, web


def test_one_model_writes_each_corpus_in_its_style(two_corpora):
    run, flickr, web = two_corpora
    model = keras.models.load_model(run / "model.keras")
    assert model.styles == ["flickr8k", "web"] and model.style == "flickr8k"
    assert model.decoder.styles == {"flickr8k": len(model.vocabulary) - 2, "web": len(model.vocabulary) - 1}
    images = sorted(str(p) for p in (flickr / "Images").glob("*.jpg"))[-6:]  # Flickr8k's dev photos
    plain = [c.text for c in model.caption(images)]
    styled = [c.text for c in model.caption(images, style="web")]
    for text in plain + styled:
        assert "<" not in text and text
    # the web corpus's alt-text wording on request, Flickr8k's by default, on the same photos
    assert any("drawing" in t for t in styled) and not any("drawing" in t for t in plain)
    with pytest.raises(ValueError, match="writes flickr8k, web"):
        model.caption(images[:1], style="news")
    card = json.loads((run / "model.json").read_text())
    corpora = card["data"]["corpora"]
    assert [c["style"] for c in corpora] == ["flickr8k", "web"] and corpora[1]["epoch_share"] == 0.5
    assert corpora[1]["train_images"] == 12  # the caption without a photo and the empty caption skipped
    for key in ("flickr8k_beam_1", "web_beam_1"):
        assert "CIDEr" in card["metrics"][key]
    history = json.loads((run / "history.json").read_text())
    assert all({"dev_CIDEr", "dev_web_CIDEr", "dev_flickr8k_BLEU-4"} <= set(h) for h in history)


def test_the_style_travels_with_the_file(two_corpora):
    run, _, web = two_corpora
    image = sorted(str(p) for p in (web / "00001").glob("*.jpg"))[0]
    code = ("import sys, captioner, keras; m = keras.models.load_model(sys.argv[1]); "
            "print(m.caption([sys.argv[2]], style='web')[0].text)")
    result = fresh_python.run(code, str(run / "model.keras"), image)
    assert result.returncode == 0, result.stderr
    model = keras.models.load_model(run / "model.keras")
    assert result.stdout.strip() == model.caption([image], style="web")[0].text


def test_epoch_shares_draw_each_corpus_at_its_share():
    from captioner.data.caption_corpora import epoch_shares, parse_corpus
    from captioner.training.caption_data import CaptionExamples

    corpora = [parse_corpus("flickr8k:x"), parse_corpus("img2dataset:y:train=0:dev=1:share=0.25")]
    assert epoch_shares(corpora, [300, 100]) == [0.75, 0.25]
    corpus = np.array([0] * 300 + [1] * 20)
    examples = CaptionExamples(np.arange(320), np.zeros((320, 4), np.int32), np.full(320, 3), corpus)
    order = examples.epoch_order(0, 1, [0.75, 0.25])
    assert len(order) == 320 and (corpus[order] == 1).sum() == 80  # 20 captions repeated to a quarter
    assert sorted(set(order[corpus[order] == 1])) == list(range(300, 320))
    assert not np.array_equal(order, examples.epoch_order(1, 1, [0.75, 0.25]))


@pytest.mark.parametrize("spec, message", [
    ("flickr8k", "expected FORMAT:DIR"), ("tsv:x", "format 'tsv'"), ("img2dataset:x", "needs train=SHARDS"),
    ("flickr8k:x:share=2", "must be a number in"), ("flickr8k:x:colour=red", "fields are"),
    ("flickr8k:x:style=a b", "letters, digits")])
def test_a_bad_corpus_spec_is_named(spec, message):
    from captioner.errors import InputError
    from captioner.data.caption_corpora import parse_corpus

    with pytest.raises(InputError, match=message):
        parse_corpus(spec)


def test_fit_styles_lets_each_photo_take_its_corpus_style(two_corpora, tmp_path):
    """`captioner model fit-styles`: --style auto writes a Flickr8k-like photo as Flickr8k and a web
    photo as the web corpus would, in Python, in the batch CLI's rows and in the model's graph (export)."""
    import shutil

    run, flickr, web = two_corpora
    path = tmp_path / "auto.keras"
    shutil.copy(run / "model.keras", path)
    shutil.copy(run / "model.json", tmp_path / "auto.json")
    assert main(["model", "fit-styles", "--model", str(path), "--corpus", f"flickr8k:{flickr}",
                 "--corpus", f"img2dataset:{web}:train=00000:dev=00001", "--features", str(run.parent / "features.h5"),
                 "--centroids", "2", "--make-default"]) == 0
    model = keras.models.load_model(path)
    assert model.style == "auto"
    card = json.loads((tmp_path / "auto.json").read_text())
    assert card["extra"]["style_chooser"]["dev_photos_given_their_own_style_percent"] == {"flickr8k": 100.0, "web": 100.0}
    photos = sorted(str(p) for p in (flickr / "Images").glob("*.jpg"))[-2:] + \
        sorted(str(p) for p in (web / "00001").glob("*.jpg"))[:2]
    captions = model.caption(photos)
    assert [c.style for c in captions] == ["flickr8k", "flickr8k", "web", "web"]
    for photo, c in zip(photos, captions):  # the same caption as asking for that style
        assert c.text == model.caption([photo], style=c.style)[0].text
    pixels = np.stack([model.load_pixels(p) for p in photos])
    graph = model(pixels)  # the exported SavedModel's path: the choice in the graph
    eager = model.generate(pixels)
    np.testing.assert_array_equal(np.asarray(graph["tokens"])[:, 0], eager["tokens"][:, 0])
    import tensorflow as tf

    from captioner.export.saved_model import export_saved_model

    export_saved_model(model, tmp_path / "saved")  # the SavedModel chooses the style in its graph too
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    images = tf.constant([open(p, "rb").read() for p in photos])
    out = loaded.caption(images)
    assert [c.decode() for c in out["caption"].numpy()] == [c.text for c in captions]
    for style in ("flickr8k", "web", "auto", ""):  # the style per request, as the Python path writes it
        out = loaded.caption(images, style=tf.constant(style))
        want = [c.text for c in model.caption(photos, style=style or None)]
        assert [c.decode() for c in out["caption"].numpy()] == want, style
    with pytest.raises(tf.errors.InvalidArgumentError, match="writes flickr8k, web, auto"):
        loaded.caption(images, style=tf.constant("news"))
    out = tmp_path / "rows.jsonl"
    assert main(["caption", *photos, "--model", str(path), "--output", str(out), "--no-objects"]) == 0
    assert [json.loads(line)["style"] for line in out.read_text().splitlines()] == ["flickr8k", "flickr8k", "web", "web"]


def test_scst_on_two_corpora_samples_each_photo_in_its_style(two_corpora, tmp_path, monkeypatch):
    """`train caption --scst --corpus ... --corpus ...`: every training photo is sampled from its own
    corpus's style token and rewarded by CIDEr-D with its own corpus's document frequencies; selection
    on the mean dev CIDEr; the saved model still writes both styles."""
    from captioner.training.scst import CaptionRewards, SelfCriticalCaptioner

    run, flickr, web = two_corpora
    starts, groups = [], []
    sample = SelfCriticalCaptioner.sample
    monkeypatch.setattr(SelfCriticalCaptioner, "sample", lambda self, sources, seed, start=None: (
        starts.append(start), sample(self, sources, seed, start))[1])
    init = CaptionRewards.__init__
    monkeypatch.setattr(CaptionRewards, "__init__", lambda self, *a, **k: (groups.append(k.get("groups")),
                                                                            init(self, *a, **k))[1])
    out = tmp_path / "scst"
    argv = ["train", "caption", "--scst", "--init-model", str(run / "model.keras"),
            "--corpus", f"flickr8k:{flickr}", "--corpus", f"img2dataset:{web}:train=00000:dev=00001",
            "--features", str(run.parent / "features.h5"), "--output-dir", str(out), "--batch-size", "8",
            "--beam-size", "2", "--max-length", "8", "--scst-samples", "2", "--epochs", "1", "--final-eval-beams", "1"]
    assert main(argv) == 0
    model = keras.models.load_model(out / "model.keras")
    styles = model.decoder.styles
    assert starts and all(s is not None for s in starts)  # traced with the start input: never <start>
    (grouping,) = groups
    assert sorted(set(grouping.tolist())) == [0, 1] and (np.asarray(grouping) == 1).sum() == 12
    metrics = json.loads((out / "metrics.json").read_text())
    assert {"dev_flickr8k_CIDEr", "dev_web_CIDEr", "dev_CIDEr"} <= set(metrics["before_scst"])
    assert {"flickr8k_beam_1", "web_beam_1"} <= set(metrics)
    assert styles == {"flickr8k": len(model.vocabulary) - 2, "web": len(model.vocabulary) - 1}
    image = sorted(str(p) for p in (web / "00001").glob("*.jpg"))[0]
    assert "<" not in model.caption([image], style="web")[0].text
    bad = [*argv[:5], "--corpus", f"img2dataset:{web}:train=00000:dev=00001:style=news", *argv[7:]]
    bad[bad.index("--output-dir") + 1] = str(tmp_path / "bad")
    assert main(bad) == 2


def test_neither_data_dir_nor_corpus_is_one_line(tmp_path, capsys):
    assert main(["train", "caption", "--features", str(tmp_path / "f.h5"), "--output-dir", str(tmp_path / "run"),
                 *TINY_CAPTION, "--epochs", "1"]) == 2
    assert "give --data-dir (with --format) or one or more --corpus" in capsys.readouterr().err


def test_no_style_tokens_mixes_the_corpora_under_one_start_token(two_corpora, tmp_path, capsys):
    """The issue's comparison row: the same corpora and shares, every caption started by <start>;
    the saved model has no styles and its vocabulary no style token; each corpus is still scored
    apart during training."""
    _, flickr, web = two_corpora
    argv = ["train", "caption", "--corpus", f"flickr8k:{flickr}", "--corpus",
            f"img2dataset:{web}:train=00000:dev=00001:share=0.5", "--features", str(tmp_path / "features.h5"),
            "--output-dir", str(tmp_path / "run"), *TINY_CAPTION, "--epochs", "2", "--no-style-tokens"]
    assert main(argv) == 0
    model = keras.models.load_model(tmp_path / "run" / "model.keras")
    assert model.styles == [] and model.style is None and model.decoder.styles == {}
    assert not any(t.startswith("<") and t not in ("<pad>", "<start>", "<end>", "<unk>") for t in model.vocabulary.tokens)
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    assert all({"dev_web_CIDEr", "dev_flickr8k_CIDEr"} <= set(h) for h in history)
    images = sorted(str(p) for p in (flickr / "Images").glob("*.jpg"))[-2:]
    assert all(c.text and "<" not in c.text for c in model.caption(images))
    assert main([*argv[:-1], "--no-style-tokens", "--default-style", "web"]) == 2
    assert "--no-style-tokens" in capsys.readouterr().err
