"""`captioner train TASK ...`: one subcommand per recipe in `captioner/training/recipes/`.

A recipe module names its subcommand (`NAME`), its help line (`HELP`) and its config
dataclass (`Config`); the options are generated from the dataclass fields, so `-h` imports
no TensorFlow. The run itself is `captioner.training.trainer.run_recipe`.
"""

import importlib
import pkgutil

import captioner.training.recipes
from captioner.training.config import HelpFormatter, add_arguments


def recipe_modules():
    """{subcommand name: recipe module}, in name order."""
    out = {}
    for info in sorted(pkgutil.iter_modules(captioner.training.recipes.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"captioner.training.recipes.{info.name}")
        if hasattr(module, "Config") and hasattr(module, "NAME"):
            out[module.NAME] = module
    return out


def add_recipe_parser(subparsers, module):
    p = subparsers.add_parser(module.NAME, help=module.HELP, description=module.__doc__,
                              formatter_class=HelpFormatter)
    add_arguments(p, module.Config)
    p.set_defaults(func=lambda args: _run(module, args))
    return p


def _run(module, args):
    from captioner.training.config import from_args
    from captioner.training.trainer import run_recipe

    return run_recipe(module, from_args(module.Config, args))


def register(subparsers):
    p = subparsers.add_parser("train", help="train a model (see `captioner train -h` for tasks)")
    tasks = p.add_subparsers(dest="task", metavar="TASK", required=True)
    for module in recipe_modules().values():
        add_recipe_parser(tasks, module)
