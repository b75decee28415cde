"""Helpers shared by the app's pages: model registry and loading, uploads, images, downloads.

Every page imports this module as `common` (apps/app.py puts apps/ on sys.path). Models are
loaded once per process with `st.cache_resource`; uploads are read from memory (Streamlit
keeps them in memory, nothing here writes them to disk) and decoded with a clear error for
anything that is not a readable image.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import importlib
import io
import json
import threading
from pathlib import Path

import numpy as np
import streamlit as st
from PIL import Image

# `import captioner` loads no TensorFlow (the Keras classes register when Keras first loads): the
# pages draw their inputs first, then load TensorFlow and the model (seconds) under a spinner.

REPO_ROOT = Path(__file__).resolve().parent.parent
ASSETS = REPO_ROOT / "assets"
SAMPLES_DIR = ASSETS / "samples"

MAX_UPLOAD_MB = 20  # what the pages accept, checked by read_upload
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024  # Streamlit counts an upload MB as 2**20 bytes
# What the browser may send (also server.maxUploadSize in .streamlit/config.toml). Larger than
# MAX_UPLOAD_MB on purpose: a file the browser itself refuses never reaches the page, which then
# goes on showing the previous result (issue 23); one that arrives is refused by read_upload,
# with the page's own message and nothing else on it.
UPLOAD_TRANSFER_MB = 200
MAX_IMAGE_PIXELS = 50_000_000  # a 20 MB PNG can hold a far larger image than anyone photographs
# MIME types, not extensions: the browser filters the file dialog by them, and Streamlit then
# leaves the content check to `decode_image` (an extension list makes Streamlit raise on a
# wrong name before the page runs, where no page can turn it into a message).
IMAGE_TYPES = ["image/jpeg", "image/png", "image/webp", "image/gif"]
SAMPLE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp", ".gif")


def _registry():
    """`captioner.bundled` (the one registry of bundled models), read without TensorFlow."""
    return light_module("bundled")


def _models():
    """{key: BundledModel}: every page's models and defaults come from `captioner.bundled`, as the
    CLI's, the server's and the pipeline's do. A model's `path` honours its environment variable
    (e.g. CAPTIONER_CAPTION_MODEL); `bundled_path` is the file in assets/models/."""
    return dict(_registry().BY_KEY)


# ----------------------------------------------------------------------------- model cards

def light_module(name):
    """The module `captioner.NAME` (`model_card`, `bundled`): importing them loads no TensorFlow
    (`import captioner` stays light), so the pages read cards and the registry before any model."""
    return importlib.import_module(f"captioner.{name}")


def model_card_module():
    """`captioner.model_card` (`ModelCard`, `card_path`), without importing TensorFlow."""
    return light_module("model_card")


MODELS = _models()


def task_models(task):
    """The bundled models of a command's task (`captioner.bundled`), its default first."""
    return sorted((m for m in MODELS.values() if m.task == task), key=lambda m: not m.default)


@dataclasses.dataclass(frozen=True)
class CardRead:
    """The card of a model file as the app read it: `card` (a ModelCard) or None, with why not."""

    path: Path  # the JSON read, or looked for
    card: object | None = None
    error: str | None = None  # set when the JSON is there but is not a model card


def read_model_card(model_path) -> CardRead:
    """The card beside `model_path` (`NAME.json` beside `NAME.keras`)."""
    cards = model_card_module()
    path = Path(cards.card_path(model_path))
    if not path.is_file():
        return CardRead(path)
    try:
        return CardRead(path, cards.ModelCard.load(path))
    except Exception as exc:  # noqa: BLE001 - an unreadable card is reported, never fatal
        return CardRead(path, error=str(exc))


def spec_card(spec) -> CardRead:
    """The card for training `spec`'s model: the one beside its file, else (the file or its card
    is gone, or the env var points elsewhere) the bundled card in assets/models/."""
    read = read_model_card(spec.path)
    if read.card is None and spec.path != spec.bundled_path:
        bundled = read_model_card(spec.bundled_path)
        if bundled.card is not None:
            return bundled
    return read


def training_command(spec) -> str:
    """The command that trains `spec`'s model, from its card."""
    card = spec_card(spec).card
    command = card.training_command if card is not None else None
    return command or f"captioner train {spec.train_task} --help"


