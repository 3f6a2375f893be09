"""The C export's walk over undecoded columns (``ipc/read/_batch_walk.pyx``) agrees with the loader.

Exporting a batch whose columns were never touched goes from the message's FieldNode and
Buffer vectors straight to C structs; exporting one whose columns were decoded goes through
the loader's Arrays.  Both must hand consumers the same arrays (same lengths, null counts and
buffer addresses: the same memory) and refuse the same damage with the same error, since the
walk gives every column it doubts back to the loader.

* every uncompressed little-endian file of the fuzz corpus exports alike both ways, and the
  walk really is taken (the exported columns stay undecoded);
* seeded corruptions of the FieldNode and Buffer numbers of record batches (lengths, null
  counts, offsets, sizes), and of the bodies (offsets buffers), export alike both ways.
"""
from __future__ import annotations

import functools
import random
import struct
import sys

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.interop import _cdata
from tests.hostile.test_hostile import PLAIN_KEYS, layout

import make_corpus  # fuzz/make_corpus.py (pytest's pythonpath holds fuzz/)



@functools.lru_cache(maxsize=None)
def corpus() -> dict:
    return make_corpus.corpus()


def _buffer(b, source: bytes):
    """Where a buffer's bytes are: an offset into ``source`` (zero-copy), or its bytes when the
    loader copied it (re-aligned), since each export makes its own copy."""
    if b is None or b.size == 0:
        return None
    base = np.frombuffer(source, dtype=np.uint8).ctypes.data
    if base <= b.address < base + len(source):
        return ("source", b.address - base, b.size)
    return ("copy", b.to_pybytes())


def _shape(arr: pa.Array, source: bytes):
    """What a consumer received: type, lengths, null counts and each non-empty buffer."""
    bufs = [_buffer(b, source) for b in arr.buffers()]
    dictionary = _shape(arr.dictionary, source) if pa.types.is_dictionary(arr.type) else None
    children = []
    if pa.types.is_struct(arr.type):
        children = [_shape(arr.field(i), source) for i in range(arr.type.num_fields)]
    elif pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type) or \
            pa.types.is_fixed_size_list(arr.type) or pa.types.is_map(arr.type):
        children = [_shape(arr.values, source)]
    return (str(arr.type), len(arr), arr.offset, arr.null_count, bufs, dictionary, children)


def _export(batch, source: bytes) -> object:
    """The batch as pyarrow receives it, or the error arrowmm raised."""
    try:
        got = pa.record_batch(batch)
    except (arrowmm.ArrowInvalid, arrowmm.ArrowNotImplementedError) as exc:
        return ("error", type(exc).__name__, str(exc))
    return ("batch", [_shape(c, source) for c in got.columns])


def _both_ways(open_reader, i, source: bytes):
    """(walked, loaded): batch ``i`` exported fresh, and exported after decoding its columns."""
    fresh = open_reader().get_batch(i)
    walked = _export(fresh, source)
    loaded_batch = open_reader().get_batch(i)
    try:
        loaded_batch.columns
    except (arrowmm.ArrowInvalid, arrowmm.ArrowNotImplementedError):
        pass  # export decodes (and reports) the same column again
    return walked, _export(loaded_batch, source), fresh


def _plain(name: str) -> bool:
    return name.endswith(".arrow") and not any(w in name for w in ("lz4", "zstd", "bigendian"))


@pytest.mark.parametrize("name", sorted(n for n in corpus() if _plain(n)))
def test_corpus_files_export_alike_both_ways(name):
    data = corpus()[name]
    reader = arrowmm.open_file(data)
    walkable = reader._plan(reader.version).c_walk is not None
    for i in range(reader.num_record_batches):
        walked, loaded, fresh = _both_ways(lambda: reader, i, data)
        assert walked[0] == "batch", walked
        assert walked == loaded
        if walkable:  # the walk exported every column without the loader decoding it
            assert not any(fresh.is_loaded(k) for k in range(fresh.num_columns)), name


def _type_names(dtype, out):
    out.add(type(dtype).__name__)
    for child in getattr(dtype, "children", ()):
        _type_names(child.type, out)
    if isinstance(dtype, arrowmm.types.DictionaryType):
        _type_names(dtype.value_type, out)
    return out


