"""The Python Spark source's tasks read local files by ``pread``, not mapped (session 44): a
file another program truncated under a task killed the worker with SIGBUS, which Spark
reported as a crashed worker, never naming the file.  Checked at the functions the source's
reader calls (describe_file, plan_pieces, read_piece), and once through a Spark session."""
import mmap
import os
import subprocess
import sys
import textwrap

import pytest

import arrowmm
from arrowmm.spark.files import describe_file
from arrowmm.spark.planning import plan_pieces, read_piece


def _write(path, fmt: str, batches: int = 4, rows: int = 50_000) -> None:
    schema = arrowmm.schema([("x", arrowmm.int64()), ("s", arrowmm.dictionary(arrowmm.int32(),
                                                                          arrowmm.string()))])
    new = arrowmm.new_file if fmt == "file" else arrowmm.new_stream
    with new(str(path), schema, statistics=True) as w:
        for i in range(batches):
            shift = i if fmt == "stream" else 0  # (a stream's dictionary replaced per batch)
            w.write({"x": list(range(i * rows, (i + 1) * rows)),
                     "s": [None if k % 7 == 0 else f"v{(shift + k) % 5}" for k in range(rows)]})


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_a_file_truncated_under_a_task_is_an_error_naming_it_not_a_crash(tmp_path, fmt):
    # (a mapped read touched a page the cut took away: SIGBUS killed the process, rc -7)
    path = tmp_path / f"a.{'arrow' if fmt == 'file' else 'arrows'}"
    _write(path, fmt)
    child = textwrap.dedent(f"""
        import os
        import arrowmm
        from arrowmm.ipc.read.indexed import IndexedStreamReader
        from arrowmm.spark.files import describe_file
        from arrowmm.spark.planning import plan_pieces, read_piece
        path = {str(path)!r}
        opened = arrowmm.open_file(path) if {fmt!r} == "file" else IndexedStreamReader(path)
        (offset, length), *_ = opened.batch_extents()
        opened.close()
        # the cut leaves batch 0 (read before it) and takes the pages of the batches after it
        cut = (offset + length) // {mmap.PAGESIZE} * {mmap.PAGESIZE}
        [[piece]] = plan_pieces([describe_file(path)], lambda f, b: True, 1 << 40, 0)
        batches = read_piece(piece)
        total = int(next(batches).column("x").to_numpy().sum())
        os.truncate(path, cut)  # (another program truncates the file)
        try:
            for batch in batches:
                total += int(batch.column("x").to_numpy().sum())
            print("read on:", total)
        except arrowmm.ArrowInvalid as exc:
            print("refused:", cut, " ".join(str(exc).split()))
    """)
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"the task died (rc {proc.returncode}): {proc.stderr[-300:]}"
    assert proc.stdout.startswith("refused:"), proc.stdout
    cut = proc.stdout.split()[1]
    assert str(path) in proc.stdout and f"ends at byte {cut} " in proc.stdout, proc.stdout


def _values(batches) -> list:
    return [(b.column("x").to_pylist(), b.column("s").to_pylist()) for b in batches]


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_unmapped_reads_equal_mapped_reads_and_keep_the_planned_identity(tmp_path, fmt):
    # (a stream's pieces carry their slice of the message index: the dictionary messages
    # before their batches, read by pread too)
    from arrowmm.spark.storage import storage_for
    path = str(tmp_path / "a.arrow")
    _write(path, fmt, batches=5, rows=3_000)
    info = describe_file(path)  # (planned as a task reads: by default, unmapped)
    parts = plan_pieces([info], lambda f, b: b != 1, info.batches[0].nbytes * 2, 0)
    assert len(parts) > 1
    read = {mapped: [_values(read_piece(p, mmap=mapped))
                     for part in parts for p in part] for mapped in (False, True)}
    assert read[False] == read[True]
    assert [x[0] for piece in read[False] for x, _ in piece] == [0, 6_000, 9_000, 12_000]
    path_, fmt_, _, entries, planned = parts[-1][-1]
    readers = {mapped: storage_for(path, mmap=mapped).open_reader(path, fmt, entries)
               for mapped in (False, True)}
    assert readers[False].file_identity() == readers[True].file_identity() == planned
    assert readers[True].memory()["mapped"] == os.path.getsize(path)
    with pytest.raises(arrowmm.ArrowInvalid, match="memory"):
        readers[False].memory()  # (the default reader maps nothing)
    for r in readers.values():
        r.close()


def test_every_cut_of_a_stream_reads_unmapped_as_mapped(tmp_path):
    # (the unmapped index reads each message's prefix, metadata and body by pread, checking
    # each length against the file: wherever the file ends, the same entries and values as the
    # mapped reader's, or the same error, never a read past the end)
    from arrowmm.ipc.read.indexed import IndexedStreamReader
    from arrowmm.ipc.read.unmapped import UnmappedIndexedStreamReader
    whole = tmp_path / "whole.arrows"
    _write(whole, "stream", batches=3, rows=10)
    data = whole.read_bytes()
    errors = 0
    for n in range(len(data) + 1):
        path = tmp_path / f"cut-{n}.arrows"
        path.write_bytes(data[:n])
        answers = []
        for source, reader in ((data[:n], IndexedStreamReader),
                               (str(path), UnmappedIndexedStreamReader)):
            try:
                with reader(source) as r:
                    answers.append((r.entries, r.batch_extents(), _values(r)))
            except arrowmm.ArrowError as exc:
                answers.append(type(exc).__name__)
        assert answers[0] == answers[1], f"cut at byte {n}: {answers}"
        errors += isinstance(answers[0], str)
        path.unlink()
    assert 0 < errors < len(data)


def test_a_spark_read_of_a_local_folder_reads_the_same_rows_unmapped_and_mapped(spark, tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    _write(folder / "a.arrow", "file", batches=3, rows=1_000)
    _write(folder / "b.arrows", "stream", batches=2, rows=1_000)
    expected = sorted(list(range(3_000)) + list(range(2_000)))

    def rows(**options):
        df = spark.read.format("arrowmm_python").option("cast", "true").options(**options) \
            .load(str(folder))  # (cast: Spark reads the dictionary column as strings)
        return sorted(r.x for r in df.select("x").collect())
    assert rows() == expected
    assert rows(mmap="true") == expected
    assert rows(mmap="false", maxPartitionBytes=str(20_000)) == expected
    with pytest.raises(Exception, match="option mmap must be true or false"):
        rows(mmap="maybe")
