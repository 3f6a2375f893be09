"""What open_file, open_stream and open accept, and the errors a newcomer meets with them.

Sources as pyarrow takes them (paths, buffers, ``io.BytesIO``, binary file objects); paths
that cannot be opened raise the conventional ``OSError`` subclass; bytes that are not Arrow
IPC raise ``ArrowInvalid`` saying what they look like and, for the other IPC format, which
opener to use.
"""
import gzip
import io
import mmap
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.feather
import pyarrow.parquet
import pytest

import arrowmm

ROOT = pathlib.Path(__file__).resolve().parents[2]
OPENERS = {"open_file": arrowmm.open_file, "open_stream": arrowmm.open_stream, "open": arrowmm.open}
SCHEMA = arrowmm.schema([("x", arrowmm.int64()), ("s", arrowmm.string())])
VALUES = {"x": [1, 2, 3], "s": ["a", None, "c"]}


@pytest.fixture
def files(tmp_path):
    file_path, stream_path = tmp_path / "t.arrow", tmp_path / "t.arrows"
    with arrowmm.new_file(file_path, SCHEMA) as w:
        w.write(VALUES)
    with arrowmm.new_stream(stream_path, SCHEMA) as w:
        w.write(VALUES)
    return file_path, stream_path


def _values(reader):
    with reader:
        return [b.to_pydict() for b in reader]


class _ReadOnly:
    """A binary file object that can only ``read`` (a pipe, a socket file)."""

    def __init__(self, data: bytes):
        self._f = io.BytesIO(data)

    def read(self, n=-1):
        return self._f.read(n)


def _sources(path: pathlib.Path):
    data = path.read_bytes()
    f = open(path, "rb")
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return {"str": str(path), "PathLike": path, "bytes": data, "bytearray": bytearray(data),
            "memoryview": memoryview(data), "numpy": np.frombuffer(data, np.uint8), "mmap": m,
            "BytesIO": io.BytesIO(data), "file object": f,
            "unseekable-free gzip file": gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(data)))}


@pytest.mark.parametrize("opener", sorted(OPENERS))
@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_every_source_kind_reads(opener, fmt, files):
    """Each opener reads each kind of source holding each format (open_file: files only; an
    IPC file reads as a stream too)."""
    if opener == "open_file" and fmt == "stream":
        return  # covered by test_stream_opened_as_file_names_the_opener
    path = files[0] if fmt == "file" else files[1]
    for kind, source in _sources(path).items():
        assert _values(OPENERS[opener](source)) == [VALUES], (kind, opener, fmt)


@pytest.mark.parametrize("opener", ["open_stream", "open"])
@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_read_only_file_objects(opener, fmt, files):
    path = files[0] if fmt == "file" else files[1]
    assert _values(OPENERS[opener](_ReadOnly(path.read_bytes()))) == [VALUES]


def test_open_file_needs_a_seekable_object(files):
    with pytest.raises(arrowmm.ArrowInvalid, match="cannot seek: read it with open_stream"):
        arrowmm.open_file(_ReadOnly(files[0].read_bytes()))


def test_bytesio_is_read_without_a_copy(files):
    """The reader's memory is the BytesIO's own bytes, and the BytesIO stays writable."""
    bio = io.BytesIO(files[0].read_bytes())
    reader = arrowmm.open_file(bio)
    x = reader.get_batch(0).column("x").to_numpy()
    value = np.frombuffer(bio.getvalue(), np.uint8)
    assert value.ctypes.data <= x.ctypes.data < value.ctypes.data + len(value)
    bio.write(b"more")  # copy on write: the reader's bytes are untouched
    assert x.tolist() == [1, 2, 3]


def test_bytesio_stream_reads_from_its_position(files):
    data = files[1].read_bytes()
    bio = io.BytesIO(b"junk" + data)
    bio.seek(4)
    assert _values(arrowmm.open_stream(bio)) == [VALUES]


def test_regular_file_object_is_mapped(files):
    with open(files[0], "rb") as f:
        reader = arrowmm.open_file(f)
        assert reader.memory()["resident"] is not None  # a mapping, whose pages the kernel counts


@pytest.mark.parametrize("opener", sorted(OPENERS))
def test_text_mode_file_object(opener, files):
    with open(files[1], "r", encoding="latin-1") as f:
        if opener == "open_file":  # a regular file: mapped, whatever the mode
            assert _values(arrowmm.open_file(open(files[0], "r"))) == [VALUES]
            return
        with pytest.raises(arrowmm.ArrowInvalid, match="text mode; open it with mode 'rb'"):
            OPENERS[opener](f)


