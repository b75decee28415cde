"""Document classification page: a post or article in, its topic out, with the hierarchical
attention network's two attentions drawn on the text (Yang et al. 2016): each sentence shaded
by the sentence attention (red bar), each word by the word attention (blue).

The model is the bundled 20 Newsgroups HAN, or the file named by CAPTIONER_CLASSIFY_MODEL.
Text can be typed or pasted (a Usenet post with its headers is read as the 20 Newsgroups
reader reads it: the Subject and the author's own text), or uploaded as a text file.
"""

import streamlit as st

from captioner.data.newsgroups import parse_post
from captioner.errors import InputError
from captioner.visualize.document_attention import document_attention_html

import common

SPEC = common.MODELS["classify"]
EXAMPLES = {  # short posts written for this page, one per kind of group
    "Motorcycles": ("Subject: First bike advice\n\nI just passed my riding test and I'm looking at a used "
                    "600cc sport bike. Is that too much for a beginner? My friend says I should start on a "
                    "250 and learn to brake and corner properly before anything faster. Also, which helmet "
                    "brands do you trust?"),
    "Space": ("Subject: Shuttle launch schedule\n\nDoes anyone know when the next shuttle launch is planned? "
              "I read that the orbiter needs new heat tiles after the last mission. NASA has not said much "
              "about the payload, but I think it is a communications satellite for a higher orbit."),
    "Graphics": ("Subject: Converting GIF to JPEG\n\nI need to convert a few hundred GIF images to JPEG on a "
                 "Sun workstation. Is there a free program that does batch conversion and keeps the colour "
                 "palette? I tried xv but it crashes on the larger files."),
}
MAX_CHARS = 20_000


def use_example():
    picked = st.session_state.get("classify_example")
    if picked is not None:
        st.session_state["classify_text"] = EXAMPLES[picked]


st.title("What is this post about?")
st.caption("A hierarchical attention network: a word-level GRU with word attention makes each sentence a vector, "
           "a sentence-level GRU with sentence attention makes the document one, and a softmax picks one of the "
           "20 Newsgroups. The shading shows where it looked.")

st.session_state.setdefault("classify_text", EXAMPLES["Motorcycles"])
st.selectbox("Examples", list(EXAMPLES), index=None, key="classify_example", on_change=use_example,
             placeholder="pick one to try it")
text = st.text_area("Post or article", key="classify_text", max_chars=MAX_CHARS, height=180)
upload = st.file_uploader("... or upload a text file (a post, an article)", key="classify_upload",
                          max_upload_size=common.UPLOAD_TRANSFER_MB)
source = "typed text"
if upload is not None:
    got = common.read_upload(upload)
    if got is common.REFUSED:
        st.stop()
    name, data = got
    if b"\0" in data[:8192]:
        st.error(f"`{name}` is a binary file, not text.", icon=":material/error:")
        st.stop()
    from captioner.data.documents import decode_bytes  # light: no TensorFlow

    text, _ = decode_bytes(data)
    source = name

loaded = common.model_or_explain(SPEC, "to classify documents", kinds=("DocumentClassifier", "DocumentEnsemble"))
if loaded is None:
    st.stop()
model, model_lock = loaded
if getattr(model, "tfidf", False):  # what decides the label besides the attention drawn below
    card = common.spec_card(SPEC).card
    stacked = card is not None and (card.config or {}).get("tfidf_init") == "svm"
    st.caption("Its label also adds a linear tf-idf branch over the post's terms (the whole text, as a tf-idf SVM "
               "reads it)" + (": a linear SVM (scikit-learn's LinearSVC) fitted on the training posts and kept "
                              "fixed, the network learning what it misses" if stacked else "")
               + ". The shading below is the network's attention, not that branch's evidence.")

text = (text or "").strip()
if not text:
    st.info("Type or paste a post, or upload a text file.")
    st.stop()
read_as = "plain text"
try:
    text, read_as = parse_post(text, where=source).text, "a Usenet post (Subject and the author's own text)"
except InputError:
    pass
try:
    with st.spinner("Classifying ..."), model_lock:
        result = model.classify([text])[0]
except InputError as exc:
    st.error(f"Cannot classify {source}: {exc}. Give it some words.", icon=":material/error:")
    st.stop()
except Exception as exc:  # noqa: BLE001 - shown in the page, not as a traceback
    st.error(f"The model failed on {source}: {type(exc).__name__}: {exc}", icon=":material/error:")
    st.stop()

top = sorted(result.probabilities.items(), key=lambda kv: -kv[1])
st.markdown(f"### {result.label}")
st.caption(f"Read {source} as {read_as}: {len(result.sentences)} sentence(s)"
           + (f", the first {model.max_sentences} of a longer text" if result.truncated else "") + ".")
common.probability_bars(dict(top[:5]), "group", height=150)

st.subheader("Where the network looked")
st.caption("Red bar: the sentence's attention weight (the sentence weights sum to 1). Blue: each word's attention "
           "inside its sentence, times the square root of the sentence's weight, so the words of sentences the "
           "network ignored stay pale. Hover a word for its shade.")
st.markdown(document_attention_html(result.sentences, result.sentence_weights, result.word_weights),
            unsafe_allow_html=True)
unknown = sorted({w for s in result.sentences for w in s if w.lower() not in model.vocabulary})
if unknown:
    st.caption(f"{len(unknown)} word(s) the model does not know (read as <unk>): "
               + ", ".join(f"“{w}”" for w in unknown[:30]) + (" ..." if len(unknown) > 30 else ""))
common.download_json("Result JSON", {"source": source, "model": common.display_path(SPEC.path), **result.to_json()},
                     "classification.json", key="classify_dl_json")
common.model_card_expander(SPEC)
