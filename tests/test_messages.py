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
