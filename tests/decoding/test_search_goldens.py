"""The composable search (issue 70: settings, rules, strategies) gives exactly what the one-function
search gave: every rule alone and together, compact and full rows, on a seeded random model. The
goldens (search_goldens.json) were recorded with the search before the refactor."""

import json
from pathlib import Path

import numpy as np
import pytest

from search_cases import CASES, run_case

GOLDENS = json.loads((Path(__file__).with_name("search_goldens.json")).read_text())


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_search_gives_the_recorded_hypotheses(name):
    got, want = run_case(CASES[name]), GOLDENS[name]
    assert set(want) - {"attention_sum"} == set(got) - {"attention"}
    for key in ("tokens", "lengths", "finished", "constraints_met"):
        if key in want:
            np.testing.assert_array_equal(np.asarray(got[key]), np.array(want[key]), err_msg=f"{name}: {key}")
    for key in ("scores", "log_probs"):
        np.testing.assert_allclose(np.asarray(got[key]), np.array(want[key], np.float32), rtol=1e-5, atol=1e-5)
    assert float(np.asarray(got["attention"]).sum()) == pytest.approx(want["attention_sum"], rel=1e-5)
