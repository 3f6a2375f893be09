"""Writes that never lose, corrupt or expose data (issue 14, items 1-4).

* dictionaries by id: fields sharing a dictionary id get one dictionary (equal ones written
  once, different ones refused naming the fields), read back equal by pyarrow; pyarrow's
  ``emit_dictionary_deltas`` and ``unify_dictionaries``; footer metadata kept apart from the
  schema's;
* overwriting a path keeps what ``open(p, "wb")`` keeps: mode, owner and group, symlinks, and
  refuses a target the caller could not open for writing;
* ``new_stream(path)`` is atomic (exception, abort, SIGKILL, garbage collection), a writer whose
  write failed stays failed, ``open_stream(require_eos=True)``;
* ``mmap=False`` readers own their memory: truncating or rewriting the file raises instead of
  SIGBUS or changed values.
"""
from __future__ import annotations

import errno
import gc
import io
import os
import signal
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

from tests.support.writer_support import FORMATS, dictionary_messages, open_writer, pa_read_bytes

import arrowmm
from arrowmm import types as t


def _dict(indices, values, index_type=pa.int32()):
    return pa.DictionaryArray.from_arrays(pa.array(indices, index_type), pa.array(values))


def _shared_schema(id_a=0, id_b=0):
    dtype = t.DictionaryType(t.int32(), t.string(), False)
    return t.Schema([t.Field("a", dtype, True, None, id_a), t.Field("b", dtype, True, None, id_b),
                     t.Field("n", t.int64(), True)])


def _mm_batch(**columns):
    return arrowmm.record_batch(pa.record_batch(columns))


def _leftovers(folder):
    return sorted(p.name for p in Path(folder).iterdir())


# -- 1. dictionaries by id -------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_fields_sharing_a_dictionary_id_get_one_dictionary(fmt):
    words = ["x", "y", "p", "q"]
    batches = [_mm_batch(a=_dict([0, 1, None], words), b=_dict([2, 3, 0], words), n=pa.array([1, 2, 3])),
               _mm_batch(a=_dict([3, 3], words), b=_dict([1, None], words), n=pa.array([4, 5]))]
    sink = io.BytesIO()
    with open_writer(sink, _shared_schema(), fmt) as w:
        for b in batches:
            w.write(b)
    data = sink.getvalue()
    assert dictionary_messages(data) == [(0, False, 4)]  # once, for both fields
    _, got, _ = pa_read_bytes(data, fmt)
    assert [g.to_pydict() for g in got] == [
        {"a": ["x", "y", None], "b": ["p", "q", "x"], "n": [1, 2, 3]},
        {"a": ["q", "q"], "b": ["y", None], "n": [4, 5]}]
    assert [b.to_pydict() for b in arrowmm.open(data)] == [g.to_pydict() for g in got]


@pytest.mark.parametrize("fmt", FORMATS)
def test_fields_sharing_an_id_with_different_dictionaries_are_refused(fmt):
    sink = io.BytesIO()
    w = open_writer(sink, _shared_schema(), fmt)
    before = len(sink.getvalue())
    bad = _mm_batch(a=_dict([0, 1], ["x", "y"]), b=_dict([0, 1], ["p", "q"]), n=pa.array([1, 2]))
    with pytest.raises(arrowmm.ArrowInvalid, match=r"dictionary id 0.*'a'.*'b'"):
        w.write(bad)
    assert len(sink.getvalue()) == before  # nothing of the batch was written
    w.write(_mm_batch(a=_dict([0], ["x"]), b=_dict([0], ["x"]), n=pa.array([7])))
    w.close()
    _, got, _ = pa_read_bytes(sink.getvalue(), fmt)
    assert [g.to_pydict() for g in got] == [{"a": ["x"], "b": ["x"], "n": [7]}]


def test_a_shared_id_file_copied_through_its_reader_schema(tmp_path):
    words = ["x", "y", "p", "q"]
    src, out = tmp_path / "src.arrow", tmp_path / "out.arrow"
    batches = [_mm_batch(a=_dict([0, 1], words), b=_dict([2, 3], words), n=pa.array([1, 2])),
               _mm_batch(a=_dict([3], words), b=_dict([0], words), n=pa.array([3]))]
    with arrowmm.new_file(src, _shared_schema()) as w:
        for b in batches:
            w.write(b)
    reader = arrowmm.open_file(src)
    assert [f.dictionary_id for f in reader.schema.fields[:2]] == [0, 0]
    with arrowmm.new_file(out, reader.schema) as w:
        for b in reader:
            w.write(b)
    assert dictionary_messages(out.read_bytes()) == [(0, False, 4)]
    want = pa.ipc.open_file(str(src)).read_all()
    got = pa.ipc.open_file(str(out)).read_all()
    assert got.to_pydict() == want.to_pydict() == {
        "a": ["x", "y", "q"], "b": ["p", "q", "x"], "n": [1, 2, 3]}


