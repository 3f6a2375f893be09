"""The channel's fast path: a batch laid out straight into its slot by one Cython call (the
header patched into a per-schema template, each buffer copied once), checked with real
processes.

A consumer in another process receives batches of many shapes (nulls, strings, booleans,
lists, structs, binary, zero rows, 1 MiB, slices at odd offsets so bitmaps and offsets are
re-based) and compares each, as a zero-copy pyarrow export, with the batch the producer
made (both processes build them from the same seeds).  Dictionary columns and metadata take
the general path in the same channel run.  A consumer holding numpy views and pyarrow
arrays of early batches keeps them intact while the producer reuses the other slots.  The
bytes the fast path writes equal the generic message layout's.  Timeouts only catch hangs.
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
from arrowmm.format.batch_header import record_batch_message, record_batch_template
from arrowmm.ipc.write.encoder import FlatBatch, flatten
from arrowmm.shm import Channel

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-fast-{os.getpid()}-"
_counter = itertools.count()
HANG = 120

# Built the same way in this process and in the consumer's (exec'd in both).
SHAPES = '''
import numpy as np
import pyarrow as pa

SCHEMA = pa.schema([("i", pa.int64()), ("s", pa.string()), ("b", pa.bool_()),
                    ("l", pa.list_(pa.int16())),
                    ("st", pa.struct([("a", pa.int32()), ("t", pa.string())])),
                    ("f", pa.float64()), ("bin", pa.large_binary()), ("u8", pa.uint8())])
DICT_SCHEMA = pa.schema([("d", pa.dictionary(pa.int32(), pa.string())), ("x", pa.int64())])


def make(k):
    """Batch ``k``: a slice at an odd offset of a batch with nulls in every column."""
    rng = np.random.default_rng(k)
    n = [0, 1, 5000, 131072][k // 10 % 4] if k % 10 == 0 else int(rng.integers(1, 400))
    off = k % 7
    total = n + off + 3
    nulls = rng.random(total) < 0.2
    ints = rng.integers(-2**62, 2**62, total)
    strs = [None if z else "v%d-%s" % (k, "x" * int(j % 13)) for z, j in zip(nulls, ints)]
    lists = [None if z else [int(j % 100) for j in range(int(q % 5))] for z, q in zip(nulls, ints)]
    structs = [None if z else {"a": int(q % 1000), "t": None if q % 3 == 0 else str(q % 97)}
               for z, q in zip(nulls, ints)]
    full = pa.record_batch([
        pa.array(ints, pa.int64(), mask=nulls),
        pa.array(strs, pa.string()),
        pa.array(rng.random(total) < 0.5, pa.bool_(), mask=rng.random(total) < 0.1),
        pa.array(lists, pa.list_(pa.int16())),
        pa.array(structs, SCHEMA.field("st").type),
        pa.array(rng.random(total)),
        pa.array([None if z else bytes([int(q % 256)]) * int(q % 9) for z, q in zip(nulls, ints)],
                 pa.large_binary()),
        pa.array((ints % 256).astype(np.uint8)),
    ], schema=SCHEMA)
    return full.slice(off, n)


def make_dict(k):
    words = pa.array(["w%d-%d" % (k, j) for j in range(1 + k % 4)])
    idx = pa.array([j % len(words) if j % 5 else None for j in range(3 + k % 6)], pa.int32())
    return pa.record_batch([pa.DictionaryArray.from_arrays(idx, words),
                            pa.array(range(len(idx)), pa.int64())], schema=DICT_SCHEMA)
'''
shapes: dict = {}
exec(SHAPES, shapes)

CHECKER = SHAPES + '''
import json, sys
import pyarrow as pa
from arrowmm.shm import Channel
name, kind, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
made = make if kind == "plain" else make_dict
c = Channel.attach(name)
print("attached", flush=True)
bad, seqs = [], []
for b in c:
    got = pa.record_batch(b)  # (a zero-copy export of the slot)
    got.validate(full=True)
    want = made(c.sequence)
    if not got.equals(want):
        bad.append(c.sequence)
    seqs.append(c.sequence)
    got = b = None
print(json.dumps({"bad": bad, "seqs": seqs, "dropped": c.dropped}), flush=True)
c.close()
'''


def _name():
    return f"{PREFIX}{next(_counter)}"


def _consumer(code, *args):
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "attached", proc.stderr.read()
    return proc


def _result(proc) -> dict:
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_batches_of_every_shape_arrive_equal_in_another_process():
    name = _name()
    count = 60
    with Channel.create(name, shapes["SCHEMA"], capacity=32 << 20, slots=4) as ch:
        proc = _consumer(CHECKER, name, "plain", count)
        try:
            for k in range(count):
                batch = shapes["make"](k)
                if k % 3 == 0:
                    batch = arrowmm.record_batch(batch)  # (arrowmm's own batch, sliced view)
                assert ch.send(batch, timeout=HANG) == k
            assert ch._templates  # the fast path was taken (one template for the schema)
            ch.close()
            got = _result(proc)
        finally:
            proc.kill()
            proc.wait()
    assert got == {"bad": [], "seqs": list(range(count)), "dropped": 0}


def test_dictionary_batches_and_metadata_take_the_general_path_and_arrive_equal():
    name = _name()
    count = 12
    with Channel.create(name, shapes["DICT_SCHEMA"], capacity=1 << 20, slots=2) as ch:
        proc = _consumer(CHECKER, name, "dict", count)
        try:
            for k in range(count):
                ch.send(shapes["make_dict"](k), timeout=HANG)
            assert not ch._templates  # (dictionaries: never the fast path)
            ch.close()
            got = _result(proc)
        finally:
            proc.kill()
            proc.wait()
    assert got == {"bad": [], "seqs": list(range(count)), "dropped": 0}


def test_metadata_batch_goes_the_general_path_in_process():
    schema = arrowmm.schema([("x", arrowmm.int64())])
    with Channel.create(_name(), schema, capacity=1 << 16, slots=2) as ch:
        with Channel.attach(ch.name) as c:
            ch.send({"x": [1, 2]}, metadata={"k": "v"})
            b = c.recv(timeout=HANG)
            assert b.column("x").to_pylist() == [1, 2] and b.metadata == {"k": "v"}
            assert not ch._templates
            ch.send({"x": [3]})
            assert c.recv(timeout=HANG).column("x").to_pylist() == [3]
            assert ch._templates


HOLDER = '''
import json, sys
import numpy as np
import pyarrow as pa
from arrowmm.shm import Channel
c = Channel.attach(sys.argv[1])
print("attached", flush=True)
first = c.recv(timeout=120)  # (drop mode: not necessarily batch 0)
n_first = c.sequence
view = first.column("v").to_numpy()       # a numpy view into its slot
second = pa.record_batch(c.recv(timeout=120)).column("v")  # a pyarrow export of the next
n_second = c.sequence
del first
print("holding", n_first, n_second, flush=True)
copies = (view.copy(), second.to_numpy().copy())
later = []
for b in c:  # every other batch while those two slots stay held
    v = b.column("v").to_numpy()
    later.append(bool((v == c.sequence).all()))
    b = v = None
print(json.dumps({"view_intact": bool((view == copies[0]).all() and (view == n_first).all()),
                  "export_intact": bool((second.to_numpy() == copies[1]).all()
                                        and (second.to_numpy() == n_second).all()),
                  "later": all(later), "count": len(later), "dropped": c.dropped}), flush=True)
c.close()
'''


def test_held_views_stay_intact_while_the_producer_reuses_other_slots():
    """(``on_slow="drop"``: in wait mode batch ``slots`` needs slot 0 back, and waits for it,
    which ``test_channel.py`` checks.)"""
    on_slow = "drop"
    rows = 1 << 15
    name = _name()
    with Channel.create(name, arrowmm.schema([("v", arrowmm.float64())]),
                        capacity=4 * (rows * 8 + 4096), slots=4, on_slow=on_slow) as ch:
        proc = _consumer(HOLDER, name)
        try:
            n = 200
            for k in range(n):
                ch.send({"v": np.full(rows, float(k))}, timeout=HANG)
                if k == 1:  # the rest only once it holds batches 0 and 1
                    assert proc.stdout.readline().split() == ["holding", "0", "1"]
            ch.close()
            got = _result(proc)
        finally:
            proc.kill()
            proc.wait()
    # with two of four slots held for good, the other two carry every later batch in turn
    assert (got["view_intact"], got["export_intact"], got["later"]) == (True, True, True), got
    assert got["count"] + got["dropped"] == n - 2 and got["count"] > 0


@pytest.mark.parametrize("key", ["ints", "nulls", "nested", "empty", "big"])
def test_write_batch_lays_out_what_the_generic_message_layout_gives(key):
    pb = {"ints": pa.record_batch({"x": pa.array([1, 2, 3], pa.int64())}),
          "nulls": shapes["make"](3),
          "nested": shapes["make"](11),
          "empty": shapes["make"](10),
          "big": shapes["make"](20)}[key]
    batch = arrowmm.record_batch(pb)
    flat = FlatBatch()
    for col in batch.storage_columns:
        flat = flatten(col, flat)
    parts, layout, pos = [], [], 0
    for buf in flat.buffers:
        size = 0 if buf is None else memoryview(buf).nbytes
        layout += (pos, size)
        if size:
            parts.append(bytes(memoryview(buf).cast("B")) + bytes(-size % 64))
            pos += size + -size % 64
    expected = bytes(record_batch_message(batch.num_rows, flat.nodes, layout, pos)) + b"".join(parts)
    tpl = record_batch_template(len(flat.nodes) // 2, len(flat.buffers))
    with Channel.create(_name(), batch.schema, capacity=4 << 20, slots=1) as ch:
        m, lay = ch._seg.map, ch._seg.layout
        start = lay.data_at(0)
        m.copy_in(start, [b"\xAB" * len(expected)])  # (garbage under it: padding is written)
        wrote = m.write_batch(start, lay.slot_size, tpl.header, tpl.rows_at, tpl.body_at,
                              tpl.nodes_at, tpl.buffers_at, batch.num_rows, flat.nodes,
                              flat.buffers)
        assert wrote == len(expected)
        assert bytes(memoryview(m.mapping)[start:start + wrote]) == expected
        # too little room: nothing is written, and the size needed is said
        m.copy_in(start, [b"\xCD" * 64])
        assert m.write_batch(start, wrote - 1, tpl.header, tpl.rows_at, tpl.body_at,
                             tpl.nodes_at, tpl.buffers_at, batch.num_rows, flat.nodes,
                             flat.buffers) == -wrote
        assert bytes(memoryview(m.mapping)[start:start + 64]) == b"\xCD" * 64


def test_write_batch_refuses_numbers_outside_its_template_or_the_mapping():
    tpl = record_batch_template(1, 2)
    with Channel.create(_name(), arrowmm.schema([("x", arrowmm.int64())]), capacity=1 << 16,
                        slots=1) as ch:
        m, lay = ch._seg.map, ch._seg.layout
        args = (tpl.header, tpl.rows_at, tpl.body_at, tpl.nodes_at, tpl.buffers_at, 1)
        with pytest.raises(arrowmm.ArrowInvalid, match="do not fit"):
            m.write_batch(lay.data_at(0), lay.slot_size, *args, [1, 0, 5, 5], [None, b"x"])
        with pytest.raises(arrowmm.ArrowInvalid, match="do not fit"):
            m.write_batch(lay.data_at(0), lay.slot_size, *args, [1, 0], [None, b"x", b"y"])
        with pytest.raises(arrowmm.ArrowInvalid, match="outside"):
            m.write_batch(m.size - 8, lay.slot_size, *args, [1, 0], [None, b"x"])
        with pytest.raises(TypeError):
            m.write_batch(lay.data_at(0), lay.slot_size, *args, [1, 0], [None, 42])


def test_template_patched_equals_the_message():
    import struct
    tpl = record_batch_template(2, 3)
    h = bytearray(tpl.header)
    struct.pack_into("<q", h, tpl.rows_at, 777)
    struct.pack_into("<q", h, tpl.body_at, 999)
    struct.pack_into("<4q", h, tpl.nodes_at, 11, 12, 13, 14)
    struct.pack_into("<6q", h, tpl.buffers_at, 21, 22, 23, 24, 25, 26)
    assert bytes(h) == bytes(record_batch_message(777, [11, 12, 13, 14],
                                                  [21, 22, 23, 24, 25, 26], 999))


def test_ring_cursor_refuses_a_ring_outside_its_mapping():
    from arrowmm._core._shmsync import RingCursor
    with Channel.create(_name(), arrowmm.schema([("x", arrowmm.int64())]), capacity=1 << 16,
                        slots=2) as ch:
        m, lay = ch._seg.map, ch._seg.layout
        good = dict(cursor_offset=lay.entry(0) + 24, dropped_offset=lay.entry(0) + 32,
                    published_offset=192, table=lay.slot_table, slots=2, slot_stride=64,
                    seq_at=0, len_at=8, holds_at=16, data=lay.data, slot_size=lay.slot_size,
                    bit=0, drop=False, waiting_offset=260, wake_offset=256)
        assert RingCursor(m, **good).take() is None  # (nothing published)
        for bad in (dict(slots=3), dict(data=lay.data + 64), dict(holds_at=60), dict(bit=64),
                    dict(cursor_offset=m.size), dict(table=m.size - 64)):
            with pytest.raises((arrowmm.ArrowInvalid, OverflowError)):
                RingCursor(m, **{**good, **bad})
