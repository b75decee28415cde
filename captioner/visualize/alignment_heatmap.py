"""Soft-alignment matrices of a translator drawn as in Bahdanau et al. (2015), figure 3.

Source tokens run along the top (x), generated target tokens down the side (y); cell (i, j)
is the weight the decoder gave source token j when it emitted target token i, in grey scale
(0 black, 1 white). Drawn with matplotlib's object API on the Agg canvas (no pyplot state),
so it is safe in worker threads and headless servers.
"""

import functools
import glob
import io

import numpy as np

from captioner.errors import InputError

# fonts tried, in order, for characters DejaVu Sans lacks (Devanagari for transliteration); a
# Debian system gets the first from `make system-deps` (fonts-lohit-deva)
_SCRIPT_FONT_GLOBS = ("/usr/share/fonts/truetype/lohit-devanagari/*.ttf", "/usr/share/fonts/**/NotoSans*Devanagari*.ttf",
                      "/usr/share/fonts/**/*Devanagari*.ttf")


@functools.lru_cache(maxsize=1)
def font_families():
    """["DejaVu Sans", then the script fonts found]: matplotlib falls back along this list glyph
    by glyph, so Devanagari labels draw where a Devanagari font is installed (registered with
    matplotlib here, whatever its font cache holds)."""
    from matplotlib import font_manager

    families = ["DejaVu Sans"]
    for pattern in _SCRIPT_FONT_GLOBS:
        for path in sorted(glob.glob(pattern, recursive=True)):
            try:
                font_manager.fontManager.addfont(path)
                name = font_manager.FontProperties(fname=path).get_name()
            except (OSError, RuntimeError, ValueError):
                continue
            if name not in families:
                families.append(name)
    return families


def _check(source_tokens, target_tokens, weights):
    source = [str(t) for t in source_tokens]
    target = [str(t) for t in target_tokens]
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 2:
        raise InputError(f"alignment weights: expected a 2-D array (target, source), got shape {w.shape}")
    if w.shape != (len(target), len(source)):
        raise InputError(f"alignment weights: shape {w.shape} does not match {len(target)} target x "
                         f"{len(source)} source tokens")
    if not source or not target:
        raise InputError("alignment heat map: need at least one source and one target token")
    if not np.all(np.isfinite(w)):
        raise InputError("alignment weights: contain NaN or infinite values")
    return source, target, w


def alignment_figure(source_tokens, target_tokens, weights, title=None, cell_inches=0.32, dpi=100,
                     vmax=1.0, cmap="gray", xlabel="source", ylabel="target (generated)"):
    """A matplotlib `Figure` of the alignment matrix (see module doc); `vmax=None` scales to the max;
    `xlabel` / `ylabel` title the axes (an entailment pair's: "premise" / "hypothesis")."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    source, target, w = _check(source_tokens, target_tokens, weights)
    longest_src = max(len(t) for t in source)
    longest_tgt = max(len(t) for t in target)
    # room for the matrix plus the rotated source labels above and target labels left of it
    width = len(source) * cell_inches + 0.09 * longest_tgt + 1.2
    height = len(target) * cell_inches + 0.09 * longest_src + 1.2
    fig = Figure(figsize=(max(width, 2.5), max(height, 2.5)), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    image = ax.imshow(w, cmap=cmap, vmin=0.0, vmax=float(w.max()) if vmax is None else vmax,
                      interpolation="nearest", aspect="equal")
    fonts = font_families()
    ax.set_xticks(range(len(source)), labels=source, rotation=90, fontfamily=fonts)
    ax.set_yticks(range(len(target)), labels=target, fontfamily=fonts)
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.tick_params(length=0)
    fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    if title:
        ax.text(0.5, -0.02, str(title), transform=ax.transAxes, ha="center", va="top", fontsize=10,
                fontfamily=fonts)
    return fig


def alignment_heatmap(source_tokens, target_tokens, weights, title=None, **kwargs):
    """PNG bytes of the alignment heat map: weights (len(target), len(source)), labelled axes."""
    fig = alignment_figure(source_tokens, target_tokens, weights, title=title, **kwargs)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", facecolor="white")
    return buf.getvalue()


def save_alignment_heatmap(path, source_tokens, target_tokens, weights, title=None, **kwargs):
    """Write `alignment_heatmap(...)` to `path` atomically; returns the path."""
    from captioner.visualize.attention_overlay import write_png_atomic

    return write_png_atomic(path, alignment_heatmap(source_tokens, target_tokens, weights, title=title, **kwargs))