def _grown():
    return [_mm_batch(d=_dict([0, 1], ["a", "b"])), _mm_batch(d=_dict([2, 0], ["a", "b", "c"]))]


def test_dictionary_deltas_are_off_by_default_as_in_pyarrow():
    sink = io.BytesIO()
    batches = _grown()
    with arrowmm.new_stream(sink, batches[0].schema) as w:
        for b in batches:
            w.write(b)
    assert dictionary_messages(sink.getvalue()) == [(0, False, 2), (0, False, 3)]  # a replacement
    _, got, _ = pa_read_bytes(sink.getvalue(), "stream")
    assert [g.to_pydict() for g in got] == [{"d": ["a", "b"]}, {"d": ["c", "a"]}]
    with pytest.raises(arrowmm.ArrowInvalid, match="emit_dictionary_deltas=True"):
        with arrowmm.new_file(io.BytesIO(), batches[0].schema) as w:
            for b in batches:
                w.write(b)


@pytest.mark.parametrize("fmt", FORMATS)
def test_emit_dictionary_deltas_true_keeps_deltas(fmt):
    sink = io.BytesIO()
    batches = _grown()
    with open_writer(sink, batches[0].schema, fmt, emit_dictionary_deltas=True) as w:
        for b in batches:
            w.write(b)
    assert dictionary_messages(sink.getvalue()) == [(0, False, 2), (0, True, 1)]
    _, got, _ = pa_read_bytes(sink.getvalue(), fmt)
    assert [g.to_pydict() for g in got] == [{"d": ["a", "b"]}, {"d": ["c", "a"]}]


@pytest.mark.parametrize("fmt", FORMATS)
def test_unify_dictionaries_lets_a_table_with_different_dictionaries_be_written(fmt):
    table = pa.Table.from_batches([
        pa.record_batch({"d": _dict([0, 1, None], ["x", "y"]), "n": pa.array([1, 2, 3])}),
        pa.record_batch({"d": _dict([1, 0, 2], ["z", "x", "w"]), "n": pa.array([4, 5, 6])}),
        pa.record_batch({"d": _dict([0], ["y"], pa.int32()), "n": pa.array([7])})])
    if fmt == "file":
        with pytest.raises(arrowmm.ArrowInvalid, match="unify_dictionaries=True"):
            with arrowmm.new_file(io.BytesIO(), table.schema) as w:
                w.write_table(table)
    sink = io.BytesIO()
    with open_writer(sink, table.schema, fmt, unify_dictionaries=True) as w:
        w.write_table(table)
    assert dictionary_messages(sink.getvalue()) == [(0, False, 4)]
    _, got, _ = pa_read_bytes(sink.getvalue(), fmt)
    assert pa.Table.from_batches(got).to_pydict() == table.to_pydict()
    assert got[0].column("d").dictionary.to_pylist() == ["x", "y", "z", "w"]  # first seen first


def _chunks_with_other_dictionaries():
    """A table whose chunks carry different dictionaries, as concatenated categoricals or
    Parquet files read one per chunk give."""
    return pa.Table.from_batches([pa.record_batch({"d": _dict([0, 1, None], ["a", "b"])}),
                                  pa.record_batch({"d": _dict([1, 0], ["c", "a"])})])


def test_write_file_unifies_dictionaries_by_default(tmp_path):
    """The one-call file writer holds the whole table: it unifies, as pyarrow's
    ``write_feather`` (review 27: F4: it refused, advising an option of ``write_table``)."""
    table, path = _chunks_with_other_dictionaries(), str(tmp_path / "d.arrow")
    arrowmm.write_file(path, table)
    assert pa.ipc.open_file(path).read_all().column("d").to_pylist() == ["a", "b", None, "a", "c"]
    assert dictionary_messages(Path(path).read_bytes()) == [(0, False, 3)]
    with pytest.raises(arrowmm.ArrowInvalid,
                       match=r"write_file\(\.\.\., unify_dictionaries=True\), its default"):
        arrowmm.write_file(str(tmp_path / "refused.arrow"), table, unify_dictionaries=False)