class _LoadedBatches:
    """A reader's batches exported through the generic stream export, each decoded by the
    loader first (the path the walk must agree with)."""

    def __init__(self, reader):
        self.reader = reader

    def __arrow_c_stream__(self, requested_schema=None):
        def batches():
            for batch in self.reader:
                batch.columns
                yield batch
        return _cdata.export_stream(self.reader.schema, batches())


def _stream_shapes(source, data: bytes) -> list:
    """Each batch a consumer reads from ``source``'s stream, then the error that ended it."""
    out = []
    try:
        for batch in pa.RecordBatchReader.from_stream(source):
            out.append([_shape(c, data) for c in batch.columns])
    except (pa.ArrowException, OSError) as exc:
        out.append(("error", str(exc)))
    return out


def _reader_streams(data: bytes, fmt: str):
    """(walked, loaded) stream exports of a file or stream reader over ``data``, and the
    walked reader."""
    open_ = arrowmm.open_file if fmt == "file" else arrowmm.open_stream
    reader = open_(data)
    return _stream_shapes(reader, data), _stream_shapes(_LoadedBatches(open_(data)), data), reader


def _decoded_by_reading(data: bytes, fmt: str) -> int:
    """Columns a reader decodes when its batches are only read, not touched (dictionaries)."""
    reader = arrowmm.open_file(data) if fmt == "file" else arrowmm.open_stream(data)
    for _ in reader:
        pass
    return reader.stats.columns_loaded


@pytest.mark.parametrize("name", sorted(n for n in corpus()
                                        if _plain(n) or _plain(n.replace(".arrows", ".arrow"))))
def test_corpus_reader_streams_export_alike_both_ways(name):
    data = corpus()[name]
    fmt = "file" if name.endswith(".arrow") else "stream"
    walked, loaded, reader = _reader_streams(data, fmt)
    assert walked == loaded
    assert all(isinstance(b, list) for b in walked)  # every batch, no error
    assert len(walked) == sum(1 for _ in (arrowmm.open_file if fmt == "file" else
                                          arrowmm.open_stream)(data))
    if reader._plan(reader.version).c_walk is not None:
        # no record batch went through the loader (dictionary batches always do)
        assert reader.stats.columns_loaded == _decoded_by_reading(data, fmt)


def test_walk_covers_the_common_types():
    """The corpus files the walk serves hold every type it knows (so the test above compares
    something), and it declines the ones it leaves to the loader."""
    served, declined = set(), set()
    for name, data in corpus().items():
        if not _plain(name):
            continue
        reader = arrowmm.open_file(data)
        kinds = set()
        for f in reader.schema:
            _type_names(f.type, kinds)
        (served if reader._plan(reader.version).c_walk is not None else declined).update(kinds)
    assert {"NullType", "BoolType", "IntType", "FloatType", "DecimalType", "DateType", "TimeType",
            "TimestampType", "DurationType", "IntervalType", "FixedSizeBinaryType", "BinaryType",
            "ListType", "FixedSizeListType", "StructType", "MapType",
            "DictionaryType"} <= served, served
    assert {"UnionType", "RunEndEncodedType"} <= declined - served, declined


class _Vectors:
    """Positions of the FieldNode and Buffer numbers of every record batch message."""

    def __init__(self, lay):
        self.slots = []
        for m in lay.messages:
            if m.kind != "batch":
                continue
            self.slots += [(m.node_at(k), "node") for k in range(m.n_nodes)]
            self.slots += [(m.buffer_at(k), "buffer") for k in range(m.n_buffers)]


