"""Test helper: a script of scripts/ imported as a module (the scripts are not a package)."""

import importlib.util
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def load_script(name):
    """scripts/NAME.py, executed once per call as a fresh module named NAME."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
