"""Suite-wide fixtures.

One coco-caption METEOR process per test process (pytest-xdist worker): every test that
scores captions with METEOR (final evaluations of tiny training runs, the beam sweep, the
metric tests) shares it instead of starting a JVM of its own (~10 s each). Tests of the
one-off path step outside it with the ``own_meteor`` fixture of tests/metrics.
"""

import pytest

from captioner.metrics import meteor_session


@pytest.fixture(scope="session", autouse=True)
def shared_meteor_process():
    with meteor_session():
        yield
