"""End to end: `streamlit run apps/app.py` on a free localhost port, driven in headless Chromium.

Uploads a real photo through the page's file input, waits for the caption and the per-word
attention overlays, checks that the overlay images really loaded in the browser, and saves a
screenshot under the test's tmp dir. Uses the system Chromium (Debian `chromium`) through
Playwright; never downloads a browser. Skipped, with the reason, where Chromium is absent.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from app_support import OTHER_MODEL_VARS, REPO_ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
START_TIMEOUT_S = 120
PAGE_TIMEOUT_MS = 600_000  # first run imports TensorFlow, loads the model and traces the beam search

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"Chromium is absent ({CHROMIUM} not found)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StreamlitServer:
    """`streamlit run apps/app.py` in its own process group, killed (the group) on exit."""

    def __init__(self, env, log_path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "apps/app.py", "--server.headless", "true",
             "--server.port", str(self.port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false"],
            cwd=REPO_ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"streamlit exited with {self.proc.returncode}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise AssertionError(f"streamlit not ready after {START_TIMEOUT_S} s:\n{self.tail()}")

    def tail(self, n=3000):
        self.log.flush()
        return Path(self.log_path).read_text(errors="replace")[-n:]

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the group this test started, by its id
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.log.close()


@contextlib.contextmanager
def browser_page(height=1000):
    """A page of headless Chromium, 1400 px wide, with the long timeout of a first model load."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": height})
            page.set_default_timeout(PAGE_TIMEOUT_MS)
            yield page
        finally:
            browser.close()


@contextlib.contextmanager
def running_server(env, log_path):
    server = StreamlitServer(env, log_path)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def drive_caption_page(server, photo, screenshot):
    """Upload `photo`, wait for its caption and overlays; return (caption text, overlay captions)."""
    with browser_page() as page:
        page.goto(server.url)
        file_input = page.locator('[data-testid="stFileUploader"] input[type="file"]')
        file_input.wait_for(state="attached")
        file_input.set_input_files(str(photo))
        # the page shows the photo under its file name once it has been captioned
        page.locator('[data-testid="stImage"]', has_text=photo.name).wait_for()
        page.locator('[data-testid="stImage"]', has_text="1. ").first.wait_for()
        page.wait_for_function(  # every image decoded by the browser, not just its tag present
            "() => { const imgs = [...document.querySelectorAll('[data-testid=\"stImage\"] img')];"
            " return imgs.length > 2 && imgs.every(i => i.complete && i.naturalWidth > 0); }")
        # Streamlit scrolls inside its main container, so a tall viewport shows the whole page
        page.set_viewport_size({"width": 1400, "height": 3000})
        page.wait_for_timeout(1500)
        page.screenshot(path=str(screenshot), full_page=True)
        heading = page.locator("h3").first.inner_text()
        captions = page.locator('[data-testid="stImage"] [data-testid="stImageCaption"]').all_inner_texts()
        errors = page.locator('[data-testid="stAlertContentError"]').all_inner_texts()
        exceptions = page.locator('[data-testid="stException"]').all_inner_texts()
    assert not errors and not exceptions, (errors, exceptions)
    return heading.strip(), captions


def photo_file(tmp_path):
    """A real photo a user might upload: Grace Hopper's portrait (U.S. Navy, public domain) from matplotlib."""
    import shutil

    import matplotlib

    source = Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"
    photo = tmp_path / "my photo.jpg"
    shutil.copy(source, photo)
    return photo


def server_env(model_path, tmp_path):
    env = dict(os.environ, CAPTIONER_CAPTION_MODEL=str(model_path), TF_CPP_MIN_LOG_LEVEL="3")
    for var in OTHER_MODEL_VARS:
        env[var] = str(tmp_path / "absent" / f"{var.lower()}.keras")
    return env


def caption_photo_in_browser(model_path, tmp_path):
    """A fresh server on `model_path`, the photo uploaded; (photo, caption text, overlay captions)."""
    photo = photo_file(tmp_path)
    with running_server(server_env(model_path, tmp_path), tmp_path / "streamlit.log") as server:
        heading, captions = drive_caption_page(server, photo, tmp_path / "caption_page.png")
    return photo, heading, captions


def test_browser_upload_shows_caption_and_attention_overlays(tmp_path, tiny_caption_model):
    pytest.importorskip("playwright")
    model_path, sentence = tiny_caption_model
    photo, heading, captions = caption_photo_in_browser(model_path, tmp_path)
    assert heading == sentence
    words = sentence.split() + ["<end>"]
    assert captions[0] == photo.name
    assert captions[1] == f"attention for “{words[0]}”"
    assert captions[2:] == [f"{i + 1}. {w}" for i, w in enumerate(words)]
    assert (tmp_path / "caption_page.png").stat().st_size > 50_000


