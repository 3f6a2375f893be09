"""Batches built in place in a channel's slot (``Channel.reserve``), checked with real
processes: a consumer in another process receives them (values, nulls, strings, booleans,
zero rows) equal to the batches pyarrow builds from the same numbers; an exception in the
``with`` block publishes nothing and the slot goes to the next batch; a slow consumer holds
the producer's reservation up (never a torn batch); a producer SIGKILLed while it holds a
reservation half written leaves its consumers every committed batch and then
``ProducerDiedError``, never the half-written one.  Timeouts only catch hangs.
"""
from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.errors import ArrowInvalid
from arrowmm.shm import Channel

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-resv-{os.getpid()}-"
_counter = itertools.count()
HANG = 120

SCHEMA = arrowmm.schema([("v", arrowmm.float64()), ("i", arrowmm.int16()),
                         ("s", arrowmm.string()), ("ok", arrowmm.bool_()),
                         ("big", arrowmm.large_binary())])

# the numbers of batch k, the same in every process (exec'd in both)
MAKE = '''
import numpy as np
import pyarrow as pa

def numbers(k):
    rng = np.random.default_rng(k)
    n = [0, 1, 7, 8, 300][k % 5]
    valid = rng.random(n) >= 0.25
    words = [("w%d" % j) * int(j % 4) for j in range(n)]
    return dict(n=n, v=rng.random(n), i=rng.integers(-999, 999, n).astype(np.int16),
                valid=valid, words=words, ok=rng.random(n) < 0.5,
                big=[bytes([j % 256]) * (j % 5) for j in range(n)])

def expected(k):
    d = numbers(k)
    return pa.record_batch({
        "v": pa.array(d["v"], pa.float64()),
        "i": pa.array(d["i"], pa.int16(), mask=~d["valid"]),
        "s": pa.array([w if ok else None for w, ok in zip(d["words"], d["valid"])], pa.string()),
        "ok": pa.array(d["ok"], pa.bool_()),
        "big": pa.array(d["big"], pa.large_binary()),
    })
'''
shapes: dict = {}
exec(MAKE, shapes)

CONSUMER = MAKE + '''
import json, sys, time
import pyarrow as pa
from arrowmm.shm import Channel
from arrowmm.errors import ProducerDiedError
name, count, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
c = Channel.attach(name)
print("attached", flush=True)
bad, seqs, end = [], [], None
try:
    for b in c:
        if mode == "slow":
            time.sleep(0.02)
        got = pa.record_batch(b)
        got.validate(full=True)
        k = c.sequence
        seqs.append(k)
        if mode == "killed":
            want = pa.record_batch({"x": pa.array(range(k * 10, k * 10 + 10), pa.int64())})
        else:
            want = expected(k)
        if not got.equals(want):
            bad.append(k)
        got = b = None
except ProducerDiedError:
    end = "died"
print(json.dumps({"bad": bad, "seqs": seqs, "end": end}), flush=True)
c.close()
'''


def _name():
    return f"{PREFIX}{next(_counter)}"


def _consumer(name, count, mode):
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CONSUMER), name, str(count),
                             mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "attached", proc.stderr.read()
    return proc


def _result(proc) -> dict:
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _fill(b, d) -> None:
    """Batch numbers ``d`` written into reserved batch ``b``."""
    n = d["n"]
    b["v"][:] = d["v"]
    b["i"][:] = d["i"]
    b.validity("i")[:] = np.packbits(d["valid"], bitorder="little")
    data = "".join(w for w, ok in zip(d["words"], d["valid"]) if ok).encode()
    lengths = [len(w) if ok else 0 for w, ok in zip(d["words"], d["valid"])]
    b.offsets("s")[:] = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]) if n else [0]
    b.data("s")[:] = np.frombuffer(data, np.uint8)
    b.validity("s")[:] = np.packbits(d["valid"], bitorder="little")
    b["ok"][:] = np.packbits(d["ok"], bitorder="little")
    blob = b"".join(d["big"])
    b.offsets("big")[:] = np.concatenate([[0], np.cumsum([len(x) for x in d["big"]],
                                                          dtype=np.int64)]) if n else [0]
    b.data("big")[:] = np.frombuffer(blob, np.uint8)