def show_training_command(spec, read: CardRead | None = None):
    """The training command in a code block; where the card lists other steps (feature
    extraction before it, a decoding sweep after it), all of them in order beneath."""
    read = read or spec_card(spec)
    card = read.card
    if card is None:
        st.code(f"captioner train {spec.train_task} --help", language="bash", wrap_lines=True)
        why = f"cannot be read ({read.error})" if read.error else "is not there"
        st.caption(f"The model card `{display_path(read.path)}` {why}, so its exact command cannot be shown.")
        return
    st.code(card.training_command, language="bash", wrap_lines=True)
    if len(card.commands) > 1:
        steps = "\n".join(f"{i}. `{c}`" + (" (the training command above)" if c == card.training_command else "")
                          for i, c in enumerate(card.commands, 1))
        st.markdown(f"All the steps, in order (`{display_path(read.path)}`):\n\n{steps}")


# ----------------------------------------------------------------------------- models

def register_model_classes():
    """Register every captioner Keras layer and model so `keras.models.load_model` finds them."""
    import captioner  # noqa: F401  (its __init__ imports captioner.layers and captioner.models)


@st.cache_resource(show_spinner=False, max_entries=8)
def _load_keras_model(path: str, mtime_ns: int, size: int):
    """Load one .keras file; cached per (path, modification time, size) for the whole process."""
    import keras

    from captioner.errors import InputError
    from captioner.models.loading import load_model_file

    try:
        register_model_classes()
        model = load_model_file(path, keras.Model, "a Keras model")  # the archive checked first, safe mode on
    except InputError as exc:  # names the file already: keep only what is wrong with it
        raise ModelLoadError(path, str(exc).removeprefix(f"{path}: ")) from None
    except Exception as exc:  # noqa: BLE001 - any failure means this file cannot be used
        raise ModelLoadError(path, f"{type(exc).__name__}: {exc}") from None
    return model, threading.Lock()  # the lock serializes inference on the shared model


class ModelLoadError(Exception):
    def __init__(self, path, detail):
        self.path = str(path)
        self.detail = detail
        super().__init__(f"{self.path}: cannot load the model: {detail}")


