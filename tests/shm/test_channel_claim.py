"""A consumer killed between taking its entry and becoming active (issue 20's last gap).

The consumer runs as a separate program that stops at that point (``_pause_while_claiming``,
a hook for tests only), says so, and is killed with SIGKILL there.  Its entry holds the
claiming state with its pid in it; the producer, another consumer attaching and
``shm.segments()`` / ``cleanup()`` all see that the claimer is gone and give the entry back.
Timeouts are upper bounds that only a hang reaches.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

import arrowmm
from arrowmm import shm
from arrowmm.errors import ArrowInvalid
from arrowmm.shm import Channel, consumer, ring

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-claim-{os.getpid()}-"
SCHEMA = arrowmm.schema([("x", arrowmm.int64())])
HANG = 60

CLAIMED_BY = ring.CLAIMING | ring.NS_KNOWN  # (| the claimer's pid: its namespace written)

PAUSED = """
    import sys, time
    from arrowmm.shm import Channel, consumer
    def pause():
        print("claiming", flush=True)
        time.sleep(600)  # (killed here)
    consumer._pause_while_claiming = pause
    Channel.attach(sys.argv[1])
    print("attached", flush=True)  # (never reached)
"""


def _killed_while_claiming(name) -> int:
    """Start a consumer, SIGKILL it while it claims an entry; its pid."""
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(PAUSED), name],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "claiming"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=HANG)
        proc.stdout.close()
    return proc.pid


def _states(ch) -> list:
    seg = ch._seg
    return [seg.map.load32(seg.layout.entry(i)) for i in range(seg.layout.max_consumers)]


def test_entry_of_a_consumer_killed_while_claiming_is_reclaimed_by_the_next_attach(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2, max_consumers=1) as ch:
        pid = _killed_while_claiming(name)
        assert _states(ch) == [CLAIMED_BY | pid]  # stuck: claimed by a dead process
        assert ch.consumers == 0
        with Channel.attach(name) as c:  # the only entry: taken back from the dead claimer
            assert _states(ch) == [consumer.ACTIVE]
            ch.send({"x": [7]}, timeout=HANG)
            assert c.recv(timeout=HANG).column("x").to_pylist() == [7]


def test_producer_reclaims_a_dead_claimer_while_waiting_for_consumers(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2, max_consumers=2) as ch:
        pid = _killed_while_claiming(name)
        assert CLAIMED_BY | pid in _states(ch)
        with pytest.raises(TimeoutError):
            ch.wait_for_consumers(1, timeout=0.2)  # (it reclaims between its waits)
        assert _states(ch) == [consumer.FREE, consumer.FREE]


def test_a_live_claimer_is_not_reclaimed(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2, max_consumers=1) as ch:
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(PAUSED), name],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip() == "claiming"
            assert ch._seg.reclaim_dead() == 0  # its claimer still runs
            with pytest.raises(ArrowInvalid, match="all 1 consumer entries are taken"):
                Channel.attach(name)
            assert _states(ch) == [CLAIMED_BY | proc.pid]
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=HANG)
            proc.stdout.close()


PRODUCER = """
    import sys, time
    import arrowmm
    from arrowmm.shm import Channel
    ch = Channel.create(sys.argv[1], arrowmm.schema([("x", arrowmm.int64())]))
    print("created", flush=True)
    time.sleep(600)  # (killed here)
"""


def test_cleanup_removes_a_crashed_channel_whose_only_consumer_died_claiming(name):
    producer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(PRODUCER), name],
                                stdout=subprocess.PIPE, text=True)
    try:
        assert producer.stdout.readline().strip() == "created"
        _killed_while_claiming(name)
    finally:
        os.kill(producer.pid, signal.SIGKILL)
        producer.wait(timeout=HANG)
        producer.stdout.close()
    info = {i.name: i for i in shm.segments()}[name]
    assert info.kind == "channel" and info.alive is False  # nobody is left, claimer included
    assert name in shm.cleanup()
    assert not os.path.exists(f"/dev/shm/{name}")


def test_a_claimer_that_has_not_said_its_pid_namespace_is_not_judged(name):
    # (its pid may be another namespace's: until its namespace is in the entry, a dead-looking
    # pid is no proof; a claimer killed in that instant keeps the entry, as a live one does)
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2, max_consumers=1) as ch:
        dead = _killed_while_claiming(name)
        ch._seg.map.store32(ch._seg.layout.entry(0), consumer.CLAIMING | dead)
        assert ch._seg.reclaim_dead() == 0
        assert _states(ch) == [consumer.CLAIMING | dead]
        ch._seg.map.store32(ch._seg.layout.entry(0), CLAIMED_BY | dead)
        assert ch._seg.reclaim_dead() == 1  # (said: judged, and dead)
