"""``ipc.read.plain_columns``: which schemas have their batches built at once (a few plain
fixed-width columns in native byte order), and that what it builds equals the lazy batch of
the same message, damage giving None (the lazy batch then says what is wrong).  The
channel's use of it, across processes and with damage in a segment, is in
``tests/shm/test_channel_plain_decode.py``."""
from __future__ import annotations

import mmap

import pyarrow as pa

import arrowmm
from arrowmm._core._flatbuf import struct_pairs
from arrowmm._core._region import Region
from arrowmm._core._shmsync import SharedMap
from arrowmm.format.batch_header import record_batch_template
from arrowmm.ipc.read.file_reader import MessageBatchDecoder
from arrowmm.ipc.read.plain_columns import MAX_COLUMNS, PlainColumns
from arrowmm.ipc.write.encoder import flatten_columns


def test_usable_for_a_few_plain_fixed_width_columns_only():
    assert PlainColumns(arrowmm.schema([(f"c{k}", arrowmm.float32())
                                        for k in range(MAX_COLUMNS)])).usable
    for fields in ([(f"c{k}", arrowmm.float32()) for k in range(MAX_COLUMNS + 1)],
                   [("s", arrowmm.string())], [("b", arrowmm.bool_())],
                   [("l", arrowmm.list_(arrowmm.int8()))], []):
        assert not PlainColumns(arrowmm.schema(fields)).usable, fields
    big = arrowmm.Schema([("x", arrowmm.int64())], endianness="big")
    assert not PlainColumns(big).usable


def _message(batch):
    """(nodes, buffers, body, rows) of ``batch`` laid out as a channel's slot lays it out."""
    flat = flatten_columns(batch.storage_columns)
    tpl = record_batch_template(len(flat.nodes) // 2, len(flat.buffers))
    m = SharedMap(mmap.mmap(-1, 1 << 16))
    size = m.write_batch(0, 1 << 16, tpl.header, tpl.rows_at, tpl.body_at, tpl.nodes_at,
                         tpl.buffers_at, batch.num_rows, flat.nodes, flat.buffers)
    message = memoryview(m.mapping)[:size]
    return (m, tpl, struct_pairs(message, tpl.nodes_at, tpl.nodes),
            struct_pairs(message, tpl.buffers_at, tpl.buffers),
            Region(message, description="test message").view(len(tpl.header),
                                                             size - len(tpl.header)))


def test_the_batch_built_equals_the_lazy_batch_and_damage_gives_none():
    pab = pa.record_batch({"i": pa.array([1, None, 3], pa.int16()),
                           "f": pa.array([0.5, 1.5, None]), "d": pa.array([1, 2, 3], pa.date32())})
    batch = arrowmm.record_batch(pab)
    columns = PlainColumns(batch.schema)
    m, tpl, nodes, buffers, body = _message(batch)
    built = columns.batch(3, nodes, buffers, body)
    lazy = MessageBatchDecoder(batch.schema).plain_record_batch(3, nodes, buffers, body, "t")
    assert built._loader is None
    assert pa.record_batch(built).equals(pab) and built.to_pydict() == lazy.to_pydict()
    assert columns.batch(4, nodes, buffers, body) is None  # rows other than the columns'
    m.store64(tpl.buffers_at + 16 * 3, 1 << 20)  # f's values past the body
    assert columns.batch(3, nodes, buffers, body) is None
    del built, lazy, nodes, buffers, body
