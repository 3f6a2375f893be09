"""arrowmm.limits: each limit refuses input beyond it with ArrowInvalid naming it, the input
just inside it reads, and set_limits / override raise it for users who need more."""
import io
import struct

import numpy as np

import pyarrow as pa
import pytest

import arrowmm
from arrowmm import ArrowInvalid, limits
from tests.hostile.test_hostile import hand_built
from tests.support.helpers import ipc_bytes


@pytest.fixture(autouse=True)
def _defaults():
    limits.reset()
    yield
    limits.reset()


def _write(batches, fmt="stream", schema=None, **options) -> bytes:
    return ipc_bytes(batches, fmt=fmt, schema=schema, **options)


def _read_all(data: bytes, way: str):
    """Open and convert every batch through ``way``."""
    if way == "file":
        reader = arrowmm.open_file(data)
    elif way == "stream":
        reader = arrowmm.open_stream(data)
    else:
        reader = arrowmm.open_stream(io.BytesIO(data))
    with reader:
        return reader.schema, [b.to_pylist() for b in reader]


WAYS = {"file": ("file",), "stream": ("stream", "BytesIO")}


def _refused(data: bytes, fmt: str, name: str):
    for way in WAYS[fmt]:
        with pytest.raises(ArrowInvalid, match=f"limit {name}=") as info:
            _read_all(data, way)
        assert f"set_limits({name}=" in str(info.value)


# -- the API --------------------------------------------------------------------------------------

def test_defaults_and_api():
    assert limits.current() == limits.DEFAULTS
    assert limits.max_nesting == 64 and arrowmm.set_limits is limits.set_limits
    previous = arrowmm.set_limits(max_fields=10, max_nesting=100)
    assert previous == {"max_fields": 1 << 20, "max_nesting": 64}
    assert (limits.max_fields, limits.max_nesting) == (10, 100)
    with limits.override(max_fields=20) as now:
        assert now["max_fields"] == 20 and now["max_nesting"] == 100
    assert limits.max_fields == 10
    limits.reset()
    assert limits.current() == limits.DEFAULTS


@pytest.mark.parametrize("kwargs", [{"max_nesting": 0}, {"max_fields": -1}, {"max_fields": 1.5},
                                    {"max_fields": True}, {"max_nesting": 129}, {"nesting": 3},
                                    {"max_fields": 5, "max_nesting": 10_000}])
def test_bad_settings_refused_and_change_nothing(kwargs):
    with pytest.raises(ArrowInvalid):
        arrowmm.set_limits(**kwargs)
    assert limits.current() == limits.DEFAULTS


def test_override_restores_after_an_error():
    with pytest.raises(KeyError):
        with limits.override(max_metadata_size=100):
            raise KeyError("inside")
    assert limits.max_metadata_size == limits.DEFAULTS["max_metadata_size"]


# -- nesting ----------------------------------------------------------------------------------------

def _nested_lists(depth: int) -> bytes:
    """A stream of one column of ``depth`` nested lists of int64, written by arrowmm (pyarrow's
    writer and C-data import stop at 64 levels), and its rows."""
    dtype, row = arrowmm.int64(), [1, None, 3]
    for _ in range(depth):
        dtype = arrowmm.list_(dtype)
    for _ in range(depth - 1):
        row = [row, []]
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, arrowmm.schema([("deep", dtype)])) as w:
        w.write({"deep": arrowmm.array([row, None], type=dtype)})
    return sink.getvalue(), [{"deep": row}, {"deep": None}]


def test_nesting_limit():
    data, rows = _nested_lists(70)  # beyond the default 64
    _refused(data, "stream", "max_nesting")
    with limits.override(max_nesting=80):
        for way in WAYS["stream"]:
            schema, got = _read_all(data, way)
            assert got == [rows]
            assert str(schema.field(0).type).count("list<") == 70


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_nesting_at_the_ceiling_reads_and_ten_thousand_stays_refused(fmt):
    """The ceiling (128) is safe to allow: parsing recurses per level well inside Python's limit."""
    arrowmm.set_limits(max_nesting=limits.CEILINGS["max_nesting"])
    with arrowmm.open(hand_built(127, 1, fmt)) as r:
        assert str(r.schema.field(0).type).count("list<") == 127
    with pytest.raises(ArrowInvalid, match="max_nesting"):
        arrowmm.open(hand_built(10_000, 1, fmt))


# -- fields, custom metadata, metadata size ----------------------------------------------------------

