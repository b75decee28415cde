"""Video page: upload a clip, see sampled frames, the caption or activity label, attention over frames.

Two bundled models (a video captioner and an activity classifier); until their files exist
this page says which commands train them. The video view is written with those models (issue 7).
"""

import streamlit as st

import common

SPECS = [common.MODELS["video_caption"], common.MODELS["video_classify"]]

st.title("Caption or classify a video clip")
st.caption("Per-frame CNN features, an LSTM over the frames, then a caption decoder with attention "
           "over the frames (s0 = h_T) or an activity label softmax.")

available = [spec for spec in SPECS if spec.path.is_file()]
if not available:
    for spec in SPECS:
        common.show_missing_model(spec, "for video clips")
    st.stop()
spec = st.radio("Model", available, format_func=lambda s: s.title, horizontal=True, key="video_model")
for missing in (s for s in SPECS if s not in available):
    st.caption(f"{missing.title}: not trained yet (`{missing.train_command.splitlines()[-1]}`).")
if common.model_or_explain(spec, "for video clips") is None:
    st.stop()
common.show_model_card(spec)
st.info("The clip view of these models comes with the video models' code (issue 7).")