def load_model(path):
    """(model, lock) for the .keras file at `path`, loaded once per process."""
    path = Path(path)
    stat = path.stat()
    return _load_keras_model(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


def show_missing_model(spec, purpose: str):
    """Tell the user that `spec`'s model file is absent and which command makes it."""
    st.info(
        f"**{spec.title}** is not here yet: this page needs `{display_path(spec.path)}` "
        f"{purpose}. Train it from the repository root with the command below, the one in its model "
        f"card (`--help` lists the options; the card also holds the seed, data and metrics), then "
        f"reload this page, or point `{spec.env_var}` at a model file.",
        icon=":material/model_training:",
    )
    show_training_command(spec)


def model_or_explain(spec, purpose: str, kinds=None):
    """Load `spec`'s model with a spinner; show why not (missing / broken / wrong kind) and return None.

    `kinds`: class names the page can use (e.g. ``("VQAModel",)``); a loadable file holding
    another kind of model is refused with a message naming both.
    """
    path = spec.path
    if not path.is_file():
        show_missing_model(spec, purpose)
        return None
    try:
        with st.spinner(f"Loading {spec.title} ({display_path(path)}); the first time also starts TensorFlow ..."):
            loaded = load_model(path)
    except ModelLoadError as exc:
        st.error(f"The model file `{display_path(path)}` is there but cannot be loaded: {exc.detail}",
                 icon=":material/error:")
        show_training_command(spec)
        return None
    holds = type(loaded[0]).__name__
    if kinds and holds not in kinds:
        st.error(f"The model file `{display_path(path)}` is a model of class `{holds}`; this page needs "
                 f"{' or '.join(f'`{k}`' for k in kinds)} {purpose}. Point `{spec.env_var}` at the right "
                 f"file, or train one:",
                 icon=":material/error:")
        show_training_command(spec)
        return None
    return loaded


def pick_model(specs, label: str, purpose: str, key: str):
    """The spec the user picks (a radio) among those of `specs` whose file is there; the missing
    ones get a line with their training command. None there: each is explained and the page stops."""
    available = [spec for spec in specs if spec.path.is_file()]
    if not available:
        for spec in specs:
            show_missing_model(spec, purpose)
        st.stop()
    spec = st.radio(label, available, format_func=lambda s: s.title, horizontal=True, key=key)
    for missing in (s for s in specs if s not in available):
        st.caption(f"{missing.title}: not trained yet (`{training_command(missing)}`).")
    return spec


def display_path(path) -> str:
    path = Path(path)
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


# ----------------------------------------------------------------------------- uploads and images

REFUSED = "refused"  # image_uploader / read_upload: a file was given but cannot be used (error shown)


def image_uploader(label, key, help=None, types=IMAGE_TYPES):
    """A file uploader for one image.

    Returns None when no file is given, `REFUSED` when the file cannot be used (the reason is
    already shown with `st.error`), else (file name, bytes).
    """
    uploaded = st.file_uploader(label, type=types, key=key, help=help, max_upload_size=UPLOAD_TRANSFER_MB)
    return read_upload(uploaded)


def read_upload(uploaded):
    """(name, bytes) of an `UploadedFile`; None if no file; `REFUSED` (error shown) if too big or empty."""
    if uploaded is None:
        return None
    size = uploaded.size
    if size > MAX_UPLOAD_BYTES:
        st.error(f"`{uploaded.name}` is {size / 2**20:.1f} MB; this app accepts files up to "
                 f"{MAX_UPLOAD_MB} MB. Please upload a smaller file.", icon=":material/error:")
        return REFUSED
    data = uploaded.getvalue()  # in memory: Streamlit never writes uploads to disk
    if not data:
        st.error(f"`{uploaded.name}` is empty (0 bytes).", icon=":material/error:")
        return REFUSED
    return uploaded.name, data


def decode_image(data: bytes, name: str) -> Image.Image:
    """Decode image bytes to an RGB PIL image (first frame of a GIF/WebP, EXIF rotation applied).

    Raises ImageError(name, reason) for an empty, non-image, truncated or oversized file (the
    server's decoding, `captioner.features.images.decode_image_bytes`, at the app's pixel limit).
    """
    from captioner.features.images import decode_image_bytes

    return decode_image_bytes(data, name, MAX_IMAGE_PIXELS,
                              f"this app accepts at most {MAX_IMAGE_PIXELS / 1e6:.0f} megapixels")


def list_samples(folder=SAMPLES_DIR):
    """Sample photos bundled in assets/samples/ (top level only), sorted by name."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in SAMPLE_EXTENSIONS)


def upload_or_sample(upload, sample_name, folder, prompt: str):
    """(name, bytes) of the upload (as `read_upload` gives it), else of the sample picked in
    `folder`. Stops the page on a refused upload (its error is shown) and, with `prompt`, when
    there is neither."""
    if upload == REFUSED:
        st.stop()
    if upload:
        return upload
    if sample_name:
        return sample_name, (Path(folder) / sample_name).read_bytes()
    st.info(prompt)
    st.stop()


def resize_for_display(image: Image.Image, max_side: int) -> np.ndarray:
    """RGB uint8 array of `image` scaled down (never up) so its longer side is at most `max_side`."""
    w, h = image.size
    scale = min(1.0, max_side / max(w, h))
    if scale < 1.0:
        image = image.resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.LANCZOS)
    return np.asarray(image.convert("RGB"), dtype=np.uint8)


def enlarge_for_display(image: Image.Image, min_side: int, max_side: int) -> np.ndarray:
    """RGB uint8 array of `image` scaled so its longer side lies in [min_side, max_side].

    Small images (easy-VQA's 64x64 shapes, generated video frames) are scaled up with
    nearest-neighbour sampling by a whole factor, so their pixels stay crisp.
    """
    w, h = image.size
    longest = max(w, h)
    if longest < min_side:
        factor = max(1, min(-(-min_side // longest), max_side // longest))  # ceil(min/longest), capped
        image = image.resize((w * factor, h * factor), Image.NEAREST)
    return resize_for_display(image, max_side)


def digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def recall(cache: str, key):
    """The result kept under `key` in the session's `cache` (see `remember`), or None."""
    return st.session_state.setdefault(cache, collections.OrderedDict()).get(key)


def remember(cache: str, key, result, kept: int):
    """Keep `result` under `key` in the session's `cache`, dropping the oldest beyond `kept`
    (stepping through a result's words reruns the page without running the model again)."""
    results = st.session_state.setdefault(cache, collections.OrderedDict())
    results[key] = result
    while len(results) > kept:
        results.popitem(last=False)


# ----------------------------------------------------------------------------- downloads

def alignment_png(column_labels, row_labels, weights, xlabel: str, ylabel: str, **figure_options) -> bytes:
    """PNG bytes of an attention heat map: `weights` (rows x columns), the axes titled."""
    from captioner.visualize.alignment_heatmap import alignment_figure

    fig = alignment_figure(column_labels, row_labels, weights, xlabel=xlabel, ylabel=ylabel, **figure_options)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", facecolor="white")
    return buf.getvalue()


def json_bytes(obj) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def download_png(label, image, file_name, key):
    from captioner.visualize import png_bytes

    st.download_button(label, png_bytes(image), file_name=file_name, mime="image/png", key=key,
                       icon=":material/download:", on_click="ignore")


def download_json(label, obj, file_name, key):
    st.download_button(label, json_bytes(obj), file_name=file_name, mime="application/json", key=key,
                       icon=":material/download:", on_click="ignore")


def safe_stem(name: str) -> str:
    """A file-name stem made of safe characters, for download names."""
    stem = Path(name).stem or "image"
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in stem)[:60]


def show_model_card(spec):
    """How the loaded model was made and what it scored: its card (the JSON beside it), if any."""
    st.success(f"**{spec.title}**: `{display_path(spec.path)}` is loaded.", icon=":material/check_circle:")
    read = read_model_card(spec.path)  # the loaded file's own card: a bundled one would describe another model
    if read.card is None:
        if read.error:
            st.warning(f"The model card `{display_path(read.path)}` cannot be read: {read.error}",
                       icon=":material/warning:")
        else:
            st.caption(f"No model card `{display_path(read.path)}` beside it.")
        return
    card = read.card
    if card.commands:
        st.markdown("Made with" + (f" (seed {card.seed}):" if card.seed is not None else ":"))
        show_training_command(spec, read)
    if card.metrics:
        split = card.split or "a split the card does not name"
        st.markdown(f"Metrics on **{split}** (from `{display_path(read.path)}`):")
        st.json(card.metrics, expanded=2)


def model_card_expander(spec, expanded=False):
    """How the loaded model was made and what it scored, folded away under the results."""
    with st.expander(f"About this model: {spec.title}", expanded=expanded, icon=":material/info:"):
        show_model_card(spec)


def decoding_controls(model, key: str, what: str, max_words: int | None = None):
    """Sidebar sliders for beam width, length-penalty alpha and (with `max_words`) the maximum
    length, starting at the model's own defaults. `what` names the outputs ("captions").
    Returns (beam_size, alpha, max_length or None)."""
    with st.sidebar:
        st.header("Decoding")
        beam_size = st.slider("Beam width", 1, 10, min(10, max(1, int(model.beam_size))), key=f"{key}_beam",
                              help=f"How many partial {what} are kept at each step; 1 is greedy decoding.")
        alpha = st.slider("Length penalty alpha", 0.0, 2.0, min(2.0, max(0.0, float(model.alpha))), step=0.1,
                          key=f"{key}_alpha",
                          help=f"Hypotheses are ranked by log P / length**alpha: 0 favours short {what}, "
                               "1 is the mean log-probability per word.")
        max_length = None
        if max_words:
            max_length = st.slider("Maximum length (words)", 3, max_words,
                                   min(max_words, max(3, int(model.max_length))), key=f"{key}_max_length")
    return beam_size, alpha, max_length


def beam_metrics(result, count_label: str, count):
    """Score, log-probability and one count of a beam-search result, side by side."""
    m1, m2, m3 = st.columns(3)
    m1.metric("Score", f"{result.score:.3f}", help="log P / length**alpha, the value beams are ranked by")
    m2.metric("Log-probability", f"{result.log_prob:.3f}")
    m3.metric(count_label, count)


def beam_hypotheses(hypotheses, what: str, model_scores=None):
    """The ranked beam hypotheses [(text, score), ...] as a table; `what` names the text column.
    model_scores: the model's own score of each, when a rescorer re-ranked them (then "score" is
    the rescorer's)."""
    import pandas as pd

    st.markdown("**Beam hypotheses**" if model_scores is None else "**Beam hypotheses, re-ranked**")
    table = {"rank": range(1, len(hypotheses) + 1), what: [t for t, _ in hypotheses],
             "score": [f"{s:.3f}" for _, s in hypotheses]}
    if model_scores is not None:
        table["model score"] = [f"{s:.3f}" for s in model_scores]
    st.table(pd.DataFrame(table), hide_index=True)


def probability_bars(probabilities: dict, what: str, height=160, sort=True):
    """Horizontal bars of {name: probability} on a fixed 0..1 axis, the most probable first (sort=False:
    in the dict's order, e.g. utterances in the order said). Every bar keeps its whole label: the chart
    grows by `BAR_HEIGHT` a bar and Vega-Lite may neither drop an overlapping label nor cut a long one."""
    import pandas as pd

    items = sorted(probabilities.items(), key=lambda kv: -float(kv[1])) if sort else list(probabilities.items())
    data = pd.DataFrame({what: [k for k, _ in items], "probability": [float(v) for _, v in items]})
    st.vega_lite_chart(data, {
        "mark": {"type": "bar", "tooltip": True},
        "encoding": {
            "y": {"field": what, "type": "nominal", "sort": None, "title": None,
                  "axis": {"labelOverlap": False, "labelLimit": 0}},
            "x": {"field": "probability", "type": "quantitative", "scale": {"domain": [0, 1]},
                  "axis": {"format": "%", "tickCount": 5}},
        },
    }, width="stretch", height=max(height, BAR_HEIGHT * len(items) + AXIS_HEIGHT))


BAR_HEIGHT = 24  # pixels a bar (and its label) takes in `probability_bars`
AXIS_HEIGHT = 60  # and the probability axis under them, its title included (one bar drew as a hairline)


def show_caption_with_tags(result, empty="(empty caption)"):
    """A caption (image or video) as the page's heading, the words its object tags put in marked,
    and the tags listed under it."""
    st.markdown(f"### {mark_tag_words(result.text, result.objects or []) or empty}")
    if result.objects:
        st.caption(tag_summary(result.objects)
            + (". Marked in blue: the words the tags put into the caption (a novel object's word, or its "
               "class name filled in)." if any(o.get("steered") or o.get("named") for o in result.objects) else "")
            + (" This input is unlike the captioner's training photos: the caption names its object alone, the "
               "decoder's own sentence, word by word below, describes a Flickr8k scene it does not show."
               if any(o.get("described") for o in result.objects) else ""))


def tag_summary(objects):
    """The tags of a caption in a line: "Objects (the backbone's ImageNet head): **cat** (Egyptian cat,
    91%)", a word learned from labelled photos (captioner model learn-words) as "**bike** (learned word, 88%)"."""
    source = "the backbone's ImageNet head" + (
        " and the words learned from labelled photos" if any(o.get("learned") for o in objects) else "")
    return f"Objects ({source}): " + ", ".join(
        f"**{o['word']}** ({'learned word' if o.get('learned') else o['name']}, {o['probability']:.0%})"
        for o in objects)


def objects_toggle(model, page):
    """The switch for the backbone's object tags (on where the model can tag, as the CLI)."""
    return st.toggle("Name the objects the backbone sees", value=model.can_tag_objects, key=f"{page}_objects",
                     disabled=not model.can_tag_objects,
                     help="The backbone's own ImageNet classifier tags the input; a confident tag's word (WordNet: "
                          "the class or its nearest hypernym the captioner knows) is pushed into the caption, "
                          "and the class's own name filled in (as the CLI does by default).")


def mark_tag_words(text, objects):
    """`text` as Streamlit Markdown with the words the object tags put in marked in blue: the class
    name of a tag that was filled in ("named"), else the word of a tag that steered the search and is
    in the text ("steered"). Whole words only, first occurrence each."""
    import re

    marked = text
    for tag in objects:
        phrase = tag["name"].lower() if tag.get("named") else tag["word"] if tag.get("steered") else None
        if not phrase:
            continue
        found = re.search(rf"(?<![\w\[]){re.escape(phrase)}(?![\w\]])", marked)
        if found:
            marked = f"{marked[:found.start()]}:blue-background[{phrase}]{marked[found.end():]}"
    return marked
