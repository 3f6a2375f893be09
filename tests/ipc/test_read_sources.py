"""Sources that tell the readers something beyond their bytes (a position, a descriptor its
owner closes, a ``read()`` that returns None or more than asked), read the same way by
``open``, ``open_file`` and ``open_stream`` (review 24)."""
import gzip
import io
import os
import threading

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import arrowmm
from arrowmm.ipc.read.unmapped import UnmappedIndexedStreamReader
from tests.support.helpers import fed_pipe


def _stream(first: int, batches: int = 3) -> bytes:
    schema = pa.schema([("x", pa.int64())])
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, schema) as w:
        for k in range(batches):
            w.write_batch(pa.record_batch([pa.array([first + k])], schema=schema))
    return sink.getvalue().to_pybytes()


def _file(first: int) -> bytes:
    sink = pa.BufferOutputStream()
    table = pa.table({"x": pa.array([first, first + 1], pa.int64())})
    with ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def _xs(reader) -> list:
    with reader:
        return [x for b in reader for x in b.column("x").to_pylist()]


@pytest.mark.parametrize("second", [_stream, _file], ids=["stream", "file"])
def test_open_reads_a_bytesio_from_its_position(second):
    """``open(BytesIO)`` reads from the position, as ``open_stream`` does: it read the value
    from byte 0, another stream's rows (review 24: F1)."""
    first = _stream(1)
    bio = io.BytesIO(first + second(100))
    bio.seek(len(first))
    assert _xs(arrowmm.open(bio)) == ([100, 101] if second is _file else [100, 101, 102])


def test_open_of_a_bytesio_left_at_its_end_is_empty():
    bio = io.BytesIO()
    bio.write(_stream(1))  # (no seek(0): nothing is left to read, as open_stream says)
    with pytest.raises(arrowmm.ArrowInvalid, match="empty"):
        arrowmm.open_stream(bio)
    with pytest.raises(arrowmm.ArrowInvalid, match="empty"):
        arrowmm.open(bio)


def _big_stream(first: int) -> bytes:
    """10 batches of 160 KB (more than a pipe buffers): batch k holds ``first + k``."""
    schema = pa.schema([("x", pa.int64())])
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, schema) as w:
        for k in range(10):
            w.write_batch(pa.record_batch([pa.array(np.full(20_000, first + k))], schema=schema))
    return sink.getvalue().to_pybytes()


def test_a_pipe_closed_by_its_owner_is_read_on_not_another_file(tmp_path):
    """The reader reads a duplicate of the pipe's descriptor: the owner closing the file
    object and another file taking its number (the lowest free one goes to the next
    ``open()``) changes nothing.  It read that other file as the rest of the stream
    (review 24: F4)."""
    other = tmp_path / "other.bin"
    schema_bytes = len(_stream(0, batches=0)) - 8  # (the schema message, without the EOS)
    other.write_bytes(_big_stream(900)[schema_bytes:])  # (another stream's batches)
    f = fed_pipe(_big_stream(100))
    reader = arrowmm.open_stream(f)
    assert reader.read_next_batch().column("x")[0] == 100
    fd = f.fileno()
    f.close()
    g = os.open(other, os.O_RDONLY)
    try:
        if g != fd:
            os.dup2(g, fd)
        with reader:
            assert [b.column("x")[0] for b in reader] == list(range(101, 110))
    finally:
        os.close(g)
        if g != fd:
            os.close(fd)



class _NoneAt:
    """A file object whose ``read`` (and ``readinto``) returns None once, at call ``at``: a
    non-blocking file with no bytes ready, not at its end."""

    def __init__(self, data: bytes, at: int):
        self._f, self._calls, self._at = io.BytesIO(data), 0, at

    def _none_now(self) -> bool:
        self._calls += 1
        return self._calls == self._at

    def read(self, n=-1):
        return None if self._none_now() else self._f.read(n)

    def readinto(self, buf):
        return None if self._none_now() else self._f.readinto(buf)


