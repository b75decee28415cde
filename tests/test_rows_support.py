"""The tolerance helper the resume tests use fails where it must."""

import pytest
from support.rows import assert_rows_close


def test_floats_within_tolerance_pass_and_other_differences_fail():
    assert_rows_close([{"answer": "red", "p": 0.5000001, "top": [["red", 0.25]]}],
                      [{"answer": "red", "p": 0.5, "top": [["red", 0.2500002]]}])
    for got in ([{"answer": "blue", "p": 0.5}], [{"answer": "red", "p": 0.51}], [{"answer": "red"}],
                [{"answer": "red", "p": 0.5}, {}], [{"answer": "red", "p": "0.5"}]):
        with pytest.raises(AssertionError):
            assert_rows_close(got, [{"answer": "red", "p": 0.5}])
