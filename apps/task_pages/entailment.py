"""Entailment page: premise and hypothesis in, NEUTRAL / ENTAILMENT / CONTRADICTION out.

The model is the bundled SICK classifier (ESIM-lite: attention between the two sentences),
or the file named by CAPTIONER_ENTAIL_MODEL. The page shows the label, the three
probabilities, the hypothesis-over-premise attention as a heat map, and (for a model trained
with --word-relations) the WordNet relations it was given between the two sentences' words.
"""

import numpy as np
import streamlit as st

from captioner.errors import InputError

import common

SPEC = common.MODELS["entail"]
EXAMPLES = [  # SICK-style pairs (short, everyday scenes), one per label and a few harder ones
    ("A man is playing a guitar", "A man is not playing a guitar"),
    ("A man is playing a guitar", "A person is playing an instrument"),
    ("A man is playing a guitar", "A man is singing to a crowd"),
    ("Two dogs are running through a field", "Two dogs are sleeping in a field"),
    ("A woman is slicing an onion", "An onion is being cut by a woman"),
    ("A boy is riding a bike in the park", "A child is outdoors"),
]
MAX_CHARS = 500


def use_example():
    """Copy the picked example pair into the two text boxes (the user can then edit them)."""
    picked = st.session_state.get("entail_example")
    if picked is not None:
        st.session_state["entail_premise"], st.session_state["entail_hypothesis"] = EXAMPLES[picked]


st.title("Does the premise entail the hypothesis?")
st.caption("Premise and hypothesis encoders with attention between them and a 3-way classifier "
           "(NEUTRAL / ENTAILMENT / CONTRADICTION), trained on SICK: short sentences about everyday scenes.")

st.session_state.setdefault("entail_premise", EXAMPLES[0][0])
st.session_state.setdefault("entail_hypothesis", EXAMPLES[0][1])
st.selectbox("Example pairs", range(len(EXAMPLES)), index=None, key="entail_example", on_change=use_example,
             format_func=lambda i: f"{EXAMPLES[i][0]}  →  {EXAMPLES[i][1]}", placeholder="pick one to try it")
p_col, h_col = st.columns(2)
with p_col:
    premise = st.text_area("Premise", key="entail_premise", max_chars=MAX_CHARS, height=80)
with h_col:
    hypothesis = st.text_area("Hypothesis", key="entail_hypothesis", max_chars=MAX_CHARS, height=80)

loaded = common.model_or_explain(SPEC, "to classify sentence pairs",
                                 kinds=("EntailmentClassifier", "EntailmentEnsemble"))
if loaded is None:
    st.stop()
model, model_lock = loaded

premise, hypothesis = (premise or "").strip(), (hypothesis or "").strip()
empty = [name for name, text in (("premise", premise), ("hypothesis", hypothesis)) if not text]
if empty:
    st.info(f"Type a {' and a '.join(empty)}.")
    st.stop()

try:
    with st.spinner("Classifying ..."), model_lock:
        result = model.entail([premise], [hypothesis])[0]
except InputError as exc:
    st.error(f"Cannot classify this pair: {exc}. Type sentences with words in them.", icon=":material/error:")
    st.stop()
except Exception as exc:  # noqa: BLE001 - shown in the page, not as a traceback
    st.error(f"The model failed on this pair: {type(exc).__name__}: {exc}", icon=":material/error:")
    st.stop()

# ----------------------------------------------------------------------------- label and probabilities
probabilities = dict(result.probabilities)  # {label: probability}, in the model's label order
st.markdown(f"### {result.label}")
for col, (label, p) in zip(st.columns(len(probabilities)), probabilities.items()):
    col.metric(label.capitalize(), f"{p:.1%}")
common.probability_bars(probabilities, "label", height=150)
unknown = [w for w in dict.fromkeys(result.premise_tokens + result.hypothesis_tokens) if w not in model.vocabulary]
if unknown:
    st.caption("Words the model never saw in training (it reads them as <unk>): "
               + ", ".join(f"“{w}”" for w in unknown) + ".")

# ----------------------------------------------------------------------------- attention
st.subheader("Which premise words each hypothesis word attended to")
heatmap = None
if result.attention is None or np.size(result.attention) == 0:
    st.info("This model does not expose its attention between the sentences.")
else:
    weights = np.asarray(result.attention, dtype=np.float32)  # (hypothesis words, premise words)
    heatmap = common.alignment_png(result.premise_tokens, result.hypothesis_tokens, weights, "premise", "hypothesis")
    st.caption("Row i is hypothesis word i, column j premise word j; each row sums to 1 (white 1, black 0). "
               "The classifier compares each word with what it attends to in the other sentence.")
    spread = float(np.abs(weights - 1.0 / weights.shape[1]).max())  # 0 for a perfectly uniform row
    if spread < 0.05:
        st.caption(f"Here the attention is nearly uniform (every weight within {spread:.3f} of 1/{weights.shape[1]}): "
                   "this model decides mostly from the pooled sentence encodings and the lexical pair features "
                   "(word overlap, negations), not from word-to-word alignments.")
    heat_col, _ = st.columns([2, 1])
    with heat_col:
        st.image(heatmap, caption="hypothesis-over-premise attention", width="content")

relations = []
if getattr(model, "word_relations", None) is not None:
    st.subheader("What WordNet told the model about these words")
    relations = model.word_relations.named_pairs(result.premise_tokens, result.hypothesis_tokens)
    if relations:
        st.dataframe([{"premise word": p, "hypothesis word": h, "relation (hypothesis word is the premise word's)": r,
                       "strength": round(v, 3)} for p, h, r, v in relations], hide_index=True)
    else:
        st.caption("No WordNet relation between any premise word and a different hypothesis word.")
    st.caption("Synonym, antonym, hypernym (more general: banana → fruit, strength 1 - edges/8), hyponym (more "
               "specific), co-hyponym (a parent in common: guitar, piano). These bias the attention and join "
               "the comparison of each word with what it attends to (KIM, Chen et al. 2018).")

report = {"premise": premise, "hypothesis": hypothesis, "model": common.display_path(SPEC.path),
          "label": result.label, "probabilities": probabilities,
          "premise_tokens": result.premise_tokens, "hypothesis_tokens": result.hypothesis_tokens,
          "attention": None if heatmap is None else np.round(result.attention, 5).tolist(),
          "word_relations": [{"premise_word": p, "hypothesis_word": h, "relation": r, "strength": v}
                             for p, h, r, v in relations]}
common.download_json("Result JSON", report, "entailment.json", key="entail_dl_json")
common.model_card_expander(SPEC)
