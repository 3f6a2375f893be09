"""Write the JUnit tests' Arrow files into ``resources/`` (tiny; committed, so Maven needs no
Python): run ``python arrowmm/spark/jvm/src/test/make_test_files.py`` after changing them.

``pyarrow_two_batches.arrow``: pyarrow's writer (the reference), columns ``k`` int64,
``name`` string (one null), ``x`` float64, two record batches of 3 rows.
``arrowmm_statistics.arrow``: arrowmm's writer with footer statistics, ``k`` int64 0..2 in
batch 0 and 10..12 in batch 1 (a filter ``k > 5`` can skip batch 0); version 3: the footer
holds the document's SHA-256, batch 0's message the document's id, and each entry its batch's
footer Block (BatchStatisticsTest and StatisticsBlocksTest change them byte for byte).
``arrowmm_statistics.arrows``: the same batches through arrowmm's stream writer (each batch
message holds its own statistics and their SHA-256).
``pyarrow_types.arrow``: pyarrow's file of no rows with a column of every type a statistics
document may name (:data:`NAMED_TYPES`, extension columns among them) and of some it never
names (:data:`UNNAMED_TYPES`); each named column's field metadata holds, under ``expected``,
pyarrow's string of its storage type (TypeStringsTest compares TypeStrings' with each); the
schema's metadata holds, under ``decimals``, ``[bitWidth, precision, scale, string]`` of
decimal32 and decimal64 types, which Arrow Java does not read from a file (the test builds
them).
``lz4_frames.bin``: LZ4 frames made by the LZ4 frame library (the ``lz4`` package, as Arrow
C++ and the Python reader use it) of :func:`lz4_text`'s bytes, one per option set (linked and
independent blocks, block sizes, block and content checksums, content size): each as
``[int64 frame length][frame]`` (Lz4FrameTest decodes each and compares), then one frame of
:func:`lz4_runs`'s bytes (long runs: matches one and two bytes back), then one of
:func:`lz4_doubles`'s (a float64 column).
"""
import json
import os
import struct

import pyarrow as pa

import arrowmm
import lz4.frame

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "resources")


def lz4_text() -> bytes:
    """150,000 bytes of text that compress with matches near and far (Lz4FrameTest makes the
    same bytes)."""
    out = bytearray()
    i = 0
    while len(out) < 150_000:
        out += b"row %d value %d\n" % (i % 1500, (i * 7919) % 500)
        i += 1
    return bytes(out[:150_000])


