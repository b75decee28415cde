"""Suite-wide fixtures.

One coco-caption METEOR process per test process (pytest-xdist worker): every test that
scores captions with METEOR (final evaluations of tiny training runs, the beam sweep, the
metric tests) shares it instead of starting a JVM of its own (~10 s each). Tests of the
one-off path step outside it (``caption_metrics._session`` set to None) and count the
processes they start with ``meteor_starts``.

The modules with end-to-end (``slow``) tests run first, then the training and export ones, then
the rest, each module's tests still together and in order: pytest-xdist hands tests out in
collection order, and the long tests collected last (tests/training: the two-worker training alone
takes about 70 s) left the other worker idle at the end of `make test`.
"""

import pytest

from captioner.metrics import meteor_session


@pytest.fixture(scope="session", autouse=True)
def shared_meteor_process():
    with meteor_session():
        yield


@pytest.fixture
def meteor_starts(monkeypatch):
    """The METEOR processes (``_MeteorProcess``) started during the test, in order."""
    from captioner.metrics.caption_metrics import _MeteorProcess

    starts = []
    enter = _MeteorProcess.__enter__

    def counting(self):
        starts.append(self)
        return enter(self)

    monkeypatch.setattr(_MeteorProcess, "__enter__", counting)
    return starts


def pytest_collection_modifyitems(session, config, items):
    """Longest first, by module: the modules holding a ``slow`` test, then tests/training and
    tests/export, then the others (a stable sort: the order within a module and within each group
    is kept)."""
    def module(item):
        return item.nodeid.split("::")[0]  # tests/training/test_x.py

    heavy = {module(item) for item in items if item.get_closest_marker("slow")}
    long_folders = ("tests/training/", "tests/export/")
    items.sort(key=lambda item: 0 if module(item) in heavy else 1 if module(item).startswith(long_folders) else 2)
