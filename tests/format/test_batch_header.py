"""arrowmm.format.batch_header: the hand-laid RecordBatch header reads as the builder's does.

Oracles: arrowmm's own message parser and pyarrow (``pa.ipc.read_message`` and
``read_record_batch``), over batches of many shapes (nulls, strings, lists, structs, zero rows,
zero columns), each compared with what the stream writer's FlatBuffers-built message gives.
"""
from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.format import MessageHeader, parse_message
from arrowmm.format.batch_header import record_batch_message
from arrowmm.ipc.write.encoder import FlatBatch, flatten

BATCHES = {
    "ints": pa.record_batch({"x": pa.array([1, 2, 3], pa.int64())}),
    "nulls and strings": pa.record_batch({"x": pa.array([1, None, 3], pa.int32()),
                                          "s": pa.array(["a", None, "ccc"])}),
    "list and struct": pa.record_batch({
        "l": pa.array([[1, 2], None, []], pa.list_(pa.int16())),
        "st": pa.array([{"a": 1, "b": "x"}, None, {"a": 3, "b": None}])}),
    "zero rows": pa.record_batch({"x": pa.array([], pa.float64())}),
    "zero columns": pa.RecordBatch.from_pydict({}),
    "big": pa.record_batch({"v": np.arange(100_000, dtype=np.float64)}),
}


def encode(pb: pa.RecordBatch) -> bytes:
    """The framed message + body, as the channel lays it out."""
    batch = arrowmm.record_batch(pb) if pb.num_columns else None
    flat = FlatBatch()
    for col in (batch.storage_columns if batch is not None else []):
        flat = flatten(col, flat)
    body, layout, pos = [], [], 0
    for buf in flat.buffers:
        size = 0 if buf is None else memoryview(buf).nbytes
        layout += (pos, size)
        if size:
            body.append(bytes(memoryview(buf).cast("B")) + bytes(-size % 64))
            pos += size + (-size % 64)
    return bytes(record_batch_message(pb.num_rows, flat.nodes, layout, pos)) + b"".join(body)


@pytest.mark.parametrize("key", sorted(BATCHES))
def test_pyarrow_reads_the_hand_laid_message(key):
    pb = BATCHES[key]
    data = encode(pb)
    msg = pa.ipc.read_message(pa.py_buffer(data))
    assert msg.type == "record batch" and msg.metadata_version == pa.ipc.MetadataVersion.V5
    assert pa.ipc.read_record_batch(msg, pb.schema).equals(pb)


@pytest.mark.parametrize("key", sorted(BATCHES))
def test_arrowmm_parses_it_as_the_builders_message(key):
    pb = BATCHES[key]
    data = encode(pb)
    assert len(data[:8]) == 8 and data[:4] == b"\xff\xff\xff\xff"
    size = int.from_bytes(data[4:8], "little", signed=True)
    assert (8 + size) % 64 == 0  # the body starts 64-byte aligned
    ours = parse_message(memoryview(data[8:8 + size]), 0, "message")
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, arrowmm.record_batch(pb).schema if pb.num_columns
                            else arrowmm.schema([])) as w:
        if pb.num_columns:
            w.write(arrowmm.record_batch(pb))
    if pb.num_columns:
        assert arrowmm.open_stream(_with_schema(sink.getvalue(), data)).read_all().to_pylist() \
            == pa.Table.from_batches([pb]).to_pylist()
    assert ours.header_type == MessageHeader.RecordBatch
    assert ours.header.length == pb.num_rows


def _with_schema(stream: bytes, message: bytes) -> bytes:
    """The schema message of ``stream`` followed by ``message`` and the end-of-stream marker."""
    size = int.from_bytes(stream[4:8], "little", signed=True)
    return stream[:8 + size] + message + b"\xff\xff\xff\xff\x00\x00\x00\x00"
