"""VQA page: ask a question about a photo and see where the model looked, hop by hop.

Two bundled models, the user picks one: the default answers questions about photos (stacked
attention over the EfficientNet-Lite2 grid of the captioners, trained on questions made from
Flickr8k and web captions by `captioner make-qa`; file named by CAPTIONER_VQA_MODEL), and
the easy-VQA toy model that knows only one coloured shape on a plain background
(CAPTIONER_EASY_VQA_MODEL). Photo samples are assets/samples/*.jpg; the easy-VQA samples
and their own questions are in assets/samples/easy_vqa/ (scripts/make_app_samples.py).

When the model's "don't know" rule fires (a kind of question it was not trained on, or a top
probability below the threshold chosen on dev photos; see its card) the page says so and
shows the best guess only as such.
"""

import json

import numpy as np
import pandas as pd
import streamlit as st

from captioner.errors import ImageError, InputError
from captioner.features.images import model_pixels
from captioner.visualize.attention_overlay import attention_overlay

import common

SPECS = common.task_models("ask")  # the photo model (the default everywhere) first
EASY_SAMPLES_DIR = common.SAMPLES_DIR / "easy_vqa"
GENERAL_QUESTIONS = {
    "vqa": [
        "what color is the shirt?",
        "how many people are there?",
        "where is the man standing?",
        "is there a dog?",
        "what is the woman holding?",
        "what color is the cat?",
        "why is the man smiling?",
    ],
    "vqa_easy": [
        "what shape is in the image?",
        "what color is the shape?",
        "is there a circle in the image?",
        "does the image contain a red shape?",
        "is there not a triangle?",
    ],
}
ABOUT = {
    "vqa": "An EfficientNet-Lite2 grid of 9x9 regions (the captioner's backbone), an LSTM encoding of the "
           "question, and two hops of stacked attention (Yang et al. 2016). Trained on questions made from "
           "the captions of the Flickr8k train photos and of web photos (the COCO-QA method): objects, counts, "
           "colours, places and yes/no about things in the photo, and \"how many people\" with \"none\" where no "
           "one is there. Its probabilities are temperature-scaled on dev (about right as often as they say); "
           "other kinds of question get a \"don't know\". Asked what a photo unlike its training photos shows, "
           "or whether an animal is in it, the backbone's ImageNet classifier answers where it is sure.",
    "vqa_easy": "A toy model: an EfficientNet-Lite0 grid of 7x7 regions and stacked attention trained on "
                "easy-VQA, one coloured shape (circle, rectangle or triangle) on a plain background; it knows "
                "13 answers and nothing about photos.",
}
RESULTS_KEPT = 16


def sample_questions():
    """{sample file name: [[question, easy-VQA's answer], ...]} for the bundled easy-VQA samples."""
    try:
        return json.loads((EASY_SAMPLES_DIR / "questions.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def use_suggestion(key):
    """Copy the picked suggestion into the question box (the user can then edit it)."""
    picked = st.session_state.get(f"vqa_suggestion_{key}")
    if picked:
        st.session_state[f"vqa_question_{key}"] = picked


st.title("Ask a question about an image")
spec = common.pick_model(SPECS, "Model", "to answer questions about images", key="vqa_model")
photos = spec.key == "vqa"
st.caption(ABOUT.get(spec.key, ""))

samples_dir = common.SAMPLES_DIR if photos else EASY_SAMPLES_DIR
known = {} if photos else sample_questions()
samples = common.list_samples(samples_dir)
upload_col, sample_col = st.columns([3, 2])
with upload_col:
    upload = common.image_uploader(
        f"Upload an image (JPEG, PNG, WebP or GIF; up to {common.MAX_UPLOAD_MB} MB)", key="vqa_upload")
with sample_col:
    sample_name = st.selectbox("... or pick a sample photo" if photos else "... or pick an easy-VQA test image",
                               [p.name for p in samples], key=f"vqa_sample_{spec.key}", disabled=bool(upload),
                               placeholder=f"no samples in {common.display_path(samples_dir)}")

pairs = [] if upload else known.get(sample_name or "", [])
answers_known = {q: a for q, a in pairs}
suggestions = list(dict.fromkeys([q for q, _ in pairs] + GENERAL_QUESTIONS.get(spec.key, [])))
question_key = f"vqa_question_{spec.key}"
st.session_state.setdefault(question_key, suggestions[0])
q_col, s_col = st.columns([3, 2])
with s_col:
    st.selectbox("Suggested questions", suggestions, index=None, placeholder="pick one to ask it",
                 key=f"vqa_suggestion_{spec.key}", on_change=use_suggestion, args=(spec.key,))
with q_col:
    question = st.text_input("Question", key=question_key, max_chars=300,
                             help="Questions like the training ones work best: what is the man holding / riding, "
                                  "how many dogs are there, what color is the shirt, where is the dog running, "
                                  "is there a ball." if photos else
                                  "easy-VQA questions ask about the shape (circle, rectangle, triangle), its "
                                  "colour, or whether a shape or colour is there.")

loaded = common.model_or_explain(spec, "to answer questions about images", kinds=("VQAModel",))
if loaded is None:
    st.stop()
model, model_lock = loaded

source_name, data = common.upload_or_sample(upload, sample_name, samples_dir, "Upload an image to ask about it.")

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

model_path = spec.path
result_key = (common.digest(data), question, str(model_path), model_path.stat().st_mtime_ns)
result = common.recall("vqa_results", result_key)
if result is None:
    pixels = model_pixels(image, model.input_size)  # (H, W, 3) as in training: the one resize
    try:
        with st.spinner("Answering ..."), model_lock:
            result = model.answer(pixels, question, top_k=5, objects=model.can_tag_objects)
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
    if result.known:
        st.markdown(f"### {result.answer}")
    else:
        st.markdown("### don't know")
        st.warning(f"The model does not know: {result.reason}. Its best guess, *{result.answer}* at "
                   f"{result.probability:.1%}, is shown only as such.", icon=":material/help:")
    if result.from_tag and result.answer in ("yes", "no"):
        st.caption(f"Answered by the backbone's ImageNet classifier, sure of what the photo shows: the photo is "
                   f"unlike the VQA model's training photos, where its yes/no answers about animals follow the "
                   f"question more than the photo (the VQA classifier said *{result.model_answer}*).")
    elif result.from_tag:
        st.caption(f"Named by the backbone's ImageNet classifier: the photo is unlike the VQA model's training "
                   f"photos, and its answers do not hold this object (the VQA classifier said "
                   f"*{result.model_answer}*).")
    m1, m2 = st.columns(2)
    m1.metric("Probability", f"{result.probability:.1%}")
    truth = answers_known.get(question)
    if truth is not None:
        m2.metric("easy-VQA's answer", truth, delta="agrees" if truth == result.answer else "differs",
                  delta_color="normal" if truth == result.answer else "inverse")
    if upload and not photos:
        st.caption("The model has only seen easy-VQA images (one coloured shape on a plain background) and "
                   "easy-VQA's 13 answers; on other pictures its answer, and its confidence, mean little.")
    if result.unknown_words:
        st.warning("The model does not know " + ", ".join(f"“{w}”" for w in result.unknown_words)
                   + " (read as <unk>); " + ("its training questions came from Flickr8k and web captions."
                                             if photos else "easy-VQA's questions use a small vocabulary."),
                   icon=":material/warning:")
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
common.model_card_expander(spec)
