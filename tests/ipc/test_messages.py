"""The message-level API against pyarrow's: read_message, read_schema, read_record_batch,
Schema.serialize, RecordBatch.serialize and MessageReader, each reading what the other
library wrote, zero-copy over the input buffer."""
import io

import numpy as np
import pyarrow as pa
import pyarrow.ipc
import pytest

import arrowmm


def _pa_batch():
    return pa.record_batch({
        "x": pa.array([1, 2, None], pa.int64()),
        "s": ["a", None, "ccc"],
        "l": [[1.5], [], None],
        "d": pa.array(["p", "q", "p"]).dictionary_encode(),
    })


def _pa_stream(batch, n=2):
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, batch.schema) as w:
        for _ in range(n):
            w.write_batch(batch)
    return sink.getvalue()


def test_read_message_matches_pyarrows_message():
    batch = _pa_batch().select(["x", "s", "l"])
    buf = batch.serialize().to_pybytes()
    ours, theirs = arrowmm.read_message(buf), pa.ipc.read_message(buf)
    assert ours.type == theirs.type == "record batch"
    assert ours.metadata_version == theirs.metadata_version == pa.ipc.MetadataVersion.V5
    assert ours.metadata_version.name == theirs.metadata_version.name == "V5"
    assert ours.body.to_bytes() == theirs.body.to_pybytes()
    assert ours.metadata.to_bytes()[:theirs.metadata.size] == theirs.metadata.to_pybytes()
    assert ours.serialize() == theirs.serialize().to_pybytes() == buf
    assert ours.header.length == 3


def test_read_message_is_zero_copy():
    batch = pa.record_batch({"x": np.arange(1000, dtype=np.int64)})
    buf = np.frombuffer(batch.serialize(), dtype=np.uint8).copy()
    msg = arrowmm.read_message(buf)
    col = arrowmm.read_record_batch(msg, arrowmm.schema([("x", arrowmm.int64())]))["x"]
    view = col.to_numpy()
    start = buf.ctypes.data
    assert start <= view.ctypes.data < start + buf.size  # the values are the buffer's bytes
    assert view.tolist() == list(range(1000))


def test_read_schema_reads_pyarrows_and_pyarrow_reads_ours():
    schema = _pa_batch().schema
    ours = arrowmm.read_schema(schema.serialize().to_pybytes())
    assert ours.names == schema.names
    assert [str(ty) for ty in ours.types] == [str(ty) for ty in schema.types]
    back = pa.ipc.read_schema(pa.py_buffer(ours.serialize()))
    assert back.equals(schema)
    assert arrowmm.read_schema(io.BytesIO(ours.serialize())) == ours  # from a file object too


def test_read_record_batch_reads_pyarrows_serialize():
    batch = _pa_batch().select(["x", "s", "l"])
    schema = arrowmm.read_schema(batch.schema.serialize().to_pybytes())
    got = arrowmm.read_record_batch(batch.serialize().to_pybytes(), schema)
    assert got == batch
    assert got.to_pylist() == batch.to_pylist()


def test_pyarrow_reads_our_serialize():
    mine = arrowmm.record_batch({"x": [1, 2, None], "s": ["a", None, "ccc"],
                                 "l": [[1.5], [], None]})
    buf = mine.serialize()
    theirs = pa.ipc.read_record_batch(pa.py_buffer(buf), pa.ipc.read_schema(
        pa.py_buffer(mine.schema.serialize())))
    assert theirs.to_pylist() == mine.to_pylist()
    assert theirs.equals(pa.record_batch(mine))
    # the same body bytes pyarrow writes for the same batch, and the same length overall
    pa_buf = pa.record_batch(mine).serialize().to_pybytes()
    assert len(buf) == len(pa_buf)
    assert arrowmm.read_message(buf).body.to_bytes() == pa.ipc.read_message(pa_buf).body.to_pybytes()


def test_dictionaries_from_messages_or_arrays():
    batch = _pa_batch()
    messages = list(arrowmm.MessageReader.open_stream(_pa_stream(batch, n=1)))
    assert [m.type for m in messages] == ["schema", "dictionary", "record batch"]
    schema = arrowmm.read_schema(messages[0])
    got = arrowmm.read_record_batch(messages[2], schema, dictionaries=[messages[1]])
    assert got.to_pylist() == batch.to_pylist()
    given = arrowmm.read_record_batch(messages[2], schema, dictionaries={0: pa.array(["p", "q"])})
    assert given.to_pylist() == batch.to_pylist()
    with pytest.raises(arrowmm.ArrowInvalid, match="dictionary 0"):
        arrowmm.read_record_batch(messages[2], schema).to_pylist()
    with pytest.raises(arrowmm.ArrowInvalid, match="int64"):
        arrowmm.read_record_batch(messages[2], schema, dictionaries={0: pa.array([1, 2])})


