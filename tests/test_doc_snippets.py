"""The Python snippets of the README and the guides run (issue 43): the SavedModel snippet against a
tiny captioner exported where the snippet looks for it, the README's Python heredoc against the
bundled captioner (slow). A renamed method or an undefined name in a snippet fails here."""

import re
from pathlib import Path

import pytest

from support import fresh_python

ROOT = Path(__file__).resolve().parents[1]


def python_blocks(path):
    """The ```python blocks of a page, and the bodies of its `python - <<'EOF'` heredocs."""
    text = path.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    blocks += re.findall(r"python - <<'EOF'\n(.*?)\nEOF", text, re.S)
    return blocks


def run(code, cwd):
    """Run a snippet as `python -c` in `cwd`, in the suite's fresh-process helper (support.fresh_python)."""
    result = fresh_python.run(code, cwd=cwd, timeout=600)
    assert result.returncode == 0, f"the snippet failed:\n{code}\n{result.stderr[-3000:]}"
    return result.stdout


def test_the_savedmodel_snippet_runs_on_a_tiny_export(tmp_path):
    (snippet,) = python_blocks(ROOT / "docs" / "export_and_serve.md")
    from captioner.export.saved_model import export_saved_model
    from support.tiny_captioner import build_tiny_captioner

    export_saved_model(build_tiny_captioner(max_length=6), tmp_path / "export" / "flickr8k")
    (tmp_path / "assets").symlink_to(ROOT / "assets")  # the snippet reads assets/samples/cat.jpg
    out = run(snippet, tmp_path)
    assert "tf.Tensor" in out


@pytest.mark.slow
def test_the_readme_python_snippet_runs_on_the_bundled_captioner():
    (snippet,) = python_blocks(ROOT / "README.md")
    out = run(snippet, ROOT)
    assert " cat " in out and re.search(r"\(\d+, 9, 9\)", out), out  # "an egyptian cat is ... -5.2 (8, 9, 9)"
