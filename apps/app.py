"""The captioner app: `make app` (or `streamlit run apps/app.py`) from the repository root.

A multipage Streamlit app, one page per task, each in apps/task_pages/; helpers shared by the
pages are in apps/common.py. Models load once per process from assets/models/ (each page
says which command trains its model when the file is not there).

The folder is not called `pages/`: Streamlit treats a folder of that name beside the main
script as an old-style multipage app until `st.navigation` runs, so a fresh server first
opened at a page's URL (/vqa) would run that page without this script (no wide layout, file
names in the sidebar).
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep TensorFlow's start-up chatter out of the console

APP_DIR = Path(__file__).resolve().parent
if str(APP_DIR) not in sys.path:
    sys.path.insert(0, str(APP_DIR))  # pages import `common`

import streamlit as st  # noqa: E402

# a local icon: the app needs nothing from outside the machine (a Material icon name is fetched as a font)
st.set_page_config(page_title="captioner", page_icon=str(APP_DIR / "icon.png"), layout="wide")

import common  # noqa: E402

# one upload limit on every page: the uploaders' own hint says what the pages accept (the browser may
# send more, server.maxUploadSize, so that a larger file reaches the page and is refused in words)
st.html(f"""<style>
[data-testid="stFileUploaderDropzoneInstructions"] span {{ display: none; }}
[data-testid="stFileUploaderDropzoneInstructions"] div::after {{
  content: "up to {common.MAX_UPLOAD_MB} MB per file"; font-size: 0.875rem; opacity: 0.6; }}
</style>""")

pages = [
    st.Page(APP_DIR / "task_pages" / "caption.py", title="Caption", icon=":material/image:", url_path="caption",
            default=True),
    st.Page(APP_DIR / "task_pages" / "vqa.py", title="VQA", icon=":material/help:", url_path="vqa"),
    st.Page(APP_DIR / "task_pages" / "translate.py", title="Translate", icon=":material/translate:", url_path="translate"),
    st.Page(APP_DIR / "task_pages" / "transliterate.py", title="Transliterate", icon=":material/translate:",
            url_path="transliterate"),
    st.Page(APP_DIR / "task_pages" / "summarize.py", title="Headline", icon=":material/newspaper:", url_path="summarize"),
    st.Page(APP_DIR / "task_pages" / "entailment.py", title="Entailment", icon=":material/rule:", url_path="entailment"),
    st.Page(APP_DIR / "task_pages" / "classify.py", title="Classify", icon=":material/article:", url_path="classify"),
    st.Page(APP_DIR / "task_pages" / "dialogue.py", title="Dialogue", icon=":material/forum:", url_path="dialogue"),
    st.Page(APP_DIR / "task_pages" / "video.py", title="Video", icon=":material/movie:", url_path="video"),
]
st.navigation(pages).run()
