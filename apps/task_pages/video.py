"""Video page: upload a clip, see the sampled frames, the caption or activity label, attention over frames.

Four bundled models: the real-scene video captioner (attention over the frames) and activity
classifier, both trained on clips made from Flickr8k photos, and the two generated-shapes toys
(or the files named by CAPTIONER_VIDEO_CAPTION_MODEL, CAPTIONER_VIDEO_CLASSIFY_MODEL,
CAPTIONER_SHAPES_VIDEO_CAPTION_MODEL, CAPTIONER_SHAPES_VIDEO_CLASSIFY_MODEL); the user picks
among those present. Uploads are written only into a `tempfile.TemporaryDirectory` (OpenCV
reads files, not bytes) that is removed at once. Sample clips: real ones in
assets/samples/video/, generated shapes in assets/samples/video/shapes/.
"""

import tempfile
from pathlib import Path

import numpy as np
import streamlit as st

from captioner.errors import ImageError, InputError
from captioner.visualize import png_bytes
from captioner.visualize.frame_attention import frame_attention_figure

import common

SPECS = [common.MODELS[k] for k in ("video_caption", "video_classify", "video_caption_shapes",
                                     "video_classify_shapes")]
SAMPLES_DIR = common.SAMPLES_DIR / "video"
VIDEO_EXTENSIONS = (".mp4", ".avi", ".webm", ".gif", ".mov", ".mkv", ".m4v", ".mpg", ".mpeg", ".ogv")
# MIME types and extensions together: the browser's file dialog offers them, and Streamlit
# leaves the content check to the page (OpenCV decides what is a readable video).
VIDEO_TYPES = ["video/mp4", "video/webm", "video/x-msvideo", "video/avi", "video/quicktime", "video/x-matroska",
               "video/ogg", "video/mpeg", "image/gif", *VIDEO_EXTENSIONS]
PLAYABLE = {".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".ogv": "video/ogg",
            ".mov": "video/quicktime"}  # what a browser may play; AVI and MKV it will not
RESULTS_KEPT = 8


def frame_label(i, timestamp):
    return f"{i + 1} · {timestamp:.2f} s"


def weighted_frame(frame, weight, peak):
    """The frame dimmed where the model looked little: brightness 0.4 + 0.6 * weight / peak."""
    scale = 0.4 + 0.6 * (weight / peak if peak > 0 else 0.0)  # the dimmest frame stays readable
    return np.clip(frame.astype(np.float32) * scale, 0, 255).astype(np.uint8)


def describe_clip(model, lock, name, data, beam, objects=False):
    """Run the model on clip bytes: written into a temporary directory, read by OpenCV, removed.
    Only a real video container (by its bytes, whatever its name) is written at all."""
    from captioner.features.video import check_container

    check_container(name, head=data[:4096])
    suffix = Path(name).suffix.lower()
    suffix = suffix if suffix.isascii() and suffix[1:].isalnum() and len(suffix) <= 6 else ".bin"
    with tempfile.TemporaryDirectory(prefix="captioner_app_") as tmp:
        path = Path(tmp) / f"upload{suffix}"
        path.write_bytes(data)
        with lock:
            if beam is None:
                return model.describe(str(path))
            return model.describe(str(path), beam_size=beam[0], alpha=beam[1], objects=objects)


st.title("Caption or classify a video clip")
st.caption("Per-frame EfficientNet features, an LSTM over the frames, then a caption decoder with attention "
           "over the frames (s0 = h_T) or an activity softmax. The real-scene models were trained on pans and "
           "zooms over Flickr8k photos (people, dogs, sports, outdoors), with activities mined from the photos' "
           "captions; the shapes toys know only one coloured shape that moves, grows, shrinks or bounces.")

spec = common.pick_model(SPECS, "Model", "for video clips", key="video_model")


def sample_names(folder):
    """Real clips first, then the generated ones under shapes/ (as "shapes/<name>")."""
    if not folder.is_dir():
        return []
    real = sorted(p.name for p in folder.glob("*") if p.suffix.lower() in VIDEO_EXTENSIONS)
    shapes = sorted(f"shapes/{p.name}" for p in (folder / "shapes").glob("*") if p.suffix.lower() in VIDEO_EXTENSIONS)
    return real + shapes


samples = sample_names(SAMPLES_DIR)
upload_col, sample_col = st.columns([3, 2])
with upload_col:
    uploaded = st.file_uploader(f"Upload a clip (MP4, AVI, WebM or GIF; up to {common.MAX_UPLOAD_MB} MB)",
                                type=VIDEO_TYPES, key="video_upload",
                                max_upload_size=common.UPLOAD_TRANSFER_MB)
    upload = common.read_upload(uploaded)
with sample_col:
    sample_name = st.selectbox("... or pick a sample clip", samples, key="video_sample",
                               disabled=bool(upload), placeholder="no samples in assets/samples/video/")

loaded = common.model_or_explain(spec, "for video clips", kinds=("VideoCaptioner", "VideoClassifier"))
if loaded is None:
    st.stop()
model, model_lock = loaded
is_captioner = type(model).__name__ == "VideoCaptioner"

beam, objects = None, False
if is_captioner:
    beam = common.decoding_controls(model, "video", "captions")[:2]
    objects = common.objects_toggle(model, "video")

