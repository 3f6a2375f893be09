"""A wait-mode channel (``on_slow="wait"``) never overwrites a batch a consumer has not taken,
so a consumer whose next batch is not in its slot, or who finds itself lapped, is looking at
damage (a scribbled slot table or cursor, or an entry reclaimed under it): ``ArrowInvalid``,
never a batch counted as dropped and skipped.  In drop mode the same is a drop, as before.
"""
from __future__ import annotations

import os
import struct
import sys

import pytest

import arrowmm
from arrowmm.errors import ArrowInvalid
from arrowmm.shm import Channel, ring

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-dmg-{os.getpid()}-"
HANG = 60
SCHEMA = arrowmm.schema([("x", arrowmm.int64())])


def _poke(name, offset, fmt, value):
    fd = os.open(f"/dev/shm/{name}", os.O_RDWR)  # (what another process could do)
    try:
        os.pwrite(fd, struct.pack(fmt, value), offset)
    finally:
        os.close(fd)


@pytest.mark.parametrize("on_slow", ["wait", "drop"])
def test_a_slot_without_the_next_batch_is_damage_in_wait_mode(name, on_slow):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=4, on_slow=on_slow) as ch, \
            Channel.attach(name) as c:
        for k in range(3):
            ch.send({"x": [k]}, timeout=HANG)
        assert c.recv(timeout=HANG).column("x").to_pylist() == [0]
        _poke(name, ch._seg.layout.slot(1) + ring.S_SEQ, "<Q", 99)
        if on_slow == "wait":
            with pytest.raises(ArrowInvalid, match=r"batch 1 is not in slot 1 \(it holds "
                                                   r"batch 99\) on a wait-mode ring"):
                c.recv(timeout=HANG)
            assert c.dropped == 0
        else:  # (drop mode: the batch was overwritten, as far as anyone can tell)
            assert c.recv(timeout=HANG).column("x").to_pylist() == [2]
            assert c.dropped == 1


def test_a_lapped_cursor_is_damage_in_wait_mode(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch, \
            Channel.attach(name) as c:
        for k in range(2):
            ch.send({"x": [k]}, timeout=HANG)
            assert c.recv(timeout=HANG).column("x").to_pylist() == [k]
        ch.send({"x": [2]}, timeout=HANG)
        _poke(name, c._entry + ring.E_CURSOR, "<Q", 0)  # (back by two: three behind)
        with pytest.raises(ArrowInvalid, match="more than the 2 slots behind: on a wait-mode"):
            c.recv(timeout=HANG)
        assert c.dropped == 0
