"""The Python Spark source reads the files it planned, or says a file was replaced since
(review, session 42): a task read the planned batch indices, and skipped the batches the old
footer's statistics ruled out, in whatever file then had the path.  Checked at the functions
the source's reader calls (describe_file, plan_pieces, read_piece), without a Spark session."""
import os

import pytest

import arrowmm
from arrowmm.spark.files import describe_file
from arrowmm.spark.planning import plan_pieces, read_piece


def _write_replacing(path, batches) -> None:
    tmp = path.parent / ".tmp.arrow"  # (written beside, renamed over: as writers publish)
    with arrowmm.new_file(tmp, arrowmm.schema([("x", arrowmm.int64())]), statistics=True) as w:
        for values in batches:
            w.write({"x": values})
    os.replace(tmp, path)


def _planned_rows(path, skip) -> list:
    info = describe_file(str(path))
    return plan_pieces([info], lambda f, b: b not in skip, 1 << 30, 0)


def _read(parts) -> list:
    return [v for part in parts for piece in part for batch in read_piece(piece)
            for v in batch.column("x").to_pylist()]


@pytest.mark.parametrize("new_batches", [4, 1], ids=["same-count", "fewer"])
def test_a_file_replaced_since_planning_is_refused_not_read_by_the_old_plan(tmp_path,
                                                                            new_batches):
    # (batches 0 and 1 skipped as the statistics of x >= 2 rule them out: the task read
    # batches 2 and 3 of the new file, x = 12, 13, rows of neither file; fewer batches, a
    # raw IndexError)
    path = tmp_path / "a.arrow"
    _write_replacing(path, [[i] for i in range(4)])
    parts = _planned_rows(path, {0, 1})
    assert _read(parts) == [2, 3]  # (the plan, read while the file is the planned one)
    _write_replacing(path, [[10 + i] for i in range(new_batches)])
    with pytest.raises(arrowmm.ArrowInvalid, match="replaced since this read was planned"):
        _read(parts)
    assert _read(_planned_rows(path, set())) == [10 + i for i in range(new_batches)]


def _planned_where_x_at_least_12(path) -> list:
    info = describe_file(str(path))

    def keep(f, b):  # (what pushFilters' NONE does)
        return info.batches[b].stats["x"]["max"] >= 12
    return plan_pieces([info], keep, 1 << 30, 0)


def test_a_file_rewritten_in_place_since_planning_is_refused(tmp_path):
    # (review, session 43: the same inode and size passed the old identity, (device, inode,
    # size): the plan for x >= 12 read batches 2 and 3 of the new file, [22, 23])
    path, new = tmp_path / "a.arrow", tmp_path / "new.arrow"
    _write_replacing(path, [[10 + i] for i in range(4)])
    _write_replacing(new, [[20 + i] for i in range(4)])
    os.utime(path, ns=(0, 0))  # (so the rewrite's time differs whatever the clock's grain)
    parts = _planned_where_x_at_least_12(path)
    assert os.path.getsize(new) == os.path.getsize(path)
    with open(path, "r+b") as f:  # (written into the same inode, as pyarrow's new_file(path))
        f.write(new.read_bytes())
    with pytest.raises(arrowmm.ArrowInvalid, match="replaced since this read was planned"):
        _read(parts)


def test_a_stream_replaced_since_planning_is_refused(tmp_path):
    # (review, session 43: stream pieces carried no identity: [22, 23])
    path, new = tmp_path / "a.arrows", tmp_path / ".new.arrows"
    for p, base in ((path, 10), (new, 20)):
        with arrowmm.new_stream(p, arrowmm.schema([("x", arrowmm.int64())]),
                                statistics=True) as w:
            for i in range(4):
                w.write({"x": [base + i]})
    parts = _planned_where_x_at_least_12(path)
    assert _read(parts) == [12, 13]
    os.replace(new, path)
    with pytest.raises(arrowmm.ArrowInvalid, match="replaced since this read was planned"):
        _read(parts)


def test_a_dangling_link_named_as_arrow_in_a_folder_is_named_not_skipped(tmp_path):
    # (review, session 43: its rows silently left the read, as in arrowmm.dataset's walk)
    from arrowmm.spark.files import find_data_files
    arrowmm.write_file(str(tmp_path / "a.arrow"), {"x": [1]})
    os.symlink(tmp_path / "gone.arrow", tmp_path / "b.arrow")
    with pytest.raises(FileNotFoundError, match="b.arrow"):
        find_data_files([str(tmp_path)])
    (tmp_path / "b.arrow").unlink()
    os.symlink(tmp_path / "a.arrow", tmp_path / "b.arrow")  # (a link that reaches a file)
    assert [os.path.basename(p) for p in find_data_files([str(tmp_path)])] == ["a.arrow",
                                                                             "b.arrow"]


def test_a_stream_grown_since_planning_reads_the_planned_batches(tmp_path):
    # (review, session 43: a stream's identity compared whole refused a stream still being
    # written, whose planned messages had not changed)
    path = tmp_path / "a.arrows"
    schema = arrowmm.schema([("x", arrowmm.int64())])
    with open(path, "wb") as f:
        writer = arrowmm.new_stream(f, schema, statistics=True)
        for i in range(4):
            writer.write({"x": [10 + i]})
        f.flush()
        parts = _planned_where_x_at_least_12(path)
        os.utime(path, ns=(0, 0))  # (so the growth's times differ whatever the clock's grain)
        writer.write({"x": [99]})
        writer.close()
    assert _read(parts) == [12, 13]
