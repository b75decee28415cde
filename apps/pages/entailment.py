"""Entailment page: premise and hypothesis in, NEUTRAL / ENTAILMENT / CONTRADICTION out.

Until `assets/models/sick_entailment.keras` exists this page says which command trains it;
the classification view is written with that model (issue 5).
"""

import streamlit as st

import common

SPEC = common.MODELS["entail"]

st.title("Does the premise entail the hypothesis?")
st.caption("Premise and hypothesis encoders with attention between them and a 3-way classifier "
           "(NEUTRAL / ENTAILMENT / CONTRADICTION), trained on SICK.")

loaded = common.model_or_explain(SPEC, "to classify sentence pairs")
if loaded is None:
    st.stop()
common.show_model_card(SPEC)
st.info("The classification view of this model comes with the entailment model's code (issue 5).")