@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_field_count_limit(fmt):
    batch = pa.record_batch({"s": pa.array([{"a": 1, "b": 2}]), "x": pa.array([1])})  # 4 fields
    data = _write([batch], fmt)
    arrowmm.set_limits(max_fields=3)
    _refused(data, fmt, "max_fields")
    arrowmm.set_limits(max_fields=4)
    assert _read_all(data, WAYS[fmt][0])[1] == [batch.to_pylist()]


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("where", ["schema", "field"])
def test_custom_metadata_size_limit(fmt, where):
    meta = {"key": "v" * 997}  # 1,000 bytes of keys and values
    field = pa.field("x", pa.int64(), metadata=meta if where == "field" else None)
    schema = pa.schema([field], metadata=meta if where == "schema" else None)
    data = _write([pa.record_batch({"x": [1, 2]}, schema=schema)], fmt)
    arrowmm.set_limits(max_custom_metadata_size=999)
    _refused(data, fmt, "max_custom_metadata_size")
    arrowmm.set_limits(max_custom_metadata_size=1000)
    schema_read, _ = _read_all(data, WAYS[fmt][0])
    got = schema_read.metadata if where == "schema" else schema_read.field(0).metadata
    assert got == meta


def test_message_custom_metadata_size_limit():
    batch = pa.record_batch({"x": [1, 2]})
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch, custom_metadata={"k": "x" * 499})
    arrowmm.set_limits(max_custom_metadata_size=499)
    _refused(sink.getvalue(), "stream", "max_custom_metadata_size")


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_metadata_size_limit(fmt):
    schema = pa.schema([(f"column_{i}", pa.int64()) for i in range(50)])
    data = _write([], fmt, schema=schema)
    with arrowmm.open(data) as r:  # the schema message is ~2 KiB of flatbuffer
        assert len(r.schema) == 50
    arrowmm.set_limits(max_metadata_size=512)
    _refused(data, fmt, "max_metadata_size")


def test_metadata_length_refused_before_reading_it():
    """A stream claiming 2 GiB of metadata fails at the length prefix, with nothing read after it."""
    class Source:
        def __init__(self):
            self.data = io.BytesIO(b"\xff\xff\xff\xff" + (2**31 - 1).to_bytes(4, "little") + b"\0" * 64)
            self.asked = 0

        def read(self, n=-1):
            out = self.data.read(n)
            self.asked += len(out)
            return out

    src = Source()
    with pytest.raises(ArrowInvalid, match="max_metadata_size"):
        arrowmm.open_stream(src)
    assert src.asked == 8


# -- dictionaries and decompression ------------------------------------------------------------------

def _growing():
    values = ["a"]
    batches = []
    for i in range(4):
        values = values + [f"v{i}"]
        arr = pa.DictionaryArray.from_arrays(pa.array([0, len(values) - 1], pa.int32()), pa.array(values))
        batches.append(pa.record_batch({"d": arr}))
    return batches


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_dictionary_batch_limit(fmt):
    batches = _growing()  # one dictionary batch, then three deltas
    data = _write(batches, fmt, emit_dictionary_deltas=True)
    expected = [b.to_pylist() for b in batches]
    arrowmm.set_limits(max_dictionary_batches=3)
    _refused(data, fmt, "max_dictionary_batches")
    arrowmm.set_limits(max_dictionary_batches=4)
    for way in WAYS[fmt]:
        assert _read_all(data, way)[1] == expected


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_decompressed_size_limit(codec):
    batch = pa.record_batch({"x": pa.array(range(1000), pa.int64())})  # an 8,000-byte buffer
    for fmt in ("file", "stream"):
        data = _write([batch], fmt, compression=codec)
        arrowmm.set_limits(max_decompressed_size=7999)
        _refused(data, fmt, "max_decompressed_size")
        arrowmm.set_limits(max_decompressed_size=8000)
        assert _read_all(data, WAYS[fmt][0])[1] == [batch.to_pylist()]


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_batch_decompressed_size_limit(codec):
    """The buffers of one batch add up, column after column (and through ``batch.columns``,
    which decodes them together): the buffer that goes beyond the limit is refused, naming
    its column, before it is decoded; another batch starts from zero."""
    assert limits.DEFAULTS["max_batch_decompressed_size"] == 16 << 30
    rows = 1 << 17  # 1 MiB of int64 per column, no validity bitmap
    batch = pa.record_batch({f"c{k}": pa.array(np.full(rows, k, np.int64)) for k in range(8)})
    for fmt in ("file", "stream"):
        data = _write([batch], fmt, compression=codec)
        arrowmm.set_limits(max_batch_decompressed_size=5 << 20)
        _refused(data, fmt, "max_batch_decompressed_size")
        reader = arrowmm.open_stream(data)
        ours = next(iter(reader))
        for k in range(5):
            assert ours.column(k).to_pylist() == batch.column(k).to_pylist()
        with pytest.raises(ArrowInvalid, match=r"column 5 \('c5'\): values \(buffer \d+\): "
                                               r"decompressed bytes of the batch, this buffer "
                                               r"included: 6,291,456 is beyond the limit "
                                               r"max_batch_decompressed_size=5,242,880"):
            ours.column(5)
        with pytest.raises(ArrowInvalid, match="max_batch_decompressed_size"):
            ours.columns
        again = arrowmm.open_file(data) if fmt == "file" else None
        if again is not None:  # each batch has a budget of its own
            assert again.get_batch(0).column(7).to_pylist() == batch.column(7).to_pylist()
            assert again.get_batch(0).column(6).to_pylist() == batch.column(6).to_pylist()
        arrowmm.set_limits(max_batch_decompressed_size=8 << 20)
        assert _read_all(data, WAYS[fmt][0])[1] == [batch.to_pylist()]