source_name, data = common.upload_or_sample(upload, sample_name, SAMPLES_DIR, "Upload a clip to describe it.")

model_path = spec.path
result_key = (common.digest(data), str(model_path), model_path.stat().st_mtime_ns, beam, objects)
result = common.recall("video_results", result_key)
if result is None:
    try:
        with st.spinner(f"Sampling frames of `{source_name}` and running the model ..."):
            result = describe_clip(model, model_lock, source_name, data, beam, objects)
    except (ImageError, InputError) as exc:
        reason = getattr(exc, "reason", None) or str(exc)
        st.error(f"Cannot use `{source_name}`: {reason}.", icon=":material/broken_image:")
        st.stop()
    except Exception as exc:  # noqa: BLE001 - shown in the page, not as a traceback
        st.error(f"The model failed on `{source_name}`: {type(exc).__name__}: {exc}", icon=":material/error:")
        st.stop()
    common.remember("video_results", result_key, result, RESULTS_KEPT)

frames = np.asarray(result.frames)  # (k, H, W, 3) uint8: the sampled frames at the model's input size
labels = [frame_label(i, float(ts)) for i, ts in enumerate(result.timestamps)]  # frame numbers in the file are in the JSON
short_labels = [f"{i + 1} ({float(ts):.2f} s)" for i, ts in enumerate(result.timestamps)]  # heat map columns

# ----------------------------------------------------------------------------- the clip and the result
clip_col, text_col = st.columns([2, 3])
with clip_col:
    suffix = Path(source_name).suffix.lower()
    if suffix == ".gif":
        st.image(data, caption=source_name, width="stretch")
    elif suffix in PLAYABLE:
        st.video(data, format=PLAYABLE[suffix], loop=True)
        st.caption(source_name)
    else:
        st.image(frames[0], caption=f"{source_name} (first sampled frame; browsers do not play {suffix or 'this'} files)",
                 width="stretch")
with text_col:
    if is_captioner:
        common.show_caption_with_tags(result)
        common.beam_metrics(result, "Sampled frames", len(frames))
        common.beam_hypotheses(result.hypotheses, "caption")
    else:
        st.markdown(f"### {result.label}")
        m1, m2 = st.columns(2)
        m1.metric("Probability", f"{result.probability:.1%}")
        m2.metric("Sampled frames", len(frames))
        common.probability_bars(result.probabilities, "activity", height=240)

# ----------------------------------------------------------------------------- frames and attention
if is_captioner:
    words = list(result.tokens)
    weights = np.asarray(result.attention, dtype=np.float32)  # (steps, k): per word, then <end> if reached
    word_labels = (words + ["<end>"])[: weights.shape[0]]
    st.subheader("Which frames the model looked at, word by word")
    step = st.select_slider("Step through the words", options=list(range(len(word_labels))),
                            format_func=lambda i: f"{i + 1}. {word_labels[i]}",
                            key=f"video_word_{common.digest(repr(result_key).encode())[:10]}")
    st.markdown(" ".join(f":orange-background[**{w}**]" if i == step else w for i, w in enumerate(word_labels)))
    row = weights[step]
    for col, frame, w, label in zip(st.columns(len(frames)), frames, row, labels):
        with col:
            st.image(weighted_frame(frame, w, row.max()), caption=f"{label} · {w:.0%}", width="stretch")
    st.caption("Sampled frame · time in the clip · attention weight for the chosen word (one word's weights sum "
               "to 100%); each frame is dimmed by how little attention it got.")
    heatmap = common.alignment_png(short_labels, word_labels, weights, "sampled frame", "word (generated)",
                                   cell_inches=0.42)
    heat_col, strip_col = st.columns([2, 3])
    with heat_col:
        st.image(heatmap, caption="attention over the sampled frames: one row per word", width="content")
    strip = png_bytes(frame_attention_figure(frames, words, weights, timestamps=result.timestamps, thumb=72))
    with strip_col:
        st.image(strip, caption="attention strip: each word's row of frames, dimmed where it looked little; the bar "
                                "under a frame is its weight", width="stretch")
else:
    heatmap = None
    st.subheader("The sampled frames")
    label_index = list(model.class_names).index(result.label)
    per_frame = np.asarray(result.frame_probabilities, dtype=np.float32)[:, label_index]  # (k,)
    for col, frame, p, label in zip(st.columns(len(frames)), frames, per_frame, labels):
        with col:
            st.image(frame, caption=f"{label} · {p:.0%}", width="stretch")
    st.caption(f"Sampled frame · time in the clip · the LSTM's probability of {result.label} after reading the "
               "frames up to this one (it reads them in order; the label comes from the last).")

report = {"model": common.display_path(model_path), **result.to_json()}
report["source"] = source_name
d1, d2, _ = st.columns([1, 1, 2])
with d1:
    common.download_json("Result JSON", report, f"{common.safe_stem(source_name)}_video.json", key="video_dl_json")
if heatmap is not None:
    with d2:
        st.download_button("Attention PNG", strip, file_name=f"{common.safe_stem(source_name)}_attention.png",
                           mime="image/png", key="video_dl_png", icon=":material/download:", on_click="ignore")
common.model_card_expander(spec)