# -- paths ---------------------------------------------------------------------------------
@pytest.mark.parametrize("opener", sorted(OPENERS))
def test_missing_path_and_folder(opener, tmp_path):
    missing = tmp_path / "missing.arrow"
    with pytest.raises(FileNotFoundError) as info:
        OPENERS[opener](missing)
    assert info.value.filename == str(missing)
    with pytest.raises(IsADirectoryError) as info:
        OPENERS[opener](str(tmp_path))
    assert info.value.filename == str(tmp_path)


_PERMISSION_CHECK = """
import sys
import arrowmm
for name in ("open_file", "open_stream", "open"):
    try:
        getattr(arrowmm, name)(sys.argv[1])
    except PermissionError as exc:
        assert exc.filename == sys.argv[1], exc.filename
        print(name, "PermissionError")
    except BaseException as exc:
        print(name, type(exc).__name__, exc)
"""


def _drop_file_capabilities():
    """In the child, before exec: drop CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2) from
    the bounding set, so that root too is refused a file whose mode allows nothing."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


@pytest.mark.parametrize("fmt", [0, 1])
def test_unreadable_path_is_permission_error(fmt, files):
    """A file its reader may not read raises PermissionError from every opener.  Root reads
    everything, so as root the check runs in a child without the capabilities that allow it."""
    path = files[fmt]
    path.chmod(0)
    cmd = [sys.executable, "-c", _PERMISSION_CHECK, str(path)]
    kwargs = {}
    if os.geteuid() == 0:
        kwargs["preexec_fn"] = _drop_file_capabilities
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=120,
                          **kwargs)
    assert proc.stdout.split("\n")[:3] == [f"{n} PermissionError" for n in OPENERS], proc.stdout + proc.stderr


# -- not Arrow IPC -------------------------------------------------------------------------
def _parquet() -> bytes:
    sink = io.BytesIO()
    pyarrow.parquet.write_table(pa.table({"x": [1, 2, 3]}), sink)
    return sink.getvalue()


def _feather_v1(tmp_path) -> bytes:
    path = tmp_path / "v1.feather"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # pyarrow 25 deprecates writing V1
        pyarrow.feather.write_feather(pa.table({"x": [1, 2, 3]}), path, version=1)
    return path.read_bytes()


NOT_ARROW = {
    "parquet": (lambda tmp: _parquet(), "Parquet file (it starts with 'PAR1')"),
    "feather v1": (_feather_v1, "Feather V1 file (it starts with 'FEA1')"),
    "csv": (lambda tmp: b"id,name,value\n1,a,2.5\n2,b,3.5\n", "CSV or other delimited text (first line 'id,name,value')"),
    "text": (lambda tmp: b"hello there\n", "text (it starts with 'hello there')"),
    "json": (lambda tmp: b'{"schema": {"fields": []}}', "JSON text"),
    "gzip": (lambda tmp: gzip.compress(b"\xff" * 100), "gzip-compressed data: decompress it first"),
    "empty": (lambda tmp: b"", "empty (0 bytes)"),
}


@pytest.mark.parametrize("opener", sorted(OPENERS))
@pytest.mark.parametrize("kind", sorted(NOT_ARROW))
def test_not_arrow_says_what_it_looks_like(kind, opener, tmp_path):
    make, says = NOT_ARROW[kind]
    data = make(tmp_path)
    path = tmp_path / f"input.{kind.replace(' ', '')}"
    path.write_bytes(data)
    for source, name in ((path, str(path)), (data, "buffer"), (io.BytesIO(data), "BytesIO"),
                         (_ReadOnly(data), "_ReadOnly")):
        if opener == "open_file" and isinstance(source, _ReadOnly):
            continue  # needs random access: test_open_file_needs_a_seekable_object
        if opener != "open_stream" and kind == "feather v1":  # open_file and open read them
            assert OPENERS[opener](source).get_batch(0).to_pydict() == {"x": [1, 2, 3]}
            continue
        with pytest.raises(arrowmm.ArrowInvalid) as info:
            OPENERS[opener](source)
        message = str(info.value)
        assert message.startswith(f"{name}: "), message
        # a pipe is not read past the 8 bytes framing needs: its preview is shorter
        assert (says.split(" (first line")[0].split(" (it starts")[0] if name == "_ReadOnly"
                else says) in message, message
        assert "max_metadata_size" not in message and "runs past the end" not in message, message


@pytest.mark.parametrize("read", ["mapped", "mmap=False", "file object"])
@pytest.mark.parametrize("content", ["zeros", "cut"])
def test_stream_errors_name_the_source_however_it_is_read(read, content, tmp_path):
    """A stream read from a file object gave the decoder's errors naming nothing, and for
    input starting with an end-of-stream marker "4 byte(s) after the end-of-stream marker"
    where the mapped reader says "empty stream" (review 8: 6)."""
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, pa.schema([("x", pa.int64())])) as w:
        w.write_table(pa.table({"x": [1, 2, 3]}))
    path = tmp_path / "x.arrows"
    path.write_bytes(b"\0" * 64 if content == "zeros" else sink.getvalue()[:-30])
    with open(path, "rb") as f:
        source = {"mapped": str(path), "mmap=False": str(path), "file object": f}[read]
        with pytest.raises(arrowmm.ArrowInvalid) as info:
            with arrowmm.open_stream(source, mmap=read == "mapped") as r:
                r.read_all()
    assert str(path) in str(info.value)
    if content == "zeros":
        assert str(info.value) == f"{path}: empty stream, expected a schema message"


def test_stream_opened_as_file_names_the_opener(files):
    for source in (files[1], files[1].read_bytes(), io.BytesIO(files[1].read_bytes())):
        with pytest.raises(arrowmm.ArrowInvalid, match=r"is an Arrow IPC stream, not a file .*"
                                                       r"open it with arrowmm.open_stream\(\) or arrowmm.open\(\)"):
            arrowmm.open_file(source)


def test_file_opened_as_stream_reads_the_stream_inside(files):
    """The reverse needs no other opener: an IPC file holds a stream, and every source kind
    reads it (a file object used to fail with advice to raise max_metadata_size)."""
    data = files[0].read_bytes()
    for source in (files[0], data, io.BytesIO(data), _ReadOnly(data)):
        assert _values(arrowmm.open_stream(source)) == [VALUES]


# -- writing into a missing folder ---------------------------------------------------------
@pytest.mark.parametrize("new", [arrowmm.new_file, arrowmm.new_stream])
def test_writing_into_a_missing_folder_names_the_folder(new, tmp_path):
    folder = tmp_path / "no" / "such"
    with pytest.raises(FileNotFoundError) as info:
        new(folder / "out.arrow", SCHEMA)
    assert info.value.filename in (str(folder), str(folder / "out.arrow"))
    assert "arrowmm-tmp" not in str(info.value)
    with pytest.raises(IsADirectoryError):
        new(tmp_path, SCHEMA)
    assert sorted(tmp_path.iterdir()) == []


# -- named pipes ---------------------------------------------------------------------------
@pytest.mark.parametrize("opener", sorted(OPENERS))
@pytest.mark.parametrize("fmt", [0, 1])
def test_a_named_pipe_path_is_read_not_mapped(opener, fmt, files, tmp_path):
    """A FIFO (or /dev/stdin on a pipe) has no size to map: its path is read like a file
    object (open_file reads it whole: the file format needs random access)."""
    import threading
    if opener == "open_file" and fmt == 1:
        return
    data = files[fmt].read_bytes()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        assert _values(OPENERS[opener](str(fifo))) == [VALUES]
    finally:
        writer.join(30)


@pytest.mark.parametrize("kind", sorted(set(NOT_ARROW) - {"feather v1"}))
def test_open_without_mapping_words_not_arrow_as_the_mapped_open(kind, tmp_path):
    """``open(path, mmap=False)`` said 'not an Arrow IPC stream' where the mapped ``open`` says
    'file or stream': either would have been read."""
    make, says = NOT_ARROW[kind]
    path = tmp_path / f"input.{kind}"
    path.write_bytes(make(tmp_path))
    messages = []
    for mapped in (True, False):
        with pytest.raises(arrowmm.ArrowInvalid) as info:
            arrowmm.open(path, mmap=mapped)
        messages.append(str(info.value))
    assert messages[1] == messages[0], messages
    assert messages[1].startswith(f"{path}: not an Arrow IPC file or stream: ") and says in messages[1]
