"""The consumer's plain-batch decode and the producer's per-batch shortcuts (issue 20's
latency work), checked with real processes and real segments.

A consumer recognizes a slot that holds exactly the schema's header template with only its
numbers changed (``_shmsync.plain_header``) and builds the lazy batch from those numbers
(``MessageBatchDecoder.plain_record_batch``); anything else goes the general way.  Here: a
consumer in another process receives thousands of small batches with nulls and strings
through that path and compares values; a header whose numbers are damaged in the segment
gives ``ArrowInvalid``, never a wrong value; a header of another shape (custom metadata) is
read the general way; ``flatten_columns`` lays out what ``flatten`` does.
"""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm._core._shmsync import plain_header
from arrowmm.errors import ArrowInvalid
from arrowmm.format.batch_header import record_batch_template
from arrowmm.ipc.write.encoder import FlatBatch, flatten, flatten_columns
from arrowmm.shm import Channel

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-plain-{os.getpid()}-"
_counter = itertools.count()
HANG = 120

SCHEMA = pa.schema([("i", pa.int64()), ("f", pa.float32()), ("s", pa.string()),
                    ("ts", pa.timestamp("us"))])

MAKE = '''
import numpy as np
import pyarrow as pa

def make(k, schema):
    n = 1 + k % 17
    rng = np.random.default_rng(k)
    nulls = rng.random(n) < 0.3
    return pa.record_batch([
        pa.array(rng.integers(-10**12, 10**12, n), pa.int64(), mask=nulls),
        pa.array(rng.random(n).astype(np.float32), pa.float32(), mask=~nulls if k % 2 else None),
        pa.array([None if z else "s%d-%d" % (k, j) for j, z in enumerate(nulls)], pa.string()),
        pa.array(rng.integers(0, 10**15, n), pa.timestamp("us")),
    ], schema=schema).slice(k % 2, n - k % 2)
'''
shapes: dict = {}
exec(MAKE, shapes)

CONSUMER = MAKE + '''
import json, sys
import pyarrow as pa
from arrowmm.shm import Channel
name, count = sys.argv[1], int(sys.argv[2])
schema = pa.schema([("i", pa.int64()), ("f", pa.float32()), ("s", pa.string()),
                    ("ts", pa.timestamp("us"))])
c = Channel.attach(name)
print("attached", flush=True)
bad = []
for k in range(count):
    b = c.recv(timeout=120)
    got = pa.record_batch(b)
    if not got.equals(make(k, schema)):
        bad.append(k)
print(json.dumps({"bad": bad, "plain": c._plain is not None, "seq": c.sequence}), flush=True)
c.close()
'''


def _name():
    return f"{PREFIX}{next(_counter)}"


def test_small_batches_with_nulls_and_strings_arrive_equal_in_another_process():
    name, count = _name(), 3000
    with Channel.create(name, SCHEMA, capacity=1 << 20, slots=8) as ch:
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CONSUMER), name,
                                 str(count)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        try:
            assert proc.stdout.readline().strip() == "attached", proc.stderr.read()
            for k in range(count):
                batch = shapes["make"](k, SCHEMA)
                if k % 2:
                    batch = arrowmm.record_batch(batch)  # (arrowmm's own: the send shortcut)
                assert ch.send(batch, timeout=HANG) == k
            ch.close()
            out, err = proc.communicate(timeout=HANG)
        finally:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1]) == {"bad": [], "plain": True,
                                                       "seq": count - 1}


def _channel_and_consumer():
    ch = Channel.create(_name(), arrowmm.schema([("x", arrowmm.int64())]), capacity=1 << 16,
                        slots=2)
    return ch, Channel.attach(ch.name)


def test_plain_header_reads_the_numbers_of_a_slot_the_producer_wrote():
    ch, c = _channel_and_consumer()
    with ch, c:
        ch.send({"x": [5, None, 7]})
        lease = c._cursor.take()
        tpl = record_batch_template(1, 2)
        got = plain_header(lease, tpl.header, tpl.fixed, tpl.rows_at, tpl.body_at)
        assert got == (3, len(lease) - len(tpl.header))
        # another shape's template (two columns) does not match this header
        other = record_batch_template(2, 4)
        assert plain_header(lease, other.header, other.fixed, other.rows_at,
                            other.body_at) is None
        with pytest.raises(ArrowInvalid, match="mask"):
            plain_header(lease, tpl.header, tpl.fixed[:-1], tpl.rows_at, tpl.body_at)
        batch = c._decode(lease, lease.sequence)
        assert batch.column("x").to_pylist() == [5, None, 7]
        del batch, lease


def _damage(ch, at: int, value: int) -> None:
    """Overwrite the 8-byte number at byte ``at`` of slot 0's message."""
    seg = ch._seg
    seg.map.store64(seg.layout.data_at(0) + at, value)


def test_a_body_length_that_disagrees_with_the_slot_is_refused_not_misread():
    ch, c = _channel_and_consumer()
    tpl = record_batch_template(1, 2)
    with ch, c:
        ch.send({"x": [1, 2, 3]})
        _damage(ch, tpl.body_at, 1 << 40)
        with pytest.raises(ArrowInvalid, match="channel"):
            c.recv(timeout=HANG)


def test_a_buffer_that_points_past_the_body_is_refused_when_its_column_loads():
    ch, c = _channel_and_consumer()
    tpl = record_batch_template(1, 2)
    with ch, c:
        ch.send({"x": [1, 2, 3]})
        _damage(ch, tpl.buffers_at + 16, 1 << 20)  # the values buffer's offset
        batch = c.recv(timeout=HANG)
        with pytest.raises(ArrowInvalid):
            batch.column("x").to_pylist()
        del batch


