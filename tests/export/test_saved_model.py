"""SavedModel export: the exported graph gives the captions and translations of the Keras
model, and runs in a fresh process that never imports captioner.

Fast tests on tiny random models (tests/support/tiny_captioner.py, a tiny Seq2Seq); slow
ones on the bundled Flickr8k captioner (sample photos and Flickr8k dev images) and the
bundled Multi30k translator.
"""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from captioner.export.saved_model import export_saved_model
from captioner.models.seq2seq import Seq2Seq
from captioner.text import Vocabulary
from captioner.text.vocabulary import UNK_ID
from support import fresh_python
from support.tiny_captioner import build_tiny_captioner, make_images

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "datasets"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(model, its SavedModel dir, good image paths)."""
    root = tmp_path_factory.mktemp("export")
    model = build_tiny_captioner(max_length=6)
    good, _ = make_images(root / "images")
    export_saved_model(model, root / "saved")
    return model, str(root / "saved"), good


# The prelude of the helper process: captioner is not in sys.modules, and importing it fails
GUARD = """
import importlib.abc, sys
assert 'captioner' not in sys.modules
class _NoCaptioner(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == 'captioner' or name.startswith('captioner.'):
            raise ImportError('captioner is blocked in this process')
sys.meta_path.insert(0, _NoCaptioner())
"""


# one process for this file's checks (support.fresh_python): started with captioner blocked, off
# this checkout's path and outside it, so a SavedModel that needed captioner fails its job there
WITHOUT_CAPTIONER = fresh_python.Helper(prelude=GUARD, env={"PYTHONPATH": None}, cwd="/")


def _fresh_process(script, *args):
    """Run `script` as `python -c` would in a process where captioner cannot be imported; its JSON stdout."""
    done = "\nimport sys\nassert 'captioner' not in sys.modules, 'the SavedModel imported captioner'\n"
    return json.loads(WITHOUT_CAPTIONER.last_line(script + done, *args, timeout=600))


def test_the_checks_process_cannot_import_captioner():
    blocked = WITHOUT_CAPTIONER.run("import captioner")
    assert blocked.returncode == 1 and "captioner is blocked in this process" in blocked.stderr
    assert WITHOUT_CAPTIONER.last_line("import os, sys; print(os.getcwd(), 'PYTHONPATH' in os.environ)") == "/ False"


CAPTION_SCRIPT = """
import json, sys
import tensorflow as tf
loaded = tf.saved_model.load(sys.argv[1])
images = tf.constant([open(p, "rb").read() for p in sys.argv[3:]])
sig = loaded.signatures["serving_default"]

def run(settings):  # {} : the model's own settings
    out = loaded.caption(images, **{k: tf.constant(v) for k, v in settings.items()}) if settings else loaded.caption(images)
    return {"captions": [c.decode() for c in out["caption"].numpy()],
            "scores": out["score"].numpy().tolist(), "attention": list(out["attention"].shape),
            "signature_outputs": sorted(sig.structured_outputs)}

settings = json.loads(sys.argv[2])  # a dict, or a list of them (one load for several settings)
print(json.dumps([run(s) for s in settings] if isinstance(settings, list) else run(settings)))
"""


def test_tiny_captioner_same_captions_in_process(tiny):
    model, saved, paths = tiny
    loaded = tf.saved_model.load(saved)
    images = tf.constant([open(p, "rb").read() for p in paths])
    for settings in [{}, {"beam_size": 1, "alpha": 0.0, "max_length": 4}, {"beam_size": 3, "alpha": 1.0, "max_length": 6}]:
        want = model.caption(paths, **settings)
        out = loaded.caption(images, **{k: tf.constant(v) for k, v in settings.items()})
        assert [c.decode() for c in out["caption"].numpy()] == [c.text for c in want]
        np.testing.assert_allclose(out["score"].numpy(), [c.score for c in want], rtol=1e-4, atol=1e-5)
        for b, c in enumerate(want):
            steps = len(c.attention)
            np.testing.assert_allclose(out["attention"].numpy()[b, :steps], c.attention, atol=1e-5)
            assert [w.decode() for w in out["words"].numpy()[b] if w] == c.tokens
            assert [h.decode() for h in out["hypotheses"].numpy()[b]] == [t for t, _ in c.hypotheses]
    # serving_default takes the images alone (issue 40 item 16), at the model's settings
    out = loaded.signatures["serving_default"](images=images)
    assert [c.decode() for c in out["caption"].numpy()] == [c.text for c in model.caption(paths)]
    out = loaded.signatures["caption_with_settings"](images=images, beam_size=tf.constant(1), alpha=tf.constant(0.0),
                                                     max_length=tf.constant(4))
    assert [c.decode() for c in out["caption"].numpy()] == [c.text for c in model.caption(paths, 1, 0.0, 4)]
    pixels = np.stack([model.load_pixels(p) for p in paths])
    out = loaded.signatures["caption_pixels"](pixels=tf.constant(pixels), beam_size=tf.constant(2),
                                              alpha=tf.constant(0.0), max_length=tf.constant(6))
    assert [c.decode() for c in out["caption"].numpy()] == [c.text for c in model.caption(paths)]


def test_a_broken_image_fails_the_call_with_an_error(tiny):
    _, saved, paths = tiny
    loaded = tf.saved_model.load(saved)
    with pytest.raises(tf.errors.InvalidArgumentError):
        loaded.caption(tf.constant([b"not an image"]))


@pytest.mark.slow  # ~50 s here: two fresh processes import TensorFlow
def test_tiny_captioner_runs_without_captioner_and_cli_describes_it(tiny):
    model, saved, paths = tiny
    got = _fresh_process(CAPTION_SCRIPT, saved, "{}", *paths)
    assert got["captions"] == [c.text for c in model.caption(paths)]
    assert {"caption", "score", "attention", "hypotheses", "words"} <= set(got["signature_outputs"])
    cli = Path(sys.executable).with_name("saved_model_cli")
    shown = subprocess.run([str(cli), "show", "--dir", saved, "--all"], capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr[-2000:]
    for text in ("signature_def['serving_default']", "signature_def['caption_with_settings']", "inputs['images']",
                 "inputs['beam_size']", "outputs['caption']", "DT_STRING"):
        assert text in shown.stdout


def _tiny_translator():
    keras.utils.set_random_seed(0)
    words = ("ein", "hund", "läuft", ".", "zwei", "männer", ",", "a", "dog", "runs", "two", "men")
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>") + words)
    return Seq2Seq.of(vocab, vocab, embedding_dim=8, units=16, attention_units=8, dropout=0.0, beam_size=3, alpha=1.0,
                   max_length=7, max_source_length=5)


def test_a_decoder_ensemble_exports_and_decodes_as_in_process(tiny, tmp_path):
    """An ImageCaptioner whose decoder is a CaptionDecoderEnsemble (`captioner model ensemble`):
    the SavedModel runs every member inside its one graph and gives the in-process captions."""
    from captioner.models.caption_decoder_ensemble import CaptionDecoderEnsemble
    from captioner.models.image_captioner import ImageCaptioner

    first, second = build_tiny_captioner(seed=3, max_length=6), build_tiny_captioner(seed=4, max_length=6)
    model = ImageCaptioner(first.backbone, CaptionDecoderEnsemble([first.decoder, second.decoder]), first.vocabulary,
                           beam_size=2, alpha=0.5, max_length=6)
    export_saved_model(model, tmp_path / "saved")
    _, _, paths = tiny
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    out = loaded.caption(tf.constant([open(p, "rb").read() for p in paths]))
    want = model.caption(paths)
    assert [c.decode() for c in out["caption"].numpy()] == [c.text for c in want]
    np.testing.assert_allclose(out["score"].numpy(), [c.score for c in want], rtol=1e-4, atol=1e-5)


def test_tiny_translator_same_translations(tmp_path):
    model = _tiny_translator()
    export_saved_model(model, tmp_path / "tr")
    loaded = tf.saved_model.load(str(tmp_path / "tr"))
    sentences = ["A dog runs.", "Two men, a dog!", "", "unknown words here", "a dog runs . a dog runs . a dog",
                 "Ein Hund läuft."]
    for settings in [{}, {"beam_size": 1, "alpha": 0.0, "max_length": 5}]:
        out, _ = _same_translations(model, loaded, sentences, settings)
    assert out["score"].numpy()[2] == -np.inf  # the empty sentence
    empty = loaded.translate(tf.constant(["", "  "]))  # only empty sentences (issue 40 item 15): "" each
    assert [t.decode() for t in empty["translation"].numpy()] == ["", ""]
    assert np.all(empty["score"].numpy() == -np.inf)
    plain = loaded.signatures["serving_default"](sentences=tf.constant(sentences))  # the sentences alone
    assert [t.decode() for t in plain["translation"].numpy()] == [t.text for t in model.translate(sentences)]
    assert "translate_with_settings" in loaded.signatures


def _same_translations(model, loaded, sentences, settings):
    """The SavedModel `loaded` writes what `model.translate` writes, with the same scores, at
    these decoding settings. Returns (the graph's outputs, the Python translations)."""
    want = model.translate(sentences, **settings)
    out = loaded.translate(tf.constant(sentences), **{k: tf.constant(v) for k, v in settings.items()})
    assert [t.decode() for t in out["translation"].numpy()] == [t.text for t in want]
    for b, t in enumerate(want):
        if t.text:
            assert out["score"].numpy()[b] == pytest.approx(t.score, rel=1e-4, abs=1e-5)
    return out, want


@pytest.mark.slow
def test_bundled_captioner_round_trip_in_a_fresh_process(tmp_path):
    """The bundled captioner, exported, gives the captions of keras.models.load_model + the
    project's captioning on the sample photos, Flickr8k dev images, a photo with EXIF rotation
    and a half-transparent PNG, at the model's settings and at others."""
    from captioner.inference.batch import load_captioner

    model = load_captioner(REPO / "assets" / "models" / "flickr8k_attention.keras")
    paths = sorted(str(p) for p in (REPO / "assets" / "samples").glob("*.jpg"))
    dev = DATA / "flickr8k" / "Flickr_8k.devImages.txt"
    if dev.is_file():
        names = dev.read_text().split()[:4]
        paths += [str(DATA / "flickr8k" / "Images" / n) for n in names if (DATA / "flickr8k" / "Images" / n).is_file()]
    assert len(paths) >= 4
    # a phone photo (EXIF: rotated 90 degrees) and a transparent PNG, as users send them
    from PIL import Image

    cat = Image.open(REPO / "assets" / "samples" / "cat.jpg").convert("RGB")
    exif = Image.Exif()
    exif[0x0112] = 6
    cat.transpose(Image.Transpose.ROTATE_90).save(tmp_path / "cat_exif6.jpg", quality=92, exif=exif)
    rgba = cat.convert("RGBA")
    rgba.putalpha(Image.linear_gradient("L").resize(cat.size))
    rgba.save(tmp_path / "cat_alpha.png")
    paths += [str(tmp_path / "cat_exif6.jpg"), str(tmp_path / "cat_alpha.png")]
    export_saved_model(model, tmp_path / "saved")
    all_settings = [{}, {"beam_size": 2, "alpha": 0.0, "max_length": 12}]
    results = _fresh_process(CAPTION_SCRIPT, str(tmp_path / "saved"), json.dumps(all_settings), *paths)
    assert len(results) == len(all_settings)
    for settings, got in zip(all_settings, results):
        want = model.caption(paths, **settings)
        assert got["captions"] == [c.text for c in want]
        np.testing.assert_allclose(got["scores"], [c.score for c in want], rtol=1e-4, atol=1e-4)
        assert got["attention"][2:] == list(model.grid_shape)


TRANSLATE_SCRIPT = """
import json, sys
import tensorflow as tf
import tensorflow_text  # the SentencePiece op of a subword translator
loaded = tf.saved_model.load(sys.argv[1])
sentences = json.loads(sys.argv[2])
out = loaded.translate(tf.constant(sentences))
print(json.dumps([t.decode() for t in out["translation"].numpy()]))
"""


def test_tiny_truecased_translator_same_translations(tmp_path):
    """The graph's truecasing is the Python one: the table's form, else the source's (not its
    first word), then the first word capitalized; <unk> copies keep their written case."""
    model = _tiny_translator()
    config = model.get_config()
    config["target_tokenizer"] = {**config["target_tokenizer"],
                                  "truecase": {"hund": "Hund", "männer": "Männer", "dog": "Dog", "zwei": "ZWEI"}}
    cased = Seq2Seq.from_config(config)
    cased.set_weights(model.get_weights())
    export_saved_model(cased, tmp_path / "tr")
    loaded = tf.saved_model.load(str(tmp_path / "tr"))
    sentences = ["A dog runs.", "Two Men, a Dog!", "", "Jane sees Ein Bob", "ein Hund läuft . Jane", "Ünknown Éric"]
    for settings in [{}, {"beam_size": 1, "alpha": 0.0, "max_length": 5}]:
        want = cased.translate(sentences, **settings)
        out = loaded.translate(tf.constant(sentences), **{k: tf.constant(v) for k, v in settings.items()})
        got = [t.decode() for t in out["translation"].numpy()]
        assert got == [t.text for t in want]
        assert [t.lower() for t in got] == [t.text.lower() for t in model.translate(sentences, **settings)]
    texts = [t.text for t in cased.translate(sentences)]
    assert "Dog" in texts[0] and "dog" not in texts[0]  # the table's form
    assert "Ein" in texts[3].split() and "ein" not in texts[3].split()  # not in the table: the source's form
    assert "ein" in texts[4].split()  # the source's first word lends its form to nothing


@pytest.mark.slow
@pytest.mark.parametrize("name", ["multi30k_en_de", "anki_fr_en"])
def test_bundled_translator_round_trip_in_a_fresh_process(tmp_path, name):
    """The graph's tokenizer and output handling are the Python ones on each bundled translator (the
    French source's elisions split in the graph as in Python: "l'afrique" -> "l'", "afrique")."""
    from captioner.models.seq2seq import load_translator

    model = load_translator(REPO / "assets" / "models" / f"{name}.keras")
    val = DATA / "multi30k" / "val.en.gz"
    if name == "anki_fr_en":
        sentences = ["Nous sommes allés au marché samedi matin.", "J'ai vu l'homme qu'elle aime.",
                     "Lorsqu'il pleut, c'est l'heure du thé.", "Tom n'a pas d'argent.", "Où est Zoé ?"]
    elif val.is_file():
        with gzip.open(val, "rt", encoding="utf-8") as f:
            sentences = [next(f).strip() for _ in range(30)]
    else:  # a clone without ../shared (CI): sentences of our own
        sentences = ["A dog runs on the beach.", "Two men are playing football in a park.",
                     "A woman in a red dress is singing on stage.", "Children play in the snow."]
    sentences += ["", "A man says \"hello\" (loudly)."]
    export_saved_model(model, tmp_path / "tr")
    got = _fresh_process(TRANSLATE_SCRIPT, str(tmp_path / "tr"), json.dumps(sentences))
    assert got == [t.text for t in model.translate(sentences)]


def test_tiny_subword_translator_same_translations(tmp_path):
    """The graph's SentencePiece path (tensorflow-text) is the Python one: same pieces, the
    <unk> copy of a whole source word by summed piece attention, the same detokenized text."""
    from captioner.text.subword import WORD_START, encode_pieces, piece_vocabulary, to_base64, train_sentencepiece
    from captioner.text.vocabulary import SPECIAL_TOKENS

    en = ["A man in an orange hat.", "Two dogs play in the snow.", "A woman rides a bike over the street."] * 10
    de = ["Ein Mann mit einem orangefarbenen Hut.", "Zwei Hunde spielen im Schnee.",
          "Eine Frau fährt Fahrrad über die Straße."] * 10
    src = {"spm": to_base64(train_sentencepiece(en, 50)), "lower": False}
    tgt = {"spm": to_base64(train_sentencepiece(de, 70)), "lower": False}
    keras.utils.set_random_seed(3)
    vocab = [Vocabulary(SPECIAL_TOKENS + tuple(piece_vocabulary(t["spm"]))) for t in (src, tgt)]
    model = Seq2Seq.of(*vocab, embedding_dim=8, units=16, attention_units=8, dropout=0.0, beam_size=3, max_length=12,
                    max_source_length=9, source_tokenizer=src, target_tokenizer=tgt, replace_unk=True)
    kernel, bias = model.decoder.vocab_dense.get_weights()
    bias[UNK_ID] += 1.5  # <unk> often enough that the copy path runs
    model.decoder.vocab_dense.set_weights([kernel, bias])
    sentences = ["A man in Zürich.", "Two dogs.", "", "Jane rides a bike over the street in Åre today", "  two  Dogs  ",
                 "A woman in an orange hat rides a bike."]
    export_saved_model(model, tmp_path / "sw")
    import tensorflow_text  # noqa: F401  (registers the SentencePiece op for loading)

    loaded = tf.saved_model.load(str(tmp_path / "sw"))
    out = loaded.translate(tf.constant(sentences))
    got_pieces = [[p.decode() for p in row if p] for row in out["source_tokens"].numpy()]
    assert got_pieces == [encode_pieces(s, src["spm"])[:9] for s in sentences]
    copied = 0
    for settings in [{}, {"beam_size": 1, "alpha": 0.0, "max_length": 6}]:
        out, want = _same_translations(model, loaded, sentences, settings)
        assert all(WORD_START not in t.text for t in want)
        copied += sum(t.replaced_unk for t in want)
    assert out["score"].numpy()[2] == -np.inf
    assert copied > 0  # the <unk> copy was compared too


@pytest.mark.parametrize("subword", [False, True])
def test_distinct_copy_and_no_repeat_ngram_in_the_graph(tmp_path, subword):
    """A headline model's decoding settings (no repeated n-gram, an <unk> copying a source word
    not yet written) are the graph's too."""
    if subword:
        from captioner.text.subword import piece_vocabulary, to_base64, train_sentencepiece
        from captioner.text.vocabulary import SPECIAL_TOKENS

        text = ["Two dogs play in the snow.", "A man in an orange hat.", "The dog runs over the street."] * 10
        tok = {"spm": to_base64(train_sentencepiece(text, 45)), "lower": False}
        vocab = Vocabulary(SPECIAL_TOKENS + tuple(piece_vocabulary(tok["spm"])))
        keras.utils.set_random_seed(5)
        base = Seq2Seq.of(vocab, vocab, embedding_dim=8, units=16, attention_units=8, dropout=0.0, beam_size=3,
                       max_length=8, max_source_length=9, source_tokenizer=tok, target_tokenizer=tok)
    else:
        base = _tiny_translator()
    kernel, bias = base.decoder.vocab_dense.get_weights()
    bias[UNK_ID] += 3.0  # runs of <unk>: the distinct copy matters
    base.decoder.vocab_dense.set_weights([kernel, bias])
    model = Seq2Seq.from_config({**base.get_config(), "copy_distinct": True, "no_repeat_ngram": 2})
    model.set_weights(base.get_weights())
    export_saved_model(model, tmp_path / "m")
    import tensorflow_text  # noqa: F401

    loaded = tf.saved_model.load(str(tmp_path / "m"))
    sentences = ["A dog runs.", "Two men, a dog!", "zwei hunde laufen über qqq", "Two dogs play in Zürich today.", ""]
    want = model.translate(sentences)
    out = loaded.translate(tf.constant(sentences))
    assert [t.decode() for t in out["translation"].numpy()] == [t.text for t in want]
    argmax = Seq2Seq.from_config({**base.get_config(), "no_repeat_ngram": 2})
    argmax.set_weights(base.get_weights())
    assert [t.text for t in argmax.translate(sentences)] != [t.text for t in want]  # the setting was exercised
    assert sum(t.replaced_unk for t in want) >= 2
