"""Shared by the recipe tests: train 2 epochs straight, or 1 epoch and then `--resume` to 2,
recording a fingerprint of every batch the Trainer hands to Keras fit; a tiny caption training run
on a generated Flickr8k-layout dataset of drawn shapes."""

import hashlib
import json
from pathlib import Path

import numpy as np


def fingerprint(batch):
    x, y = batch
    h = hashlib.sha1()
    for key in sorted(x):
        h.update(key.encode())
        h.update(np.ascontiguousarray(x[key]).tobytes())
    h.update(np.ascontiguousarray(y).tobytes())
    return h.hexdigest()


def record_batches(monkeypatch):
    """{(epoch, step): fingerprint} of the batches the Trainer streams from now on."""
    from captioner.training.trainer import Trainer

    seen = {}
    monkeypatch.setattr(Trainer, "batch_hook", staticmethod(lambda e, s, b: seen.__setitem__((e, s), fingerprint(b))))
    return seen


def assert_resume_replays_batches(train, tmp_path, monkeypatch):
    """`train(output_dir, *extra_args)` runs `captioner train ...` and returns its exit status.
    A run stopped after epoch 1 and resumed to 2 sees exactly the batches of a straight 2-epoch run."""
    seen = record_batches(monkeypatch)

    def take():
        out = dict(seen)
        seen.clear()
        return lambda epoch: {s: v for (e, s), v in out.items() if e == epoch}

    assert train(tmp_path / "straight", "--epochs", "2") == 0
    straight = take()
    assert train(tmp_path / "resumed", "--epochs", "1") == 0
    first = take()
    assert train(tmp_path / "resumed", "--epochs", "2", "--resume") == 0
    second = take()
    assert straight(0) and straight(1) and straight(0) != straight(1)  # a new order every epoch
    assert first(0) == straight(0)
    assert second(1) == straight(1)  # epoch 2 after --resume: the same batches, in the same order
    assert not second(0)  # nothing of epoch 1 trained again
    history = json.loads((tmp_path / "resumed" / "history.json").read_text())
    assert [h["epoch"] for h in history] == [1, 2]


def assert_recipe_batches_replay(argv):
    """The recipe's part of resuming, without training: `argv` are `captioner train TASK ...`
    arguments (with --output-dir). After `prepare`, a pass's batches are a function of (pass,
    seed) alone: the same twice, a new order every pass, another with another seed, and
    `steps_per_pass()` of them; a second recipe prepared with --resume on the same run directory
    (a restarted process, reading the cached vocabularies) streams the very same batches. The
    Trainer's part (the endless stream cut into epochs, the checkpoint) is tested end to end once,
    with `assert_resume_replays_batches` (test_train_translate.py; self-critical training's own
    samples and rewards in test_scst.py)."""
    import argparse
    import dataclasses

    from captioner.commands.train import add_recipe_parser, recipe_modules
    from captioner.training.callbacks import TrainingRun
    from captioner.training.config import from_args
    from captioner.training.trainer import Trainer

    task, *rest = argv
    module = recipe_modules()[task]
    parser = argparse.ArgumentParser()
    add_recipe_parser(parser.add_subparsers(), module)
    cfg = from_args(module.Config, parser.parse_args([task, *map(str, rest)]))

    def prepared(cfg):
        recipe = module.RECIPE.make(cfg)
        recipe.check()
        trainer = Trainer(recipe)
        trainer.run_dir = TrainingRun(cfg.output_dir)
        trainer.info = recipe.prepare(trainer) or {}
        return recipe

    def prints(recipe, p, seed):
        return [fingerprint(b) for b in recipe.batches(p, seed)]

    recipe = prepared(cfg)
    first = prints(recipe, 0, cfg.seed)
    assert len(first) == recipe.steps_per_pass() > 0
    assert prints(recipe, 0, cfg.seed) == first  # a function of (pass, seed)
    second = prints(recipe, 1, cfg.seed)
    assert len(second) == len(first) and second != first  # a new order every pass
    assert prints(recipe, 0, cfg.seed + 1) != first
    restarted = prepared(dataclasses.replace(cfg, resume=True))
    assert restarted.steps_per_pass() == recipe.steps_per_pass()
    assert prints(restarted, 1, cfg.seed) == second
    return recipe


TINY_CAPTION = ["--units", "32", "--embedding-dim", "16", "--projection-dim", "32", "--attention-units", "16",
                "--batch-size", "16", "--min-count", "1", "--final-eval-beams", "1", "--beam-size", "2",
                "--max-length", "8", "--learning-rate", "0.01"]


def train_caption(data, out, *extra):
    """`captioner train caption` of a tiny model (TINY_CAPTION) on the Flickr8k layout at `data`,
    features in out/features.h5 and the run in out/run; returns the exit status."""
    from captioner.cli import main

    return main(["train", "caption", "--data-dir", str(data), "--features", str(out / "features.h5"),
                 "--output-dir", str(out / "run"), *TINY_CAPTION, *extra])


COLOURS = {"red": (220, 30, 30), "blue": (30, 60, 220), "green": (30, 180, 60)}
SHAPES = ("square", "circle")


def write_shapes_flickr8k(root):
    """A Flickr8k-layout dataset of 24 drawn shapes (18 train, 6 dev) whose captions are true
    by construction, under `root`; returns `root`."""
    from PIL import Image, ImageDraw

    root = Path(root)
    (root / "Images").mkdir(parents=True)
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


def write_shapes_img2dataset(root, shards=(("00000", 12), ("00001", 6)), start=0):
    """An img2dataset-layout corpus of drawn shapes under `root` (KEY.jpg, KEY.txt, KEY.json per
    photo, one folder per shard, global keys from `start`), captioned as web alt-text would
    ("drawing of a red square"), plus what a real download holds: a caption whose photo failed and
    a photo whose caption is empty. Returns `root`."""
    import json

    from PIL import Image, ImageDraw

    root = Path(root)
    rng = np.random.default_rng(1)
    key = start
    for shard, count in shards:
        folder = root / shard
        folder.mkdir(parents=True)
        for _ in range(count):
            colour, shape = list(COLOURS)[key % 3], SHAPES[(key // 3) % 2]
            img = Image.new("RGB", (64, 64), (20, 20, 30))
            x, y = rng.integers(4, 24, 2)
            box = (int(x), int(y), int(x) + 30, int(y) + 30)
            (ImageDraw.Draw(img).rectangle if shape == "square" else ImageDraw.Draw(img).ellipse)(
                box, fill=COLOURS[colour])
            stem = folder / f"{key:09d}"
            img.save(f"{stem}.jpg", quality=92)
            Path(f"{stem}.txt").write_text(f"drawing of a {colour} {shape} on a dark background")
            Path(f"{stem}.json").write_text(json.dumps({"url": f"https://example.org/{key}.jpg", "key": f"{key:09d}"}))
            key += 1
        (folder / f"{key:09d}.txt").write_text("a caption whose photo failed to download")
        Image.new("RGB", (64, 64)).save(folder / f"{key + 1:09d}.jpg")
        (folder / f"{key + 1:09d}.txt").write_text("  \n")
        key += 2
    return root