def test_a_null_count_above_the_length_is_refused_not_misread():
    ch, c = _channel_and_consumer()
    tpl = record_batch_template(1, 2)
    with ch, c:
        ch.send({"x": [1, 2, 3]})
        _damage(ch, tpl.nodes_at + 8, 9)  # null count 9 of 3 rows
        batch = c.recv(timeout=HANG)
        with pytest.raises(ArrowInvalid):
            batch.column("x").to_pylist()
        del batch


def test_a_batch_with_metadata_is_read_the_general_way_with_its_metadata():
    ch, c = _channel_and_consumer()
    with ch, c:
        ch.send({"x": [1]}, metadata={"k": "v"})
        ch.send({"x": [2, 3]})
        first, second = c.recv(timeout=HANG), c.recv(timeout=HANG)
        assert first.column("x").to_pylist() == [1]
        assert dict(first.metadata) == {"k": "v"}
        assert not second.metadata
        assert second.column("x").to_pylist() == [2, 3]
        del first, second


def _bytes(flat: FlatBatch):
    return flat.nodes, [None if b is None else bytes(memoryview(b)) for b in flat.buffers]


@pytest.mark.parametrize("offset", [0, 1, 3, 8, 9])
def test_flatten_columns_lays_out_what_flatten_does(offset):
    rng = np.random.default_rng(offset)
    n = 40
    nulls = rng.random(n) < 0.4
    pab = pa.record_batch({
        "i": pa.array(rng.integers(0, 100, n), pa.int32(), mask=nulls),
        "d": pa.array(rng.random(n)),
        "s": pa.array([None if z else str(j) for j, z in enumerate(nulls)]),
        "b": pa.array(rng.random(n) < 0.5, mask=~nulls),
        "dec": pa.array([None if z else j for j, z in enumerate(nulls)], pa.decimal128(10, 2)),
        "l": pa.array([[j] * (j % 3) for j in range(n)], pa.list_(pa.int8())),
    }).slice(offset, n - 2 * offset)
    cols = arrowmm.record_batch(pab).storage_columns
    expected = FlatBatch()
    for col in cols:
        expected = flatten(col, expected)
    assert _bytes(flatten_columns(cols)) == _bytes(expected)


# -- a few fixed-width columns: the batch comes with its columns built (ipc.read.plain_columns)
def test_narrow_fixed_width_batches_come_built_and_equal_with_nulls_and_slices():
    schema = arrowmm.schema([("i", arrowmm.int32()), ("d", arrowmm.float64()),
                             ("t", arrowmm.timestamp("us")), ("m", arrowmm.decimal128(12, 3))])
    ch = Channel.create(_name(), schema, capacity=1 << 20, slots=4)
    c = Channel.attach(ch.name)
    rng = np.random.default_rng(3)
    with ch, c:
        assert c._columns is not None
        for k in range(40):
            n = 1 + k % 13
            nulls = rng.random(n) < 0.3
            pab = pa.record_batch([
                pa.array(rng.integers(-99, 99, n), pa.int32(), mask=nulls),
                pa.array(rng.random(n), mask=~nulls if k % 2 else None),
                pa.array(rng.integers(0, 10**15, n), pa.timestamp("us"), mask=nulls),
                pa.array([None if z else j for j, z in enumerate(nulls)], pa.decimal128(12, 3)),
            ], schema=pa.schema(schema)).slice(k % 3)
            ch.send(pab if k % 2 else arrowmm.record_batch(pab), timeout=HANG)
            got = c.recv(timeout=HANG)
            assert got._loader is None  # (built at once: no loader behind it)
            assert pa.record_batch(got).equals(pab)
            assert got.to_pydict() == pab.to_pydict()
            del got


def test_a_wide_or_non_fixed_schema_stays_lazy():
    for fields in ([(f"c{k}", arrowmm.int8()) for k in range(9)],
                   [("x", arrowmm.int64()), ("s", arrowmm.string())]):
        ch = Channel.create(_name(), arrowmm.schema(fields), capacity=1 << 16, slots=2)
        c = Channel.attach(ch.name)
        with ch, c:
            assert c._columns is None
            ch.send({name: [1] if name != "s" else ["a"] for name, _ in fields})
            got = c.recv(timeout=HANG)
            assert got._loader is not None
            assert got.column(0).to_pylist() == [1]
            del got


def test_overlapping_buffers_in_a_narrow_batch_are_refused_not_misread():
    schema = arrowmm.schema([("x", arrowmm.int64()), ("y", arrowmm.int64())])
    ch = Channel.create(_name(), schema, capacity=1 << 16, slots=2)
    c = Channel.attach(ch.name)
    tpl = record_batch_template(2, 4)
    with ch, c:
        ch.send({"x": [1, 2, 3], "y": [4, 5, 6]})
        _damage(ch, tpl.buffers_at + 3 * 16, 8)  # y's values start inside x's
        with pytest.raises(ArrowInvalid, match="before the buffer before it ends"):
            c.recv(timeout=HANG)
        ch.send({"x": [1, 2, 3], "y": [4, 5, 6]})  # (the next batch is read as usual)
        got = c.recv(timeout=HANG)
        assert got.to_pydict() == {"x": [1, 2, 3], "y": [4, 5, 6]}
        del got


def test_a_node_length_other_than_the_batch_is_refused_in_a_narrow_batch():
    ch, c = _channel_and_consumer()
    tpl = record_batch_template(1, 2)
    with ch, c:
        ch.send({"x": [1, 2, 3]})
        _damage(ch, tpl.nodes_at, 2)  # the column says 2 rows, the batch 3
        batch = c.recv(timeout=HANG)
        with pytest.raises(ArrowInvalid):
            batch.column("x").to_pylist()
        del batch
