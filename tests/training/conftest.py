import numpy as np
import pytest
from PIL import Image, ImageDraw

COLOURS = {"red": (220, 30, 30), "blue": (30, 60, 220), "green": (30, 180, 60)}
SHAPES = ("square", "circle")


@pytest.fixture(scope="session")
def shapes_flickr8k(tmp_path_factory):
    """A Flickr8k-layout dataset of drawn shapes whose captions are true by construction."""
    root = tmp_path_factory.mktemp("shapes8k")
    (root / "Images").mkdir()
    rng = np.random.default_rng(0)
    lines, names = [], []
    for i in range(24):
        colour = list(COLOURS)[i % 3]
        shape = SHAPES[(i // 3) % 2]
        img = Image.new("RGB", (96, 96), (235, 235, 225))
        draw = ImageDraw.Draw(img)
        x, y = rng.integers(10, 40, 2)
        box = (int(x), int(y), int(x) + 40, int(y) + 40)
        (draw.rectangle if shape == "square" else draw.ellipse)(box, fill=COLOURS[colour])
        name = f"{1000 + i}_shape.jpg"
        img.save(root / "Images" / name, quality=92)
        names.append(name)
        for k, text in enumerate([f"a {colour} {shape} .", f"A {colour} {shape} on a white background",
                                  f"the {shape} is {colour}", f"a {colour} {shape}", f"one {colour} {shape}"]):
            lines.append(f"{name}#{k}\t{text}")
    (root / "Flickr8k.token.txt").write_text("\n".join(lines) + "\n")
    (root / "Flickr_8k.trainImages.txt").write_text("\n".join(names[:18]) + "\n")
    (root / "Flickr_8k.devImages.txt").write_text("\n".join(names[18:]) + "\n")
    return root