def _union_dictionary(type_codes, dates, ints):
    union = pa.UnionArray.from_sparse(pa.array(type_codes, pa.int8()),
                                      [pa.array(dates, pa.date32()), pa.array(ints, pa.int32())])
    return pa.DictionaryArray.from_arrays(pa.array(range(len(type_codes)), pa.int8()), union)


def test_union_dictionaries_that_differ_are_refused_not_merged_by_python_value(tmp_path):
    # (unified as Python values, the int32 5 of one chunk took the date32 day 5 of another:
    # the file read [date(1970, 1, 6), ...] where the table held 5; pyarrow's unifier refuses)
    days = _union_dictionary([0, 0], [5, 6], [0, 0])
    ints = _union_dictionary([1, 1], [0, 0], [5, 7])
    path = str(tmp_path / "u.arrow")
    with pytest.raises(arrowmm.ArrowNotImplementedError, match=r"field\(s\) 'd': dictionaries of "
                                                              r"sparse_union.* that differ"):
        arrowmm.write_file(path, pa.table({"d": pa.chunked_array([days, ints])}))
    assert not os.path.exists(path)
    arrowmm.write_file(path, pa.table({"d": pa.chunked_array([days, days])}))  # (equal: kept)
    assert pa.ipc.open_file(path).read_all().column("d").to_pylist() == \
        pa.chunked_array([days, days]).to_pylist()


def test_a_dictionary_a_file_cannot_hold_is_refused_naming_the_options_of_the_call(tmp_path):
    table = _chunks_with_other_dictionaries()
    with pytest.raises(arrowmm.ArrowInvalid, match=r"new_file\(\.\.\., unify_dictionaries=True\) "
                                                   r"merges the dictionaries of the batches given "
                                                   r"to write_table"):
        with arrowmm.new_file(io.BytesIO(), table.schema) as w:
            for batch in table.to_batches():
                w.write(batch)
    with pytest.raises(arrowmm.ArrowInvalid, match=r"new_file\(\.\.\., emit_dictionary_deltas=True\)"):
        with arrowmm.new_file(io.BytesIO(), table.schema) as w:
            for batch in _grown():
                w.write(batch)
    path = str(tmp_path / "a.arrow")
    arrowmm.write_file(path, table.slice(0, 3))
    with arrowmm.append_file(path) as w:
        with pytest.raises(arrowmm.ArrowInvalid, match="write a new file") as refused:
            w.write(pa.record_batch({"d": _dict([0], ["z"])}))
        assert "unify" not in str(refused.value)


def test_unified_dictionary_that_outgrows_its_index_type_is_refused():
    table = pa.Table.from_batches([pa.record_batch({"d": _dict([0], [f"v{i}"], pa.int8())})
                                   for i in range(130)])
    with pytest.raises(arrowmm.ArrowInvalid, match="int8"):
        with arrowmm.new_file(io.BytesIO(), table.schema, unify_dictionaries=True) as w:
            w.write_table(table)


def test_footer_metadata_is_kept_apart_from_the_schema_metadata(tmp_path):
    path = tmp_path / "m.arrow"
    schema = arrowmm.schema([("x", arrowmm.int64())], metadata={"s": "schema"})
    with arrowmm.new_file(path, schema, metadata={"f": "footer"}) as w:
        w.write({"x": [1]})
    pa_reader = pa.ipc.open_file(str(path))
    assert pa_reader.metadata == {b"f": b"footer"}
    assert pa_reader.schema.metadata == {b"s": b"schema"}
    reader = arrowmm.open_file(path)
    assert reader.metadata == {"f": "footer"}
    assert reader.schema.metadata == {"s": "schema"}
    # and a pyarrow file with footer metadata reads the same way
    pa_path = tmp_path / "pa.arrow"
    with pa.ipc.new_file(str(pa_path), pa.schema([("x", pa.int64())], metadata={"s": "1"}),
                         metadata={"f": "2"}) as w:
        w.write_batch(pa.record_batch({"x": [1]}))
    reader = arrowmm.open_file(pa_path)
    assert (reader.metadata, reader.schema.metadata) == ({"f": "2"}, {"s": "1"})


# -- 2. overwrite keeps what open(p, "wb") keeps ---------------------------------------------

