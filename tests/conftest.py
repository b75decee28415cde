"""Suite-wide fixtures.

One coco-caption METEOR process per test process (pytest-xdist worker): every test that
scores captions with METEOR (final evaluations of tiny training runs, the beam sweep, the
metric tests) shares it instead of starting a JVM of its own (~10 s each). Tests of the
one-off path step outside it (``caption_metrics._session`` set to None) and count the
processes they start with ``meteor_starts``.
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
