"""Compare output rows as the product promises them: the same words, labels and answers, and
floats equal within a tolerance. Rows computed in other batchings (a resumed run, another
--batch-size) differ in the last digits of every float: oneDNN sums in another order."""

import math


def assert_rows_close(got, want, rel=1e-5, abs_tol=1e-5, where="row"):
    """Assert `got` equals `want` (JSON-like: dicts, lists, strings, numbers), floats within
    `rel`/`abs_tol`; the message names the first path that differs."""
    if isinstance(want, float) or isinstance(got, float):
        assert isinstance(got, (int, float)) and isinstance(want, (int, float)), f"{where}: {got!r} != {want!r}"
        assert math.isclose(got, want, rel_tol=rel, abs_tol=abs_tol) or (math.isnan(got) and math.isnan(want)), \
            f"{where}: {got!r} != {want!r} (rel {rel}, abs {abs_tol})"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for key in want:
            assert_rows_close(got[key], want[key], rel, abs_tol, f"{where}.{key}")
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), f"{where}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_rows_close(g, w, rel, abs_tol, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"