def _write_file(path, fmt="file", value=1):
    with open_writer(path, arrowmm.schema([("x", arrowmm.int64())]), fmt) as w:
        w.write({"x": [value]})


def _repair(path):
    arrowmm.repair(path, path)


@pytest.mark.parametrize("how", ["file", "stream", "repair"])
@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444])
def test_overwrite_keeps_the_mode(tmp_path, how, mode):
    path = tmp_path / "t.arrow"
    _write_file(path)
    os.chmod(path, mode)
    if how == "repair":
        _repair(path)
    else:
        _write_file(path, how, 2)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert _leftovers(tmp_path) == ["t.arrow"]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file another owner and group "
                                             "to see them kept (a user's files are all theirs)")
def test_overwrite_keeps_owner_and_group(tmp_path):
    path = tmp_path / "t.arrow"
    _write_file(path)
    os.chown(path, 1234, 5678)
    _write_file(path, "file", 2)
    st = path.stat()
    assert (st.st_uid, st.st_gid) == (1234, 5678)
    assert arrowmm.open_file(path).get_batch(0).to_pydict() == {"x": [2]}


@pytest.mark.parametrize("how", ["file", "stream", "repair"])
def test_a_symlink_target_is_written_through(tmp_path, how):
    real = tmp_path / "real.arrow"
    link = tmp_path / "link.arrow"
    _write_file(real)
    os.chmod(real, 0o600)
    link.symlink_to("real.arrow")
    if how == "repair":
        _repair(link)
    else:
        _write_file(link, how, 2)
    assert link.is_symlink() and os.readlink(link) == "real.arrow"
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    want = 1 if how == "repair" else 2
    assert arrowmm.open(str(real)).read_all().to_pydict() == {"x": [want]}
    assert _leftovers(tmp_path) == ["link.arrow", "real.arrow"]


def test_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.arrow"
    link.symlink_to("made.arrow")
    _write_file(link)
    assert link.is_symlink() and (tmp_path / "made.arrow").is_file()


