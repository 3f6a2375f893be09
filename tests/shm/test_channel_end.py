"""How a channel's stream ends, as its consumers see it, with real processes: only ``close``
(or a ``with`` block left without an exception) is the end (``EOFError``, the end of
iteration).  A producer that stops on an exception, in a ``with`` block or unhandled at exit,
leaves its consumers every batch it published, then ``ProducerDiedError`` naming the
exception; one scribbled word saying "closed" is damage (``ArrowInvalid``), not the end.  A
consumer closed from another thread ends the iteration its reader thread waits in.
Timeouts only catch hangs.
"""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import arrowmm
from arrowmm.errors import ArrowInvalid, ProducerDiedError
from arrowmm.shm import Channel, ring

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-end-{os.getpid()}-"
HANG = 60
SCHEMA = arrowmm.schema([("x", arrowmm.int64())])

# a consumer that reads to the end in its own process: what it got, and how it ended
CONSUMER = """
    import json, sys
    from arrowmm.shm import Channel
    c = Channel.attach(sys.argv[1])
    got, end = [], "clean end"
    try:
        for b in c:
            got.append(b.column("x").to_pylist()[0])
    except Exception as e:
        end = f"{type(e).__name__}: {e}"
    print(json.dumps({"got": got, "end": end}), flush=True)
"""


def start_consumer(name):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(CONSUMER), name],
                            stdout=subprocess.PIPE, text=True)


def result_of(proc) -> dict:
    out = proc.communicate(timeout=HANG)[0]
    assert proc.returncode == 0
    return json.loads(out.strip().splitlines()[-1])


def test_an_exception_in_the_with_block_is_no_clean_end(name):
    consumer = None
    try:
        with pytest.raises(RuntimeError):
            with Channel.create(name, SCHEMA) as ch:
                consumer = start_consumer(name)
                ch.wait_for_consumers(1, timeout=HANG)
                for k in range(3):
                    ch.send({"x": [k]}, timeout=HANG)
                raise RuntimeError("the producer's source failed")
        got = result_of(consumer)
    finally:
        if consumer is not None and consumer.poll() is None:
            consumer.kill()
            consumer.wait()
    assert got["got"] == [0, 1, 2]
    assert got["end"].startswith("ProducerDiedError")
    assert "stopped on an exception (RuntimeError)" in got["end"]


@pytest.mark.parametrize("how", ["unhandled", "no close"])
def test_a_producer_that_exits_without_close_is_no_clean_end(name, how):
    # an unhandled exception (or no close() at all) leaves the channel to its finalizer at
    # exit: nothing says the stream was complete
    producer = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys
        import arrowmm
        from arrowmm.shm import Channel
        ch = Channel.create(sys.argv[1], arrowmm.schema([("x", arrowmm.int64())]))
        print("created", flush=True)
        ch.wait_for_consumers(1, timeout=60)
        for k in range(3):
            ch.send({"x": [k]}, timeout=60)
        if sys.argv[2] == "unhandled":
            raise KeyError("no more rows")
    """), name, how], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    consumer = None
    try:
        assert producer.stdout.readline().strip() == "created"
        consumer = start_consumer(name)
        got = result_of(consumer)
        producer.communicate(timeout=HANG)
    finally:
        for proc in (producer, consumer):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    assert got["got"] == [0, 1, 2]
    assert got["end"].startswith("ProducerDiedError")
    assert ("(KeyError)" if how == "unhandled" else "without close()") in got["end"]


def test_a_state_word_scribbled_to_closed_is_damage_not_the_end(name):
    with Channel.create(name, SCHEMA, slots=4) as ch, Channel.attach(name) as c:
        for k in range(3):
            ch.send({"x": [k]}, timeout=HANG)
        assert [c.recv(timeout=HANG).column("x").to_pylist()[0] for _ in range(3)] == [0, 1, 2]
        fd = os.open(f"/dev/shm/{name}", os.O_RDWR)  # (what another process could do)
        try:
            os.pwrite(fd, struct.pack("<I", ring.CLOSED), ring.OFF_STATE)
        finally:
            os.close(fd)
        with pytest.raises(ArrowInvalid, match="says closed, but its producer did not close"):
            c.recv(timeout=HANG)
        with pytest.raises(ArrowInvalid, match="did not close it: the header was damaged"):
            ch.send({"x": [3]}, timeout=HANG)  # (and the producer marks it damaged)


def test_a_consumer_attaching_after_the_end_is_told_how_it_ended(name):
    with Channel.create(name, SCHEMA) as ch:  # closed: the end (its record is no damage)
        early = Channel.attach(name)
        ch.close()
        late = Channel.attach(name)
        with pytest.raises(EOFError):
            late.recv(timeout=HANG)
    late.close()
    with pytest.raises(ValueError):  # aborted: an error, for a consumer attached before too
        with Channel.create(f"{name}-x", SCHEMA):
            aborted_early = Channel.attach(f"{name}-x")
            raise ValueError("stop")
    aborted_late = Channel.attach(f"{name}-x")
    for c in (aborted_early, aborted_late):
        with pytest.raises(ProducerDiedError, match=r"\(ValueError\)"):
            c.recv(timeout=HANG)
        c.close()
    with pytest.raises(EOFError):
        early.recv(timeout=HANG)
    early.close()


def test_closing_a_consumer_from_another_thread_ends_the_waiting_reader(name):
    with Channel.create(name, SCHEMA) as ch:
        c = Channel.attach(name)
        ended = []

        def reader():
            try:
                ended.append(list(c))
            except Exception as exc:  # noqa: BLE001  (reported below)
                ended.append(exc)
        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        time.sleep(0.2)  # (the reader asleep on an idle stream)
        closer = threading.Thread(target=c.close, daemon=True)
        closer.start()
        closer.join(10)
        assert not closer.is_alive(), "close() waited for a batch"
        thread.join(10)
        assert ended == [[]]  # the iteration ended, with nothing
        with pytest.raises(ArrowInvalid, match="is closed"):
            c.recv(timeout=1)
        assert ch.consumers == 0
