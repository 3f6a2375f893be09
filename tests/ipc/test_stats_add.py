"""Statistics added to files other writers made (issue 32, item 3): ``add_statistics`` and
``arrowmm convert --statistics`` copy every message body byte for byte under a new footer
(and every header but the first record batch's, which gains the statistics' stamp), pyarrow
reads the result as the source, and ``arrowmm.dataset`` filters then skip batches of a
pyarrow- or polars-written file.  Written atomically: permissions kept, in place only when
asked, the original intact after a failure or a crash."""
import doctest
import json
import os
import stat
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.ipc as pa_ipc
import pytest

import arrowmm
from arrowmm.ipc import add_statistics
from arrowmm.ipc.write import footer_statistics
from arrowmm.ipc.core.statistics import STAMP_KEY, STATISTICS_KEY

ROWS = 10


def _table(batch: int) -> pa.Table:
    x = np.arange(batch * ROWS, (batch + 1) * ROWS)
    return pa.table({
        "x": pa.array(x, pa.int64()),
        "f": pa.array([None if v % 4 == 1 else v / 2 for v in x.tolist()], pa.float64()),
        "s": pa.array([f"s{v:03d}" for v in x.tolist()]),
        "ts": pa.array(x * 3_600_000_000, pa.timestamp("us", tz="UTC")),
        "d": pa.array(["red", "green", None, "blue", "red"] * (ROWS // 5)).dictionary_encode(),
    })


def _pyarrow_file(path, compression=None, batches=3):
    """``batches`` record batches of ROWS rows written by pyarrow, footer metadata included."""
    first = _table(0)
    options = pa_ipc.IpcWriteOptions(compression=compression)
    with pa_ipc.new_file(str(path), first.schema, options=options,
                         metadata={"origin": "pyarrow"}) as w:
        for b in range(batches):
            w.write_table(_table(b))
    return path


def _polars_file(path):
    import polars as pl
    frame = pl.concat([pl.from_arrow(_table(b).drop(["d"])) for b in range(3)])
    frame.write_ipc(str(path), compression="uncompressed", record_batch_size=ROWS)
    return path


def _messages(path) -> tuple:
    """(header, body) bytes of every dictionary and record batch message, in the footer's
    order, and the index of record batch 0 among them."""
    data = open(path, "rb").read()
    with arrowmm.open_file(path) as reader:
        first = len(reader.footer.dictionaries)
        rows = [tuple(map(int, b)) for blocks in (reader.footer.dictionaries,
                                                  reader.footer.record_batches)
                for b in blocks.tolist()]
    return [(data[off:off + (meta & 0xFFFFFFFF)],
             data[off + (meta & 0xFFFFFFFF):off + (meta & 0xFFFFFFFF) + body])
            for off, meta, body in rows], first


def _bodies(path) -> list:
    """The body bytes of every dictionary and record batch message, in the footer's order."""
    return [body for _, body in _messages(path)[0]]


def _recorded(path) -> dict:
    with arrowmm.open_file(path) as reader:
        return json.loads(reader.footer.metadata[STATISTICS_KEY])


@pytest.mark.parametrize("writer", ["pyarrow", "pyarrow zstd", "polars"])
def test_messages_are_kept_byte_for_byte_and_only_the_footer_changes(tmp_path, writer):
    src = tmp_path / "src.arrow"
    if writer == "polars":
        _polars_file(src)
    else:
        _pyarrow_file(src, compression="zstd" if "zstd" in writer else None)
    dst = tmp_path / "dst.arrow"
    assert add_statistics(src, dst) == os.path.realpath(dst)
    (before, first), (after, _) = _messages(src), _messages(dst)
    assert len(before) == len(after) >= 3
    assert [body for _, body in before] == [body for _, body in after]  # every body as it was
    # every header too, but record batch 0's: it gains the stamp that binds the statistics
    assert [h for k, (h, _) in enumerate(before) if k != first] == \
        [h for k, (h, _) in enumerate(after) if k != first]
    assert before[first][0] != after[first][0]
    ours, theirs = pa_ipc.open_file(dst), pa_ipc.open_file(src)
    stamped = ours.get_batch_with_custom_metadata(0)
    assert stamped.custom_metadata == {STAMP_KEY.encode(): _recorded(dst)["id"].encode()}
    assert stamped.batch.equals(theirs.get_batch(0))
    assert ours.num_record_batches == theirs.num_record_batches
    assert ours.read_all().equals(theirs.read_all(), check_metadata=True)
    if writer != "polars":
        assert ours.metadata[b"origin"] == b"pyarrow"  # (the footer's other metadata kept)
    doc = _recorded(dst)
    table = theirs.read_all()
    for i, batch in enumerate(doc["batches"]):
        part = theirs.get_batch(i)
        assert batch["rows"] == part.num_rows
        for name in ("x", "f", "s"):
            column = part.column(name)
            if column.type == pa.string_view():  # (polars' strings: no min_max kernel)
                column = column.cast(pa.string())
            bounds = pc.min_max(column).as_py()
            got = batch["columns"][name]
            assert (got["min"], got["max"], got["nulls"]) == \
                (bounds["min"], bounds["max"], part.column(name).null_count)
        if "d" in table.column_names:  # (dictionary columns get no statistics, as written)
            assert "d" not in batch["columns"]


def _lie_in_batch_zero(path):
    """Overwrite the x values of batch 0 (0..9) with 25s: a reader that reads batch 0 sees
    them, one that skips it by its statistics does not."""
    data = bytearray(open(path, "rb").read())
    first = np.arange(ROWS, dtype="<i8").tobytes()
    at = bytes(data).index(first)
    data[at:at + len(first)] = np.full(ROWS, 25, dtype="<i8").tobytes()
    with open(path, "wb") as f:
        f.write(data)


@pytest.mark.parametrize("writer", ["pyarrow", "polars"])
def test_dataset_filters_prune_the_batches_of_the_converted_file(tmp_path, writer):
    src = tmp_path / "src.arrow"
    _polars_file(src) if writer == "polars" else _pyarrow_file(src)
    want = pads.dataset(str(src), format="ipc").to_table(columns=["x"], filter=pc.field("x") >= 20)
    dst = tmp_path / "dst.arrow"
    add_statistics(src, dst)
    got = arrowmm.dataset(str(dst)).to_table(filter=[("x", ">=", 20)])
    assert got.column("x").to_pylist() == want.column("x").to_pylist() == list(range(20, 30))
    _lie_in_batch_zero(dst)
    _lie_in_batch_zero(src)
    # the footer says batch 0 holds 0..9: skipped unread, its (false) 25s never show ...
    assert arrowmm.dataset(str(dst)).to_table(filter=[("x", ">=", 20)]).column("x") \
        .to_pylist() == list(range(20, 30))
    assert arrowmm.dataset(str(dst)).count_rows(filter=[("x", ">=", 20)]) == 10
    # ... while the source, without statistics, has batch 0 read: the 25s show
    assert arrowmm.dataset(str(src)).to_table(filter=[("x", ">=", 20)]).column("x") \
        .to_pylist() == [25] * ROWS + list(range(20, 30))


def test_in_place_only_when_asked_and_permissions_kept(tmp_path):
    src = _pyarrow_file(tmp_path / "src.arrow")
    os.chmod(src, 0o640)
    before, bodies = src.read_bytes(), _bodies(src)
    alias = tmp_path / "alias.arrow"
    os.symlink(src, alias)
    for args in [(src,), (src, src), (src, alias)]:
        with pytest.raises(arrowmm.ArrowInvalid, match="in_place=True"):
            add_statistics(*args)
    with pytest.raises(arrowmm.ArrowInvalid, match="another file"):
        add_statistics(src, tmp_path / "other.arrow", in_place=True)
    assert src.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["alias.arrow",
                                                                            "src.arrow"]
    add_statistics(src, in_place=True)
    assert stat.S_IMODE(os.stat(src).st_mode) == 0o640
    assert len(_recorded(src)["batches"]) == 3 and _bodies(src) == bodies
    assert pa_ipc.open_file(src).read_all().equals(pa_ipc.open_file(pa.BufferReader(before))
                                                    .read_all())
    # a new destination never gets more permission bits than the source has
    os.chmod(src, 0o600)
    new = tmp_path / "new.arrow"
    add_statistics(src, new)
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o600


def test_a_failed_write_leaves_the_original_and_no_temporary(tmp_path, monkeypatch):
    src = _pyarrow_file(tmp_path / "src.arrow")
    before = src.read_bytes()

    def full_disk(self, parts):
        os.write(self.fd, b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(footer_statistics.Sink, "write", full_disk)
    for dest, in_place in [(None, True), (tmp_path / "dst.arrow", False)]:
        with pytest.raises(OSError, match="No space"):
            add_statistics(src, dest, in_place=in_place)
    assert src.read_bytes() == before and os.listdir(tmp_path) == ["src.arrow"]


def test_a_crash_mid_way_leaves_the_original_intact(tmp_path):
    """A process killed while it writes (here: exits in the middle of the copy) leaves the
    source whole under its name; what it wrote is only a hidden temporary."""
    src = _pyarrow_file(tmp_path / "src.arrow", batches=20)
    before = src.read_bytes()
    script = (
        "import os, sys, arrowmm\n"
        "from arrowmm.ipc.write import footer_statistics as fs\n"
        "def dying(self, parts):\n"
        "    os.write(self.fd, bytes(memoryview(parts[2])[:100]))\n"
        "    os._exit(9)\n"
        "fs.Sink.write = dying\n"
        "fs.add_statistics(sys.argv[1], in_place=True)\n")
    proc = subprocess.run([sys.executable, "-c", script, str(src)], timeout=300)
    assert proc.returncode == 9
    assert src.read_bytes() == before
    left = [n for n in os.listdir(tmp_path) if n != "src.arrow"]
    assert len(left) == 1 and left[0].startswith(".src.arrow.") and left[0].endswith(
        ".arrowmm-tmp")


def test_what_it_cannot_keep_is_refused(tmp_path):
    stream = tmp_path / "s.arrows"
    with pa_ipc.new_stream(str(stream), _table(0).schema) as w:
        w.write_table(_table(0))
    with pytest.raises(arrowmm.ArrowInvalid, match="IPC stream"):
        add_statistics(stream, tmp_path / "out.arrow")
    with pytest.raises(arrowmm.ArrowInvalid, match="source must be a path"):
        add_statistics(b"ARROW1", tmp_path / "out.arrow")
    with pytest.raises(FileNotFoundError):
        add_statistics(tmp_path / "missing.arrow", tmp_path / "out.arrow")
    assert not (tmp_path / "out.arrow").exists()


def test_convert_statistics_on_the_command_line(tmp_path):
    src = _pyarrow_file(tmp_path / "src.arrow", compression="zstd")
    kept, packed = tmp_path / "kept.arrow", tmp_path / "packed.arrows"
    proc = subprocess.run([sys.executable, "-m", "arrowmm", "convert", str(src), str(kept),
                           "--statistics"], capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert b"statistics added (the batches copied as they are)" in proc.stderr
    assert _bodies(kept) == _bodies(src)  # (still ZSTD: nothing re-encoded)
    assert len(_recorded(kept)["batches"]) == 3
    # with another change the batches are re-written, the writer recording statistics
    proc = subprocess.run([sys.executable, "-m", "arrowmm", "convert", str(src), str(packed),
                           "--statistics", "--compression", "lz4"], capture_output=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    with arrowmm.open_stream(packed) as reader:
        docs = [json.loads(b.metadata[STATISTICS_KEY])["columns"]["x"] for b in reader]
    assert [(d["min"], d["max"]) for d in docs] == [(0, 9), (10, 19), (20, 29)]
    assert pa_ipc.open_stream(packed).read_all().equals(pa_ipc.open_file(src).read_all())


def test_the_docstring_example_runs():
    result = doctest.testmod(footer_statistics, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_an_append_holds_it_off_and_is_not_lost(tmp_path):
    """In place, the file is read under the lock appenders take: while an append runs,
    add_statistics waits (here: gives up after lock_timeout), then keeps the appended batch."""
    src = _pyarrow_file(tmp_path / "src.arrow")
    with arrowmm.append_file(src) as writer:
        with pytest.raises(TimeoutError, match="another process is appending"):
            add_statistics(src, in_place=True, lock_timeout=0.1)
        writer.write(arrowmm.record_batch(_table(3)))
    add_statistics(src, in_place=True)
    assert [b["rows"] for b in _recorded(src)["batches"]] == [ROWS] * 4
    assert pa_ipc.open_file(src).read_all().column("x").to_pylist() == list(range(4 * ROWS))
