"""Headline page: an article (or a short description) in, a headline out, and where it looked.

The bundled headline models, picked with a radio: BBC News articles (assets/models/bbc_headlines.keras,
or the file named by CAPTIONER_SUMMARIZE_MODEL) and News Category descriptions
(assets/models/news_headlines.keras, or CAPTIONER_SUMMARIZE_NEWS_MODEL). The source words are
shaded by the attention they received over the whole headline, and the word-by-word alignment
is drawn as a heat map.
"""

import html

import numpy as np
import streamlit as st

from captioner.visualize.alignment_heatmap import alignment_heatmap

import common

SPECS = common.task_models("summarize")  # the registry's default first
EXAMPLES = {  # a text of the kind each model was trained on
    "summarize": ("The city council of Leeds has approved a 12 million pound plan to build a new bridge over the river "
                  "Aire, officials said on Tuesday. Work is due to start in March and the bridge should open in 2027, "
                  "the council said, adding that it would cut traffic in the city centre."),
    "summarize_news": ("The singer told fans on Instagram that her world tour will now end in Paris in September, "
                       "two months later than planned."),
}
MAX_CHARS = 20_000
RESULTS_KEPT = 16

st.title("Write a headline")
st.caption("The translator's machine on news: a bidirectional GRU reads the first words of the source; how the "
           "headline is written depends on the model picked (below).")

spec = common.pick_model(SPECS, "Source", "to write headlines", key="summarize_model")
text = st.text_area("Article or description", value=EXAMPLES.get(spec.key, ""), key=f"summarize_text_{spec.key}",
                    max_chars=MAX_CHARS, height=180,
                    help="Plain text; the model reads only its first words (its source length).")

loaded = common.model_or_explain(spec, "to write headlines", kinds=("Seq2Seq", "Seq2SeqEnsemble"))
if loaded is None:
    st.stop()
model, model_lock = loaded
if model.extractive:
    st.caption("This model is extractive: a pointer network (Vinyals et al. 2015) points at the article's words, "
               "each after the last one it chose, and stops after a content word, so the headline is the article's "
               "own words in their order (a deletion-based compression).")
else:
    st.caption("A pointer-generator (See et al. 2017) mixes, at every word, its vocabulary with the source words it "
               "attends to, so it can copy any of them; a word it does not know (<unk>) becomes the source word it "
               "attends to most, so names and numbers come from the source.")

beam_size, alpha, max_length = common.decoding_controls(model, "summarize", "headlines", max_words=40)
with st.sidebar:
    no_repeat = st.slider("Block repeated n-grams (0: off)", 0, 4, int(model.no_repeat_ngram), key="summarize_ngram",
                          help="Never repeat an n-gram of this size within a headline (a rule of the beam search).")

text = (text or "").strip()
if not model.source_tokens(text):
    st.info("Paste an article to summarize." if not text else "This text has no words the model could read.")
    st.stop()

model_path = spec.path
result_key = (text, str(model_path), model_path.stat().st_mtime_ns, beam_size, alpha, max_length, no_repeat)
result = common.recall("summarize_results", result_key)
if result is None:
    try:
        with st.spinner("Writing a headline ..."), model_lock:
            result = model.translate([text], beam_size=beam_size, alpha=alpha, max_length=max_length,
                                     no_repeat_ngram=no_repeat)[0]
    except Exception as exc:  # noqa: BLE001 - shown in the page, not as a traceback
        st.error(f"The model failed on this text: {type(exc).__name__}: {exc}", icon=":material/error:")
        st.stop()
    common.remember("summarize_results", result_key, result, RESULTS_KEPT)

st.markdown(f"### {result.text or '(empty headline)'}")
common.beam_metrics(result, "Words", len(result.tokens))
if result.truncated:
    st.caption(f"The model read the first {model.max_source_length} words only (its source length).")
if result.replaced_unk:
    st.caption(f"{result.replaced_unk} word(s) copied from the source (an <unk> output replaced by the source word "
               "it attended to most).")
common.beam_hypotheses(result.hypotheses, "headline")


def shaded_source(words, weights):
    """HTML: each source word on a background as dark as its share of the attention."""
    top = float(weights.max()) if len(weights) and weights.max() > 0 else 1.0
    spans = []
    for word, w in zip(words, weights):
        a = 0.85 * float(w) / top
        spans.append(f'<span title="{w:.3f}" style="background: rgba(230, 120, 20, {a:.2f}); padding: 1px 2px; '
                     f'border-radius: 3px">{html.escape(word)}</span>')
    return '<div style="line-height: 2">' + " ".join(spans) + "</div>"


st.subheader("Where the headline looked")
heatmap = None
if result.attention is None or not np.size(result.attention):
    st.info("No attention to show.")
else:
    attention = np.asarray(result.attention, dtype=np.float32)  # (steps, source words)
    received = attention.sum(axis=0)  # (source words,) attention summed over the headline's words
    st.caption("Source words shaded by the attention they received, summed over the headline's words "
               "(hover a word for its weight).")
    st.markdown(shaded_source(result.source_tokens, received), unsafe_allow_html=True)
    labels = result.attention_labels[: attention.shape[0]]
    shown = int(np.max(np.nonzero(received > 0.01)[0], initial=0)) + 1  # up to the last source word it used
    heatmap = alignment_heatmap(result.source_tokens[:shown], labels, attention[:, :shown])
    st.caption("Row i is headline word i, column j source word j (up to the last one it attended to); "
               "white is weight 1, black 0.")
    st.image(heatmap, caption=f"alignment of “{result.text}”", width="content")

report = {
    "source": text, "model": common.display_path(model_path),
    "settings": {"beam_size": beam_size, "alpha": alpha, "max_length": max_length, "no_repeat_ngram": no_repeat},
    "headline": result.text, "tokens": result.tokens, "source_tokens": result.source_tokens,
    "truncated": result.truncated, "score": result.score, "log_prob": result.log_prob,
    "hypotheses": [{"headline": t, "score": s} for t, s in result.hypotheses],
    "attention": None if result.attention is None else
    {"rows": result.attention_labels, "columns": result.source_tokens, "weights": np.round(result.attention, 5).tolist()},
}
d1, d2, _ = st.columns([1, 1, 2])
with d1:
    common.download_json("Headline JSON", report, "headline.json", key="summarize_dl_json")
if heatmap is not None:
    with d2:
        st.download_button("Alignment PNG", heatmap, file_name="alignment.png", mime="image/png",
                           key="summarize_dl_png", icon=":material/download:", on_click="ignore")
common.model_card_expander(spec)
