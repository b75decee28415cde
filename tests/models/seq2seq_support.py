"""Test helper: what a saved Seq2Seq translates in a fresh Python process (keras.models.load_model
in safe mode after `import captioner`; the suite's helper process, support.fresh_python), to
compare with the process that saved it."""

import json

from support import fresh_python


def fresh_process_translations(path, sentences, check="True"):
    """[(text, score rounded to 4 places)] of `sentences` by the model at `path`, loaded in a new
    process; `check`: a Python expression on the loaded model `m` that must hold there."""
    code = (
        "import json, sys, keras, captioner\n"
        "m = keras.models.load_model(sys.argv[1])\n"
        f"assert {check}, {check!r}\n"
        "print(json.dumps([(t.text, round(t.score, 4)) for t in m.translate(json.loads(sys.argv[2]))]))\n"
    )
    return [tuple(x) for x in json.loads(fresh_python.last_line(code, path, json.dumps(list(sentences))))]
