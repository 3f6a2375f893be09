"""The one-call paths of a small batch (issue 34): the producer's ``RingWriter.send_batch``
(size, slot readiness, layout and publication in one call) and the consumer's
``_shmsync.PlainMessage.read`` (the header check, the vectors and the body in one call).

Here, in one process with real segments: ``send_batch`` lays out the bytes
``SharedMap.write_batch`` does, refuses a batch larger than a slot with the size it needs and
a slot that is not ready without touching either; ``PlainMessage.read`` reads what
``plain_header``, ``struct_pairs`` and a ``Region`` read, refuses a changed header, and a
damaged number it passes on is still refused when the batch is built.
"""
from __future__ import annotations

import itertools
import mmap
import os
import sys

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm._core._flatbuf import struct_pairs
from arrowmm._core._region import Region
from arrowmm._core._shmsync import PlainMessage, SharedMap, plain_header
from arrowmm.format.batch_header import record_batch_template
from arrowmm.errors import ArrowInvalid
from arrowmm.shm import Channel
from arrowmm.shm.ring import OFF_WRITE_SEQ, S_SEQ, WRITING

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-onecall-{os.getpid()}-"
_counter = itertools.count()

BATCHES = {
    "one row": pa.record_batch({"x": pa.array([7], pa.int64())}),
    "nulls, strings, sliced": pa.record_batch({
        "i": pa.array([1, None, 3, 4, None], pa.int32()),
        "s": pa.array(["a", None, "ccc", "", "eeeee"]),
        "f": pa.array([0.5, 1.5, None, 3.5, 4.5])}).slice(1, 3),
    "empty": pa.record_batch({"x": pa.array([], pa.float64())}),
}


def _name() -> str:
    return f"{PREFIX}{next(_counter)}"


def _slot_bytes(ch, s: int, n: int) -> bytes:
    start = ch._seg.layout.data_at(s)
    return bytes(memoryview(ch._seg.map.mapping)[start:start + n])


@pytest.mark.parametrize("key", list(BATCHES))
def test_send_batch_lays_out_the_bytes_write_batch_does(key):
    batch = arrowmm.record_batch(BATCHES[key])
    with Channel.create(_name(), batch.schema, capacity=1 << 16, slots=2) as ch, \
            Channel.attach(ch.name) as c:
        plain = ch._encode(batch, None)
        tpl, flat = plain.template, plain.flat
        scratch = SharedMap(mmap.mmap(-1, 1 << 15))
        expected = scratch.write_batch(0, 1 << 15, tpl.header, tpl.rows_at, tpl.body_at,
                                       tpl.nodes_at, tpl.buffers_at, batch.num_rows, flat.nodes,
                                       flat.buffers)
        got = ch._ring.send_batch(0, tpl, batch.num_rows, flat.nodes, flat.buffers)
        assert got == expected > 0
        assert _slot_bytes(ch, 0, got) == bytes(memoryview(scratch.mapping)[:got])
        ch._next = 1  # (the batch went round the channel's own send)
        assert ch._seg.map.load64(OFF_WRITE_SEQ) == 1
        assert c.recv(timeout=60).to_pydict() == BATCHES[key].to_pydict()
        ch.send(batch)  # (and the channel's send takes the same path)
        assert _slot_bytes(ch, 1, got) == _slot_bytes(ch, 0, got)
        assert c.recv(timeout=60).to_pydict() == BATCHES[key].to_pydict()


def test_send_batch_refuses_a_batch_larger_than_a_slot_and_touches_nothing():
    big = arrowmm.record_batch({"x": np.arange(1000, dtype=np.int64)})  # 8,000 bytes of body
    with Channel.create(_name(), big.schema, capacity=2 * mmap.PAGESIZE, slots=2) as ch, \
            Channel.attach(ch.name):
        plain = ch._encode(big, None)
        need = len(plain.template.header) + 8000 + (-8000 % 64)
        assert ch._ring.send_batch(0, plain.template, 1000, plain.flat.nodes,
                                   plain.flat.buffers) == -need
        m, lay = ch._seg.map, ch._seg.layout
        assert m.load64(lay.slot(0) + S_SEQ) == WRITING and m.load64(OFF_WRITE_SEQ) == 0
        with pytest.raises(ArrowInvalid, match=f"encodes to {need} bytes, a slot holds "
                                               f"{lay.slot_size}"):
            ch.send(big)
        assert ch.sent == 0


