import concurrent.futures
import threading
import time

import pytest

from captioner.features.prefetch import prefetched


@pytest.mark.parametrize("prefetch", [0, 1, 2, 10])
def test_yields_every_batch_in_order_with_results_in_item_order(prefetch):
    batches = [[1, 2, 3], [4], [], [5, 6]]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        out = list(prefetched(pool, batches, lambda x: x * 10, prefetch=prefetch))
    assert out == [([1, 2, 3], [10, 20, 30]), ([4], [40]), ([], []), ([5, 6], [50, 60])]


def test_next_batches_are_decoded_while_the_caller_works_on_the_current_one():
    started = []
    lock = threading.Lock()

    def work(x):
        with lock:
            started.append(x)
        return x

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        gen = prefetched(pool, [[0], [1], [2], [3]], work, prefetch=2)
        first = next(gen)
        deadline = time.time() + 5
        while len(started) < 3 and time.time() < deadline:  # batch 0 done, 1 and 2 submitted
            time.sleep(0.01)
        assert first == ([0], [0])
        assert sorted(started) == [0, 1, 2]  # batch 3 is not submitted before batch 1 is taken
        assert [b for b, _ in gen] == [[1], [2], [3]]


def test_an_exception_in_the_work_reaches_the_caller():
    def boom(x):
        raise RuntimeError(f"bad {x}")

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        with pytest.raises(RuntimeError, match="bad 1"):
            list(prefetched(pool, [[1]], boom))
