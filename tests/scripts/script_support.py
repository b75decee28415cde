"""Test helper: a script of scripts/ imported as a module (the scripts are not a package)."""

import importlib.util
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def load_script(name):
    """scripts/NAME.py (or scripts/experiments/NAME.py, the one-off comparisons), executed once per
    call as a fresh module named NAME."""
    path = SCRIPTS / f"{name}.py"
    if not path.exists():
        path = SCRIPTS / "experiments" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