def _corrupt(data: bytes, vectors: _Vectors, body_spans, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 2)):
        if rng.random() < 0.75:
            at, _ = rng.choice(vectors.slots)
            at += rng.choice((0, 8))  # length / null count, or offset / size
            old = struct.unpack_from("<q", out, at)[0]
            new = rng.choice((0, -1, 1, old + 1, old - 1, old + 8, old - 8, old * 2, 1 << 62,
                              (1 << 63) - 1, len(data)))
            struct.pack_into("<q", out, at, max(-(1 << 63), min(new, (1 << 63) - 1)))
        else:
            lo, hi = rng.choice(body_spans)
            out[rng.randrange(lo, hi)] = rng.choice((0x00, 0xFF, 0x7F, 0x80))
    return bytes(out)


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("key", PLAIN_KEYS)
def test_corrupted_batches_export_alike_both_ways(key, fmt):
    lay = layout(key, fmt)
    vectors = _Vectors(lay)
    body_spans = [(m.body_start, m.end) for m in lay.messages if m.body_len]
    rng = random.Random(f"{key}/{fmt}")
    compared = 0
    for case in range(60):
        data = _corrupt(lay.data, vectors, body_spans, rng)
        if fmt == "file":
            try:
                n = arrowmm.open_file(data).num_record_batches
            except arrowmm.ArrowInvalid:
                continue
            opener = functools.partial(arrowmm.open_file, data)
        else:
            try:
                n = sum(1 for _ in arrowmm.open_stream(data))
            except (arrowmm.ArrowInvalid, arrowmm.ArrowNotImplementedError):
                continue  # the header chain is broken before a batch: nothing to export
            opener = functools.partial(_StreamAt, data)
        for i in range(n):
            try:
                walked, loaded, _ = _both_ways(opener, i, data)
            except arrowmm.ArrowInvalid as exc:  # (refused as a batch: by both ways, in one place)
                assert "buffer" in str(exc) or "node" in str(exc), exc
                continue
            assert walked == loaded, f"case {case}, batch {i}:\nwalk   {walked}\nloader {loaded}"
            compared += 1
        # the reader's own stream export, which walks whole batches from the mapping
        walked, loaded, _ = _reader_streams(data, fmt)
        assert walked == loaded, f"case {case}:\nwalk   {walked}\nloader {loaded}"
    assert compared > 20


class _StreamAt:
    """``get_batch(i)`` over a fresh stream reader (streams only read forward)."""

    def __init__(self, data):
        self.data = data

    def get_batch(self, i):
        reader = arrowmm.open_stream(self.data)
        for _ in range(i):
            reader.read_next_batch()
        return reader.read_next_batch()


def test_walked_children_released_apart_on_other_threads():
    """The nodes of a walked batch share one allocation; a consumer may still move any child
    out, release the parent, and release the children later on other threads without the
    GIL: the memory stays valid until the last one, and then the source is let go."""
    import ctypes
    import threading
    from tests.interop.test_cdata import _ARRAY_NAME, CArray, _capi

    data = corpus()["struct_map.pyarrow-plain.arrow"]
    batch = arrowmm.open_file(data).get_batch(0)
    body = batch._loader.body
    before = sys.getrefcount(body)
    _, capsule = batch.__arrow_c_array__()
    assert not any(batch.is_loaded(k) for k in range(batch.num_columns))  # (walked)
    root = CArray.from_address(_capi.PyCapsule_GetPointer(capsule, _ARRAY_NAME))
    moved = []
    for k in range(root.n_children):  # move each column out, and the first grandchild too
        child = root.children[k].contents
        moved.append(CArray.from_buffer_copy(child))
        child.release = None
        if moved[-1].n_children:
            grandchild = moved[-1].children[0].contents
            moved.append(CArray.from_buffer_copy(grandchild))
            grandchild.release = None
    del capsule  # releases the root: the moved nodes keep the arena
    assert sys.getrefcount(body) > before
    first_length = moved[0].length
    for arr in moved:
        release = ctypes.CFUNCTYPE(None, ctypes.POINTER(CArray))(arr.release)
        thread = threading.Thread(target=release, args=(ctypes.pointer(arr),))
        thread.start()
        thread.join()
        assert arr.release is None
    assert first_length == batch.num_rows
    assert sys.getrefcount(body) == before


