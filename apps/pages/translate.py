"""Translate page: a sentence in, beam hypotheses out, and the source-target alignment.

Two bundled translators (French -> English on Anki/Tatoeba, English -> German on Multi30k);
until their files exist this page says which command trains them. The translation view is
written with those models (issue 5).
"""

import streamlit as st

import common

SPECS = [common.MODELS["translate_fr_en"], common.MODELS["translate_en_de"]]

st.title("Translate a sentence")
st.caption("A bidirectional GRU encoder and an attention decoder (Bahdanau et al. 2015): every target "
           "word comes with its soft alignment over the source words.")

available = [spec for spec in SPECS if spec.path.is_file()]
if not available:
    for spec in SPECS:
        common.show_missing_model(spec, "to translate")
    st.stop()
spec = st.radio("Direction", available, format_func=lambda s: s.title, horizontal=True, key="translate_model")
for missing in (s for s in SPECS if s not in available):
    st.caption(f"{missing.title}: not trained yet (`{missing.train_command.splitlines()[-1]}`).")
if common.model_or_explain(spec, "to translate") is None:
    st.stop()
common.show_model_card(spec)
st.info("The translation view of these models comes with the translator's code (issue 5).")
