"""A channel's producer or consumer that ``exec``s another program keeps its pid and start
time, and runs no finalizer: it is judged gone by its liveness lock, which the kernel drops at
``exec`` (review 19: F4).  Its consumers get ``ProducerDiedError`` after what it published and
remove the name as they leave; a wait-mode producer reclaims a consumer that exec'd and goes
on.  Real processes; timeouts only catch hangs.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import arrowmm
from arrowmm.errors import ProducerDiedError
from arrowmm.shm import Channel, cleanup, segments

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-exec-{os.getpid()}-"
HANG = 60
SCHEMA = arrowmm.schema([("x", arrowmm.int64())])

# a producer that sends one batch when told, then becomes `sleep` (same pid, same start time);
# with "fork" in argv, after forking a child that sleeps (its copy of the channel's descriptors)
PRODUCER = """
    import os, sys, time, arrowmm
    from arrowmm.shm import Channel
    ch = Channel.create(sys.argv[1], arrowmm.schema([("x", arrowmm.int64())]), capacity=1 << 16)
    print("ready", flush=True)
    sys.stdin.readline()
    ch.send({"x": [7]})
    if "fork" in sys.argv and os.fork() == 0:
        time.sleep(600)
        os._exit(0)
    os.execv("/bin/sleep", ["sleep", "600"])
"""

# a consumer that takes one batch, then becomes `sleep` without leaving
CONSUMER = """
    import os, sys
    from arrowmm.shm import Channel
    c = Channel.attach(sys.argv[1])
    print("attached", flush=True)
    batch = c.recv(timeout=60)
    os.execv("/bin/sleep", ["sleep", "600"])
"""


def run(code, name, *args, **kwargs):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), name, *args],
                            stdout=subprocess.PIPE, text=True, start_new_session=True, **kwargs)


def stop(proc):
    """Kill ``proc`` and the child it may have forked (its session, of which it is leader)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


@pytest.mark.parametrize("fork", ["no child", "fork"])
def test_a_producer_that_execs_is_gone_to_its_consumers(name, fork):
    proc = run(PRODUCER, name, fork, stdin=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == "ready\n"
        consumer = Channel.attach(name)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert consumer.recv(timeout=HANG).column("x").to_pylist() == [7]
        with pytest.raises(ProducerDiedError, match="died without closing it; 1 batches"):
            consumer.recv(timeout=HANG)  # (was a wait for as long as `sleep` ran)
        assert not consumer.producer_alive
        consumer.close()
        assert not os.path.exists(f"/dev/shm/{name}")  # (the last side to leave removes it)
        assert proc.poll() is None  # (it still runs, as `sleep`)
    finally:
        stop(proc)


def test_cleanup_removes_the_channel_of_a_producer_that_execd(name):
    proc = run(PRODUCER, name, stdin=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == "ready\n"
        assert [s.alive for s in segments() if s.name == name] == [True]
        proc.stdin.write("go\n")
        proc.stdin.flush()
        deadline = time.monotonic() + HANG
        while not open(f"/proc/{proc.pid}/cmdline", "rb").read().startswith(b"sleep"):
            assert time.monotonic() < deadline, "the producer did not exec"
            time.sleep(0.01)
        assert [s.alive for s in segments() if s.name == name] == [False]
        assert name in cleanup()
        assert not os.path.exists(f"/dev/shm/{name}")
    finally:
        stop(proc)


def test_a_consumer_that_execs_is_reclaimed_by_a_waiting_producer(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        proc = run(CONSUMER, name)
        try:
            assert proc.stdout.readline() == "attached\n"
            ch.send({"x": [0]}, timeout=HANG)
            # batch 2 needs slot 0 back: the exec'd consumer took batch 0, never batch 1
            for k in range(1, 4):
                ch.send({"x": [k]}, timeout=HANG)  # (was TimeoutError: "a consumer has not
            assert ch.consumers == 0               # taken batch 1")
            assert proc.poll() is None
        finally:
            stop(proc)