def test_send_batch_leaves_a_slot_that_is_not_ready():
    one = arrowmm.record_batch({"x": np.array([1], dtype=np.int64)})
    with Channel.create(_name(), one.schema, capacity=1 << 16, slots=2) as ch, \
            Channel.attach(ch.name):
        ch.send(one)
        ch.send(one)  # (the consumer took neither: batch 2's slot still holds batch 0)
        plain = ch._encode(one, None)
        before = _slot_bytes(ch, 0, 256)
        assert ch._ring.send_batch(2, plain.template, 1, plain.flat.nodes,
                                   plain.flat.buffers) == 0
        m, lay = ch._seg.map, ch._seg.layout
        assert m.load64(lay.slot(0) + S_SEQ) == 0 and m.load64(OFF_WRITE_SEQ) == 2
        assert _slot_bytes(ch, 0, 256) == before


@pytest.mark.parametrize("key", ["one row", "nulls, strings, sliced"])
def test_plain_read_reads_what_the_header_vectors_and_body_hold(key):
    batch = arrowmm.record_batch(BATCHES[key])
    with Channel.create(_name(), batch.schema, capacity=1 << 16, slots=2) as ch, \
            Channel.attach(ch.name) as c:
        ch.send(batch)
        lease = c._cursor.take()
        tpl = ch._encode(batch, None).template
        header, nodes_at, buffers_at, nn, nb = (tpl.header, tpl.nodes_at, tpl.buffers_at,
                                                tpl.nodes, tpl.buffers)
        rows, body = plain_header(lease, header, tpl.fixed, tpl.rows_at, tpl.body_at)
        got = c._plain.read(lease, "batch 0 here")
        assert got[0] == rows == batch.num_rows
        for pairs, at, count in ((got[1], nodes_at, nn), (got[2], buffers_at, nb)):
            want = struct_pairs(lease, at, count)
            assert pairs.count == count
            assert [pairs.get(i) for i in range(count)] == [want.get(i) for i in range(count)]
        assert got[3].region.description == "batch 0 here"
        assert bytes(got[3]) == bytes(Region(lease).view(len(header), body))
        del got, lease


def test_plain_read_refuses_a_changed_header_and_recv_refuses_a_damaged_number():
    one = arrowmm.record_batch({"x": np.array([5], dtype=np.int64)})
    with Channel.create(_name(), one.schema, capacity=1 << 16, slots=2) as ch, \
            Channel.attach(ch.name) as c:
        tpl = ch._encode(one, None).template
        m, lay = c._seg.map, c._seg.layout
        ch.send(one)
        start = lay.data_at(0)
        first = m.load64(start + 8)  # (a fixed byte of the template: the flatbuffer's root)
        m.store64(start + 8, first ^ 1)
        lease = c._cursor.take()
        assert c._plain.read(lease, "w") is None
        m.store64(start + 8, first)
        assert c._plain.read(lease, "w") is not None
        del lease
        # a number: the values buffer's offset past the body (64 bytes) passes the header
        # check, and the batch built from it is refused, never read out of its slot
        ch.send(one)
        start = lay.data_at(1)
        m.store64(start + tpl.buffers_at + 16, 64)
        with pytest.raises(ArrowInvalid):
            c.recv(timeout=60).column(0).to_pylist()


def test_spin_while32_without_measuring_sees_a_store_and_reports_no_stolen_time():
    """A fixed-spin consumer's wait (``measure=False``): no thread CPU clock read at either
    end (a system call each, the second between the batch's arrival and its take)."""
    import threading
    m = SharedMap(mmap.mmap(-1, mmap.PAGESIZE))
    m.store32(64, 7)
    assert m.spin_while32(64, 7, 0.001, False) == (7, 0.0)  # (the time runs out)
    writer = threading.Timer(0.05, lambda: m.add32(64, 1))
    writer.start()
    assert m.spin_while32(64, 7, 60, False) == (8, 0.0)
    writer.join()
    with pytest.raises(ArrowInvalid, match="misaligned"):
        m.spin_while32(66, 0, 0.001, False)


def test_plain_message_refuses_places_outside_its_template():
    tpl = record_batch_template(1, 2)
    good = dict(template=tpl.header, fixed=tpl.fixed, rows_at=tpl.rows_at, body_at=tpl.body_at,
                nodes_at=tpl.nodes_at, buffers_at=tpl.buffers_at, nodes=1, buffers=2)
    PlainMessage(**good)
    for bad in (dict(fixed=tpl.fixed[:-1]), dict(rows_at=len(tpl.header) - 4),
                dict(body_at=-1), dict(nodes=100), dict(buffers_at=len(tpl.header) + 16)):
        with pytest.raises(ArrowInvalid, match="PlainMessage"):
            PlainMessage(**{**good, **bad})
