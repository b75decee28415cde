import pytest

from support.tiny_captioner import make_images, save_tiny_captioner


@pytest.fixture(scope="session")
def tiny_model_path(tmp_path_factory):
    """A tiny random-weight ImageCaptioner (soft attention over a 4x4 grid) saved as .keras."""
    return str(save_tiny_captioner(tmp_path_factory.mktemp("model") / "tiny.keras"))


@pytest.fixture(scope="session")
def tiny_model(tiny_model_path):
    from captioner.inference import load_captioner

    return load_captioner(tiny_model_path)


@pytest.fixture
def image_dir(tmp_path):
    """(root, good image paths, broken image paths) of a fresh folder of generated images."""
    root = tmp_path / "images"
    good, broken = make_images(root)
    return str(root), good, broken