@pytest.mark.slow
def test_browser_upload_with_the_bundled_captioner(tmp_path):
    pytest.importorskip("playwright")
    model_path = REPO_ROOT / "assets" / "models" / "flickr8k_attention.keras"
    if not model_path.is_file():
        pytest.skip(f"bundled model {model_path.relative_to(REPO_ROOT)} is absent (see the Caption page)")
    photo, heading, captions = caption_photo_in_browser(model_path, tmp_path)
    assert 2 <= len(heading.split()) <= 20, heading
    assert {"man", "woman", "person", "lady", "boy", "girl"} & set(heading.split()), heading  # it is a portrait
    assert captions[0] == photo.name and captions[1].startswith("attention for ")
    overlays = captions[2:]
    assert len(overlays) >= 2 and all(c.startswith(f"{i + 1}. ") for i, c in enumerate(overlays)), overlays


def test_browser_fresh_server_opened_at_a_task_page_url(tmp_path, tiny_caption_model):
    """A bookmark to /vqa on a just-started server runs the app's navigation (page titles in the
    sidebar), not the page script alone, as Streamlit does for a folder named `pages/`."""
    pytest.importorskip("playwright")
    with running_server(server_env(tiny_caption_model[0], tmp_path), tmp_path / "streamlit.log") as server, \
            browser_page() as page:
        page.goto(f"{server.url}/vqa")
        page.get_by_text("is not here yet").first.wait_for()  # the VQA model is absent in this env
        nav = page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
        title = page.locator("h1").first.inner_text()
        page.screenshot(path=str(tmp_path / "vqa_page.png"), full_page=True)
    labels = [n.strip().splitlines()[-1] for n in nav]  # the label after the icon
    assert labels == ["Caption", "VQA", "Translate", "Transliterate", "Headline", "Entailment", "Classify",
                      "Dialogue", "Video"], nav
    assert title.strip() == "Ask a question about an image"


PAGES = {  # url path -> (title, what the page shows once its example has run)
    "caption": ("Caption an image", '[data-testid="stImage"]'),
    "vqa": ("Ask a question about an image", '[data-testid="stImage"]'),
    "translate": ("Translate a sentence", '[data-testid="stImage"]'),
    "transliterate": ("Transliterate romanized Hindi", '[data-testid="stTable"], [data-testid="stDataFrame"]'),
    "summarize": ("Write a headline", "h3"),
    "entailment": ("Does the premise entail the hypothesis?", '[data-testid="stVegaLiteChart"]'),
    "classify": ("What is this post about?", '[data-testid="stVegaLiteChart"]'),
    "dialogue": ("Chat with the dialogue model", '[data-testid="stChatMessage"]'),
    "video": ("Caption or classify a video clip", '[data-testid="stImage"]'),
}


@pytest.mark.slow
def test_browser_every_page_runs_its_example_with_the_bundled_models(tmp_path):
    """Issue 69: each page opened by its own URL on one server with the bundled models, as a user
    meets it: its title, its example's output, no error box and no exception; a screenshot of each."""
    pytest.importorskip("playwright")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPTIONER_")}
    seen = {}
    with running_server(dict(env, TF_CPP_MIN_LOG_LEVEL="3"), tmp_path / "streamlit.log") as server, \
            browser_page(height=1200) as page:
        for path, (title, output) in PAGES.items():
            page.goto(f"{server.url}/{path}")
            page.locator("h1", has_text=title).first.wait_for()
            if path == "dialogue":  # no example runs by itself: the user speaks first
                box = page.locator('[data-testid="stChatInputTextArea"]')
                box.fill("I want to book a table for two in San Jose tonight.")
                box.press("Enter")
            page.locator(output).first.wait_for()
            page.wait_for_function(  # the script has finished: no "Running..." status
                "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")
            page.screenshot(path=str(tmp_path / f"{path}.png"), full_page=True)
            hints = page.locator('[data-testid="stFileUploaderDropzoneInstructions"] div').evaluate_all(
                "els => els.map(e => getComputedStyle(e, '::after').content)")
            seen[path] = {
                "upload_hints": sorted(set(hints)),
                "errors": page.locator('[data-testid="stAlertContentError"]').all_inner_texts(),
                "exceptions": page.locator('[data-testid="stException"]').all_inner_texts(),
                "not_here": page.get_by_text("is not here yet").count()}
    assert list(seen) == list(PAGES)
    for path, found in seen.items():
        assert not found["errors"] and not found["exceptions"] and not found["not_here"], (path, found)
        assert found["upload_hints"] in ([], ['"up to 20 MB per file"']), (path, found)  # one limit, stated once
    assert seen["caption"]["upload_hints"] and seen["classify"]["upload_hints"]
