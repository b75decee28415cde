"""VQA page: ask a question about an image and see the question-guided attention.

Until `assets/models/easy_vqa.keras` exists this page says which command trains it; the
question-answering view is written with that model (issue 6).
"""

import streamlit as st

import common

SPEC = common.MODELS["vqa"]

st.title("Ask a question about an image")
st.caption("Image regions from the backbone grid, an LSTM question encoding, and stacked attention "
           "in which the question picks the regions that answer it.")

loaded = common.model_or_explain(SPEC, "to answer questions about images")
if loaded is None:
    st.stop()
common.show_model_card(SPEC)
st.info("The question-answering view of this model comes with the VQA model's code (issue 6).")
