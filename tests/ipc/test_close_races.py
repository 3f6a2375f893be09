"""``close()`` under reads (review 9): a closed reader raises ``ArrowInvalid`` ("the reader is
closed") on every read, and a read ``close()`` lands in from another thread either finishes on
what it had taken or raises that; it never reads as empty, returns another file's bytes, or
crashes.

The races are made repeatable, not timed: ``close_at`` stops the reading thread at a chosen line
of arrowmm (a trace hook) while another thread runs ``reader.close()``, then lets the read go
on.  Cases that crashed the interpreter (SIGSEGV) run in a child process.
"""
from __future__ import annotations

import io
import linecache
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

import arrowmm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def files(tmp_path):
    """(IPC file, IPC stream, their table): 4 batches of ints, strings and a dictionary."""
    n = 3000
    batches = [pa.record_batch(
        [pa.array(np.arange(n) + k * n),
         pa.array([f"s{k}_{i}" for i in range(n)]),
         pa.array([f"k{i % 13}" for i in range(n)]).dictionary_encode()],
        ["i", "s", "d"]) for k in range(4)]
    fpath, spath = str(tmp_path / "t.arrow"), str(tmp_path / "t.arrows")
    with ipc.new_file(fpath, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    with ipc.new_stream(spath, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    return fpath, spath, pa.Table.from_batches(batches)


def close_at(reader, file_suffix, func, line_contains=None, then=None):
    """Arm a trace hook on this thread: the first time it reaches ``func`` of a file ending in
    ``file_suffix`` (its call, or its line containing ``line_contains``), another thread runs
    ``reader.close()`` (and ``then()``), and this one goes on once that returns.  Returns a
    list that holds True once it fired."""
    fired = []

    def closer():
        reader.close()
        if then is not None:
            then()

    def tracer(frame, event, arg):
        if fired:
            return None
        code = frame.f_code
        if code.co_name == func and code.co_filename.endswith(file_suffix):
            if (event == "call") if line_contains is None else (
                    event == "line" and
                    line_contains in linecache.getline(code.co_filename, frame.f_lineno)):
                fired.append(True)
                sys.settrace(None)
                t = threading.Thread(target=closer)
                t.start()
                t.join()
                return None
        return tracer

    sys.settrace(tracer)
    return fired


def outcome(read):
    """What ``read()`` gave: its value, or the exception it raised (the trace hook disarmed)."""
    try:
        return read()
    except Exception as exc:  # noqa: BLE001  (the tests say which exceptions are right)
        return exc
    finally:
        sys.settrace(None)


def closed_error(out) -> bool:
    return isinstance(out, arrowmm.ArrowInvalid) and "closed" in str(out)


def run_child(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


# F4: a read passing its check before close() used the region close() had dropped: SIGSEGV in
# _flatbuf.frame_at, whose typed argument took None.
@pytest.mark.parametrize("kind", ["file_get_batch", "stream_iter", "indexed_get_batch"])
def test_close_under_a_read_of_the_mapping_raises_not_crashes(files, kind):
    fpath, spath, _ = files
    p = run_child(f"""
        import arrowmm
        from tests.ipc.test_close_races import close_at, outcome
        if {kind!r} == "file_get_batch":
            r = arrowmm.open_file({fpath!r})
            close_at(r, "source.py", "message")
            read = lambda: r.get_batch(1)
        elif {kind!r} == "stream_iter":
            r = arrowmm.open_stream({spath!r})
            next(iter(r))
            close_at(r, "stream_reader.py", "_read_message", "read_message_at(")
            read = lambda: list(r)
        else:
            r = arrowmm.index_stream({spath!r})
            close_at(r, "indexed.py", "_message_at")
            read = lambda: r.get_batch(1)
        out = outcome(read)
        print("RESULT", type(out).__name__, out)
        """)
    assert p.returncode == 0, f"child died with {p.returncode}: {p.stderr[-800:]}"
    assert "RESULT ArrowInvalid the reader is closed" in p.stdout or \
        "RESULT RecordBatch" in p.stdout, p.stdout


def test_frame_at_refuses_none():
    p = run_child("""
        from arrowmm._core._flatbuf import frame_at
        try:
            frame_at(None, 8, 0)
        except TypeError as exc:
            print("RESULT TypeError", exc)
        """)
    assert p.returncode == 0, f"child died with {p.returncode}"
    assert "RESULT TypeError" in p.stdout


# F0: close() under a pread of an mmap=False reader closed the descriptor the read was about to
# use; an open in another thread got the same number, and the read returned that file's bytes.
def test_unmapped_close_under_a_read_never_reads_another_file(tmp_path):
    def write(path, base):
        bs = [pa.record_batch([pa.array(np.arange(1000) + base + k * 1000),
                               pa.array([f"{base}-{i:04d}" for i in range(1000)])], ["i", "s"])
              for k in range(3)]
        with ipc.new_file(path, bs[0].schema) as w:
            for b in bs:
                w.write_batch(b)
    a, b = str(tmp_path / "A.arrow"), str(tmp_path / "B.arrow")
    write(a, 1)
    write(b, 7)
    ra = arrowmm.open_file(a, mmap=False)
    fd = ra._source._fd
    others = []
    fired = close_at(ra, "unmapped.py", "_read_into",
                     then=lambda: others.append(arrowmm.open_file(b, mmap=False)))

    def read():
        batch = ra.get_batch(1)
        return batch.column("i").to_pylist()[:3], batch.column("s").to_pylist()[:1]
    got = outcome(read)
    assert fired
    assert closed_error(got) or got == ([1001, 1002, 1003], ["1-0000"]), got
    assert others[0]._source._fd != fd  # (the descriptor was not free while A read it)
    with pytest.raises(OSError):  # the last read out closed it
        os.fstat(fd)
    others[0].close()


# F1: a closed FileReader read as an empty file (close() had emptied its footer's blocks).
@pytest.mark.parametrize("mmap", [True, False])
@pytest.mark.parametrize("what", ["iter", "read_all", "num_rows", "count_rows", "head", "tail",
                                  "slice", "getitem_slice", "c_stream"])
def test_a_closed_file_reader_refuses_every_read(files, what, mmap):
    r = arrowmm.open_file(files[0], mmap=mmap)
    r.close()
    reads = {
        "iter": lambda: list(r),
        "read_all": lambda: r.read_all(),
        "num_rows": lambda: r.num_rows,
        "count_rows": lambda: r.count_rows(),
        "head": lambda: r.head(10),
        "tail": lambda: r.tail(10),
        "slice": lambda: r.slice(0, 10),
        "getitem_slice": lambda: r[0:2],
        "c_stream": lambda: pa.RecordBatchReader.from_stream(r).read_all(),
    }
    with pytest.raises(arrowmm.ArrowInvalid, match="the reader is closed"):
        reads[what]()
    assert len(r) == 4  # (the footer's count still answers)


# F2: close() landing as a stream's next batch is read ended the iteration as if the stream
# were complete (1 batch of 4).
def test_stream_closed_mid_iteration_raises_not_ends(files):
    _, spath, expected = files
    r = arrowmm.open_stream(spath)
    got = [next(iter(r))]
    fired = close_at(r, "stream_reader.py", "_read_message")
    out = outcome(lambda: got.extend(r))
    assert fired
    assert closed_error(out) or sum(b.num_rows for b in got) == expected.num_rows, \
        f"{out!r} after {len(got)} of 4 batches"


# F3: close() landing as the dictionaries are read: dictionaries() gave {}, read_all() a short
# table (the reads walked the emptied block lists).
def test_dictionaries_racing_close_are_complete_or_refused(files):
    r = arrowmm.open_file(files[0])
    fired = close_at(r, "file_reader.py", "_dictionaries")
    out = outcome(r.dictionaries)
    assert fired
    assert closed_error(out) or (len(out) == 1 and len(out[0]) == 13), out


def test_read_all_racing_close_is_complete_or_refused(files):
    fpath, _, expected = files
    r = arrowmm.open_file(fpath)
    fired = close_at(r, "file_reader.py", "_plain_batches")
    out = outcome(r.read_all)
    assert fired
    assert closed_error(out) or out.num_rows == expected.num_rows, out


# F5: reads racing close() raised errors naming no closed reader.
def test_get_batch_racing_close_says_closed_not_out_of_range(files):
    r = arrowmm.open_file(files[0])
    fired = close_at(r, "file_reader.py", "get_batch", "batch_index(")
    out = outcome(lambda: r.get_batch(1))
    assert fired
    assert isinstance(out, arrowmm.RecordBatch) or closed_error(out), repr(out)


def test_dictionary_column_racing_close_does_not_blame_the_file(files):
    r = arrowmm.open_file(files[0])
    fired = close_at(r, "file_reader.py", "_dictionaries")
    out = outcome(lambda: r.get_batch(1).column("d").to_pylist())
    assert fired
    assert out == files[2].column("d").chunk(1).to_pylist() or closed_error(out), repr(out)


def test_stream_batch_racing_close_says_closed_not_attributeerror(files):
    _, spath, expected = files
    r = arrowmm.open_stream(spath)
    next(iter(r))
    fired = close_at(r, "stream_reader.py", "_read_next_batch", "return self._record_batch(")
    got = []
    out = outcome(lambda: got.extend(r))
    assert fired
    assert closed_error(out), repr(out)
    assert got[0].column("s").to_pylist() == expected.column("s").chunk(1).to_pylist()


# A compressed stream's first batch read as close() lands: its decompression budget was made
# from the size of a source already dropped (0 bytes: the 64 MiB floor), so decoding a batch
# the reader had read whole was refused as too big.
def test_stream_batch_read_across_close_keeps_its_budget(tmp_path):
    table = pa.table({"x": pa.array(np.zeros(20000, dtype=np.int64))})
    path = str(tmp_path / "z.arrows")
    with ipc.new_stream(path, table.schema,
                        options=ipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_table(table)
    with arrowmm.limits.override(min_reader_decompression_budget=1024):
        r = arrowmm.open_stream(path)
        fired = close_at(r, "stream_reader.py", "_read_message", "read_message_at(")
        batch = outcome(lambda: next(iter(r)))
        assert fired
        out = outcome(lambda: batch.column("x").to_pylist()) if isinstance(
            batch, arrowmm.RecordBatch) else batch
    assert out == table.column("x").to_pylist() or closed_error(out), repr(out)[:300]


def test_a_range_source_closed_under_a_read_waits_for_it(tmp_path):
    """A ``RangeSource`` (the reader of file objects and URLs) closed from another thread while
    a read is inside its file object: ``close()`` waits for that read, which returns its bytes
    (the file was closed under it: 'read failed: I/O operation on closed file', or an
    AttributeError on the dropped file); a read after the close says the source is closed."""
    from arrowmm.ipc.read.ranged import RangeSource
    data = bytes(range(256)) * 64
    inside, go_on = threading.Event(), threading.Event()

    class Slow(io.BytesIO):
        armed = False

        def seek(self, *args):
            if self.armed:  # (the read's seek, under the source's lock; not the open's)
                inside.set()
                go_on.wait(10)
            return super().seek(*args)

    slow = Slow(data)
    source = RangeSource(slow, "slow", owns=True)
    slow.armed = True
    got = {}
    reader = threading.Thread(target=lambda: got.update(bytes=source.pread(100, 50).tobytes()))
    reader.start()
    assert inside.wait(10)
    closer = threading.Thread(target=source.close)
    closer.start()
    closer.join(0.2)
    assert closer.is_alive()  # (waiting for the read)
    go_on.set()
    reader.join(10)
    closer.join(10)
    assert got["bytes"] == data[100:150]
    with pytest.raises(arrowmm.ArrowInvalid, match="the source is closed"):
        source.pread(0, 8)
