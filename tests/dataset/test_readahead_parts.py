"""``ordered_readahead``: a later part's worker goes on while the caller is still on an earlier
part, up to ``batch_readahead`` items, rather than stopping once its first list is queued."""
from __future__ import annotations

import threading

from arrowmm.dataset.readahead import THREAD_PREFIX, ordered_readahead

PER_PART = 6


def test_later_parts_run_ahead_up_to_batch_readahead_while_the_caller_is_elsewhere():
    made = {k: 0 for k in range(3)}
    lock = threading.Lock()
    done = threading.Condition(lock)

    def part(k):
        def make():
            for i in range(PER_PART):
                with done:
                    made[k] += 1
                    done.notify_all()
                yield (k, i)
        return make

    items = ordered_readahead([(f"part {k}", part(k)) for k in range(3)],
                              fragment_readahead=3, batch_readahead=16)
    try:
        assert next(items) == (0, 0)
        # (before: parts 1 and 2 stopped after 3 items, a list of 1 queued and one of 2 full)
        with done:
            finished = done.wait_for(lambda: made[1] == made[2] == PER_PART, timeout=60)
        assert finished, f"items made by the later parts while the caller held part 0: {made}"
        assert list(items) == [(0, i) for i in range(1, PER_PART)] + \
            [(k, i) for k in (1, 2) for i in range(PER_PART)]
    finally:
        items.close()
    assert not [t for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX)]
