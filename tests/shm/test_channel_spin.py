"""The consumer's busy-wait (``arrowmm.shm.spin``): adaptive by default, asleep when idle.

The policy's rules are checked on given times (it is arithmetic on them); the busy-wait
itself on a real shared word written by another thread; and an idle default consumer is seen
asleep by the kernel (its thread's state in ``/proc``), against a spinning one seen running.
Nothing asserts how long anything takes.
"""
from __future__ import annotations

import gc
import itertools
import mmap
import os
import sys
import threading
import time

import pytest

import arrowmm
from arrowmm._core._shmsync import SharedMap
from arrowmm.errors import ArrowInvalid
from arrowmm.shm import Channel
from arrowmm.shm import ring
from arrowmm.shm.spin import AUTO_MAX, BACKOFF, BASE, STOLEN_LIMIT, WAKE_SPIN, AdaptiveSpin

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

HANG = 60.0  # upper bound of a wait that only fails on a hang
SCHEMA = arrowmm.schema([("i", arrowmm.int64())])
PREFIX = f"amm-chan-test-spin-{os.getpid()}-"
_counter = itertools.count()


@pytest.fixture
def name():
    """A fresh channel name; the test fails if its channel is left in /dev/shm."""
    made = f"{PREFIX}{next(_counter)}"
    yield made
    gc.collect()
    if os.path.exists(os.path.join("/dev/shm", made)):
        os.unlink(os.path.join("/dev/shm", made))
        pytest.fail(f"channel {made} left in /dev/shm")


def test_the_spin_follows_the_gaps_between_batches():
    spin = AdaptiveSpin()
    assert spin.spin_until(5.0) == 5.0 + BASE  # nothing learnt: the base spin
    spin.arrived(5.0)
    assert spin.spin_until(5.0) == 5.0 + BASE  # one batch: no gap yet
    for k in range(1, 10):  # a batch every 0.3 ms
        spin.arrived(5.0 + 0.0003 * k)
    last = 5.0 + 0.0003 * 9
    assert spin.spin_until(last + 1e-5) == pytest.approx(last + 0.0006)  # two gaps after it
    # gaps near the cap: the spin stops at AUTO_MAX after the last batch
    for k in range(1, 20):
        spin.arrived(last + 0.0009 * k)
    last += 0.0009 * 19
    assert spin.spin_until(last) == pytest.approx(last + AUTO_MAX)
    # a wait that starts after the window: the base spin only
    assert spin.spin_until(last + 0.5) == last + 0.5 + BASE


def test_slow_streams_and_long_pauses_sleep_at_once():
    spin = AdaptiveSpin()
    for k in range(10):  # a batch every 5 ms: spinning would only burn the CPU
        spin.arrived(1.0 + 0.005 * k)
    assert spin.spin_until(1.046) == 1.046 + BASE
    fast = AdaptiveSpin()
    for k in range(10):
        fast.arrived(1.0 + 0.0002 * k)
    fast.arrived(600.0)  # a pause of ten minutes counts as 2 ms: the estimate is not wiped
    assert 0.0002 < fast.gap < 2 * AUTO_MAX
    fast.arrived(600.0 - 1.0)  # (a clock that went back counts as no gap)
    assert fast.gap >= 0


def test_time_stolen_by_other_processes_turns_spinning_off_for_a_while():
    spin = AdaptiveSpin()
    for k in range(10):
        spin.arrived(2.0 + 0.0002 * k)
    last = 2.0 + 0.0002 * 9
    assert not spin.spun(last + 0.0001, STOLEN_LIMIT / 2)  # a little stolen: still spinning
    assert spin.spin_until(last + 0.0001) == pytest.approx(last + 0.0004)
    assert spin.woken(last + 0.0001) == last + 0.0001 + WAKE_SPIN
    assert spin.spun(last + 0.0001, STOLEN_LIMIT * 2)  # the machine is busy: sleep at once
    assert spin.spin_until(last + 0.0002) == last + 0.0002 + BASE
    assert spin.woken(last + 0.0002) == last + 0.0002 + BASE
    spin.arrived(last + 0.0003)
    assert spin.spin_until(last + 0.0003) == last + 0.0003 + BASE
    later = last + 0.0001 + BACKOFF  # then spinning is tried again
    spin.arrived(later)
    assert spin.spin_until(later) > later + BASE