def test_docstring_examples():
    import doctest
    result = doctest.testmod(limits, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# -- field vectors longer than the field budget: refused by arithmetic ------------------------

def _schema_message(n_top: int, n_children: int = 0) -> bytes:
    """A stream holding one Schema message whose fields vector (``n_children``: the children
    vector of its one struct field) lists the same int64 Field table ``n`` times (legal
    flatbuffers: tables may be shared), then the end-of-stream marker."""
    import flatbuffers
    from arrowmm.format._fbs import Field, Int, Message, Schema

    def repeat(start_vector, table, n):
        start_vector(b, n)
        for _ in range(n):
            b.PrependUOffsetTRelative(table)
        return b.EndVector()

    b = flatbuffers.Builder(8 * (n_top + n_children) + 1024)
    name = b.CreateString("x")
    Int.IntStart(b)
    Int.IntAddBitWidth(b, 64)
    Int.IntAddIsSigned(b, True)
    int64 = Int.IntEnd(b)
    Field.FieldStart(b)
    Field.FieldAddName(b, name)
    Field.FieldAddTypeType(b, 2)  # Int
    Field.FieldAddType(b, int64)
    leaf = Field.FieldEnd(b)
    if n_children:
        kids = repeat(lambda b, n: Field.FieldStartChildrenVector(b, n), leaf, n_children)
        Field.FieldStart(b)
        Field.FieldAddName(b, name)
        Field.FieldAddTypeType(b, 13)  # Struct_ (its type table may be absent)
        Field.FieldAddChildren(b, kids)
        leaf = Field.FieldEnd(b)
    fields = repeat(lambda b, n: Schema.SchemaStartFieldsVector(b, n), leaf, n_top)
    Schema.SchemaStart(b)
    Schema.SchemaAddFields(b, fields)
    schema = Schema.SchemaEnd(b)
    Message.MessageStart(b)
    Message.MessageAddVersion(b, 4)  # V5
    Message.MessageAddHeaderType(b, 1)  # Schema
    Message.MessageAddHeader(b, schema)
    b.Finish(Message.MessageEnd(b))
    meta = bytes(b.Output())
    meta += b"\0" * (-len(meta) % 8)
    return struct.pack("<iI", -1, len(meta)) + meta + struct.pack("<iI", -1, 0)


def test_shared_field_vector_beyond_max_fields_is_refused_before_walking():
    """The issue's message: 4 MiB whose fields vector points 1,048,577 times at one Field table.
    Its length alone is beyond max_fields (1,048,576), so no field is read."""
    data = _schema_message((1 << 20) + 1)
    assert len(data) > 4 << 20
    with pytest.raises(ArrowInvalid, match=r"schema fields: fields in the schema: 1,048,577 is "
                                           r"beyond the limit max_fields=1,048,576"):
        arrowmm.open_stream(data)


def test_children_vector_beyond_the_remaining_budget_is_refused():
    """A struct whose children vector is longer than what is left of max_fields (the field
    itself counted), and one whose fields fit max_fields but not the metadata's bytes."""
    with limits.override(max_fields=1000):
        with pytest.raises(ArrowInvalid, match=r"schema field 0 \('x'\) children: fields in the "
                                               r"schema: 1,001 is beyond the limit max_fields"):
            arrowmm.open_stream(_schema_message(1, 1000))
        arrowmm.open_stream(_schema_message(1, 999))  # (999 + 1 fields: within the limit)
    # 40 top-level fields share one struct of 400 children: 16,040 fields in ~2 KiB of vectors
    with pytest.raises(ArrowInvalid, match=r"more fields than its \d+-byte metadata can hold"):
        arrowmm.open_stream(_schema_message(40, 400))