@pytest.mark.parametrize("at", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("fmt", ["stream", "file"])
def test_read_returning_none_is_not_the_end(at, fmt):
    """None from ``read()`` means no bytes now (Python's io contract): it ended the stream
    quietly, a 3-batch stream reading as fewer batches (review 24: F5)."""
    data = _stream(1) if fmt == "stream" else _file(1)
    with pytest.raises(arrowmm.ArrowInvalid, match=r"returned None"):
        _xs(arrowmm.open_stream(_NoneAt(data, at)))


def test_an_unnamed_gzip_file_object_is_named_by_its_type():
    """``GzipFile(fileobj=...)`` has the name "": errors began ": does not end..." (review 24:
    F9)."""
    gz = gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(_file(1)[:100])))
    with pytest.raises(arrowmm.ArrowInvalid, match="^GzipFile: "):
        arrowmm.open_file(gz)


@pytest.mark.parametrize("kind", ["file object", "pipe", "FIFO path"])
def test_open_of_a_damaged_file_names_its_source(tmp_path, kind):
    """``open`` named such a file "buffer": a pipe's bytes were opened without a name, and
    the error of a mapped file was taken for a failed mapping, the file then read whole into
    memory and opened again (review 24: F9)."""
    data = _file(1)[:-20]  # (its trailer cut)
    path = tmp_path / "cut.arrow"
    path.write_bytes(data)
    if kind == "file object":
        source, name = open(path, "rb"), str(path)
    elif kind == "pipe":
        source, name = fed_pipe(data), "BufferedReader"  # (os.fdopen's name is a number)
    else:
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)

        def feed():
            with open(fifo, "wb") as f:
                f.write(data)
        threading.Thread(target=feed, daemon=True).start()
        source = name = str(fifo)
    with pytest.raises(arrowmm.ArrowInvalid, match="does not end with the Arrow file magic") as err:
        arrowmm.open(source)
    assert str(err.value).startswith(f"{name}: ")


class _MoreThanAsked:
    """A file object whose ``read(n)`` returns up to 5 bytes more than ``n``."""

    def __init__(self, data: bytes):
        self._f = io.BytesIO(data)

    def read(self, n=-1):
        return self._f.read() if n is None or n < 0 else self._f.read(n + 5)


@pytest.mark.parametrize("opener", ["open_stream", "open"])
@pytest.mark.parametrize("fmt", ["stream", "file"])
def test_a_read_returning_more_than_asked_loses_nothing(opener, fmt):
    """The bytes past the 8 asked for at the start of an IPC file were dropped, the stream
    misframed: "stream truncated inside message 0" (review 24: F10)."""
    data = _stream(1) if fmt == "stream" else _file(1)
    expected = [1, 2, 3] if fmt == "stream" else [1, 2]
    assert _xs(getattr(arrowmm, opener)(_MoreThanAsked(data))) == expected


class _RawNoFileno(io.RawIOBase):
    """A seekable raw file without ``fileno()`` (as an fsspec file): read by byte ranges."""

    def __init__(self, data: bytes):
        self._f = io.BytesIO(data)

    def readable(self):
        return True

    def seekable(self):
        return True

    def readinto(self, buf):
        return self._f.readinto(buf)

    def seek(self, *args):
        return self._f.seek(*args)

    def tell(self):
        return self._f.tell()


def _damaged_batch(data: bytes, k: int) -> tuple:
    """``data`` (an IPC file) with record batch ``k``'s metadata length made negative, and the
    byte its message starts at."""
    at = int(arrowmm.open_file(data)._blocks[k][0])
    damaged = bytearray(data)
    damaged[at + 7] = 0xFF  # (the last byte of the length after the continuation marker)
    return bytes(damaged), at


