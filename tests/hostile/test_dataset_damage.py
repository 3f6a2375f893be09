"""``arrowmm.dataset`` over damaged files (issue 29, item 2) and duplicate column names (item 6):
a file named as Arrow (or listed by a manifest) that does not read raises ``ArrowInvalid``
naming it, never drops out of the rows; ``exclude_invalid_files=True`` leaves it out and says
so; files not named as Arrow stay out; a name two columns share is refused as ambiguous."""
import os
import uuid

import fsspec
import pyarrow as pa
import pyarrow.ipc as pa_ipc
import pytest

import arrowmm
from arrowmm import ArrowInvalid
from arrowmm.dataset.discovery import data_files_in

SCHEMA = arrowmm.schema([("x", arrowmm.int64())])
ROWS = 1000


def _write(path, stream=False, start=0):
    make = arrowmm.new_stream if stream else arrowmm.new_file
    with make(str(path), SCHEMA) as w:
        w.write({"x": list(range(start, start + ROWS))})


def _damage(path, how):
    """``path`` as a crash, a full disk or an interrupted copy leaves it."""
    data = path.read_bytes()
    if how == "empty":
        data = b""
    elif how == "zeroed start":
        data = bytes(512) + data[512:]
    elif how == "all zeros":
        data = bytes(len(data))
    elif how == "3 bytes":
        data = data[:3]
    elif how == "cut footer":
        data = data[:-20]
    path.write_bytes(data)


def _folder(tmp_path, damaged_name, how):
    """Three 1,000-row files (p0, p2 good, ``damaged_name`` damaged) and files not named as
    Arrow that a dataset leaves out whatever they hold."""
    root = tmp_path / "data"
    root.mkdir()
    _write(root / "p0.arrow", start=0)
    _write(root / damaged_name, stream=damaged_name.endswith(".arrows"), start=ROWS)
    _damage(root / damaged_name, how)
    _write(root / "p2.arrow", start=2 * ROWS)
    (root / "README").write_bytes(bytes(64))  # (zeros: not Arrow by name or by its bytes)
    (root / "part-1.crc").write_bytes(b"")
    (root / "notes.txt").write_text("not arrow")
    return root


@pytest.fixture
def memory_fs():
    """A fresh folder on fsspec's memory filesystem, removed afterwards."""
    fs = fsspec.filesystem("memory")
    top = f"/damage-{uuid.uuid4().hex}"
    yield fs, top
    if fs.exists(top):
        fs.rm(top, recursive=True)


def _sources(root, memory_fs):
    """The same folder as a local path, a memory:// URL and a path on fsspec's local
    filesystem: ``(name, make_dataset(**options), path of a file in it)``."""
    fs, top = memory_fs
    for name in os.listdir(root):
        fs.pipe_file(f"{top}/{name}", (root / name).read_bytes())
    local_fs = fsspec.filesystem("file")
    return [
        ("local", lambda **kw: arrowmm.dataset(str(root), **kw), lambda n: str(root / n)),
        ("memory", lambda **kw: arrowmm.dataset(f"memory://{top}", **kw), lambda n: f"{top}/{n}"),
        ("fsspec local", lambda **kw: arrowmm.dataset(str(root), filesystem=local_fs, **kw),
         lambda n: str(root / n)),
    ]


WHY = {"empty": "empty \\(0 bytes\\)", "zeroed start": "first 8 bytes are all zeros",
       "all zeros": "first 8 bytes are all zeros", "3 bytes": "only 3 bytes"}


@pytest.mark.parametrize("how", sorted(WHY))
@pytest.mark.parametrize("damaged", ["p1.arrow", "p1.arrows", "p1.ipc", "p1.feather"])
def test_a_damaged_file_named_as_arrow_raises_naming_it(tmp_path, memory_fs, damaged, how):
    root = _folder(tmp_path, damaged, how)
    for where, make, path_of in _sources(root, memory_fs):
        ds = make()
        assert [os.path.basename(f) for f in ds.files] == ["p0.arrow", damaged, "p2.arrow"], where
        match = f"{path_of(damaged)}: not readable as Arrow IPC: it.*{WHY[how]}"
        for read in (lambda: ds.to_table(), lambda: ds.count_rows(),
                     lambda: ds.to_table(use_threads=False),
                     lambda: ds.count_rows(filter=[("x", ">=", 0)])):
            with pytest.raises(ArrowInvalid, match=match):
                read()
    os.rename(root / "p0.arrow", root / "_p0.arrow")  # the damaged file first: the schema's
    with pytest.raises(ArrowInvalid, match=f"{root / damaged}: not readable as Arrow IPC"):
        arrowmm.dataset(str(root))