def _sizes(d) -> dict:
    return {"s": sum(len(w) for w, ok in zip(d["words"], d["valid"]) if ok),
            "big": sum(len(x) for x in d["big"])}


@pytest.mark.parametrize("mode", ["plain", "slow"])
def test_reserved_batches_arrive_equal_in_another_process_and_aborted_ones_never(mode):
    name, count = _name(), 40
    with Channel.create(name, SCHEMA, capacity=1 << 20, slots=2) as ch:
        proc = _consumer(name, count, mode)
        try:
            k = 0
            for attempt in range(count + count // 4):
                d = shapes["numbers"](k)
                if attempt % 5 == 3:  # an exception half way: nothing published
                    with pytest.raises(RuntimeError):
                        with ch.reserve(d["n"], _sizes(d), timeout=HANG) as b:
                            b["v"][:] = -1.0
                            b.data("s")[:] = ord("!")
                            raise RuntimeError("the sensor failed")
                    assert b.sequence is None
                    continue
                with ch.reserve(d["n"], _sizes(d), timeout=HANG) as b:
                    _fill(b, d)
                assert b.sequence == k
                k += 1
                if k == count:
                    break
            ch.close()
            got = _result(proc)
        finally:
            proc.kill()
            proc.wait()
    assert got == {"bad": [], "seqs": list(range(count)), "end": None}


def test_a_producer_killed_mid_reserve_leaves_no_torn_batch():
    name = _name()
    producer = textwrap.dedent('''
        import os, signal, sys
        import arrowmm
        from arrowmm.shm import Channel
        ch = Channel.create(sys.argv[1], arrowmm.schema([("x", arrowmm.int64())]),
                            capacity=1 << 16, slots=4)
        print("created", flush=True)
        ch.wait_for_consumers(1, timeout=120)
        for k in range(3):
            with ch.reserve(10) as b:
                b["x"][:] = range(k * 10, k * 10 + 10)
        b = ch.reserve(10)
        b["x"][:5] = -1          # half written
        os.kill(os.getpid(), signal.SIGKILL)
    ''')
    prod = subprocess.Popen([sys.executable, "-c", producer, name], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert prod.stdout.readline().strip() == "created", prod.stderr.read()
        cons = _consumer(name, 0, "killed")
        try:
            got = _result(cons)
        finally:
            cons.kill()
            cons.wait()
        assert prod.wait(timeout=HANG) == -signal.SIGKILL
    finally:
        prod.kill()
        prod.wait()
        arrowmm.shm.cleanup()
    assert got == {"bad": [], "seqs": [0, 1, 2], "end": "died"}


def test_reserve_refuses_what_it_cannot_build_and_bad_offsets():
    nested = arrowmm.schema([("l", arrowmm.list_(arrowmm.int8()))])
    with Channel.create(_name(), nested, capacity=1 << 16, slots=2) as ch:
        with pytest.raises(ArrowInvalid, match="list"):
            ch.reserve(1)
        ch.send({"l": [[1]]})  # (the channel is not stuck: send takes the lock)
    with Channel.create(_name(), SCHEMA, capacity=1 << 16, slots=2) as ch:
        c = Channel.attach(ch.name)
        with pytest.raises(ArrowInvalid, match="data size"):
            ch.reserve(1, {"s": 1})
        with pytest.raises(ArrowInvalid, match="not string"):
            ch.reserve(1, {"s": 1, "big": 1, "v": 3})
        with pytest.raises(ArrowInvalid, match="slot holds"):
            ch.reserve(100_000, {"s": 0, "big": 0})
        with pytest.raises(ArrowInvalid, match="offsets must rise"):
            with ch.reserve(2, {"s": 3, "big": 0}) as b:
                b.offsets("s")[:] = [0, 3, 1]
        with pytest.raises(ArrowInvalid, match="offsets must rise"):
            with ch.reserve(1, {"s": 3, "big": 0}) as b:
                b.offsets("s")[:] = [0, 4]
        with pytest.raises(ArrowInvalid, match="was aborted"):
            b.values("v")
        b = ch.reserve(1, {"s": 0, "big": 0})
        b = None  # dropped without commit or abort: nothing published, the channel usable
        b = ch.reserve(1, {"s": 0, "big": 0})
        with pytest.raises(ArrowInvalid, match="reserved batch is open"):
            ch.send({"v": [1.0], "i": [1], "s": [""], "ok": [True], "big": [b""]})
        b["v"][0] = 2.5
        assert b.commit() == 0
        got = c.recv(timeout=HANG)
        assert got.column("v").to_pylist() == [2.5]
        assert got.column("s").to_pylist() == [""]
        del got
        c.close()


def test_reserved_batch_is_the_message_send_would_lay_out():
    d = shapes["numbers"](4)
    with Channel.create(_name(), SCHEMA, capacity=1 << 20, slots=2) as ch:
        c = Channel.attach(ch.name)
        with ch.reserve(d["n"], _sizes(d)) as b:
            _fill(b, d)
        ch.send(shapes["expected"](4))
        first, second = c.recv(timeout=HANG), c.recv(timeout=HANG)
        assert pa.record_batch(first).equals(pa.record_batch(second))
        assert first.column("i").null_count == int((~d["valid"]).sum())
        del first, second
        c.close()


def test_reserve_refuses_invalid_utf8_as_send_does():
    # (bytes under a null row are no value: not checked, as pyarrow and send do not)
    with Channel.create(_name(), SCHEMA, capacity=1 << 16, slots=2) as ch:
        c = Channel.attach(ch.name)
        with pytest.raises(ArrowInvalid, match=r"column 's'.*value\[1\].*not valid UTF-8"):
            with ch.reserve(2, {"s": 4, "big": 2}) as b:
                b.offsets("s")[:] = [0, 2, 4]
                b.data("s")[:] = list(b"ok\xff\xfe")
                b.data("big")[:] = [0xff, 0xfe]  # (binary: any bytes)
                b.offsets("big")[:] = [0, 2, 2]
        with ch.reserve(2, {"s": 4, "big": 0}) as b:  # the same bytes under a null: published
            b.offsets("s")[:] = [0, 2, 4]
            b.data("s")[:] = list(b"ok\xff\xfe")
            b.validity("s")[0] = 0b01
        assert b.sequence == 0  # (the refused one published nothing)
        assert c.recv(timeout=HANG).column("s").to_pylist() == ["ok", None]
        c.close()


def test_arrays_of_a_reserved_batch_turn_read_only_at_commit_and_abort():
    # a kept array written after the commit would change the published batch in place (and,
    # once the slot is reused, a later batch): the write raises instead
    with Channel.create(_name(), SCHEMA, capacity=1 << 16, slots=2) as ch:
        c = Channel.attach(ch.name)
        with ch.reserve(2, {"s": 2, "big": 0}) as b:
            v, ok, offsets, data, valid = (b["v"], b.values("ok"), b.offsets("s"), b.data("s"),
                                           b.validity("i"))
            v[:] = [1.5, 2.5]
            offsets[:] = [0, 1, 2]
            data[:] = list(b"xy")
        for kept in (v, ok, offsets, data, valid):
            with pytest.raises(ValueError, match="read-only"):
                kept[0] = 0
        got = c.recv(timeout=HANG)
        assert got.column("v").to_pylist() == [1.5, 2.5]
        assert got.column("s").to_pylist() == ["x", "y"]
        b = ch.reserve(1, {"s": 0, "big": 0})
        kept = b["v"]
        b.abort()
        with pytest.raises(ValueError, match="read-only"):
            kept[0] = 9.0
        del got
        c.close()


def test_reserve_refuses_more_data_than_32_bit_offsets_reach():
    # (review 26: it handed out a data array past 2 GiB whose end no int32 offset reaches)
    with Channel.create(_name(), SCHEMA, capacity=1 << 16, slots=2) as ch:
        with pytest.raises(ArrowInvalid, match=r"data size of 's' is 2,147,483,648 bytes; "
                                               r"string's 32-bit offsets reach 2,147,483,647"):
            ch.reserve(1, {"s": 2**31, "big": 0})
        with pytest.raises(ArrowInvalid, match="slot holds"):  # (64-bit offsets reach it)
            ch.reserve(1, {"s": 0, "big": 2**31})
