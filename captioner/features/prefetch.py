"""Decode inputs on a thread pool a few batches ahead of the model that consumes them."""

import collections


def prefetched(pool, batches, fn, prefetch=2):
    """Yield `(batch, [fn(item) for item in batch])` for each batch in order, while the
    `prefetch` batches after it are already being worked on by `pool` (a ThreadPoolExecutor).

    The decode work (file reading, JPEG/video decoding: C code that releases the GIL) then
    overlaps with the model call the caller makes on each yielded batch.
    """
    batches = list(batches)
    prefetch = max(1, int(prefetch))  # at least the batch being waited for
    pending = collections.deque()

    def submit(batch):
        pending.append((batch, [pool.submit(fn, item) for item in batch]))

    for batch in batches[:prefetch]:
        submit(batch)
    next_batch = min(prefetch, len(batches))
    while pending:
        batch, futures = pending.popleft()
        if next_batch < len(batches):
            submit(batches[next_batch])
            next_batch += 1
        yield batch, [f.result() for f in futures]