@pytest.mark.parametrize("as_file", [False, True], ids=["buffer", "file-object"])
def test_message_reader_matches_pyarrow(as_file):
    data = _pa_stream(_pa_batch())
    source = io.BytesIO(data) if as_file else data
    ours = list(arrowmm.MessageReader.open_stream(source))
    theirs = list(pa.ipc.MessageReader.open_stream(pa.py_buffer(data)))
    assert [m.type for m in ours] == [m.type for m in theirs]
    for a, b in zip(ours, theirs):
        assert a.body.to_bytes() == b.body.to_pybytes()
        assert a.serialize() == b.serialize().to_pybytes()
    reader = arrowmm.MessageReader.open_stream(data)
    for _ in theirs:
        reader.read_next_message()
    with pytest.raises(StopIteration):
        reader.read_next_message()


def test_refusals_name_what_was_wrong():
    batch = _pa_batch().select(["x"])
    with pytest.raises(arrowmm.ArrowInvalid, match="schema message"):
        arrowmm.read_schema(batch.serialize().to_pybytes())
    with pytest.raises(arrowmm.ArrowInvalid, match="record batch message"):
        arrowmm.read_record_batch(batch.schema.serialize().to_pybytes(),
                                  arrowmm.schema([("x", arrowmm.int64())]))
    with pytest.raises(arrowmm.ArrowInvalid, match="end-of-stream"):
        arrowmm.read_message(b"\xff\xff\xff\xff\x00\x00\x00\x00")
    with pytest.raises(arrowmm.ArrowInvalid, match="empty"):
        arrowmm.read_message(b"")
    cut = batch.serialize().to_pybytes()[:-8]
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.read_message(cut)
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.read_message(io.BytesIO(cut))
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.read_message(b"\xff\xff\xff\xff\x10\x00\x00\x00" + b"\x07" * 16)


# -- the same bytes as pyarrow's --------------------------------------------------------------

def _ours(pa_schema):
    return arrowmm.read_schema(pa_schema.serialize())


