"""arrowmm.shm.Channel: a live ring of record batches in shared memory, with real processes.

Producers and consumers run as separate Python programs (``subprocess``) wherever the property
is about processes: 10,000 small batches checked value by value in another process, two
consumers, a late consumer, slow consumers in both modes, a producer and a consumer killed with
SIGKILL (the consumer gets ``ProducerDiedError``, the producer reclaims the dead consumer's
slots and goes on), and ``cleanup()`` after a crash.  Held batches (an arrowmm batch, a numpy
view, a pyarrow export) keep their slot from being rewritten.  Hostile segment contents (a
damaged header, slot lengths, garbage in a slot) raise ``ArrowInvalid``.  Timeouts in these
tests are upper bounds that only fail on a hang; nothing asserts how long anything takes.
Every channel is named ``amm-chan-test-<pid>-...``, and a fixture checks none is left behind.
"""
from __future__ import annotations

import doctest
import gc
import itertools
import json
import os
import random
import signal
import struct
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import shm
from arrowmm.errors import ArrowInvalid, ProducerDiedError
from arrowmm.shm import Channel, channel

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-test-{os.getpid()}-"
_counter = itertools.count()
SCHEMA = arrowmm.schema([("i", arrowmm.int64()), ("s", arrowmm.string())])
HANG = 60  # seconds: an upper bound that only a hang reaches


def _ours():
    return sorted(n for n in os.listdir("/dev/shm") if n.startswith(PREFIX))


@pytest.fixture(autouse=True)
def no_leftovers():
    before = _ours()
    yield
    gc.collect()
    left = [n for n in _ours() if n not in before]
    for n in left:
        os.unlink(os.path.join("/dev/shm", n))
    assert not left, f"channels left in /dev/shm: {left}"


@pytest.fixture
def name():
    return f"{PREFIX}{next(_counter)}"


def batch_of(i: int, rows: int = 2) -> dict:
    return {"i": [i * 10 + k for k in range(rows)], "s": [f"b{i}-{k}" for k in range(rows)]}


def run(code: str, *args, wait=True):
    """Run ``code`` as a separate Python program with ``args`` in sys.argv."""
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait:
        return proc
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 0, err
    return out


def finish(proc) -> str:
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 0, err
    return out


CONSUMER = """
    import json, sys, time
    from arrowmm.shm import Channel
    name, delay = sys.argv[1], float(sys.argv[2])
    c = Channel.attach(name)
    print("attached", flush=True)
    got = []
    for b in c:
        i = b.column("i").to_pylist()
        s = b.column("s").to_pylist()
        n = i[0] // 10
        ok = i == [n * 10 + k for k in range(len(i))] and s == [f"b{n}-{k}" for k in range(len(s))]
        got.append((c.sequence, n, ok))
        if delay:
            time.sleep(delay)
    print(json.dumps({"got": got, "dropped": c.dropped}), flush=True)
    c.close()
"""


def expect_line(proc, word: str) -> None:
    """The child's next line is ``word``; else its stderr says why (it exited, closing
    stdout)."""
    line = proc.stdout.readline().strip()
    if line != word:
        proc.kill()
        err = proc.communicate(timeout=HANG)[1]
        raise AssertionError(f"the child printed {line!r}, not {word!r}; its stderr: "
                             f"{(err or '')[-3000:]}")


def start_consumer(name, delay=0.0):
    proc = run(CONSUMER, name, delay, wait=False)
    assert proc.stdout.readline().strip() == "attached"
    return proc


def consumer_result(proc) -> dict:
    return json.loads(finish(proc).strip().splitlines()[-1])


# -- in one process ---------------------------------------------------------------------------
def test_send_recv_values_and_end_of_stream(name):
    with Channel.create(name, SCHEMA, capacity=1 << 20, slots=4) as ch:
        assert os.path.exists(f"/dev/shm/{name}")
        with Channel.attach(name) as c:
            assert c.schema == ch.schema
            for i in range(10):  # more batches than slots: the ring wraps
                assert ch.send(batch_of(i)) == i
                b = c.recv(timeout=HANG)
                assert b.column("i").to_pylist() == [i * 10, i * 10 + 1]
                assert b.column("s").to_pylist() == [f"b{i}-0", f"b{i}-1"]
                assert c.sequence == i
            ch.close()
            with pytest.raises(EOFError):
                c.recv(timeout=HANG)
            assert list(c) == []
            assert c.dropped == 0
    assert not os.path.exists(f"/dev/shm/{name}")  # the last side left