@pytest.mark.parametrize("how", ["empty", "all zeros", "cut footer"])
def test_exclude_invalid_files_leaves_them_out_and_lists_them(tmp_path, memory_fs, how):
    root = _folder(tmp_path, "p1.arrow", how)
    for where, make, path_of in _sources(root, memory_fs):
        ds = make(exclude_invalid_files=True)
        assert [os.path.basename(f) for f in ds.files] == ["p0.arrow", "p2.arrow"], where
        assert [p for p, _ in ds.excluded_files] == [path_of("p1.arrow")], where
        assert ds.excluded_files[0][1].startswith(path_of("p1.arrow") + ": ")
        assert "1 excluded" in repr(ds)
        assert ds.to_table().column("x").to_pylist() == \
            list(range(ROWS)) + list(range(2 * ROWS, 3 * ROWS))
        assert ds.count_rows() == 2 * ROWS
        kept = make(exclude_invalid_files=False)
        with pytest.raises(ArrowInvalid, match=path_of("p1.arrow")):
            kept.to_table()
        assert kept.excluded_files == []


def test_exclude_invalid_files_does_not_hide_a_missing_listed_file(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    _write(root / "p0.arrow")
    (root / "_SUCCESS").write_text('{"files": ["p0.arrow", "gone.arrow"]}')
    with pytest.raises(FileNotFoundError):
        arrowmm.dataset(str(root), exclude_invalid_files=True)


def test_a_file_a_manifest_lists_says_why_it_does_not_read(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    _write(root / "part-0")
    _write(root / "part-1")
    _damage(root / "part-1", "zeroed start")  # (named by the manifest, not by an extension)
    (root / "_SUCCESS").write_text('{"files": ["part-0", "part-1"]}')
    ds = arrowmm.dataset(str(root))
    with pytest.raises(ArrowInvalid, match="part-1: not readable as Arrow IPC: its first 8 bytes"):
        ds.to_table()
    ds = arrowmm.dataset(str(root), exclude_invalid_files=True)
    assert ds.count_rows() == ROWS and len(ds.excluded_files) == 1


def test_the_spark_listing_keeps_a_damaged_arrow_file(tmp_path):
    """The Python Spark source lists folders through ``data_files_in``: a damaged ``.arrow``
    file is listed (reading it then fails, naming it), files not named as Arrow are not."""
    root = _folder(tmp_path, "p1.arrow", "all zeros")
    assert [os.path.basename(p) for p in data_files_in(str(root))] == \
        ["p0.arrow", "p1.arrow", "p2.arrow"]


# -- duplicate column names -------------------------------------------------------------------
def _duplicate_table():
    return pa.table([pa.array([1, 2]), pa.array(["x", "y"])], names=["a", "a"])


def _write_pyarrow(path, table, stream):
    make = pa_ipc.new_stream if stream else pa_ipc.new_file
    with make(str(path), table.schema) as w:
        w.write_table(table)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "file"])
@pytest.mark.parametrize("remote", [True, False], ids=["memory", "local"])
def test_duplicate_column_names_are_refused_as_ambiguous(tmp_path, memory_fs, stream, remote):
    name = "dup.arrows" if stream else "dup.arrow"
    local = tmp_path / name
    _write_pyarrow(local, _duplicate_table(), stream)
    if remote:
        fs, top = memory_fs
        fs.pipe_file(f"{top}/{name}", local.read_bytes())
        source, path = f"memory://{top}/{name}", f"{top}/{name}"
    else:
        source, path = str(local), str(local)
    ds = arrowmm.dataset(source)
    assert ds.schema.names == ["a", "a"]
    assert ds.count_rows() == 2  # (no name looked up)
    for read in (lambda: ds.to_table(), lambda: ds.to_table(columns=["a"]),
                 lambda: ds.to_table(columns=[], filter=[("a", "==", 1)]),
                 lambda: ds.count_rows(filter=[("a", "==", 1)]), lambda: ds.head(1),
                 lambda: list(ds.to_batches()), lambda: pa.table(ds)):
        with pytest.raises(ArrowInvalid, match=f"'a' is ambiguous: {path} has 2 columns named"):
            read()
    assert ds.to_table(columns=[]).num_rows == 2


def test_a_later_file_with_duplicate_names_is_named(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    _write_pyarrow(root / "0.arrow", pa.table({"a": [1]}), stream=False)
    _write_pyarrow(root / "1.arrow", pa.table([pa.array([2]), pa.array([3])], names=["a", "a"]),
                   stream=False)
    ds = arrowmm.dataset(str(root))
    with pytest.raises(ArrowInvalid, match=f"{root / '1.arrow'}: has 2 columns named 'a' "
                                           f"\\(at \\[0, 1\\]\\): ambiguous"):
        ds.to_table()
    schema = arrowmm.schema([("a", arrowmm.int64()), ("a", arrowmm.int64())])
    with pytest.raises(ArrowInvalid, match="'a' is ambiguous: the schema given has 2 columns"):
        arrowmm.dataset(str(root), schema=schema).to_table(columns=["a"])
