"""Paths and settings shared by the app tests (a plain module: test files never import conftest)."""

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
APP = REPO_ROOT / "apps" / "app.py"

if str(REPO_ROOT / "apps") not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / "apps"))
import common  # noqa: E402  (apps/common.py, as the pages import it)

OTHER_MODEL_VARS = tuple(spec.env_var for key, spec in common.MODELS.items() if key != "caption")
