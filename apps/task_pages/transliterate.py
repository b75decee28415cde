"""Transliterate page: romanized Hindi in, Devanagari out, and each word's character alignment.

The bundled Dakshina model (Latin -> Devanagari), or the file named by
CAPTIONER_TRANSLITERATE_MODEL. Running text is cut into words: every Latin word is
transliterated by the beam search (its n-best list shown), punctuation and numbers are kept.
"""

import numpy as np
import streamlit as st

from captioner.inference.transliteration import transliterate_text, word_key
from captioner.visualize.alignment_heatmap import alignment_heatmap

import common

SPEC = common.MODELS["transliterate"]
EXAMPLE = "main ghar ja raha hoon. namaste duniya, India!"
MAX_CHARS = 500
RESULTS_KEPT = 16

st.title("Transliterate romanized Hindi")
st.caption("Characters in, characters out: a bidirectional GRU over the Latin letters and an attention "
           "decoder writing Devanagari (Bahdanau et al. 2015), trained on the Dakshina romanization lexicon. "
           "Each output character comes with its soft alignment over the input letters.")

text = st.text_area("Romanized text", value=EXAMPLE, key="translit_text", max_chars=MAX_CHARS, height=80,
                    help="A word or a sentence written in Latin letters, the way Hindi is typed in chats "
                         "(\"main ghar ja raha hoon\"). Punctuation and numbers are copied as they are.")

loaded = common.model_or_explain(SPEC, "to transliterate", kinds=("Seq2Seq", "Seq2SeqEnsemble"))
if loaded is None:
    st.stop()
model, model_lock = loaded

beam_size, alpha, _ = common.decoding_controls(model, "translit", "transliterations")

text = (text or "").strip()
if not text:
    st.info("Type a word or a sentence in Latin letters.")
    st.stop()

model_path = SPEC.path
result_key = (text, str(model_path), model_path.stat().st_mtime_ns, beam_size, alpha)
stored = common.recall("translit_results", result_key)
if stored is None:
    cache = {}
    try:
        with st.spinner("Transliterating ..."), model_lock:
            line = transliterate_text(model, [text], n_best=beam_size, beam_size=beam_size, alpha=alpha,
                                      cache=cache)[0]
    except Exception as exc:  # noqa: BLE001 - shown in the page, not as a traceback
        st.error(f"The model failed on this text: {type(exc).__name__}: {exc}", icon=":material/error:")
        st.stop()
    stored = (line, cache)
    common.remember("translit_results", result_key, stored, RESULTS_KEPT)
line, cache = stored

st.markdown(f"### {line.text}")
for warning in line.warnings:
    st.caption(warning[0].upper() + warning[1:] + ".")
if not line.words:
    st.info("There is no word in Latin letters to transliterate here.")
    st.stop()

# ----------------------------------------------------------------------------- one word: n-best and alignment
sources = [w for w, _ in line.words]
index = 0
if len(sources) > 1:
    index = st.select_slider("Word", options=range(len(sources)), format_func=lambda i: f"{i + 1}. {sources[i]}",
                             key="translit_word")
word = sources[index]
result = cache[word_key(word)]  # the Translation of this word: hypotheses, attention

common.beam_metrics(result, "Characters", len(result.tokens))
common.beam_hypotheses(result.hypotheses, "transliteration", result.model_scores)
if result.model_scores is not None:
    st.caption("This model re-ranks its beam with a character language model of its training words: the score "
               "is that combination, the model score the network's own.")

st.subheader(f"Alignment of “{word}” → “{result.text}”")
heatmap = None
if result.attention is not None and result.attention.size:
    attention = np.asarray(result.attention, dtype=np.float32)  # (output characters + <end>, input letters)
    labels = result.attention_labels[: attention.shape[0]]
    heatmap = alignment_heatmap(result.source_tokens, labels, attention)
    st.caption("Row i is output character i (Devanagari code points: a vowel sign or virama is its own row), "
               "column j input letter j; white is weight 1, black 0. Digraphs such as “kh” or “aa” show as one "
               "output character attending to two letters.")
    heat_col, _ = st.columns([2, 1])
    with heat_col:
        st.image(heatmap, caption=f"alignment of “{result.text}”", width="content")

report = {
    "input": text, "model": common.display_path(model_path), "output": line.text,
    "settings": {"beam_size": beam_size, "alpha": alpha},
    "words": [{"source": w, "candidates": [{"text": t, "score": s} for t, s in hyps]} for w, hyps in line.words],
    "alignment": {"word": word, "rows": result.attention_labels, "columns": result.source_tokens,
                  "weights": None if result.attention is None else np.round(result.attention, 5).tolist()},
}
d1, d2, _ = st.columns([1, 1, 2])
with d1:
    common.download_json("Transliteration JSON", report, "transliteration.json", key="translit_dl_json")
if heatmap is not None:
    with d2:
        st.download_button("Alignment PNG", heatmap, file_name="alignment.png", mime="image/png",
                           key="translit_dl_png", icon=":material/download:", on_click="ignore")
common.model_card_expander(SPEC)
