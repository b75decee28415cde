"""VQA page: ask a question about an image and see the question-guided attention, hop by hop.

The model is the bundled easy-VQA stacked-attention model, or the file named by
CAPTIONER_VQA_MODEL. It knows only easy-VQA's world (one coloured shape on a plain
background; 13 answers), so the page offers easy-VQA test images and easy-VQA's own
questions about them (assets/samples/easy_vqa/, from scripts/make_app_samples.py).
"""

import json

import numpy as np
import pandas as pd
import streamlit as st
from PIL import Image

import common

SPEC = common.MODELS["vqa"]
SAMPLES_DIR = common.SAMPLES_DIR / "easy_vqa"
GENERAL_QUESTIONS = [
    "what shape is in the image?",
    "what color is the shape?",
    "is there a circle in the image?",
    "does the image contain a red shape?",
    "is there not a triangle?",
]
RESULTS_KEPT = 16


def sample_questions():
    """{sample file name: [[question, easy-VQA's answer], ...]} for the bundled easy-VQA samples."""
    try:
        return json.loads((SAMPLES_DIR / "questions.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def use_suggestion():
    """Copy the picked suggestion into the question box (the user can then edit it)."""
    picked = st.session_state.get("vqa_suggestion")
    if picked:
        st.session_state["vqa_question"] = picked


st.title("Ask a question about an image")
st.caption("An EfficientNet-Lite0 grid of 7x7 regions, an LSTM encoding of the question, and stacked "
           "attention: in each hop the question (refined by what the previous hop saw) picks the regions "
           "that answer it. The bundled model was trained on easy-VQA: one coloured shape (circle, "
           "rectangle or triangle) on a plain background, questions about its shape and colour.")

known = sample_questions()
samples = common.list_samples(SAMPLES_DIR)
upload_col, sample_col = st.columns([3, 2])
with upload_col:
    upload = common.image_uploader(
        f"Upload an image (JPEG, PNG, WebP or GIF; up to {common.MAX_UPLOAD_MB} MB)", key="vqa_upload")
with sample_col:
    sample_name = st.selectbox("... or pick an easy-VQA test image", [p.name for p in samples], key="vqa_sample",
                               disabled=bool(upload), placeholder="no samples in assets/samples/easy_vqa/")

pairs = [] if upload else known.get(sample_name or "", [])
answers_known = {q: a for q, a in pairs}
suggestions = list(dict.fromkeys([q for q, _ in pairs] + GENERAL_QUESTIONS))
st.session_state.setdefault("vqa_question", suggestions[0])
q_col, s_col = st.columns([3, 2])
with s_col:
    st.selectbox("Suggested questions", suggestions,
                 index=None, placeholder="pick one to ask it", key="vqa_suggestion", on_change=use_suggestion)
with q_col:
    question = st.text_input("Question", key="vqa_question", max_chars=300,
                             help="easy-VQA questions ask about the shape (circle, rectangle, triangle), its "
                                  "colour, or whether a shape or colour is there.")

loaded = common.model_or_explain(SPEC, "to answer questions about images", kinds=("VQAModel",))
if loaded is None:
    st.stop()
model, model_lock = loaded

from captioner.errors import ImageError, InputError  # noqa: E402  (after the inputs: importing captioner loads TensorFlow)
from captioner.visualize.attention_overlay import attention_overlay  # noqa: E402

source_name, data = common.upload_or_sample(upload, sample_name, SAMPLES_DIR, "Upload an image to ask about it.")

try:
    image = common.decode_image(data, source_name)
except ImageError as exc:
    st.error(f"Cannot answer questions about `{exc.path}`: {exc.reason}.", icon=":material/broken_image:")
    st.stop()

question = (question or "").strip()
if not question:
    st.info("Type a question about the image (or pick a suggested one).")
    st.image(common.enlarge_for_display(image, 256, 384), caption=source_name)
    st.stop()

model_path = SPEC.path
result_key = (common.digest(data), question, str(model_path), model_path.stat().st_mtime_ns)
result = common.recall("vqa_results", result_key)
if result is None:
    height, width = model.input_size
    pixels = np.asarray(image.resize((width, height), Image.BILINEAR), dtype=np.uint8)  # (H, W, 3) at the backbone's size
    try:
        with st.spinner("Answering ..."), model_lock:
            result = model.answer(pixels, question, top_k=5)
    except InputError as exc:
        st.error(f"Cannot answer “{question}”: {exc}", icon=":material/error:")
        st.stop()
    except Exception as exc:  # noqa: BLE001 - shown in the page, not as a traceback
        st.error(f"The model failed on `{source_name}`: {type(exc).__name__}: {exc}", icon=":material/error:")
        st.stop()
    common.remember("vqa_results", result_key, result, RESULTS_KEPT)

# ----------------------------------------------------------------------------- answer
shown = common.enlarge_for_display(image, 256, 384)  # easy-VQA images are 64x64: scaled up, crisp
image_col, text_col = st.columns([2, 3])
with image_col:
    st.image(shown, caption=source_name, width="stretch")
with text_col:
    st.markdown(f"**Q:** {question}")
    st.markdown(f"### {result.answer}")
    m1, m2 = st.columns(2)
    m1.metric("Probability", f"{result.probability:.1%}")
    truth = answers_known.get(question)
    if truth is not None:
        m2.metric("easy-VQA's answer", truth, delta="agrees" if truth == result.answer else "differs",
                  delta_color="normal" if truth == result.answer else "inverse")
    if upload:
        st.caption("The model has only seen easy-VQA images (one coloured shape on a plain background) and "
                   "easy-VQA's 13 answers; on other pictures its answer, and its confidence, mean little.")
    if result.unknown_words:
        st.warning("The model does not know " + ", ".join(f"“{w}”" for w in result.unknown_words)
                   + " (read as <unk>); easy-VQA's questions use a small vocabulary.", icon=":material/warning:")
    st.markdown("**Top 5 answers**")
    st.table(pd.DataFrame({"rank": range(1, len(result.top_k) + 1),
                           "answer": [a for a, _ in result.top_k],
                           "probability": [f"{p:.2%}" for _, p in result.top_k]}), hide_index=True)

# ----------------------------------------------------------------------------- attention per hop
st.subheader("Where the question led the model to look")
if result.attention is None:
    st.info("This model answers from the pooled image vector (no attention over regions).")
else:
    maps = np.asarray(result.attention, dtype=np.float32)  # (hops, h, w)
    st.caption(f"One map per attention hop over the {maps.shape[1]}x{maps.shape[2]} grid of image regions "
               "(brighter: more weight). Hop 1 is guided by the question alone; each later hop by the question "
               "plus what the hops before it attended to.")
    cols = st.columns(max(3, maps.shape[0]))
    for hop, (col, amap) in enumerate(zip(cols, maps)):
        with col:
            st.image(attention_overlay(shown, amap), width="stretch",
                     caption=f"hop {hop + 1}: the top region holds {amap.max():.0%} of the weight")

report = {"source": source_name, "model": common.display_path(model_path), **result.to_json(),
          "attention": None if result.attention is None else np.round(result.attention, 5).tolist()}
common.download_json("Answer and attention JSON", report, f"{common.safe_stem(source_name)}_vqa.json",
                     key="vqa_dl_json")
common.model_card_expander(SPEC)