@pytest.mark.parametrize("kind", ["pipe", "ranged", "gzip", "mmap=False", "file object"])
def test_errors_of_an_ipc_file_read_as_stream_name_the_true_byte(tmp_path, kind):
    """The decoder of an IPC file's stream counts from byte 8, after the magic: errors named
    offsets 8 too low from a pipe, a ranged file object, gzip or mmap=False (review 24: F7)."""
    sink = pa.BufferOutputStream()
    table = pa.table({"x": pa.array(range(9), pa.int64())})
    with ipc.new_file(sink, table.schema) as w:
        for b in table.to_batches(max_chunksize=3):
            w.write_batch(b)
    data, at = _damaged_batch(sink.getvalue().to_pybytes(), 1)
    path = tmp_path / "damaged.arrow"
    path.write_bytes(data)
    sources = {"pipe": lambda: fed_pipe(data), "ranged": lambda: io.BufferedReader(_RawNoFileno(data)),
               "gzip": lambda: gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(data))),
               "file object": lambda: open(path, "rb")}
    with pytest.raises(arrowmm.ArrowInvalid, match=rf"message 2 at byte {at}\b"):
        _xs(arrowmm.open_stream(data))  # (the mapped reader: the reference)
    with pytest.raises(arrowmm.ArrowInvalid, match=rf"message 2 at byte {at}\b"):
        if kind == "mmap=False":
            _xs(arrowmm.open_stream(path, mmap=False))
        else:
            _xs(arrowmm.open_stream(sources[kind]()))


def test_errors_in_an_appended_generation_name_its_true_byte_and_index(tmp_path):
    path = tmp_path / "appended.arrow"
    schema = arrowmm.schema([("x", arrowmm.int64())])
    with arrowmm.new_file(path, schema) as w:
        w.write({"x": [0, 1]})
    with arrowmm.append_file(path) as w:
        w.write({"x": [2, 3]})
        w.write({"x": [4, 5]})
    data, at = _damaged_batch(path.read_bytes(), 2)  # (in the second generation)
    path.write_bytes(data)
    with pytest.raises(arrowmm.ArrowInvalid, match=rf"message 3 at byte {at}\b"):
        _xs(arrowmm.open_stream(str(path)))
    with pytest.raises(arrowmm.ArrowInvalid, match=rf"message 3 at byte {at}\b"):
        _xs(arrowmm.open_stream(open(path, "rb")))


def _file_without_eos() -> bytes:
    """An IPC file whose messages run straight into its footer, no end-of-stream marker (other
    writers leave it out; pyarrow's open_file reads it)."""
    data = _file(1)
    footer = len(data) - 10 - int.from_bytes(data[-10:-6], "little")
    assert data[footer - 8:footer] == b"\xff\xff\xff\xff\x00\x00\x00\x00"
    return data[:footer - 8] + data[footer:]


@pytest.mark.parametrize("kind", ["file object", "ranged", "mmap=False", "index_stream",
                                  "unmapped index", "pipe", "gzip"])
def test_an_ipc_file_without_end_of_stream_marker_reads_from_every_source(tmp_path, kind):
    """Its stream ends at the footer, as the mapped reader finds it (a pipe reads on to the
    end to tell): the readers of a file object decoded the footer as a message and raised
    "damaged metadata" (review 24: F6)."""
    data = _file_without_eos()
    path = tmp_path / "noeos.arrow"
    path.write_bytes(data)
    assert _xs(arrowmm.open_stream(data)) == [1, 2]  # (the mapped reader: the reference)
    readers = {"file object": lambda: arrowmm.open_stream(open(path, "rb")),
               "ranged": lambda: arrowmm.open_stream(io.BufferedReader(_RawNoFileno(data))),
               "mmap=False": lambda: arrowmm.open_stream(path, mmap=False),
               "index_stream": lambda: arrowmm.index_stream(str(path)),
               "unmapped index": lambda: UnmappedIndexedStreamReader(str(path)),
               "pipe": lambda: arrowmm.open_stream(fed_pipe(data)),
               "gzip": lambda: arrowmm.open_stream(
                   gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(data))))}
    assert _xs(readers[kind]()) == [1, 2]
    if kind == "pipe":  # (its footer is found by reading to the end: anything else is damage)
        for damaged in (data[:-3], data + b"more"):
            with pytest.raises(arrowmm.ArrowInvalid):
                _xs(arrowmm.open_stream(fed_pipe(damaged)))