def test_a_directory_target_is_refused_before_writing(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        arrowmm.new_file(tmp_path / "d", arrowmm.schema([("x", arrowmm.int64())]))
    assert _leftovers(tmp_path) == ["d"]


@pytest.mark.parametrize("name, raised", [
    ("data.arrow/", IsADirectoryError),   # (abspath dropped the slash: data.arrow was replaced)
    ("out/", IsADirectoryError),          # (a file named out was made)
    ("d/", IsADirectoryError),
    ("missing/out/", FileNotFoundError),
])
def test_a_name_ending_in_a_separator_is_refused_as_open_refuses_it(tmp_path, name, raised):
    arrowmm.write_file(tmp_path / "data.arrow", {"x": [1, 2, 3]})
    (tmp_path / "d").mkdir()
    before = (tmp_path / "data.arrow").read_bytes()
    with pytest.raises(raised):
        open(f"{tmp_path}/{name}", "wb")
    with pytest.raises(raised):
        arrowmm.write_file(f"{tmp_path}/{name}", {"x": [9]})
    assert (tmp_path / "data.arrow").read_bytes() == before
    assert _leftovers(tmp_path) == ["d", "data.arrow"]


_AS_NOBODY = r"""
import os, sys
import arrowmm               # imported first: nobody may not read the Python installation
folder, fmt = sys.argv[1], sys.argv[2]
os.chdir(folder)             # relative paths from here: the parents need not be searchable
if os.geteuid() == 0:        # root may write any file: become nobody to see what open() refuses
    os.setgid(65534); os.setgroups([]); os.setuid(65534)
try:
    open("ro.arrow", "wb")
    print("open: allowed")
except PermissionError:
    print("open: refused")
schema = arrowmm.schema([("x", arrowmm.int64())])
try:
    w = (arrowmm.new_file if fmt == "file" else arrowmm.new_stream)("ro.arrow", schema)
    w.write({"x": [2]}); w.close()
    print("arrowmm: allowed")
except PermissionError as exc:
    print("arrowmm: refused", exc)
"""


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_target_the_caller_cannot_open_for_writing_is_refused(tmp_path, fmt):
    """As root, ``open(p, "wb")`` writes a 0444 file, so arrowmm does too; the child process
    runs as the unprivileged user ``nobody`` (when started as root) in a folder it may write
    to, holding a 0444 file of root's: ``open`` refuses it, and so must arrowmm."""
    folder = tmp_path / "w"
    folder.mkdir()
    os.chmod(folder, 0o777)
    target = folder / "ro.arrow"
    _write_file(target)
    before = target.read_bytes()
    os.chmod(target, 0o444)
    out = subprocess.run([sys.executable, "-c", _AS_NOBODY, str(folder), fmt], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": os.getcwd()}, check=True).stdout
    assert out.splitlines()[0] == "open: refused", out
    assert out.splitlines()[1].startswith("arrowmm: refused"), out
    assert target.read_bytes() == before
    assert _leftovers(folder) == ["ro.arrow"]


# -- 3. atomic streams, failed writers -------------------------------------------------------

def _stream_schema():
    return arrowmm.schema([("x", arrowmm.int64())])


def test_new_stream_to_a_path_appears_only_on_close(tmp_path):
    path = tmp_path / "s.arrows"
    w = arrowmm.new_stream(path, _stream_schema())
    w.write({"x": [1, 2]})
    assert not path.exists()
    assert all(n.startswith(".") for n in _leftovers(tmp_path))
    w.close()
    assert pa.ipc.open_stream(str(path)).read_all().to_pydict() == {"x": [1, 2]}
    assert _leftovers(tmp_path) == ["s.arrows"]


@pytest.mark.parametrize("how", ["exception", "abort"])
def test_new_stream_to_a_path_leaves_nothing_when_not_closed(tmp_path, how):
    path = tmp_path / "s.arrows"
    if how == "exception":
        with pytest.raises(RuntimeError):
            with arrowmm.new_stream(path, _stream_schema()) as w:
                w.write({"x": [1, 2]})
                raise RuntimeError("boom")
    else:
        w = arrowmm.new_stream(path, _stream_schema())
        w.write({"x": [1, 2]})
        w.abort()
    assert _leftovers(tmp_path) == []
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with arrowmm.new_stream(path, _stream_schema()) as w:
            w.write({"x": [1, 2]})
            raise RuntimeError("boom")
    assert path.read_bytes() == b"old" and _leftovers(tmp_path) == ["s.arrows"]


_KILLED_STREAM = r"""
import sys
import arrowmm
w = arrowmm.new_stream(sys.argv[1], arrowmm.schema([("x", arrowmm.int64())]))
for i in range(5):
    w.write({"x": list(range(1000))})
print("written", flush=True)
sys.stdin.read()
"""


def test_sigkilled_stream_writer_leaves_nothing_under_the_name(tmp_path):
    target = tmp_path / "s.arrows"
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_STREAM, str(target)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "written", f"writer ended: {proc.wait()}"
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
        proc.stdout.close()
    assert not target.exists()
    left = _leftovers(tmp_path)
    assert len(left) == 1 and left[0].startswith(".s.arrows."), left  # hidden, recoverable
    got = list(arrowmm.open_stream(str(tmp_path / left[0]), recover=True))
    assert sum(b.num_rows for b in got) == 5000


def _stream_without_eos():
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, _stream_schema()) as w:
        w.write({"x": [1, 2]})
    data = sink.getvalue()
    assert data.endswith(b"\xff\xff\xff\xff\x00\x00\x00\x00")
    return data, data[:-8]


@pytest.mark.parametrize("kind", ["buffer", "fileobj", "path"])
def test_require_eos(tmp_path, kind):
    full, cut = _stream_without_eos()

    def source(data):
        if kind == "buffer":
            return data
        if kind == "fileobj":
            return io.BytesIO(data)
        p = tmp_path / f"s{len(data)}.arrows"
        p.write_bytes(data)
        return str(p)

    assert [b.to_pydict() for b in arrowmm.open_stream(source(full), require_eos=True)] == [{"x": [1, 2]}]
    assert [b.to_pydict() for b in arrowmm.open_stream(source(cut))] == [{"x": [1, 2]}]  # as pyarrow
    reader = arrowmm.open_stream(source(cut), require_eos=True)
    assert reader.read_next_batch().to_pydict() == {"x": [1, 2]}
    with pytest.raises(arrowmm.ArrowInvalid, match="end-of-stream"):
        reader.read_next_batch()


class _FullDisk(io.RawIOBase):
    """A sink that takes ``room`` bytes, then fails as a full disk does."""

    def __init__(self, room):
        self.room = room
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, b):
        n = min(len(b), self.room - len(self.data))
        if n <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.data += bytes(memoryview(b)[:n])
        return n


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_writer_whose_write_failed_stays_failed(fmt):
    probe = io.BytesIO()
    with open_writer(probe, _stream_schema(), fmt) as w:
        pass
    sink = _FullDisk(len(probe.getvalue()) + 40)  # the header fits, the first batch does not
    w = open_writer(sink, _stream_schema(), fmt)
    with pytest.raises(OSError) as info:
        w.write({"x": list(range(100))})
    assert info.value.errno == errno.ENOSPC
    sink.room += 1 << 20  # the disk has room again: the torn output must still not be extended
    with pytest.raises(arrowmm.ArrowInvalid, match="failed"):
        w.write({"x": [1]})
    with pytest.raises(arrowmm.ArrowInvalid, match="failed"):
        w.close()
    w.close()  # idempotent once aborted
    assert len(sink.data) < len(probe.getvalue()) + 41


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_failed_write_to_a_path_leaves_nothing(tmp_path, fmt, monkeypatch):
    path = tmp_path / "t.arrow"
    path.write_bytes(b"old")
    w = open_writer(path, _stream_schema(), fmt)

    def full(fd, views):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "writev", full)
    with pytest.raises(OSError):
        w.write({"x": list(range(100))})
    monkeypatch.undo()
    with pytest.raises(arrowmm.ArrowInvalid):
        w.close()
    assert path.read_bytes() == b"old" and _leftovers(tmp_path) == ["t.arrow"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unclosed_writer_collected_aborts_and_warns(tmp_path, fmt):
    path = tmp_path / "t.arrow"
    w = open_writer(path, _stream_schema(), fmt)
    w.write({"x": [1]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del w
        gc.collect()
    assert any(issubclass(c.category, ResourceWarning) and "t.arrow" in str(c.message)
               for c in caught), [str(c.message) for c in caught]
    assert _leftovers(tmp_path) == []


# -- 4. mmap=False -----------------------------------------------------------------------------

def _two_batches(path):
    with arrowmm.new_file(path, _stream_schema()) as w:
        w.write({"x": list(range(1000))})
        w.write({"x": list(range(1000, 2000))})


def test_unmapped_reader_raises_when_the_file_is_truncated(tmp_path):
    path = tmp_path / "t.arrow"
    _two_batches(path)
    reader = arrowmm.open_file(path, mmap=False)
    os.truncate(path, 100)  # a mapped reader dies of SIGBUS touching the lost pages
    with pytest.raises(arrowmm.ArrowInvalid, match="truncated|shrank"):
        reader.get_batch(1).column("x").to_pylist()


def test_unmapped_reader_owns_its_memory_and_reads_lazily(tmp_path):
    path = tmp_path / "t.arrow"
    _two_batches(path)
    reader = arrowmm.open_file(path, mmap=False)
    first = reader.get_batch(0).column("x")
    start, length = reader.batch_extents()[1]
    data = bytearray(path.read_bytes())
    data[8:start] = b"\x00" * (start - 8)  # batch 0 rewritten in place after it was read
    data[start:start + length] = b"\xee" * length  # batch 1 garbled before it is read
    with open(path, "r+b") as f:
        f.write(data)
    assert first.to_pylist() == list(range(1000))  # owned: a mapping would show the zeros
    with pytest.raises(arrowmm.ArrowInvalid, match="record batch 1"):
        reader.get_batch(1)
    with pytest.raises(arrowmm.ArrowInvalid, match="mmap=False"):
        reader.memory()


def test_mmap_false_for_open_and_open_stream(tmp_path):
    path = tmp_path / "t.arrow"
    _two_batches(path)
    spath = tmp_path / "t.arrows"
    with arrowmm.new_stream(spath, _stream_schema()) as w:
        w.write({"x": [5, 6]})
    want = [b.to_pydict() for b in arrowmm.open_file(path)]
    with arrowmm.open(path, mmap=False) as r:
        assert isinstance(r, arrowmm.FileReader) and [b.to_pydict() for b in r] == want
    with arrowmm.open_stream(path, mmap=False) as r:  # a file read as the stream it holds
        assert [b.to_pydict() for b in r] == want
    with arrowmm.open(spath, mmap=False) as r:
        assert isinstance(r, arrowmm.StreamReader) and [b.to_pydict() for b in r] == [{"x": [5, 6]}]
    r = arrowmm.open_stream(spath, mmap=False, require_eos=True)
    first = r.read_next_batch()
    spath.write_bytes(b"\x00" * 100)  # rewritten: what was read stays
    assert first.to_pydict() == {"x": [5, 6]}
    r.close()


def test_an_overwrite_splits_hard_links(tmp_path):
    """As the README says: the rename gives the path a new inode (``open(p, "wb")`` would not)."""
    path, other = tmp_path / "t.arrow", tmp_path / "hard.arrow"
    _write_file(path, "file", 1)
    os.link(path, other)
    _write_file(path, "file", 2)
    assert arrowmm.open_file(path).get_batch(0).to_pydict() == {"x": [2]}
    assert arrowmm.open_file(other).get_batch(0).to_pydict() == {"x": [1]}


def test_a_fifo_target_is_written_in_place(tmp_path):
    """A FIFO cannot be replaced by a rename: it is opened and written, as ``open`` would."""
    import threading
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []

    def drain():
        with open(fifo, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        with arrowmm.new_stream(fifo, _stream_schema()) as w:
            w.write({"x": [1, 2]})
    finally:
        reader.join()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and _leftovers(tmp_path) == ["pipe"]
    assert [b.to_pydict() for b in arrowmm.open_stream(got[0], require_eos=True)] == [{"x": [1, 2]}]


def test_unify_dictionaries_merges_fields_sharing_an_id():
    batches = [_mm_batch(a=_dict([0, 1], ["x", "y"]), b=_dict([0, 1], ["p", "x"]), n=pa.array([1, 2])),
               _mm_batch(a=_dict([0], ["q"]), b=_dict([0], ["y"]), n=pa.array([3]))]
    sink = io.BytesIO()
    with arrowmm.new_file(sink, _shared_schema(), unify_dictionaries=True) as w:
        w.write_table(batches)
    assert dictionary_messages(sink.getvalue()) == [(0, False, 4)]
    assert pa.ipc.open_file(sink.getvalue()).read_all().to_pydict() == {
        "a": ["x", "y", "q"], "b": ["p", "x", "y"], "n": [1, 2, 3]}


def test_atomic_target_commit_without_replacing(tmp_path):
    """``commit(replace=False)`` (for create-once names: the Spark commit's manifests) never
    clobbers an existing file; the temporary goes either way."""
    from arrowmm.ipc.core.files import atomic_target
    path = tmp_path / "once"
    for data, want in ((b"first", b"first"), (b"second", b"first")):
        target = atomic_target(path)
        os.write(target.fd, data)
        if path.exists():
            with pytest.raises(FileExistsError):
                target.commit(replace=False)
        else:
            target.commit(replace=False)
        assert path.read_bytes() == want and _leftovers(tmp_path) == ["once"]


def _gold_files():
    from tests.support import integration_json as ij
    if not ij.GOLD_DIR.is_dir():
        return []
    return sorted(ij.GOLD_DIR.glob("*.arrow_file"))


@pytest.mark.parametrize("path", _gold_files() or [pytest.param(None, marks=pytest.mark.skip(
    reason="the Arrow C++ gold files folder is absent"))], ids=lambda p: getattr(p, "stem", "none"))
def test_unmapped_reader_reads_every_gold_file_as_the_mapped_one(path):
    def values(reader):
        return [b.to_pylist() for b in reader]

    try:
        want = values(arrowmm.open_file(path))
    except (arrowmm.ArrowNotImplementedError, arrowmm.ArrowInvalid) as exc:
        with pytest.raises(type(exc)):
            values(arrowmm.open_file(path, mmap=False))
        return
    with arrowmm.open_file(path, mmap=False) as r:
        assert r.metadata == arrowmm.open_file(path).metadata
        assert values(r) == want
    with arrowmm.open_stream(path, mmap=False, require_eos=True) as r:
        assert values(r) == want


def test_tensor_written_over_a_path_keeps_its_mode_and_is_atomic(tmp_path, monkeypatch):
    import numpy as np
    path = tmp_path / "t.tensor"
    path.write_bytes(b"old")
    os.chmod(path, 0o600)
    arrowmm.write_tensor(np.arange(6).reshape(2, 3), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and _leftovers(tmp_path) == ["t.tensor"]
    assert arrowmm.read_tensor(str(path)).to_numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    before = path.read_bytes()

    def full(fd, views):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "writev", full)
    with pytest.raises(OSError):
        arrowmm.write_tensor(np.arange(4), path)
    assert path.read_bytes() == before and _leftovers(tmp_path) == ["t.tensor"]
