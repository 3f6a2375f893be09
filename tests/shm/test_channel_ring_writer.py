"""The producer's one-call send (``_shmsync.RingWriter``, used by ``Channel.send``): its
checks (``begin``) and its common case (``send_plain``: the slot ready at once) leave every
other case to the long way unchanged.  Here, in one process with real segments: a held
slot is passed over untouched, a consumer a whole ring behind makes the send wait (and time
out naming it), a damaged published count is refused before anything is written, and a
ring that does not fit its mapping is refused when the writer is made."""
from __future__ import annotations

import gc
import itertools
import mmap
import os
import sys

import pytest

import arrowmm
from arrowmm._core._shmsync import RingWriter, SharedMap
from arrowmm.errors import ArrowInvalid
from arrowmm.shm import Channel
from arrowmm.shm.ring import OFF_WRITE_SEQ, S_SEQ, WRITING

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-writer-{os.getpid()}-"
_counter = itertools.count()
HANG = 120
SCHEMA = arrowmm.schema([("x", arrowmm.int64())])


def _channel(**kwargs):
    ch = Channel.create(f"{PREFIX}{next(_counter)}", SCHEMA, capacity=1 << 16, **kwargs)
    return ch, Channel.attach(ch.name)


def _seq(ch, s: int) -> int:
    seg = ch._seg
    return seg.map.load64(seg.layout.slot(s) + S_SEQ)


def test_drop_mode_leaves_a_held_slot_untouched_and_uses_the_next():
    ch, c = _channel(slots=2, on_slow="drop")
    with ch, c:
        ch.send({"x": [0]})
        held = c.recv(timeout=HANG)  # batch 0, slot 0, held
        ch.send({"x": [1]})
        c.recv(timeout=HANG)
        gc.collect()
        assert ch.send({"x": [2]}, timeout=HANG) == 2  # its slot (0) is held: slot 1 takes it
        assert _seq(ch, 0) == 0  # (not marked as being rewritten: batch 0 is still there)
        assert _seq(ch, 1) == 2
        assert c.recv(timeout=HANG).column("x").to_pylist() == [2] and c.dropped == 0
        assert held.column("x").to_pylist() == [0]
        del held


def test_wait_mode_waits_for_a_consumer_a_whole_ring_behind():
    ch, c = _channel(slots=2)
    with ch, c:
        for i in range(2):
            ch.send({"x": [i]}, timeout=HANG)
        with pytest.raises(TimeoutError, match="has not taken batch 0"):
            ch.send({"x": [2]}, timeout=0.1)
        assert _seq(ch, 0) == 0  # (nothing was marked or written: batch 0 is there)
        assert c.recv(timeout=HANG).column("x").to_pylist() == [0]
        gc.collect()
        assert ch.send({"x": [2]}, timeout=HANG) == 2
        assert [c.recv(timeout=HANG).column("x").to_pylist() for _ in range(2)] == [[1], [2]]
        with pytest.raises(ArrowInvalid, match="timeout must be >= 0"):
            ch.send({"x": [3]}, timeout=-1)  # (refused: the one-call path takes no timeout)
        assert ch.sent == 3


def test_a_damaged_published_count_is_refused_before_anything_is_written():
    ch, c = _channel(slots=2)
    with ch, c:
        ch.send({"x": [0]})
        ring = ch._ring
        assert ring.begin(1) and not ring.begin(2)  # (the count this producer published: 1)
        ch._seg.map.store64(OFF_WRITE_SEQ, 7)
        with pytest.raises(ArrowInvalid, match="published count is 7, its producer published 1"):
            ch.send({"x": [1]})
        assert _seq(ch, 1) == WRITING  # (as made: never written)
        with pytest.raises(ArrowInvalid, match="damaged"):
            c.recv(timeout=HANG)


def test_a_ring_outside_its_mapping_is_refused():
    m = SharedMap(mmap.mmap(-1, 4096))
    good = dict(need=4096, header=b"", state_at=208, write_seq_at=192, cons_waiting_at=204,
                pub_at=200, entries=320, entry=64, consumers=1, entry_state_at=0, cursor_at=24,
                active=2, table=384, slots=2, slot_stride=64, seq_at=0, len_at=8, holds_at=16,
                data=1024, slot_size=1024, drop=False, writing=WRITING)
    RingWriter(m, *good.values())
    for change in ({"slots": 4}, {"consumers": 0}, {"table": 4096 - 64}, {"holds_at": 60},
                   {"cursor_at": 60}, {"pub_at": 4096}):
        with pytest.raises(ArrowInvalid):
            RingWriter(m, *{**good, **change}.values())
            pytest.fail(f"accepted {change}")


def test_a_consumers_checked_take_touches_nothing_in_a_damaged_segment():
    """``RingCursor.take_checked`` (every ``recv``: the segment's check and the take in one
    call) refuses a changed header before it moves the cursor or sets a hold bit."""
    from arrowmm.shm.ring import E_CURSOR, OFF_STATE, S_HOLDS
    ch, c = _channel(slots=2)
    with ch, c:
        ch.send({"x": [1]})
        seg = c._seg
        m = seg.map
        m.store32(OFF_STATE, 5)  # a stream state no channel has
        assert c._cursor.take_checked(seg.layout.size, seg.header, OFF_STATE) is False
        assert m.load64(c._entry + E_CURSOR) == 0 and m.load64(seg.layout.slot(0) + S_HOLDS) == 0
        with pytest.raises(ArrowInvalid, match="stream state 5"):
            c.recv(timeout=HANG)
        m.store32(OFF_STATE, 0)
        lease = c._cursor.take_checked(seg.layout.size, seg.header, OFF_STATE)
        assert lease.sequence == 0 and m.load64(c._entry + E_CURSOR) == 1
        del lease
