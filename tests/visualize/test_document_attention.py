"""The HAN picture: shades by hand-worked weights, escaping, and shape checks."""

import math

import pytest

from captioner.visualize.document_attention import document_attention_html, document_attention_png, word_intensities


def test_word_intensities_scale_by_the_square_root_of_the_sentence_weight():
    shades = word_intensities([0.64, 0.36], [[0.5, 0.5], [1.0]])
    # raw: 0.8*0.5=0.4, 0.4; 0.6*1.0=0.6 -> scaled by the largest (0.6)
    assert [[round(v, 6) for v in s] for s in shades] == [[round(0.4 / 0.6, 6)] * 2, [1.0]]
    assert word_intensities([], []) == []
    assert word_intensities([0.0], [[0.0]]) == [[0.0]]


def test_html_escapes_words_and_shades_by_weight():
    html = document_attention_html([["<b>", "x"], "y z"], [0.75, 0.25], [[0.9, 0.1], [0.5, 0.5]])
    assert "&lt;b&gt;" in html and "<b>" not in html
    assert html.count("rgba(220,40,40,") == 2 and "rgba(220,40,40,1.000)" in html
    assert "rgba(220,40,40,0.333)" in html  # 0.25 / 0.75
    top = 0.9 * math.sqrt(0.75)
    assert f"rgba(40,90,220,{0.85:.3f})" in html and f'title="{0.1 * math.sqrt(0.75) / top:.3f}"' in html


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="2 sentences, 1 sentence weights"):
        document_attention_html([["a"], ["b"]], [1.0], [[1.0], [1.0]])
    with pytest.raises(ValueError, match="2 words has 1 word weights"):
        document_attention_html([["a", "b"]], [1.0], [[1.0]])


def test_png_is_written(tmp_path):
    path = document_attention_png(tmp_path / "doc.png", [["a"] * 40, ["b", "c"]], [0.7, 0.3],
                                  [[1 / 40] * 40, [0.2, 0.8]], title="rec.motorcycles", width_chars=30)
    data = (tmp_path / "doc.png").read_bytes()
    assert str(path).endswith("doc.png") and data.startswith(b"\x89PNG") and len(data) > 1000
