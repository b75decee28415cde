"""The captioner app: `make app` (or `streamlit run apps/app.py`) from the repository root.

A multipage Streamlit app, one page per task, each in apps/pages/; helpers shared by the
pages are in apps/common.py. Models load once per process from assets/models/ (each page
says which command trains its model when the file is not there).
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep TensorFlow's start-up chatter out of the console

APP_DIR = Path(__file__).resolve().parent
if str(APP_DIR) not in sys.path:
    sys.path.insert(0, str(APP_DIR))  # pages import `common`

import streamlit as st  # noqa: E402

st.set_page_config(page_title="captioner", page_icon=":material/image_search:", layout="wide")

pages = [
    st.Page(APP_DIR / "pages" / "caption.py", title="Caption", icon=":material/image:", url_path="caption",
            default=True),
    st.Page(APP_DIR / "pages" / "vqa.py", title="VQA", icon=":material/help:", url_path="vqa"),
    st.Page(APP_DIR / "pages" / "translate.py", title="Translate", icon=":material/translate:", url_path="translate"),
    st.Page(APP_DIR / "pages" / "entailment.py", title="Entailment", icon=":material/rule:", url_path="entailment"),
    st.Page(APP_DIR / "pages" / "video.py", title="Video", icon=":material/movie:", url_path="video"),
]
st.navigation(pages).run()
