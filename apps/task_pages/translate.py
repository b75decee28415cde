"""Translate page: a sentence in, beam hypotheses out, and the source-target alignment.

Two bundled translators (French -> English on Anki/Tatoeba, English -> German on Multi30k),
or the files named by CAPTIONER_TRANSLATE_FR_EN_MODEL / CAPTIONER_TRANSLATE_EN_DE_MODEL; the
user picks among those present, and the page says which command trains a missing one.
"""


import numpy as np
import streamlit as st

from captioner.visualize.alignment_heatmap import alignment_heatmap

import common

SPECS = common.task_models("translate")  # the registry's default first
EXAMPLES = {  # a sentence the model's training data makes plausible, per model
    "translate_fr_en": "Jane visite l'Afrique en septembre.",
    "translate_en_de": "A man in a blue shirt is riding a bike down the street.",
}
MAX_CHARS = 1000
RESULTS_KEPT = 16

st.title("Translate a sentence")
st.caption("A bidirectional GRU encoder and an attention decoder (Bahdanau et al. 2015): every target "
           "word comes with its soft alignment over the source words.")

spec = common.pick_model(SPECS, "Direction", "to translate", key="translate_model")

text_key = f"translate_text_{spec.key}"  # one text box per model: switching keeps each one's sentence
sentence = st.text_area("Sentence", value=EXAMPLES.get(spec.key, ""), key=text_key, max_chars=MAX_CHARS, height=80,
                        help="One sentence; it is tokenized the way the model's training data was (the bundled "
                             "models: lower-cased words, punctuation kept; a subword model: cased SentencePiece "
                             "pieces, its alignment merged back to words). Words the model never saw come out "
                             "as <unk> or are copied from the source by their attention.")

loaded = common.model_or_explain(spec, "to translate", kinds=("Seq2Seq", "Seq2SeqEnsemble"))
if loaded is None:
    st.stop()
model, model_lock = loaded

beam_size, alpha, max_length = common.decoding_controls(model, "translate", "translations", max_words=80)

sentence = (sentence or "").strip()
if not model.source_tokens(sentence):
    st.info("Type a sentence to translate." if not sentence else
            f"“{sentence}” has no words the model could read; type a sentence.")
    st.stop()

# the other direction's model reads this sentence far better: it is in that language, not this one's
known, total = model.known_words(sentence)
if total and known / total < 0.5:
    for other in (s for s in SPECS if s is not spec and s.path.is_file()):
        other_loaded = common.model_or_explain(other, "to translate", kinds=("Seq2Seq", "Seq2SeqEnsemble"))
        if other_loaded is None:
            continue
        other_known, other_total = other_loaded[0].known_words(sentence)
        if other_total and other_known / other_total >= known / total + 0.25:
            st.warning(f"This sentence reads as the language of **{other.title}**: that model knows "
                       f"{other_known} of its {other_total} words, **{spec.title}** {known} of {total}. Pick "
                       f"**{other.title}** above to translate it; this model would invent a translation.",
                       icon=":material/translate:")
            st.stop()

model_path = spec.path
result_key = (sentence, str(model_path), model_path.stat().st_mtime_ns, beam_size, alpha, max_length)
result = common.recall("translate_results", result_key)
if result is None:
    try:
        with st.spinner("Translating ..."), model_lock:
            result = model.translate([sentence], beam_size=beam_size, alpha=alpha, max_length=max_length)[0]
    except Exception as exc:  # noqa: BLE001 - shown in the page, not as a traceback
        st.error(f"The model failed on this sentence: {type(exc).__name__}: {exc}", icon=":material/error:")
        st.stop()
    common.remember("translate_results", result_key, result, RESULTS_KEPT)

# ----------------------------------------------------------------------------- translation and hypotheses
st.markdown(f"### {result.text or '(empty translation)'}")
common.beam_metrics(result, "Words", len(result.tokens))
notes = []
if result.truncated:
    notes.append(f"the sentence is longer than the {model.max_source_length} words the model reads; "
                 "only the first ones were translated")
if not result.finished:
    notes.append(f"the translation reached the maximum length ({max_length} words) before the model ended it")
if result.replaced_unk:
    notes.append(f"{result.replaced_unk} unknown output word(s) were replaced by the source word they attend to most")
unknown = result.unknown_source_words(model.source_vocabulary)
if unknown:
    notes.append("the model does not know " + ", ".join(f"“{w}”" for w in unknown))
for note in notes:
    st.caption(note[0].upper() + note[1:] + ".")

common.beam_hypotheses(result.hypotheses, "translation")

# ----------------------------------------------------------------------------- alignment
st.subheader("Alignment: which source words each target word attended to")
labels = result.attention_labels
heatmap = None
if result.attention is None:
    st.info(f"This model ({model.kind}) has no attention, so there is no alignment to draw.")
else:
    attention = np.asarray(result.attention, dtype=np.float32)  # (steps, source words)
    labels = labels[: attention.shape[0]]
    heatmap = alignment_heatmap(result.source_tokens, labels, attention)
    st.caption("Row i is target word i, column j source word j; white is weight 1, black 0 (as in Bahdanau "
               "et al. 2015, figure 3).")
    heat_col, _ = st.columns([3, 1])
    with heat_col:
        st.image(heatmap, caption=f"alignment of “{result.text}”", width="content")

report = {
    "source": sentence, "model": common.display_path(model_path),
    "settings": {"beam_size": beam_size, "alpha": alpha, "max_length": max_length},
    "translation": result.text, "tokens": result.tokens, "source_tokens": result.source_tokens,
    "score": result.score, "log_prob": result.log_prob,
    "hypotheses": [{"translation": t, "score": s} for t, s in result.hypotheses],
    "attention": None if result.attention is None else
    {"rows": labels, "columns": result.source_tokens, "weights": np.round(result.attention, 5).tolist()},
}
d1, d2, _ = st.columns([1, 1, 2])
with d1:
    common.download_json("Translation JSON", report, "translation.json", key="translate_dl_json")
if heatmap is not None:
    with d2:
        st.download_button("Alignment PNG", heatmap, file_name="alignment.png", mime="image/png",
                           key="translate_dl_png", icon=":material/download:", on_click="ignore")
common.model_card_expander(spec)
