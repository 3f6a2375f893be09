"""arrowmm._core._shmsync: atomics, futexes and slot leases over a shared mapping.

Real shared mappings (files under /dev/shm mapped twice, and by another process): a word
stored through one mapping is seen through the other, a futex wait in a child process is
woken by the parent (non-private futexes), a wait times out, offsets outside the mapping or
misaligned raise ``ArrowInvalid``, and a lease clears its hold bit only when the last view of
it goes.
"""
from __future__ import annotations

import gc
import mmap
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

from arrowmm._core._region import Region
from arrowmm._core._shmsync import CHANGED, TIMED_OUT, SharedMap
from arrowmm.errors import ArrowInvalid

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="futexes on /dev/shm: Linux only")


@pytest.fixture
def shared_file():
    fd, path = tempfile.mkstemp(dir="/dev/shm", prefix="amm-shmsync-test-")
    os.ftruncate(fd, 4096)
    yield fd, path
    os.close(fd)
    os.unlink(path)


def test_atomics_seen_through_a_second_mapping(shared_file):
    fd, _ = shared_file
    a, b = SharedMap(mmap.mmap(fd, 4096)), SharedMap(mmap.mmap(fd, 4096))
    a.store64(8, 41)
    assert b.add64(8, 1) == 42 and a.load64(8) == 42
    assert a.or64(16, 0b101) == 0b101 and b.and64(16, ~1 & (2**64 - 1)) == 0b100
    assert a.cas32(0, 0, 7) and not a.cas32(0, 0, 9) and b.load32(0) == 7
    assert a.add32(4, 0xFFFFFFFF) == 0xFFFFFFFF  # (wraps like the C counter)
    b.store64(24, 5), b.store64(56, 9), b.store64(88, 3)
    b.store32(64, 2), b.store32(32, 2)
    assert a.min_where32(0, 32, 4, 0, 2, 24) == 3  # records 1 and 2 are in state 2
    assert a.min_where32(0, 32, 4, 0, 9, 24) == -1


@pytest.mark.parametrize("call", [
    lambda m: m.load64(4), lambda m: m.load64(4096), lambda m: m.load64(-8),
    lambda m: m.store32(4094, 1), lambda m: m.wait32(4096, 0, 0.01),
    lambda m: m.lease(4000, 200, 0, 0, 8, 12), lambda m: m.lease(0, 8, 0, 64, 8, 12),
    lambda m: m.copy_in(4090, [b"12345678"]), lambda m: m.min_where32(0, 64, 65, 0, 1, 8),
])
def test_out_of_bounds_or_misaligned_is_refused(shared_file, call):
    fd, _ = shared_file
    with pytest.raises(ArrowInvalid):
        call(SharedMap(mmap.mmap(fd, 4096)))


def test_wait_times_out_or_sees_a_changed_word(shared_file):
    fd, _ = shared_file
    m = SharedMap(mmap.mmap(fd, 4096))
    assert m.wait32(0, 0, 0.01) == TIMED_OUT
    assert m.wait32(0, 1, 10) == CHANGED  # the word is 0, not 1: no sleep at all


def test_wake_reaches_a_waiter_in_another_process(shared_file):
    fd, path = shared_file
    m = SharedMap(mmap.mmap(fd, 4096))
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import mmap, os, sys
        from arrowmm._core._shmsync import SharedMap, TIMED_OUT
        fd = os.open(sys.argv[1], os.O_RDWR)
        m = SharedMap(mmap.mmap(fd, 4096))
        m.store32(8, 1)  # ready
        m.wake32(8)
        while m.load32(0) == 0:
            if m.wait32(0, 0, 60) == TIMED_OUT:
                sys.exit(3)  # never woken
        print(m.load64(16))
    """), path], stdout=subprocess.PIPE, text=True)
    while m.load32(8) == 0:
        m.wait32(8, 0, 1)
    m.store64(16, 1234)
    m.store32(0, 1)
    m.wake32(0)
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 0 and out.strip() == "1234"


def test_claim_and_publish_a_slot(shared_file):
    fd, _ = shared_file
    m = SharedMap(mmap.mmap(fd, 4096))
    writing = (1 << 64) - 1
    m.store64(128, 3), m.store64(144, 0b10)  # a slot (seq 3, a hold) at 128, holds at 144
    assert not m.claim_slot(128, 144, writing)  # held: marked all the same, and refused
    assert m.load64(128) == writing
    m.store64(144, 0)
    assert m.claim_slot(128, 144, writing)
    m.store32(204, 0)  # nobody sleeps: no wake, only the words
    m.publish_slot(128, 136, 640, 7, 192, 200, 204)
    assert [m.load64(128), m.load64(136), m.load64(192), m.load32(200)] == [7, 640, 8, 1]
    m.store32(204, 1)  # somebody sleeps: woken (a wake with no waiter is harmless here)
    m.publish_slot(128, 136, 64, 8, 192, 200, 204)
    assert [m.load64(128), m.load64(136), m.load64(192), m.load32(200)] == [8, 64, 9, 2]
    with pytest.raises(ArrowInvalid):
        m.publish_slot(128, 136, 64, 9, 192, 4094, 204)  # (a word out of the mapping)
    assert m.load64(128) == 8  # (checked before anything is written)
    with pytest.raises(ArrowInvalid):
        m.claim_slot(4090, 144, writing)


def test_lease_releases_its_bit_when_the_last_view_goes(shared_file):
    fd, _ = shared_file
    m = SharedMap(mmap.mmap(fd, 4096))
    m.store64(1024, 0xFF)
    m.store64(0, 0b110)  # bits 1 and 2 held
    lease = m.lease(1024, 64, 0, 1, 8, 12)
    region = Region(lease)
    view = np.frombuffer(memoryview(region.view(0, 8)), dtype=np.int64)
    del lease, region
    gc.collect()
    assert m.load64(0) == 0b110 and view[0] == 0xFF  # the numpy view still holds it
    m.store32(8, 1)  # a producer waits: the release bumps and wakes the word at 12
    del view
    gc.collect()
    assert m.load64(0) == 0b100 and m.load32(12) == 1
    with pytest.raises(TypeError, match="read-only"):
        memoryview(m.lease(1024, 8, 0, 3, 8, 12)).cast("B")[0:1] = b"x"