def test_closing_a_reader_lets_its_mapping_go_after_a_walked_export(tmp_path):
    """Closing a reader lets the mapping go as soon as consumers release their data, though
    the reader object lives on: its footer views, its dictionaries and the walk's cache of the
    dictionary it last exported are dropped."""
    import gc
    import weakref

    path = tmp_path / "dict.arrow"
    table = pa.table({"d": pa.array(["a", "b", "a"]).dictionary_encode(), "x": [1, 2, 3]})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    reader = arrowmm.open_file(path)
    region = weakref.ref(reader._region)
    got = pa.table(reader)
    assert got.equals(table) and reader.stats.columns_loaded == 1  # the dictionary batch only
    reader.close()
    gc.collect()
    assert region() is not None  # pyarrow's table still points into the mapping
    del got
    gc.collect()
    assert region() is None
    assert reader.num_record_batches == 1 and reader.schema.names == ["d", "x"]  # still answer
    for call in (lambda: reader.get_batch(0), reader.batch_extents):
        with pytest.raises(arrowmm.ArrowInvalid, match="closed"):
            call()
    stream_path = tmp_path / "dict.arrows"
    with pa.OSFile(str(stream_path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    stream = arrowmm.open_stream(stream_path)
    region = weakref.ref(stream._region)
    got = pa.table(stream)
    stream.close()
    del got
    gc.collect()
    assert region() is None


def _stream_bytes(n_batches: int) -> tuple:
    table = pa.table({"x": pa.array(range(3 * n_batches), pa.int64()),
                      "s": pa.array([str(i) for i in range(3 * n_batches)])})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        for batch in table.to_batches(max_chunksize=3):
            w.write_batch(batch)
    return table, sink.getvalue().to_pybytes()


def test_stream_walk_returns_each_position_and_the_reader_keeps_it():
    """The reader's stream export hands the walk a narrow source: the walk is offered the
    message at the reader's position and returns where it ends; the reader moves itself."""
    from arrowmm.ipc.read._batch_walk import export_stream_batches
    from arrowmm.format import MetadataVersion

    table, data = _stream_bytes(4)
    reader = arrowmm.open_stream(data)
    walked = []

    def next_for_export(walk):
        def recording(region, offset, end, lookup):
            after = walk(region, offset, end, lookup)
            walked.append((offset, after))
            return after
        return reader._next_for_export(recording if walk is not None else None)

    capsule = export_stream_batches(reader.schema, reader._plan(MetadataVersion.V5).c_walk,
                                    next_for_export)
    got = pa.RecordBatchReader._import_from_c_capsule(capsule).read_all()
    assert got.equals(table)
    assert len(walked) == 5  # four batches walked, then the end-of-stream marker declined
    starts = [pa.ipc.read_message(pa.py_buffer(data[o:])).type for o, _ in walked[:4]]
    assert starts == ["record batch"] * 4
    assert all(after > offset for offset, after in walked[:4])
    assert [o for o, _ in walked[1:]] == [a for _, a in walked[:4]]  # each starts where it ended
    assert walked[4][1] == -1
    assert reader.stats.columns_loaded == 0  # nothing went through the loader


def test_file_stream_export_walks_nothing_once_the_reader_is_closed(tmp_path):
    """The file stream export holds the reader's callables, not its mapping: closed halfway,
    the next get_next fails with the reader's own error instead of reading the mapping."""
    table, _ = _stream_bytes(3)
    path = tmp_path / "f.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        for batch in table.to_batches(max_chunksize=3):
            w.write_batch(batch)
    reader = arrowmm.open_file(path)
    stream = pa.RecordBatchReader._import_from_c_capsule(reader.__arrow_c_stream__())
    first = stream.read_next_batch()
    assert first.equals(table.slice(0, 3).to_batches()[0])
    reader.close()
    with pytest.raises(pa.ArrowInvalid, match="closed"):
        stream.read_next_batch()


def test_capsule_methods_find_their_exporters_through_the_hooks():
    """types and arrays reach the C interface through arrowmm.hooks, which interop._cdata
    fills when imported (``tests/project/test_hooks.py`` checks every hook)."""
    from arrowmm import hooks

    assert hooks.export_c_schema is _cdata.export_schema
    assert hooks.export_c_array is _cdata.export_array
    assert hooks.export_c_batch is _cdata.export_batch


def test_a_get_next_inside_another_fills_its_own_struct_only():
    """Each get_next's walk writes into that call's struct only: a second get_next arriving
    while the first is between the consumer and the reader (here nested, deterministically;
    with threads, whenever the GIL switches there) leaves the first call's struct to it."""
    import ctypes

    from arrowmm.format import MetadataVersion
    from arrowmm.ipc.read._batch_walk import export_stream_batches
    from tests.interop.test_cdata import CArray, _capi

    class CStream(ctypes.Structure):
        pass

    CStream._fields_ = [
        ("get_schema", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(CStream), ctypes.c_void_p)),
        ("get_next", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(CStream),
                                      ctypes.POINTER(CArray))),
        ("get_last_error", ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.POINTER(CStream))),
        ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(CStream))),
        ("private_data", ctypes.c_void_p)]

    table, data = _stream_bytes(2)
    reader = arrowmm.open_stream(data)
    inner = CArray()
    calls = []

    def next_for_export(walk):
        calls.append(walk is not None)
        if len(calls) == 1:  # the outer call: another get_next runs before it reads
            assert stream.get_next(pointer, ctypes.byref(inner)) == 0
        return reader._next_for_export(walk)

    capsule = export_stream_batches(reader.schema, reader._plan(MetadataVersion.V5).c_walk,
                                    next_for_export)
    pointer = ctypes.cast(_capi.PyCapsule_GetPointer(capsule, b"arrow_array_stream"),
                          ctypes.POINTER(CStream))
    stream = pointer.contents
    outer = CArray()
    assert stream.get_next(pointer, ctypes.byref(outer)) == 0
    assert calls == [True, True]
    schema = pa.schema(reader.schema)
    first = pa.RecordBatch._import_from_c(ctypes.addressof(inner), schema)
    second = pa.RecordBatch._import_from_c(ctypes.addressof(outer), schema)
    expected = table.to_batches(max_chunksize=3)
    assert first.equals(expected[0]) and second.equals(expected[1])


