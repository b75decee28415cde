"""The suite's fresh-process helper (support.fresh_python) behaves as `python -c` does for what
the checks read: stdout, the return code, the traceback, argv, the working directory; each job
starts with new globals; the helper process imports nothing of the tests; a hung job is cut at
its timeout and the next job gets a new helper."""

import os

from support import fresh_python


def test_stdout_argv_and_return_codes(tmp_path):
    ok = fresh_python.run("import sys; print('args', sys.argv[1:]); print('last')", "a", 2)
    assert (ok.returncode, ok.stdout) == (0, "args ['a', '2']\nlast\n")
    assert fresh_python.run("import sys; sys.exit(3)").returncode == 3
    assert fresh_python.run("raise SystemExit").returncode == 0
    failed = fresh_python.run("print('before'); 1 / 0")
    assert failed.returncode == 1 and failed.stdout == "before\n" and "ZeroDivisionError" in failed.stderr
    here = fresh_python.run("import os; print(os.getcwd())", cwd=tmp_path)
    assert here.stdout.strip() == str(tmp_path)
    assert fresh_python.last_line("print(1); print(2)") == "2"


def test_each_job_has_new_globals_and_no_test_module():
    fresh_python.run("leftover = 1")
    again = fresh_python.run("print('leftover' in globals())")
    assert again.stdout.strip() == "False"
    probe = ("import sys, importlib.util; print(sorted(m for m in ('support', 'conftest', 'pytest') if m in "
             "sys.modules), importlib.util.find_spec('support') is None)")
    assert fresh_python.last_line(probe) == "[] True"
    assert os.getpid() != int(fresh_python.last_line("import os; print(os.getpid())"))


def test_a_job_past_its_timeout_is_cut_and_the_next_gets_a_new_helper():
    before = fresh_python.last_line("import os; print(os.getpid())")
    hung = fresh_python.run("import time; time.sleep(60)", timeout=1)
    assert hung.returncode == -9 and "timed out" in hung.stderr
    after = fresh_python.last_line("import os; print(os.getpid())")
    assert after != before
