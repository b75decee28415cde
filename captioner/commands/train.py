"""`captioner train TASK ...`: one subcommand per `captioner/training/train_*.py` recipe."""

import importlib
import pkgutil

import captioner.training


def register(subparsers):
    p = subparsers.add_parser("train", help="train a model (see `captioner train -h` for tasks)")
    tasks = p.add_subparsers(dest="task", metavar="TASK", required=True)
    for info in sorted(pkgutil.iter_modules(captioner.training.__path__), key=lambda m: m.name):
        if info.name.startswith("train_"):
            module = importlib.import_module(f"captioner.training.{info.name}")
            module.register(tasks)
