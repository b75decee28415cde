"""Micro-batching: requests that arrive together go to the model in one call.

    batcher = Batcher(run_batch, max_batch=32, max_wait_ms=5, max_queue=256)
    result = await batcher.submit(item)     # QueueFull when max_queue items already wait

One worker task per batcher takes the first waiting item, then whatever else arrives within
`max_wait_ms` (up to `max_batch` items), and runs `run_batch(items) -> results` (one result, or
an exception instance, per item) in its own thread, so the event loop keeps accepting requests
meanwhile: what arrives during a model call is the next batch.

`run_batch` may also be a sequence of stages, `[first, ..., last]`: `first(items) -> state`,
each middle stage `state -> state`, `last(state) -> results`. Each stage runs in a thread of its
own, so stage k of one batch overlaps stage k+1 of the batch before it (the captioner's backbone
on batch n+1 while the beam search decodes batch n: the beam search's many small ops leave cores
idle that the convolutions fill, as in the batch CLI). Each stage holds one batch at a time and
batches keep their order; a batch that finished a stage keeps it until the next stage is free,
so at most `len(stages)` batches are in flight and the next batch is formed when the first stage
frees, from everything that queued meanwhile.
`calls`, `batch_sizes` and `stage_seconds` count what happened (tests, /healthz: where the time goes).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time

log = logging.getLogger(__name__)


class QueueFull(Exception):
    """The batcher's queue holds `max_queue` waiting requests: answer 503."""


class Batcher:
    def __init__(self, run_batch, *, max_batch=32, max_wait_ms=5.0, max_queue=256, name="model"):
        if max_batch < 1 or max_queue < 1 or max_wait_ms < 0:
            raise ValueError("max_batch and max_queue must be >= 1 and max_wait_ms >= 0")
        self.stages = list(run_batch) if isinstance(run_batch, (list, tuple)) else [run_batch]
        if not self.stages or not all(callable(s) for s in self.stages):
            raise ValueError("run_batch must be a callable or a non-empty sequence of callables")
        self.run_batch = run_batch
        self.max_batch = int(max_batch)
        self.max_wait = float(max_wait_ms) / 1000.0
        self.max_queue = int(max_queue)
        self.name = name
        self.calls = 0
        self.batch_sizes = []
        self.stage_seconds = [0.0] * len(self.stages)  # time each stage ran, summed over batches (/healthz)
        self._queue = None
        self._worker = None
        self._loop = None
        self._tasks = set()
        # one thread per stage: each stage is serialized (TensorFlow uses the cores inside a call)
        self._executors = [concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"batch-{name}-{k}")
                           for k in range(len(self.stages))]

    def _start(self):
        loop = asyncio.get_running_loop()
        if self._worker is None or self._loop is not loop or self._worker.done():
            self._loop = loop
            self._queue = asyncio.Queue(maxsize=self.max_queue)
            self._stage_order = [asyncio.Lock() for _ in self.stages]
            self._worker = loop.create_task(self._work(), name=f"batcher-{self.name}")

    async def submit(self, item):
        """The result of `item` once its batch has run; raises QueueFull at once when full, or
        the exception `run_batch` gave for this item."""
        self._start()
        future = self._loop.create_future()
        try:
            self._queue.put_nowait((item, future))
        except asyncio.QueueFull:
            raise QueueFull(f"the {self.name} queue is full ({self.max_queue} requests waiting)") from None
        return await future

    @property
    def waiting(self):
        return 0 if self._queue is None else self._queue.qsize()

    async def _next_batch(self, loop):
        batch = [await self._queue.get()]
        deadline = loop.time() + self.max_wait
        while len(batch) < self.max_batch:
            remaining = deadline - loop.time()
            try:
                batch.append(self._queue.get_nowait() if remaining <= 0 else
                             await asyncio.wait_for(self._queue.get(), remaining))
            except (asyncio.QueueEmpty, asyncio.TimeoutError):
                break
        return [(item, fut) for item, fut in batch if not fut.cancelled()]  # clients gone

    async def _work(self):
        loop = asyncio.get_running_loop()
        while True:
            # the batch is formed once the first stage is free, from everything that queued
            # meanwhile; stage locks are FIFO, so batches keep their order through the stages
            await self._stage_order[0].acquire()
            try:
                batch = await self._next_batch(loop)
            except BaseException:
                self._stage_order[0].release()
                raise
            if not batch:
                self._stage_order[0].release()
                continue
            self.calls += 1
            self.batch_sizes.append(len(batch))
            task = loop.create_task(self._run(batch))  # holds the first stage's lock
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, batch):
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        held = 0  # index of the stage lock this batch holds
        try:
            state = [item for item, _ in batch]
            for k, stage in enumerate(self.stages):
                if k > 0:  # take the next stage before freeing this one: no batch overtakes another
                    await self._stage_order[k].acquire()
                    self._stage_order[k - 1].release()
                    held = k
                began = time.perf_counter()
                state = await loop.run_in_executor(self._executors[k], stage, state)
                self.stage_seconds[k] += time.perf_counter() - began
            results = state
            if len(results) != len(batch):
                raise RuntimeError(f"run_batch returned {len(results)} results for {len(batch)} items")
        except Exception as exc:  # the whole call failed: every request of it gets the error
            log.exception("%s batch of %d failed", self.name, len(batch))
            results = [exc] * len(batch)
        finally:
            self._stage_order[held].release()
        log.debug("%s batch of %d in %.3f s", self.name, len(batch), time.perf_counter() - started)
        for (_, fut), result in zip(batch, results):
            if fut.cancelled():
                continue
            if isinstance(result, BaseException):
                fut.set_exception(result)
            else:
                fut.set_result(result)

    def close(self):
        if self._worker is not None:
            self._worker.cancel()
        for task in list(self._tasks):
            task.cancel()
        for executor in self._executors:
            executor.shutdown(wait=False, cancel_futures=True)