def _read_all_alike(data: bytes) -> bool:
    """``read_all()`` of a file hands out the batches ``get_batch`` does (exported alike,
    errors alike); True when it read them through the C parts (``_plain_batches``)."""
    reader = arrowmm.open_file(data)
    try:
        fast = reader.read_all().to_batches()
    except (arrowmm.ArrowInvalid, arrowmm.ArrowNotImplementedError) as exc:
        with pytest.raises(type(exc)) as info:  # (the one-at-a-time way fails alike)
            [reader.get_batch(i) for i in range(reader.num_record_batches)]
        assert str(info.value) == str(exc)
        return False
    one_by_one = arrowmm.open_file(data)
    assert len(fast) == one_by_one.num_record_batches
    for i, batch in enumerate(fast):
        assert _export(batch, data) == _export(one_by_one.get_batch(i), data), i
    return arrowmm.open_file(data)._plain_batches() is not None


def test_read_all_of_corpus_files_reads_the_batches_get_batch_reads():
    took_c = [name for name in sorted(corpus()) if _plain(name) and _read_all_alike(corpus()[name])]
    assert len(took_c) > 10, took_c
    # (a compressed file is read batch by batch: its columns decode with read-ahead)
    zstd = [n for n in corpus() if n.endswith(".arrow") and "zstd" in n]
    assert zstd and arrowmm.open_file(corpus()[zstd[0]])._plain_batches() is None


@pytest.mark.parametrize("key", PLAIN_KEYS)
def test_read_all_of_corrupted_files_reads_the_batches_get_batch_reads(key):
    lay = layout(key, "file")
    vectors = _Vectors(lay)
    body_spans = [(m.body_start, m.end) for m in lay.messages if m.body_len]
    rng = random.Random(f"read_all/{key}")
    compared = took_c = 0
    for case in range(40):
        data = _corrupt(lay.data, vectors, body_spans, rng)
        try:
            arrowmm.open_file(data)
        except arrowmm.ArrowInvalid:
            continue
        compared += 1
        took_c += _read_all_alike(data)
    assert compared > 20
    assert took_c > 5 or key == "view"  # (views' variadic buffers: read batch by batch)


def test_a_block_length_with_its_sign_bit_set_is_an_arrow_invalid_on_every_path():
    # A footer Block's metaDataLength is an int32: one with bit 31 set read as an unsigned
    # 32-bit number overflowed the C parts' conversion (OverflowError) where get_batch said
    # ArrowInvalid (found by an adversarial run: read_all, to_pandas and the export walk).
    import io
    from arrowmm.arrays.gather import MIN_BATCHES
    sink = io.BytesIO()
    b = pa.record_batch({"a": pa.array([1, 2, 3]), "s": pa.array(["x", None, "zz"])})
    with pa.ipc.new_file(sink, b.schema) as w:
        for _ in range(MIN_BATCHES + 2):
            w.write_batch(b)
    data = bytearray(sink.getvalue())
    reader = arrowmm.open_file(bytes(data))
    off, meta_len, _ = reader._blocks[-1].tolist()
    at = data.rfind(struct.pack("<qi", off, meta_len))
    assert at > 0
    data[at + 11] |= 0x80  # (the int32's top byte: negative now)
    data = bytes(data)
    last = f"record batch {len(reader._blocks) - 1} "
    calls = [lambda r: r.read_all(), lambda r: r.to_pandas(), lambda r: pa.table(r),
             lambda r: r.get_batch(-1)]
    for call in calls:
        with pytest.raises((arrowmm.ArrowInvalid, pa.ArrowInvalid), match=last + ".*outside"):
            call(arrowmm.open_file(data))
