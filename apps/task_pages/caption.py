"""Caption page: an uploaded or sample photo -> beam-search captions and per-word attention maps.

The models are the bundled soft-attention captioners (Show, Attend and Tell): the default, trained on
Flickr8k and web photos, and the Flickr8k-only one (or the files named by CAPTIONER_CAPTION_MODEL /
CAPTIONER_CAPTION_FLICKR8K_MODEL). Results are kept per (image, model, settings) in the session, so
stepping through the words does not decode again.
"""


import numpy as np
import streamlit as st

from captioner.errors import ImageError
from captioner.features.images import model_pixels
from captioner.visualize.attention_overlay import attention_overlay, caption_attention_figure

import common

SPECS = common.task_models("caption")  # the registry's default first
GRID_COLUMNS = 5
RESULTS_KEPT = 8

st.title("Caption an image")
st.caption("An EfficientNet-Lite2 grid of 9x9 regions, an LSTM decoder with soft attention "
           "(Show, Attend and Tell) and beam search. Each word comes with the map of where the "
           "model looked when it chose that word.")

samples = common.list_samples()
upload_col, sample_col = st.columns([3, 2])
with upload_col:
    upload = common.image_uploader(
        f"Upload a photo (JPEG, PNG, WebP or GIF; up to {common.MAX_UPLOAD_MB} MB)", key="caption_upload")
with sample_col:
    sample_name = st.selectbox("... or pick a sample photo", [p.name for p in samples], key="caption_sample",
                               disabled=bool(upload), placeholder="no samples in assets/samples/")

SPEC = common.pick_model(SPECS, "Model", "to caption images", key="caption_model")
loaded = common.model_or_explain(SPEC, "to caption images")
if loaded is None:
    st.stop()
model, model_lock = loaded

beam_size, alpha, max_length = common.decoding_controls(model, "caption", "captions", max_words=40)
objects = common.objects_toggle(model, "caption")
style = None
if model.styles:  # a captioner trained on several corpora writes in the style of any of them
    options = model.style_options
    style = st.radio("Style", options, index=options.index(model.style) if model.style in options else 0,
                     horizontal=True, key="caption_style",
                     format_func=lambda s: {"auto": "auto (the corpus the photo is most like)", "web": "web alt-text",
                                            "flickr8k": "Flickr8k sentence"}.get(s, s),
                     help="Which training corpus's way of writing: Flickr8k's sentences about people and what they "
                          "do, or web alt-text naming the scene (Conceptual Captions); auto picks per photo.")

source_name, data = common.upload_or_sample(upload, sample_name, common.SAMPLES_DIR, "Upload a photo to caption it.")

try:
    image = common.decode_image(data, source_name)
except ImageError as exc:
    st.error(f"Cannot caption `{exc.path}`: {exc.reason}.", icon=":material/broken_image:")
    st.stop()

model_path = SPEC.path
result_key = (common.digest(data), str(model_path), model_path.stat().st_mtime_ns, beam_size, alpha, max_length,
              objects, style)
caption = common.recall("caption_results", result_key)
if caption is None:
    pixels = model_pixels(image, model.input_size)  # (H, W, 3) as in training: the one resize
    try:
        with st.spinner("Captioning ..."), model_lock:
            caption = model.caption([pixels], beam_size=beam_size, alpha=alpha, max_length=max_length,
                                    objects=objects, style=style)[0]
    except Exception as exc:  # noqa: BLE001 - shown in the page, not as a traceback
        st.error(f"The model failed on `{source_name}`: {type(exc).__name__}: {exc}", icon=":material/error:")
        st.stop()
    common.remember("caption_results", result_key, caption, RESULTS_KEPT)

# ----------------------------------------------------------------------------- caption and hypotheses
words = list(caption.tokens)
maps = np.asarray(caption.attention, dtype=np.float32)  # (steps, h, w): one per word, then <end> if reached
labels = (words + ["<end>"])[:maps.shape[0]]
shown = common.resize_for_display(image, 640)  # (H', W', 3), original aspect ratio
thumb = common.resize_for_display(image, 320)

image_col, text_col = st.columns([2, 3])
with image_col:
    st.image(shown, caption=source_name, width="stretch")
with text_col:
    common.show_caption_with_tags(caption)
    if caption.style:
        st.caption(f"Written in the **{caption.style}** style" + (" (the corpus this photo is most like)."
                                                                  if style == "auto" else "."))
    common.beam_metrics(caption, "Words", len(words))
    if caption.hypotheses and caption.text != caption.hypotheses[0][0]:
        st.caption("The heading is the caption with the object tags applied; the table lists the decoder's "
                   "own beams, before the tags named the object.")
    common.beam_hypotheses(caption.hypotheses, "caption")
    if maps.shape[0] == len(words) and words:
        st.caption(f"The caption reached the maximum length ({max_length} words) before the model ended it.")

# ----------------------------------------------------------------------------- attention
st.subheader("Where the model looked, word by word")
if not words:
    st.warning("The model ended the caption at once (no words), so there is only the map of the <end> step.")

run_id = common.digest(repr(result_key).encode())[:10]
step = st.select_slider("Step through the words", options=list(range(len(labels))),
                        format_func=lambda i: f"{i + 1}. {labels[i]}", key=f"caption_word_{run_id}")
focus_col, info_col = st.columns([2, 3])
with focus_col:
    focus = attention_overlay(shown, maps[step])
    st.image(focus, caption=f"attention for “{labels[step]}”", width="stretch")
with info_col:
    highlighted = " ".join(f":orange-background[**{w}**]" if i == step else w for i, w in enumerate(labels))
    st.markdown(highlighted)
    weights = maps[step]
    st.caption(f"Attention over the {weights.shape[0]}x{weights.shape[1]} grid: the most attended region "
               f"holds {weights.max():.0%} of this step's weight (uniform would be {1 / weights.size:.0%}).")

for row_start in range(0, len(labels), GRID_COLUMNS):
    cols = st.columns(GRID_COLUMNS)
    for col, i in zip(cols, range(row_start, min(row_start + GRID_COLUMNS, len(labels)))):
        with col:
            st.image(attention_overlay(thumb, maps[i]), caption=f"{i + 1}. {labels[i]}", width="stretch")

# ----------------------------------------------------------------------------- downloads
stem = common.safe_stem(source_name)
figure = caption_attention_figure(thumb, words, maps, title=f"{caption.text}  (score {caption.score:.3f})",
                                  columns=GRID_COLUMNS, panel=224, show_end=True)
report = {
    "source": source_name,
    "model": str(common.display_path(model_path)),
    "settings": {"beam_size": beam_size, "alpha": alpha, "max_length": max_length, "style": caption.style},
    "caption": caption.text,
    "tokens": words,
    "score": caption.score,
    "log_prob": caption.log_prob,
    "hypotheses": [{"caption": t, "score": s} for t, s in caption.hypotheses],
    "attention": {
        "grid": list(maps.shape[1:]),
        "steps": [{"word": label, "map": np.round(m, 5).tolist()} for label, m in zip(labels, maps)],
    },
}
d1, d2, d3 = st.columns(3)
with d1:
    common.download_png("Overlay PNG (all words)", figure, f"{stem}_attention.png", key="caption_dl_grid")
with d2:
    common.download_png(f"Overlay PNG (“{labels[step]}”)", focus, f"{stem}_{step + 1:02d}_attention.png",
                        key="caption_dl_word")
with d3:
    common.download_json("Caption and attention JSON", report, f"{stem}_caption.json", key="caption_dl_json")