def test_spin_while32_sees_another_threads_store_and_reports_stolen_time():
    m = SharedMap(mmap.mmap(-1, mmap.PAGESIZE))
    m.store32(64, 7)
    assert m.spin_while32(64, 8, HANG) == (7, 0.0)  # (differs already: no wait)
    word, stolen = m.spin_while32(64, 7, 0.001)  # nobody writes: the time runs out
    assert word == 7 and stolen >= 0.0
    writer = threading.Timer(0.05, lambda: m.add32(64, 1))
    writer.start()
    word, stolen = m.spin_while32(64, 7, HANG)  # (the GIL is released: the timer runs)
    writer.join()
    assert word == 8 and stolen >= 0.0
    with pytest.raises(ArrowInvalid, match="misaligned"):
        m.spin_while32(66, 0, 0.001)


def _states(tid: int, samples: int) -> list:
    """The kernel's state letter of thread ``tid`` of this process, ``samples`` times."""
    out = []
    for _ in range(samples):
        with open(f"/proc/self/task/{tid}/stat") as f:
            out.append(f.read().rsplit(")", 1)[1].split()[0])
        time.sleep(0.01)
    return out


@pytest.mark.parametrize("spin", [None, HANG])
def test_an_idle_default_consumer_sleeps(name, spin):
    # The default consumer stays awake after a burst of batches only for a millisecond or
    # two; then the kernel sees it asleep (S).  The control, spin=HANG, is seen running or
    # runnable (R) throughout: the probe can tell the two apart.
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=4) as ch:
        with Channel.attach(name, spin=spin) as c:
            assert c.spin == spin
            got, tid = [], []

            def consume():
                tid.append(threading.get_native_id())
                for _ in range(50):
                    got.append(c.recv(timeout=HANG).num_rows)
                try:
                    c.recv(timeout=1.0)  # (nothing comes: it waits)
                except TimeoutError:
                    got.append("timeout")

            worker = threading.Thread(target=consume)
            worker.start()
            for k in range(50):  # batches close together: the adaptive spin learns to spin
                ch.send({"i": [k]}, timeout=HANG)
                time.sleep(0.0002)
            until = time.monotonic() + HANG
            while len(got) < 50 and time.monotonic() < until:
                time.sleep(0.01)
            time.sleep(0.1)  # (well past any adaptive spin)
            states = _states(tid[0], 30)
            worker.join(HANG)
            assert got == [1] * 50 + ["timeout"]
            if spin is None:
                assert states.count("S") >= 25, states
            else:
                assert "S" not in states, states


def test_spin_none_is_adaptive_and_can_be_set_back(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        with Channel.attach(name) as c:
            assert c.spin is None
            c.spin = 0.001
            assert c.spin == 0.001
            c.spin = None
            assert c.spin is None
            with pytest.raises(ArrowInvalid, match="None \\(adaptive\\) or a number"):
                c.spin = "auto"
            ch.send({"i": [1, 2]})
            assert c.recv(timeout=HANG).column("i").to_pylist() == [1, 2]


def test_a_send_wakes_sleeping_consumers_as_it_begins_and_a_failed_one_leaves_them_waiting(name):
    # The wake comes before the batch is encoded (its wake-up overlaps the send's work): a
    # send refused after it (a batch of another schema) has bumped the publication counter,
    # and the woken consumer goes back to waiting, then gets the next good batch.
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        with Channel.attach(name, spin=0) as c:  # (always asleep: a wake is needed)
            m = ch._seg.map
            got = []
            worker = threading.Thread(target=lambda: got.append(c.recv(timeout=HANG)))
            worker.start()
            until = time.monotonic() + HANG
            while not m.load32(ring.OFF_CONS_WAITING) and time.monotonic() < until:
                time.sleep(0.001)  # (until the consumer sleeps on the futex)
            before = m.load32(ring.OFF_PUB)
            with pytest.raises(ArrowInvalid, match="no column"):  # (not the schema)
                ch.send({"other": [1]})
            assert m.load32(ring.OFF_PUB) == before + 1  # (woken, though nothing was sent)
            assert ch.sent == 0 and not got
            ch.send({"i": [7]}, timeout=HANG)
            worker.join(HANG)
            assert [b.column("i").to_pylist() for b in got] == [[7]]
            assert c.sequence == 0