def test_recv_timeout_and_arguments(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        with Channel.attach(name) as c:
            with pytest.raises(TimeoutError, match="no batch within the timeout"):
                c.recv(timeout=0.05)
            with pytest.raises(ArrowInvalid, match="schema does not match"):
                ch.send(pa.record_batch({"x": [1]}))
            with pytest.raises(ArrowInvalid, match="no column"):
                ch.send({"x": [1]})
            with pytest.raises(ArrowInvalid, match="a slot holds 32768"):
                ch.send({"i": list(range(10000)), "s": ["x"] * 10000})
            ch.send(batch_of(1))  # a refused batch wrote nothing: the next is batch 0
            assert c.recv(timeout=HANG).column("i").to_pylist() == [10, 11] and c.sequence == 0
    with pytest.raises(ArrowInvalid, match="on_slow"):
        Channel.create(name, SCHEMA, on_slow="block")
    with pytest.raises(ArrowInvalid, match="max_consumers"):
        Channel.create(name, SCHEMA, max_consumers=65)
    with pytest.raises(ArrowInvalid, match="no shared-memory channel"):
        Channel.attach(name)
    with pytest.raises(TypeError, match="Channel.create"):
        Channel()


def test_a_spinning_consumer_gets_batches_and_keeps_its_timeout(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        for bad in (-1, "0.1", True, float("nan"), 1e9):
            with pytest.raises(ArrowInvalid, match="spin must be None \\(adaptive\\) or a number of seconds"):
                Channel.attach(name, spin=bad)
        with Channel.attach(name, spin=HANG) as c:
            assert c.spin == HANG
            t0 = time.monotonic()
            with pytest.raises(TimeoutError, match="no batch within the timeout"):
                c.recv(timeout=0.05)  # (the timeout bounds the spinning too)
            assert time.monotonic() - t0 < HANG / 2
            late = threading.Timer(0.05, lambda: ch.send(batch_of(3)))
            late.start()  # (sent while recv spins, not before)
            assert c.recv(timeout=HANG).column("i").to_pylist() == [30, 31]
            late.join()
            c.spin = 0  # (never busy: straight to the futex)
            late = threading.Timer(0.05, lambda: ch.send(batch_of(4)))
            late.start()
            assert c.recv(timeout=HANG).column("i").to_pylist() == [40, 41]
            late.join()
            with pytest.raises(ArrowInvalid, match="spin must be"):
                c.spin = -0.5
            assert c.spin == 0
            c.spin = np.float32(0.25)  # (any real number of seconds)
            assert c.spin == 0.25 and type(c.spin) is float


def test_recv_keeps_its_timeout_while_another_thread_receives(name):
    # A second thread's recv(timeout=) waited for the first's (the consumer's lock) for ever.
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        with Channel.attach(name) as c:
            got = []
            first = threading.Thread(target=lambda: got.append(c.recv(timeout=HANG)))
            first.start()
            until = time.monotonic() + HANG
            while not c._lock.locked() and time.monotonic() < until:
                time.sleep(0.01)  # (until the first thread is inside recv, waiting)
            t0 = time.monotonic()
            with pytest.raises(TimeoutError, match="another thread of this consumer"):
                c.recv(timeout=0.2)
            assert time.monotonic() - t0 < HANG / 2
            ch.send(batch_of(5))
            first.join(HANG)
            assert got[0].column("i").to_pylist() == [50, 51]


def test_existing_name_and_full_consumer_table(name):
    with Channel.create(name, SCHEMA, max_consumers=1) as ch:
        with pytest.raises(ArrowInvalid, match="already exists"):
            Channel.create(name, SCHEMA)
        first = Channel.attach(name)
        with pytest.raises(ArrowInvalid, match="all 1 consumer entries are taken"):
            Channel.attach(name)
        first.close()
        with Channel.attach(name):  # the entry it left is reused
            assert ch.consumers == 1


def test_dictionaries_replaced_and_late_consumer_decodes_them(name):
    schema = arrowmm.schema([("d", arrowmm.dictionary(arrowmm.int32(), arrowmm.string()))])
    first = pa.record_batch([pa.array(["a", "b", "a"]).dictionary_encode()], names=["d"])
    second = pa.record_batch([pa.array(["z", "y"]).dictionary_encode()], names=["d"])
    with Channel.create(name, schema, capacity=1 << 20, slots=2) as ch:
        early = Channel.attach(name)
        ch.send(first)
        late = Channel.attach(name)  # attaches after the first dictionary went by
        ch.send(second)
        b0, b1 = early.recv(timeout=HANG), early.recv(timeout=HANG)
        assert b0.column("d").to_pylist() == ["a", "b", "a"]  # not the second's dictionary
        assert b1.column("d").to_pylist() == ["z", "y"]
        got = late.recv(timeout=HANG)
        assert got.column("d").to_pylist() == ["z", "y"] and late.sequence == 1
        assert pa.record_batch(got).equals(second)
        del b0, b1, got
        early.close()
        late.close()


@pytest.mark.parametrize("on_slow", ["drop", "wait"])
def test_held_batch_keeps_its_slot_and_release_frees_it(name, on_slow):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=1, on_slow=on_slow) as ch:
        with Channel.attach(name) as c:
            ch.send(batch_of(0))
            held = c.recv(timeout=HANG)
            values = held.column("i").to_numpy()  # a numpy view into the slot
            exported = pa.record_batch(held)       # a pyarrow batch over the same bytes
            # even dropping, a held slot is not rewritten
            with pytest.raises(TimeoutError, match=f"consumer pids \\[{os.getpid()}\\]"):
                ch.send(batch_of(1), timeout=0.2)
            assert values.tolist() == [0, 1] and exported.column(1).to_pylist() == ["b0-0", "b0-1"]
            del held
            gc.collect()
            with pytest.raises(TimeoutError):
                ch.send(batch_of(1), timeout=0.2)  # the numpy view and the export still hold it
            del values
            gc.collect()
            with pytest.raises(TimeoutError):
                ch.send(batch_of(1), timeout=0.2)
            assert exported.column(0).to_pylist() == [0, 1]
            del exported
            gc.collect()
            ch.send(batch_of(1), timeout=HANG)  # everything let go: the slot is reused
            assert c.recv(timeout=HANG).column("i").to_pylist() == [10, 11]
            assert c.dropped == 0


def test_drop_mode_passes_over_a_held_slot(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2, on_slow="drop") as ch:
        with Channel.attach(name) as c:
            ch.send(batch_of(0))
            held = c.recv(timeout=HANG)
            for i in range(1, 6):  # slot of batch 0 is held: the other one takes them all
                ch.send(batch_of(i), timeout=HANG)
            assert c.recv(timeout=HANG).column("i").to_pylist() == [50, 51]
            assert c.sequence == 5 and c.dropped == 4
            assert held.column("s").to_pylist() == ["b0-0", "b0-1"]  # untouched


def test_pyarrow_export_is_zero_copy(name):
    with Channel.create(name, SCHEMA, capacity=1 << 20, slots=2) as ch:
        with Channel.attach(name) as c:
            ch.send({"i": list(range(1000)), "s": ["v"] * 1000})
            b = c.recv(timeout=HANG)
            pb = pa.record_batch(b)
            address = pb.column(0).buffers()[1].address
            start = c._seg.map.address
            assert start <= address < start + c._seg.layout.size  # inside the mapping: no copy
            assert pb.column(0).to_pylist() == list(range(1000))
            reader = pa.RecordBatchReader.from_stream(c)  # the consumer as a C stream
            ch.send(batch_of(7))
            ch.close()
            assert reader.read_next_batch().column(0).to_pylist() == [70, 71]
            del b, pb, reader


def test_drop_mode_in_process(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2, on_slow="drop") as ch:
        with Channel.attach(name) as c:
            for i in range(10):  # never blocks: the consumer is not reading
                ch.send(batch_of(i), timeout=HANG)
            got = [c.recv(timeout=HANG) for _ in range(2)]
            seqs = [c.sequence]
            assert [g.column("i").to_pylist()[0] // 10 for g in got] == [8, 9]
            assert c.dropped == 8 and seqs == [9]


def test_wait_mode_blocks_producer_until_consumer_takes(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        with Channel.attach(name) as c:
            ch.send(batch_of(0))
            ch.send(batch_of(1))
            with pytest.raises(TimeoutError, match="has not taken batch 0"):
                ch.send(batch_of(2), timeout=0.2)
            c.recv(timeout=HANG)  # taken and dropped at once
            ch.send(batch_of(2), timeout=HANG)
            assert [c.recv(timeout=HANG).column("i").to_pylist()[0] for _ in range(2)] == [10, 20]
            assert c.dropped == 0


# -- real processes ---------------------------------------------------------------------------
def test_ten_thousand_small_batches_in_order_in_another_process(name):
    with Channel.create(name, SCHEMA, capacity=1 << 20, slots=64) as ch:
        proc = start_consumer(name)
        ch.wait_for_consumers(1, timeout=HANG)
        for i in range(10_000):
            ch.send(batch_of(i), timeout=HANG)
        ch.close()
        result = consumer_result(proc)
    got = result["got"]
    assert len(got) == 10_000 and result["dropped"] == 0
    assert [g[0] for g in got] == list(range(10_000))  # sequence numbers
    assert [g[1] for g in got] == list(range(10_000))  # the values say which batch
    assert all(g[2] for g in got)                       # and every value is right


def test_two_consumers_each_receive_every_batch(name):
    with Channel.create(name, SCHEMA, capacity=1 << 20, slots=4) as ch:
        procs = [start_consumer(name), start_consumer(name, 0.001)]
        assert ch.wait_for_consumers(2, timeout=HANG) == 2
        for i in range(300):
            ch.send(batch_of(i), timeout=HANG)
        ch.close()
        results = [consumer_result(p) for p in procs]
    for r in results:
        assert [g[1] for g in r["got"]] == list(range(300)) and all(g[2] for g in r["got"])


def test_late_consumer_reads_from_the_next_batch(name):
    with Channel.create(name, SCHEMA, capacity=1 << 20, slots=4) as ch:
        for i in range(5):  # nobody listens: the ring just turns
            ch.send(batch_of(i), timeout=HANG)
        proc = start_consumer(name)
        for i in range(5, 9):
            ch.send(batch_of(i), timeout=HANG)
        ch.close()
        got = consumer_result(proc)["got"]
    assert [g[0] for g in got] == [5, 6, 7, 8] and [g[1] for g in got] == [5, 6, 7, 8]


def test_slow_consumer_wait_mode_gets_everything(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2, on_slow="wait") as ch:
        proc = start_consumer(name, 0.01)
        for i in range(40):
            ch.send(batch_of(i), timeout=HANG)  # blocks while the consumer is 2 behind
        ch.close()
        r = consumer_result(proc)
    assert [g[1] for g in r["got"]] == list(range(40)) and r["dropped"] == 0


def test_slow_consumer_drop_mode_skips_and_learns_it(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2, on_slow="drop") as ch:
        proc = start_consumer(name, 0.05)
        for i in range(200):
            ch.send(batch_of(i), timeout=HANG)  # never waits for the consumer to catch up
        ch.close()
        r = consumer_result(proc)
    seqs = [g[0] for g in r["got"]]
    assert seqs == sorted(set(seqs)) and seqs[-1] == 199  # in order, the last one included
    assert [g[1] for g in r["got"]] == seqs and all(g[2] for g in r["got"])
    assert r["dropped"] == 200 - len(seqs) > 0


PRODUCER = """
    import sys, time
    import arrowmm
    from arrowmm.shm import Channel
    name, n = sys.argv[1], int(sys.argv[2])
    schema = arrowmm.schema([("i", arrowmm.int64()), ("s", arrowmm.string())])
    ch = Channel.create(name, schema, capacity=1 << 16, slots=4)
    print("created", flush=True)
    ch.wait_for_consumers(1, timeout=60)
    for i in range(n):
        ch.send({"i": [i * 10, i * 10 + 1], "s": [f"b{i}-0", f"b{i}-1"]}, timeout=60)
    print("sent", flush=True)
    time.sleep(600)  # until killed
"""


@pytest.mark.parametrize("spin", [None, HANG])
def test_producer_killed_consumer_gets_what_was_sent_then_an_error(name, spin):
    # (with spin=HANG, recv busy-waits the whole timeout: it must still check the producer)
    proc = run(PRODUCER, name, 3, wait=False)
    try:
        expect_line(proc, "created")
        c = Channel.attach(name, spin=spin)
        expect_line(proc, "sent")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=HANG)
        got = [c.recv(timeout=HANG).column("i").to_pylist()[0] for _ in range(3)]
        assert got == [0, 10, 20]  # what was published before the crash arrives
        assert not c.producer_alive
        with pytest.raises(ProducerDiedError, match=f"pid {proc.pid}"):
            c.recv(timeout=HANG / 2)  # (a TimeoutError: the death went unnoticed)
        c.close()
        assert not os.path.exists(f"/dev/shm/{name}")  # the last side left
    finally:
        proc.kill()
        proc.wait()


HOLDER = """
    import sys, time
    from arrowmm.shm import Channel
    c = Channel.attach(sys.argv[1])
    print("attached", flush=True)
    held = [c.recv(timeout=60) for _ in range(2)]  # never released: it will be killed
    print("holding", flush=True)
    time.sleep(600)
"""


def test_consumer_killed_its_slots_are_reclaimed(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        proc = run(HOLDER, name, wait=False)
        try:
            assert proc.stdout.readline().strip() == "attached"
            ch.send(batch_of(0), timeout=HANG)
            ch.send(batch_of(1), timeout=HANG)
            assert proc.stdout.readline().strip() == "holding"
            with pytest.raises(TimeoutError, match=f"consumer pids \\[{proc.pid}\\]"):
                ch.send(batch_of(2), timeout=0.3)  # both slots held by the live consumer
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=HANG)
            for i in range(2, 10):  # its holds are reclaimed: the producer goes on
                ch.send(batch_of(i), timeout=HANG)
            assert ch.consumers == 0
            with Channel.attach(name) as c:  # its entry is free again
                ch.send(batch_of(10), timeout=HANG)
                assert c.recv(timeout=HANG).column("i").to_pylist() == [100, 101]
        finally:
            proc.kill()
            proc.wait()


CRASHER = """
    import os, signal, sys
    import arrowmm
    from arrowmm.shm import Channel
    ch = Channel.create(sys.argv[1], arrowmm.schema([("x", arrowmm.int64())]))
    ch.send({"x": [1]})
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_cleanup_removes_a_channel_after_a_crash(name):
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CRASHER), name])
    assert proc.wait(timeout=HANG) == -signal.SIGKILL
    info = {i.name: i for i in shm.segments()}[name]
    assert info.kind == "channel" and info.alive is False and info.stale
    assert info.creator["pid"] == proc.pid
    with Channel.create(f"{name}-live", SCHEMA) as live:
        assert {i.name: i for i in shm.segments()}[live.name].alive is True
        removed = shm.cleanup()
        assert name in removed and live.name not in removed  # a running channel stays
        assert not os.path.exists(f"/dev/shm/{name}")


def test_a_consumer_alive_keeps_a_dead_producers_channel(name):
    proc = run(PRODUCER, name, 1, wait=False)
    try:
        expect_line(proc, "created")
        c = Channel.attach(name)
        expect_line(proc, "sent")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=HANG)
        assert name not in shm.cleanup()  # the consumer still reads it
        assert c.recv(timeout=HANG).column("i").to_pylist() == [0, 1]
        c.close()
    finally:
        proc.kill()
        proc.wait()


# -- hostile segments -------------------------------------------------------------------------
def _poke(name, offset, data):
    with open(f"/dev/shm/{name}", "r+b") as f:
        f.seek(offset)
        f.write(data)


@pytest.mark.parametrize("offset,data,match", [
    (0, b"NOTACHAN", "not an arrowmm channel"),
    (8, struct.pack("<I", 99), "layout version 99"),
    (24, struct.pack("<I", 0), "0 slots"),
    (28, struct.pack("<I", 65), "room for 65 consumers"),
    (32, struct.pack("<Q", 1 << 62), "slot size"),
    (16, struct.pack("<Q", 1 << 40), "header describes"),
    (56, struct.pack("<Q", 3), "header describes|schema"),
    (12, struct.pack("<I", 6), "header flags 0x6"),
    (64, struct.pack("<Q", 0), "producer pid 0"),
    (64, struct.pack("<Q", 1 << 40), "producer pid 1099511627776"),
    (88, b"\xff" * 48, "producer boot id"),
    (150, b"\x01", "reserved header byte 150"),
    (213, b"\x01", "reserved header byte 213"),
    (208, struct.pack("<I", 7), "stream state 7"),
])
def test_damaged_header_is_refused(name, offset, data, match):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        _poke(name, offset, data)
        with pytest.raises(ArrowInvalid, match=match):
            Channel.attach(name)
        ch.close()
    assert not os.path.exists(f"/dev/shm/{name}")  # (no consumer attached: gone at close)


@pytest.mark.parametrize("char", ["\n", "\x1b", "\x7f", "\u200b", "\u202e", "\u2028"])
def test_channel_names_with_characters_that_misrender_are_refused(name, char):
    bad = f"{name}-a{char}b"
    for call in (lambda: Channel.create(bad, SCHEMA, capacity=1 << 16, slots=2),
                 lambda: Channel.attach(bad)):
        with pytest.raises(ArrowInvalid, match="invalid channel name") as info:
            call()
        assert repr(bad) in str(info.value) and repr(char) in str(info.value)
    assert not any(n.startswith(f"{name}-a") for n in os.listdir("/dev/shm"))


@pytest.mark.parametrize("offset,data,field", [
    (0, b"NOTACHAN", "magic"), (24, struct.pack("<I", 1), "slots"),
    (32, struct.pack("<Q", 1 << 12), "slot size"), (64, struct.pack("<Q", 1), "producer pid"),
    (88, b"0" * 36, "producer boot id"), (208, struct.pack("<I", 9), "stream state 9"),
])
def test_a_header_damaged_while_attached_is_found_at_the_next_send_and_recv(name, offset, data,
                                                                             field):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        with Channel.attach(name) as c:
            ch.send(batch_of(0), timeout=HANG)
            _poke(name, offset, data)
            with pytest.raises(ArrowInvalid, match=f"channel '{name}': .*{field}"):
                ch.send(batch_of(1), timeout=HANG)
            with pytest.raises(ArrowInvalid, match=f"channel '{name}': "):
                c.recv(timeout=HANG)


@pytest.mark.parametrize("offset,data", [
    (192, struct.pack("<Q", 1 << 62)),  # the published count: the consumer starts there
    (64, struct.pack("<Q", 1)),          # the producer's pid: it would look dead
    (80, struct.pack("<Q", 7)),          # its pid namespace: its death would go unseen
])
def test_a_header_damaged_before_attach_is_arrow_invalid_not_a_timeout(name, offset, data):
    """Damage the consumer cannot see at attach (numbers of the right form) is found by the
    producer at its next send, which marks the channel damaged: the consumer gets ArrowInvalid
    (it waited for ever, then TimeoutError, or took the producer for dead)."""
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        ch.send(batch_of(0), timeout=HANG)
        _poke(name, offset, data)
        with Channel.attach(name) as c:
            with pytest.raises(ArrowInvalid, match="header"):
                ch.send(batch_of(1), timeout=HANG)
            with pytest.raises(ArrowInvalid, match="its producer found its header damaged"):
                c.recv(timeout=HANG)
            ch.close()
            with pytest.raises(ArrowInvalid, match="its producer found its header damaged"):
                c.recv(timeout=HANG)  # (not EOFError: the stream did not end cleanly)
            with pytest.raises(ArrowInvalid, match="its producer found its header damaged"):
                Channel.attach(name)
    assert not os.path.exists(f"/dev/shm/{name}")  # (the last to leave removed it)


def test_garbage_file_and_planted_link_are_refused(name):
    with open(f"/dev/shm/{name}", "wb") as f:
        f.write(os.urandom(4096))
    try:
        with pytest.raises(ArrowInvalid, match="not an arrowmm channel"):
            Channel.attach(name)
        assert name not in [i.name for i in shm.segments() if i.kind == "channel"]
    finally:
        os.unlink(f"/dev/shm/{name}")
    os.symlink("/etc/passwd", f"/dev/shm/{name}")
    try:
        with pytest.raises(ArrowInvalid, match="cannot open channel"):
            Channel.attach(name)
    finally:
        os.unlink(f"/dev/shm/{name}")


def test_garbage_slot_contents_raise_arrow_invalid(name):
    rng = random.Random(20)
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=1, on_slow="drop") as ch:
        with Channel.attach(name) as c:
            lay = c._seg.layout
            slot, data = lay.slot(0), lay.data_at(0)
            ch.send(batch_of(0))
            c._seg.map.store64(slot + 8, lay.slot_size + 1)  # a length past the slot
            with pytest.raises(ArrowInvalid, match="claims"):
                c.recv(timeout=HANG)
            outcomes = set()
            for trial in range(300):
                ch.send(batch_of(trial, rows=rng.randint(0, 5)))
                length = c._seg.map.load64(slot + 8)
                noise = bytearray(os.urandom(rng.randint(1, 16)))
                _poke(name, data + rng.randrange(length), bytes(noise))
                try:
                    b = c.recv(timeout=HANG)
                    b.validate(full=True)
                    b.column("i").to_pylist(), b.column("s").to_pylist()
                    outcomes.add("read")
                except ArrowInvalid:
                    outcomes.add("refused")
                b = None
            assert "refused" in outcomes  # (damage to padding may go unseen: nothing else crashes)


# -- a segment cut short (ftruncate by another process) ----------------------------------------
_CUT_PRODUCER = """
    import sys
    import arrowmm
    from arrowmm.shm import Channel
    name, mode = sys.argv[1], sys.argv[2]
    schema = arrowmm.schema([("i", arrowmm.int64()), ("s", arrowmm.string())])
    try:
        with Channel.create(name, schema, capacity=1 << 16, slots=2) as ch:
            print("created", flush=True)
            ch.wait_for_consumers(1, timeout=60)
            ch.send({"i": [0], "s": ["a"]}, timeout=60)
            if mode == "between":  # the segment is cut while nothing is sent
                ch.send({"i": [1], "s": ["b"]}, timeout=60)
                print("sent", flush=True)
                sys.stdin.readline()
                ch.send({"i": [2], "s": ["c"]}, timeout=60)
            else:  # "waiting": blocked in send (the consumer takes nothing) when it is cut
                ch.send({"i": [1], "s": ["b"]}, timeout=60)
                print("sent", flush=True)
                ch.send({"i": [2], "s": ["c"]}, timeout=60)  # (a ring behind: it waits)
    except arrowmm.ArrowInvalid as exc:
        print("ArrowInvalid:", exc, flush=True)
    else:
        print("no error", flush=True)
"""


def _cut(name, size):
    """``ftruncate`` the segment from another process."""
    run("import os, sys; os.truncate(sys.argv[1], int(sys.argv[2]))", f"/dev/shm/{name}", size)


@pytest.mark.parametrize("mode", ["waiting", "between"])
@pytest.mark.parametrize("cut_to", ["zero", "slots"])
def test_a_producer_survives_its_segment_cut_by_another_process(name, mode, cut_to):
    """The segment cut under a sending producer (blocked in ``send``, or between two): the next
    touch of a cut-off page would be SIGBUS; the producer raises ArrowInvalid and exits."""
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_CUT_PRODUCER), name, mode],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        expect_line(proc, "created")
        c = Channel.attach(name)
        expect_line(proc, "sent")
        time.sleep(0.2)  # ("waiting": asleep in its third send by now; either way is a test)
        _cut(name, 0 if cut_to == "zero" else c._seg.layout.data_at(1))
        if mode == "between":
            proc.stdin.write("go\n")
            proc.stdin.flush()
        out, err = proc.communicate(timeout=HANG)
        assert proc.returncode == 0, f"producer ended by signal {-proc.returncode}: {err}"
        assert out.startswith("ArrowInvalid:") and "was cut to" in out, out + err
        assert repr(name) in out
        with pytest.raises(ArrowInvalid, match="was cut to"):
            c.recv(timeout=HANG)
        c.close()  # (touches nothing of the cut segment)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not os.path.exists(f"/dev/shm/{name}")


_CUT_CONSUMER = """
    import gc, sys
    import arrowmm
    from arrowmm.shm import Channel
    try:
        with Channel.attach(sys.argv[1]) as c:
            batch = c.recv(timeout=60)
            print("received", flush=True)
            c.recv(timeout=60)  # (nothing more comes: it waits, and the segment is cut)
    except arrowmm.ArrowInvalid as exc:
        print("ArrowInvalid:", exc, flush=True)
"""


def test_a_consumer_survives_its_segment_cut_by_another_process(name):
    """The consumer holds a batch (so its hold bit, in the cut-off slot table, is cleared when
    the batch goes, at the latest at exit) and waits in ``recv`` when the segment is cut."""
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        proc = run(_CUT_CONSUMER, name, wait=False)
        try:
            ch.wait_for_consumers(1, timeout=HANG)
            ch.send(batch_of(0), timeout=HANG)
            assert proc.stdout.readline().strip() == "received"
            _cut(name, 0)
            out, err = proc.communicate(timeout=HANG)
            assert proc.returncode == 0, f"consumer ended by signal {-proc.returncode}: {err}"
            assert out.startswith("ArrowInvalid:") and "was cut to 0 bytes" in out, out + err
            with pytest.raises(ArrowInvalid, match="was cut to 0 bytes"):
                ch.send(batch_of(1), timeout=HANG)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert not os.path.exists(f"/dev/shm/{name}")


def test_docstring_examples():
    result = doctest.testmod(channel, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_a_ring_larger_than_dev_shm_is_an_oserror_at_create(name):
    free = os.statvfs("/dev/shm")
    too_big = (free.f_blocks + 1) * free.f_frsize * 2
    with pytest.raises(OSError, match="cannot allocate") as info:
        Channel.create(name, SCHEMA, capacity=too_big, slots=1)
    assert not isinstance(info.value, ArrowInvalid)
    assert not os.path.exists(f"/dev/shm/{name}")


def test_threads_share_a_producer_and_a_consumer(name):
    with Channel.create(name, SCHEMA, capacity=1 << 20, slots=8) as ch:
        with Channel.attach(name) as c:
            got, errors = [], []

            def produce(base):
                try:
                    for i in range(200):
                        ch.send(batch_of(base + i), timeout=HANG)
                except BaseException as exc:  # noqa: BLE001  (reported below)
                    errors.append(exc)

            def consume():
                try:
                    for _ in range(200):
                        got.append(c.recv(timeout=HANG).column("i").to_pylist()[0] // 10)
                except BaseException as exc:  # noqa: BLE001  (reported below)
                    errors.append(exc)

            threads = [threading.Thread(target=produce, args=(b,)) for b in (0, 1000)]
            threads += [threading.Thread(target=consume) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(HANG)
            assert not errors
            assert sorted(got) == list(range(200)) + list(range(1000, 1200))  # each once
            assert c.dropped == 0 and ch.sent == 400


def test_a_wait_mode_producer_passes_over_a_held_slot(name):
    """Batch 2's slot (0) holds batch 0, which the consumer keeps: it goes to slot 1, whose
    batch the consumer took and let go, and the consumer finds it there (review 19: F2)."""
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        with Channel.attach(name) as c:
            ch.send(batch_of(0))
            held = c.recv(timeout=HANG)
            ch.send(batch_of(1))
            assert c.recv(timeout=HANG).column("i").to_pylist() == [10, 11]
            gc.collect()
            ch.send(batch_of(2), timeout=HANG)
            assert c.recv(timeout=HANG).column("i").to_pylist() == [20, 21]
            assert held.column("s").to_pylist() == ["b0-0", "b0-1"]  # untouched
            assert c.dropped == 0


def test_a_batch_put_out_of_turn_waits_for_every_consumer(name):
    """Batch 3 goes to slot 1 (slot 0 holds batch 0, which ``keeper`` keeps); batch 4's own
    slot is then 1, whose batch 3 neither consumer has taken: it goes to slot 2, and both
    consumers get batches 3 and 4."""
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=3) as ch:
        with Channel.attach(name) as keeper, Channel.attach(name) as other:
            for i in range(3):
                ch.send(batch_of(i))
            held = keeper.recv(timeout=HANG)
            for c, first in ((keeper, 1), (other, 0)):
                assert [c.recv(timeout=HANG).column("i").to_pylist()[0] // 10
                        for _ in range(first, 3)] == list(range(first, 3))
            gc.collect()
            ch.send(batch_of(3), timeout=HANG)
            ch.send(batch_of(4), timeout=HANG)
            for c in (keeper, other):
                assert [c.recv(timeout=HANG).column("i").to_pylist()[0] // 10
                        for _ in range(2)] == [3, 4]
            assert held.column("s").to_pylist() == ["b0-0", "b0-1"]  # untouched
            assert keeper.dropped == other.dropped == 0


def test_threads_sharing_a_consumer_each_holding_a_batch_do_not_stall_the_producer(name):
    """Thread A keeps batch 0 (its loop variable) while it works; thread B takes the next
    ones and waits in ``recv`` under the consumer's lock, which A then waits for: batch 4's
    own slot (0) is A's, and the producer goes on in the free ones (review 19: F2: it
    waited for slot 0, and the three waited on each other)."""
    ch = Channel.create(name, SCHEMA, capacity=1 << 16, slots=4)
    consumer = Channel.attach(name)
    got, errors = {"A": [], "B": []}, []
    a_has_first = threading.Event()

    def run(k):
        try:
            for batch in consumer:
                got[k].append(batch.column("i").to_pylist()[0] // 10)
                if k == "A" and len(got["A"]) == 1:
                    a_has_first.set()
                    time.sleep(0.3)  # (works on batch 0, holding it)
        except EOFError:
            pass
        except Exception as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    a = threading.Thread(target=run, args=("A",), daemon=True)
    b = threading.Thread(target=run, args=("B",), daemon=True)
    a.start()
    try:
        ch.send(batch_of(0), timeout=HANG)
        assert a_has_first.wait(HANG)
        b.start()
        for i in range(1, 12):
            ch.send(batch_of(i), timeout=5)
        ch.close()
        for t in (a, b):
            t.join(HANG)  # (each reads to the end)
    finally:
        consumer.close()  # (ends the threads' recv, after a failure)
        for t in (a, b):
            t.join(HANG)
        if not ch._closed:
            ch._end("test")
    assert not errors and sorted(got["A"] + got["B"]) == list(range(12))


def test_garbage_tables_give_errors_or_timeouts_not_crashes(name):
    rng = random.Random(7)
    for trial in range(20):
        with Channel.create(f"{name}-{trial}", SCHEMA, capacity=1 << 16, slots=2,
                            max_consumers=2, on_slow=rng.choice(["wait", "drop"])) as ch:
            c = Channel.attach(ch.name)
            ch.send(batch_of(0))
            lay = c._seg.layout
            start = rng.choice([_OFF for _OFF in (192, lay.consumers, lay.slot_table)])
            _poke(ch.name, start, os.urandom(rng.randint(8, 128)))
            outcomes = []
            for call in (lambda: ch.send(batch_of(1), timeout=0.1),
                         lambda: c.recv(timeout=0.1)):
                try:
                    call()
                    outcomes.append("ok")
                except (ArrowInvalid, TimeoutError, EOFError) as exc:
                    outcomes.append(type(exc).__name__)
            assert len(outcomes) == 2
            c.close()
            ch.close()
        if os.path.exists(f"/dev/shm/{ch.name}"):
            os.unlink(f"/dev/shm/{ch.name}")  # (a garbage consumer table may look attached)


def test_a_forked_child_dropping_inherited_ends_changes_nothing(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=2) as ch:
        c = Channel.attach(name)
        pid = os.fork()
        if pid == 0:  # the child lets go of both ends and exits: finalizers must not run here
            try:
                del ch, c
                gc.collect()
            finally:
                os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0
        ch.send(batch_of(3), timeout=HANG)  # still open, the consumer still attached
        assert ch.consumers == 1 and c.recv(timeout=HANG).column("i").to_pylist() == [30, 31]
        c.close()


def test_a_forked_child_dropping_an_inherited_batch_keeps_the_parents_hold(name):
    """The hold of a received batch is its process's: a forked child that drops its copy must
    not free the slot, or the producer would overwrite the parent's batch in place."""
    with Channel.create(name, SCHEMA, capacity=1 << 13, slots=2) as ch:
        c = Channel.attach(name)
        ch.send(batch_of(1), timeout=HANG)
        held = c.recv(timeout=HANG)
        pid = os.fork()
        if pid == 0:  # the child drops the batch it inherited, then exits
            try:
                del held
                gc.collect()
            finally:
                os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0
        ch.send(batch_of(2), timeout=HANG)  # the other slot
        with pytest.raises(TimeoutError):  # slot 0 is still the parent's
            ch.send(batch_of(3), timeout=0.5)
        assert held.column("i").to_pylist() == [10, 11]
        del held
        gc.collect()
        ch.send(batch_of(3), timeout=HANG)  # released by its own process: the slot is free
        c.close()
