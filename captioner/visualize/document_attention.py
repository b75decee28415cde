"""A document shaded by a hierarchical attention network's two attentions, as in Yang et al.
2016 (Figure 5): each sentence gets a red bar as dark as its sentence weight, each word a blue
background as dark as its word weight times the square root of its sentence's weight (so the
words of an ignored sentence stay pale however much they matter inside it).

Pure functions on plain lists: HTML for the app, and a PNG (matplotlib) for reports."""

from __future__ import annotations

import html
import io
import math

__all__ = ["document_attention_html", "document_attention_png", "word_intensities"]


def word_intensities(sentence_weights, word_weights):
    """Per sentence, per word: sqrt(p_sentence) * p_word, scaled so the largest is 1."""
    raw = [[math.sqrt(max(float(ps), 0.0)) * float(pw) for pw in ws] for ps, ws in zip(sentence_weights, word_weights)]
    top = max((v for ws in raw for v in ws), default=0.0)
    return [[v / top if top > 0 else 0.0 for v in ws] for ws in raw]


def document_attention_html(sentences, sentence_weights, word_weights, digits=2) -> str:
    """HTML of the document: one line per sentence, its weight and red bar, then its words on
    blue backgrounds. ``sentences`` are lists of words (or strings split at spaces). Every
    word is escaped."""
    sentences = [s.split() if isinstance(s, str) else list(s) for s in sentences]
    if not (len(sentences) == len(sentence_weights) == len(word_weights)):
        raise ValueError(f"{len(sentences)} sentences, {len(sentence_weights)} sentence weights, "
                         f"{len(word_weights)} word weight lists")
    top_sentence = max((float(w) for w in sentence_weights), default=0.0) or 1.0
    intensities = word_intensities(sentence_weights, word_weights)
    rows = []
    for words, weight, shades in zip(sentences, sentence_weights, intensities):
        if len(words) != len(shades):
            raise ValueError(f"a sentence of {len(words)} words has {len(shades)} word weights")
        bar = f"rgba(220,40,40,{float(weight) / top_sentence:.3f})"
        spans = " ".join(f'<span title="{float(s):.3f}" style="background:rgba(40,90,220,{0.85 * float(s):.3f});'
                         f'padding:0 2px;border-radius:3px">{html.escape(w)}</span>' for w, s in zip(words, shades))
        rows.append(f'<div style="display:flex;align-items:stretch;margin:2px 0">'
                    f'<div title="sentence weight" style="flex:0 0 3.2em;font-size:0.75em;color:#666;'
                    f'text-align:right;padding-right:4px">{float(weight):.{digits}f}</div>'
                    f'<div style="flex:0 0 8px;background:{bar};margin-right:8px"></div>'
                    f'<div style="line-height:1.7">{spans}</div></div>')
    return '<div class="han-document">' + "".join(rows) + "</div>"


def document_attention_png(path, sentences, sentence_weights, word_weights, title="", width_chars=110):
    """The same picture as a PNG (written atomically); long sentences wrap."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from captioner.visualize.attention_overlay import write_png_atomic

    sentences = [s.split() if isinstance(s, str) else list(s) for s in sentences]
    intensities = word_intensities(sentence_weights, word_weights)
    top_sentence = max((float(w) for w in sentence_weights), default=0.0) or 1.0
    lines = []  # (sentence index or None for a continuation, [(word, shade)])
    for i, (words, shades) in enumerate(zip(sentences, intensities)):
        line, used = [], 0
        for w, s in zip(words, shades):
            if line and used + len(w) + 1 > width_chars:
                lines.append((i if not any(k == i for k, _ in lines) else None, line))
                line, used = [], 0
            line.append((w, s))
            used += len(w) + 1
        lines.append((i if not any(k == i for k, _ in lines) else None, line))
    fig = plt.figure(figsize=(width_chars * 0.085, 0.3 * len(lines) + 0.6))
    ax = fig.add_axes([0, 0, 1, 1])
    ax.axis("off")
    ax.set_xlim(0, width_chars + 8)
    ax.set_ylim(len(lines) + 1, 0)
    if title:
        ax.text(0.5, 0.5, title, fontsize=10, weight="bold", va="center")
    renderer = fig.canvas.get_renderer()
    for row, (k, words) in enumerate(lines, start=1):
        if k is not None:
            ax.text(0.2, row + 0.5, f"{sentence_weights[k]:.2f}", fontsize=7, color="#555", va="center")
            ax.add_patch(plt.Rectangle((4.2, row + 0.1), 0.8, 0.8, color=(0.86, 0.16, 0.16,
                                                                           float(sentence_weights[k]) / top_sentence)))
        x = 6.0
        for w, s in words:
            t = ax.text(x, row + 0.5, w, fontsize=8, va="center", family="monospace",
                        bbox={"facecolor": (0.16, 0.35, 0.86, 0.85 * s), "edgecolor": "none", "pad": 1})
            width = t.get_window_extent(renderer).width / fig.dpi / (fig.get_figwidth() / (width_chars + 8))
            x += width + 0.8
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120)
    plt.close(fig)
    write_png_atomic(path, buffer.getvalue())
    return path
