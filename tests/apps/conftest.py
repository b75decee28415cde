"""Fixtures of the app tests: a tiny trained captioner, and env vars that point the app at it."""

import warnings

import pytest
from app_support import OTHER_MODEL_VARS


@pytest.fixture(scope="session")
def tiny_caption_model(tmp_path_factory):
    """(path, sentence): a tiny ImageCaptioner saved as .keras that says `sentence` for any image."""
    from tiny_models import build_tiny_captioner

    path = tmp_path_factory.mktemp("tiny_caption") / "tiny_caption.keras"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "saving a model that has not yet been built"
        sentence = build_tiny_captioner(str(path))
    return path, sentence


@pytest.fixture
def app_env(monkeypatch, tmp_path, tiny_caption_model):
    """Point the Caption page at the tiny model and every other page at a model file that is absent."""
    monkeypatch.setenv("CAPTIONER_CAPTION_MODEL", str(tiny_caption_model[0]))
    for var in OTHER_MODEL_VARS:
        monkeypatch.setenv(var, str(tmp_path / "absent" / f"{var.lower()}.keras"))
    return tiny_caption_model


@pytest.fixture(scope="session")
def real_photo_png():
    """A real photo (scikit-image's coffee cup, CC0) as PNG bytes."""
    import io

    from PIL import Image
    from skimage import data

    buf = io.BytesIO()
    Image.fromarray(data.coffee()).save(buf, format="PNG")
    return buf.getvalue()