def lz4_runs() -> bytes:
    """70,000 bytes of runs: zeros, alternating 0 and 1, and a cycle of 7 (Lz4FrameTest makes
    the same bytes)."""
    return bytes(0 if (i // 3000) % 3 == 0 else i & 1 if (i // 3000) % 3 == 1 else i % 7
                 for i in range(70_000))


def lz4_doubles() -> bytes:
    """9,000 float64 values, a cycle of quarters, every 100th another (Lz4FrameTest makes the same
    bytes)."""
    return struct.pack("<9000d", *(i * 1.7 if i % 100 == 0 else i % 1000 * 0.25
                                    for i in range(9000)))


#: Option sets of the frames in ``lz4_frames.bin``, in order.
LZ4_OPTIONS = [dict(block_linked=True),  # the library's default (and Arrow C++'s)
               dict(block_linked=False),
               dict(block_linked=True, block_size=lz4.frame.BLOCKSIZE_MAX256KB,
                    content_checksum=True, block_checksum=True, store_size=True),
               dict(block_linked=False, block_size=lz4.frame.BLOCKSIZE_MAX4MB,
                    content_checksum=True, store_size=False, compression_level=9)]


class _Int32Extension(pa.ExtensionType):
    """An extension type of int32 storage (written under its name; Arrow Java, not knowing it,
    reads the storage type)."""

    def __init__(self):
        super().__init__(pa.int32(), "arrowmm.test.int32")

    def __arrow_ext_serialize__(self):
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls()


#: Types whose pyarrow string a statistics document may record (statistics version 3,
#: ``types``): one of each kind, every unit and a time zone or two.
NAMED_TYPES = [
    pa.int8(), pa.int16(), pa.int32(), pa.int64(),
    pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
    pa.float16(), pa.float32(), pa.float64(),
    pa.decimal128(38, 10), pa.decimal128(5, 0), pa.decimal256(76, 3),
    pa.date32(), pa.date64(),
    pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns"),
    *(pa.timestamp(u) for u in ("s", "ms", "us", "ns")),
    pa.timestamp("ms", tz="Europe/Paris"), pa.timestamp("us", tz="UTC"),
    pa.timestamp("ns", tz="+01:00"), pa.timestamp("s", tz="America/Argentina/Buenos_Aires"),
    *(pa.duration(u) for u in ("s", "ms", "us", "ns")),
    pa.bool_(), pa.string(), pa.large_string(), pa.string_view(),
    pa.binary(), pa.large_binary(), pa.binary_view(), pa.binary(3), pa.binary(16),
    pa.uuid(), _Int32Extension(),
]

#: Types no statistics document names (nested, dictionary-encoded, null, interval).
UNNAMED_TYPES = [pa.list_(pa.int32()), pa.struct([("a", pa.int32())]),
                 pa.dictionary(pa.int32(), pa.string()), pa.null(), pa.month_day_nano_interval()]

#: decimal32 and decimal64 types (in the schema's metadata: Arrow Java reads no such column).
NARROW_DECIMALS = [pa.decimal32(7, 2), pa.decimal32(1, 0), pa.decimal64(18, 18),
                   pa.decimal64(12, 3)]


def storage_string(dtype) -> str:
    """pyarrow's string of ``dtype``'s storage type (what a document's ``types`` records)."""
    return str(dtype.storage_type if isinstance(dtype, pa.BaseExtensionType) else dtype)


def types_schema() -> pa.Schema:
    """The schema of ``pyarrow_types.arrow``."""
    fields = [pa.field(f"c{i}", t, metadata={"expected": storage_string(t)})
              for i, t in enumerate(NAMED_TYPES)]
    fields += [pa.field(f"u{i}", t) for i, t in enumerate(UNNAMED_TYPES)]
    decimals = [[t.bit_width, t.precision, t.scale, str(t)] for t in NARROW_DECIMALS]
    return pa.schema(fields, metadata={"decimals": json.dumps(decimals)})


def main() -> None:
    table = pa.table({"k": pa.array([0, 1, 2, 3, 4, 5], pa.int64()),
                      "name": pa.array(["a", None, "ccc", "d", "ee", "f"]),
                      "x": pa.array([0.5, 1.5, 2.5, 3.5, 4.5, 5.5])})
    with pa.ipc.new_file(os.path.join(HERE, "pyarrow_two_batches.arrow"), table.schema) as w:
        for batch in table.to_batches(max_chunksize=3):
            w.write_batch(batch)
    with arrowmm.new_file(os.path.join(HERE, "arrowmm_statistics.arrow"),
                          arrowmm.schema([("k", arrowmm.int64())]), statistics=True) as w:
        w.write({"k": [0, 1, 2]})
        w.write({"k": [10, 11, 12]})
    with arrowmm.new_stream(os.path.join(HERE, "arrowmm_statistics.arrows"),
                            arrowmm.schema([("k", arrowmm.int64())]), statistics=True) as w:
        w.write({"k": [0, 1, 2]})
        w.write({"k": [10, 11, 12]})
    schema = types_schema()
    with pa.ipc.new_file(os.path.join(HERE, "pyarrow_types.arrow"), schema) as w:
        w.write_table(schema.empty_table())
    with open(os.path.join(HERE, "lz4_frames.bin"), "wb") as f:
        for options in LZ4_OPTIONS:
            frame = lz4.frame.compress(lz4_text(), **options)
            f.write(struct.pack("<q", len(frame)) + frame)
        for data in (lz4_runs(), lz4_doubles()):
            frame = lz4.frame.compress(data)
            f.write(struct.pack("<q", len(frame)) + frame)


if __name__ == "__main__":
    main()