SCHEMAS = {
    "plain": pa.schema([("x", pa.int64()), ("s", pa.string()), ("b", pa.bool_())]),
    "metadata": pa.schema([pa.field("x", pa.int64(), False, {"unit": "m", "empty": ""})],
                          metadata={"k": "v", "kk": "vv"}),
    "temporal": pa.schema([("ts", pa.timestamp("us", "UTC")), ("t", pa.time32("ms")),
                           ("t64", pa.time64("ns")), ("d", pa.date64()), ("du", pa.duration("s")),
                           ("i", pa.month_day_nano_interval())]),
    "decimals": pa.schema([("d", pa.decimal128(10, 2)), ("d256", pa.decimal256(40, 5)),
                           ("f16", pa.float16()), ("fsb", pa.binary(7))]),
    "nested": pa.schema([("l", pa.list_(pa.int32())), ("ll", pa.large_list(pa.string())),
                         ("st", pa.struct([("a", pa.int8()), pa.field("b", pa.utf8(), False)])),
                         ("m", pa.map_(pa.string(), pa.int64(), keys_sorted=True)),
                         ("fl", pa.list_(pa.float32(), 3))]),
    "unions": pa.schema([("du", pa.dense_union([pa.field("a", pa.int8()), pa.field("b", pa.string())])),
                         ("su", pa.sparse_union([pa.field("c", pa.int64())], [5]))]),
    "dictionaries": pa.schema([("d", pa.dictionary(pa.int32(), pa.string())),
                               ("o", pa.dictionary(pa.int8(), pa.int64(), ordered=True)),
                               ("ld", pa.list_(pa.dictionary(pa.int16(), pa.string())))]),
    "extensions": pa.schema([("u", pa.uuid()), pa.field("j", pa.json_(), metadata={"z": "1"}),
                             ("b8", pa.bool8()),
                             ("t", pa.fixed_shape_tensor(pa.float32(), [2, 2], permutation=[1, 0]))]),
    "views and runs": pa.schema([("v", pa.string_view()), ("bv", pa.binary_view()),
                                 ("lv", pa.list_view(pa.int8())),
                                 ("r", pa.run_end_encoded(pa.int32(), pa.string()))]),
    "empty": pa.schema([]),
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_serialize_is_pyarrows_byte_for_byte(name):
    theirs = SCHEMAS[name]
    ours = _ours(theirs)
    assert ours.serialize() == theirs.serialize().to_pybytes()
    # (built from arrowmm's own types too, not only read back)
    rebuilt = arrowmm.schema(list(ours), metadata=ours.metadata)
    assert rebuilt.serialize() == theirs.serialize().to_pybytes()


BATCHES = {
    "ints": lambda: pa.record_batch({"x": [1, 2, 3]}),
    "nulls and strings": lambda: pa.record_batch({"x": [1, None, 3], "s": ["a", None, "ccc"]}),
    "nested": lambda: pa.record_batch({"l": [[1], None, [2, 3]], "st": [{"a": 1}, None, {"a": 2}]}),
    "bools": lambda: pa.record_batch({"b": [True, False, None]}),
    "long": lambda: pa.record_batch({"x": np.arange(1000), "f": np.linspace(0, 1, 1000)}),
    "schema metadata": lambda: pa.record_batch({"x": [1, 2]}, metadata={"k": "v"}),
    "uuid": lambda: pa.record_batch({"u": pa.ExtensionArray.from_storage(
        pa.uuid(), pa.array([b"0" * 16, None], pa.binary(16)))}),
    "views": lambda: pa.record_batch({"v": pa.array(["a", "b" * 40, None], pa.string_view())}),
    "sliced": lambda: pa.record_batch({"x": [1, 2, 3, 4], "s": list("ab") + [None, "d"]}).slice(2, 2),
    "no rows": lambda: pa.record_batch({"e": pa.array([], pa.int32())}),
    "dictionary indices": lambda: pa.record_batch({"d": pa.array(["p", "q", "p"]).dictionary_encode()}),
}


@pytest.mark.parametrize("name", sorted(BATCHES))
def test_batch_serialize_is_pyarrows_byte_for_byte(name):
    theirs = BATCHES[name]()
    ours = arrowmm.record_batch(theirs)
    assert ours.serialize() == theirs.serialize().to_pybytes()  # metadata, padding and body


@pytest.mark.parametrize("name", ["ints", "nulls and strings", "nested", "dictionary indices"])
@pytest.mark.parametrize("kind", ["stream", "file"])
def test_writer_output_is_pyarrows_with_pyarrows_options(name, kind):
    """With pyarrow's 8-byte alignment (arrowmm's default is 64) and, for streams, no
    DICTIONARY_REPLACEMENT feature, the whole stream or file is pyarrow's, footer included."""
    theirs = BATCHES[name]()
    sink = io.BytesIO()
    with (pa.ipc.new_stream if kind == "stream" else pa.ipc.new_file)(sink, theirs.schema) as w:
        w.write_batch(theirs)
        w.write_batch(theirs)
    ours = arrowmm.record_batch(theirs)
    mine = io.BytesIO()
    opts = {"alignment": 8}
    if kind == "stream":
        opts["allow_dictionary_replacement"] = False
    with (arrowmm.new_stream if kind == "stream" else arrowmm.new_file)(mine, ours.schema, **opts) as w:
        w.write(ours)
        w.write(ours)
    assert mine.getvalue() == sink.getvalue()


def test_sliced_strings_differ_only_in_bytes_past_the_slice():
    """Documented difference: for a sliced variable-length column Arrow C++ writes the slice's
    values padded to 8 bytes *from the parent's data*, as far as it goes (here ``"bcd"``:
    ``"d"`` lies outside the slice) and says so in the Buffer's length, arrowmm the slice's
    own bytes then zeros.  (A slice that ends where the parent's values end is the same
    bytes: the "sliced" case above.)  Same message length, same values read."""
    theirs = pa.record_batch({"s": list("abcd")}).slice(1, 2)
    mine = arrowmm.record_batch(theirs).serialize()
    want = theirs.serialize().to_pybytes()
    assert len(mine) == len(want) and mine != want
    at = want.index(b"bcd")
    differ = [i for i in range(len(want)) if mine[i] != want[i]]
    assert differ[-1] == at + 2 and len(differ) == 2  # the "d", and the buffer length 3 vs 2
    assert want[differ[0]] == 3 and mine[differ[0]] == 2
    assert pa.ipc.read_record_batch(mine, theirs.schema).equals(theirs)
