"""Test helper: what a saved Seq2Seq translates in a fresh Python process (keras.models.load_model
in safe mode after `import captioner`), to compare with the process that saved it."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def fresh_process_translations(path, sentences, check="True"):
    """[(text, score rounded to 4 places)] of `sentences` by the model at `path`, loaded in a new
    process; `check`: a Python expression on the loaded model `m` that must hold there."""
    code = (
        "import json, sys, keras, captioner\n"
        "m = keras.models.load_model(sys.argv[1])\n"
        f"assert {check}, {check!r}\n"
        "print(json.dumps([(t.text, round(t.score, 4)) for t in m.translate(json.loads(sys.argv[2]))]))\n"
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", code, str(path), json.dumps(list(sentences))], capture_output=True,
                          text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [tuple(x) for x in json.loads(proc.stdout.strip().splitlines()[-1])]
