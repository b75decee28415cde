"""The Batcher on its own: one callable as before, and stages in a pipeline (stage 1 of a batch
overlaps stage 0 of the next, order kept, a failing stage fails only its batch, the next batch
is formed from all that queued while the first stage was busy)."""

import asyncio
import threading
import time

import numpy as np
import pytest

from captioner.serving.batcher import Batcher


async def _submit_all(batcher, items, gap=0.0):
    tasks = []
    for item in items:
        tasks.append(asyncio.ensure_future(batcher.submit(item)))
        await asyncio.sleep(gap)
    return await asyncio.gather(*tasks, return_exceptions=True)


def test_one_callable_batches_and_answers_each_item():
    seen = []

    def run(items):
        seen.append(list(items))
        time.sleep(0.05)
        return [x * 10 for x in items]

    batcher = Batcher(run, max_batch=4, max_wait_ms=20, name="t")
    results = asyncio.run(_submit_all(batcher, list(range(10))))
    batcher.close()
    assert results == [x * 10 for x in range(10)]
    assert sum(batcher.batch_sizes) == 10 and max(batcher.batch_sizes) <= 4
    assert [x for batch in seen for x in batch] == list(range(10))


def test_stages_overlap_keep_order_and_form_batches_while_busy():
    log = []  # (stage, batch's first item, start, end)
    lock = threading.Lock()

    def stage(k, seconds):
        def run(state):
            items = state if k == 0 else state[1]
            start = time.perf_counter()
            time.sleep(seconds)
            with lock:
                log.append((k, items[0], len(items), start, time.perf_counter()))
            return ("encoded", items) if k == 0 else [x + 100 for x in items]
        return run

    batcher = Batcher([stage(0, 0.15), stage(1, 0.15)], max_batch=64, max_wait_ms=1, name="t")
    # 30 items, one every 10 ms: while a batch is in the first stage (150 ms), ~15 more queue up
    results = asyncio.run(_submit_all(batcher, list(range(30)), gap=0.01))
    batcher.close()
    assert results == [x + 100 for x in range(30)]
    firsts = [(first, size) for k, first, size, _, _ in sorted(log, key=lambda r: r[3]) if k == 0]
    assert [f for f, _ in firsts] == sorted(f for f, _ in firsts)  # order kept
    assert sum(size for _, size in firsts) == 30
    assert len(firsts) <= 5, firsts  # batches grew while the stages were busy (not 30 calls)
    # some batch's first stage ran while the batch before it was in the second stage
    spans = {(k, first): (s, e) for k, first, _, s, e in log}
    overlaps = [f for (k, f), (s, e) in spans.items() if k == 0 and any(
        k2 == 1 and f2 < f and s < e2 and s2 < e for (k2, f2), (s2, e2) in spans.items())]
    assert overlaps, log
    # never two batches in one stage at once
    for k in (0, 1):
        runs = sorted((s, e) for kk, _, _, s, e in log if kk == k)
        assert all(runs[i][1] <= runs[i + 1][0] + 1e-3 for i in range(len(runs) - 1))


def test_a_failing_stage_fails_its_batch_only():
    calls = {"n": 0}

    def first(items):
        calls["n"] += 1
        if 13 in items:
            raise ValueError("bad batch")
        return items

    def second(items):
        return [x * 2 for x in items]

    batcher = Batcher([first, second], max_batch=1, max_wait_ms=0, name="t")
    results = asyncio.run(_submit_all(batcher, [11, 12, 13, 14]))
    batcher.close()
    assert results[:2] == [22, 24] and results[3] == 28
    assert isinstance(results[2], ValueError) and "bad batch" in str(results[2])


def test_a_wrong_result_count_is_an_error_for_the_batch():
    batcher = Batcher([lambda items: items, lambda items: items[:-1]], max_batch=8, max_wait_ms=50, name="t")
    results = asyncio.run(_submit_all(batcher, [1, 2, 3]))
    batcher.close()
    assert all(isinstance(r, RuntimeError) for r in results)


def test_bad_arguments():
    with pytest.raises(ValueError):
        Batcher([], name="t")
    with pytest.raises(ValueError):
        Batcher(lambda items: items, max_batch=0)


def test_captioner_stages_equal_one_call_and_do_not_retrace_after_warm_up():

    from captioner.serving.app import caption_batch, caption_stages, warm_up

    from support.tiny_captioner import build_tiny_captioner

    model = build_tiny_captioner(max_length=6)
    warm_up({"caption": (model, "tiny.keras")})
    traced = model._encode_fn.experimental_get_tracing_count()
    rng = np.random.default_rng(0)
    settings = (model.beam_size, model.alpha, model.max_length)
    items = [(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8), settings if i % 3 else (1, 0.0, 4))
             for i in range(7)]
    encode, search = caption_stages(model)
    staged = search(encode(items))
    assert model._encode_fn.experimental_get_tracing_count() == traced  # batch 5 and 2: no new trace
    single = caption_batch(model)(items)
    direct = model.caption([px for px, _ in items[1:3]])
    assert [c.text for c in staged] == [c.text for c in single]
    assert [c.text for c in staged[1:3]] == [c.text for c in direct]
    assert [c.text for c in staged[::3]] == [c.text for c in model.caption([px for px, _ in items[::3]],
                                                                            beam_size=1, alpha=0.0, max_length=4)]
