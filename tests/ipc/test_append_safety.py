"""Appending next to in-place rewrites, empty appends and the cost of reading generations.

Three defects a review proved: ``repair(path, path)`` renamed over a file an appender was
writing (its rows were lost without an error); a file with many generations holding no
message made the stream reader recurse once per generation (``RecursionError``); reading
an appended file as a stream copied up to 64 MiB at each generation boundary.
"""
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow.ipc as pa_ipc
import pytest

import arrowmm
from arrowmm.ipc.read import trailer

SCHEMA = arrowmm.schema([("x", arrowmm.int64())])

# Holds the append lock (a batch written, not closed) until a line arrives on stdin.
_HOLDER = textwrap.dedent("""
    import sys, arrowmm
    w = arrowmm.append_file(sys.argv[1])
    w.write({"x": [4, 5]})
    print("locked", flush=True)
    sys.stdin.readline()
    w.close()
""")

_REPAIRER = textwrap.dedent("""
    import sys, arrowmm
    print("repairing", flush=True)
    report = arrowmm.repair(sys.argv[1], sys.argv[1], lock_timeout=None)
    print(report.rows, flush=True)
""")


def _new(path, values=(0, 1, 2, 3)):
    with arrowmm.new_file(path, SCHEMA) as w:
        w.write({"x": list(values)})


def _x(path):
    with arrowmm.open_file(path) as r:
        mm = r.read_all().column("x").to_pylist()
    with pa_ipc.open_file(path) as r:
        assert r.read_all().column("x").to_pylist() == mm
    return mm


def test_repair_in_place_waits_for_a_running_append(tmp_path):
    """A repair in place while another process appends: it times out with a clear error,
    or (waiting) repairs the file after the append, keeping the appended rows."""
    path = str(tmp_path / "log.arrow")
    _new(path)
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, path], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    repairer = None
    try:
        assert holder.stdout.readline().strip() == "locked"
        inode = os.stat(path).st_ino
        with pytest.raises(TimeoutError, match="cannot repair: another process is appending"):
            arrowmm.repair(path, path, lock_timeout=0.1)
        assert os.stat(path).st_ino == inode  # nothing was written
        repairer = subprocess.Popen([sys.executable, "-c", _REPAIRER, path],
                                    stdout=subprocess.PIPE, text=True)
        assert repairer.stdout.readline().strip() == "repairing"
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.wait(timeout=120) == 0
        out, _ = repairer.communicate(timeout=120)
        assert repairer.returncode == 0
        assert out.split() == ["6"]
    finally:
        for p in (holder, repairer):
            if p is not None and p.poll() is None:
                p.kill()
    assert _x(path) == [0, 1, 2, 3, 4, 5]


def test_in_process_repair_during_append_raises_instead_of_losing_rows(tmp_path):
    """The reviewer's script: the same process repairs in place while its own appender is
    open.  The repair cannot get the lock (it is held) and says so; the rows stay."""
    path = str(tmp_path / "log.arrow")
    _new(path)
    with arrowmm.append_file(path) as w:
        w.write({"x": [4, 5]})
        with pytest.raises(TimeoutError, match=os.path.basename(path)):
            arrowmm.repair(path, path, lock_timeout=0.05)
        w.write({"x": [6]})
    assert _x(path) == [0, 1, 2, 3, 4, 5, 6]


def test_append_to_a_file_replaced_meanwhile_raises(tmp_path):
    """A writer that does not take the lock renames a new file over the one being appended
    to: closing the appender raises, naming the path, instead of reporting success."""
    path = str(tmp_path / "log.arrow")
    other = str(tmp_path / "other.arrow")
    _new(path)
    _new(other, [9])
    w = arrowmm.append_file(path)
    w.write({"x": [4, 5]})
    os.replace(other, path)
    with pytest.raises(arrowmm.ArrowInvalid, match="was replaced.*are not in"):
        w.close()
    assert _x(path) == [9]


def test_an_appender_that_waited_for_a_repair_appends_to_the_repaired_file(tmp_path):
    """The lock is taken on the file the path names once granted: a repair in another
    process holds it, replaces the file, and the waiting appender writes to the new one."""
    path = str(tmp_path / "log.arrow")
    _new(path)
    script = textwrap.dedent("""
        import os, sys, fcntl, time, arrowmm
        path = sys.argv[1]
        fd = os.open(path, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)  # as repair does, then the repair itself
        print("locked", flush=True)
        sys.stdin.readline()
        tmp = path + ".new"
        with arrowmm.new_file(tmp, arrowmm.schema([("x", arrowmm.int64())])) as w:
            w.write({"x": [0, 1, 2, 3]})
        os.replace(tmp, path)
        os.close(fd)
    """)
    child = subprocess.Popen([sys.executable, "-c", script, path], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "locked"
        old_inode = os.stat(path).st_ino
        child.stdin.write("go\n")
        child.stdin.flush()
        with arrowmm.append_file(path) as w:  # waits for the child's lock
            w.write({"x": [4]})
        assert child.wait(timeout=120) == 0
    finally:
        if child.poll() is None:
            child.kill()
    assert os.stat(path).st_ino != old_inode
    assert _x(path) == [0, 1, 2, 3, 4]


def test_an_append_without_batches_writes_nothing(tmp_path):
    path = str(tmp_path / "f.arrow")
    _new(path)
    with open(path, "rb") as f:
        before = f.read()
    for _ in range(1200):
        with arrowmm.append_file(path, fsync=False):
            pass
    with open(path, "rb") as f:
        assert f.read() == before


def _empty_generations(path, count):
    """Add ``count`` generations holding no message (what appends without batches wrote
    before they wrote nothing): padding, end-of-stream, the same footer, its trailer."""
    with open(path, "rb") as f:
        data = f.read()
    footer_len = struct.unpack_from("<i", data, len(data) - 10)[0]
    footer = data[len(data) - 10 - footer_len:len(data) - 10]
    out = bytearray(data)
    for _ in range(count):
        out += b"\x00" * (-len(out) % 8)
        out += b"\xff\xff\xff\xff\x00\x00\x00\x00" + footer + struct.pack("<i", footer_len)
        out += b"ARROW1"
    with open(path, "wb") as f:
        f.write(out)


def test_many_generations_without_messages_read_as_a_stream_and_repair(tmp_path):
    path = str(tmp_path / "f.arrow")
    _new(path)
    _empty_generations(path, 1200)
    with arrowmm.append_file(path, fsync=False) as w:
        w.write({"x": [4]})
    assert _x(path) == [0, 1, 2, 3, 4]
    with arrowmm.open_stream(path) as r:
        assert [v for b in r for v in b.column("x").to_pylist()] == [0, 1, 2, 3, 4]
    out = str(tmp_path / "repaired.arrow")
    report = arrowmm.repair(path, out)
    assert report.rows == 5 and report.batches == 2
    assert _x(out) == [0, 1, 2, 3, 4]


def test_stream_reading_an_appended_file_copies_only_its_footers(tmp_path, monkeypatch):
    """The forward search for each generation's trailer copies a few KiB, not up to 64 MiB
    of the batches after it (counted through ``trailer.copy_bytes``)."""
    path = str(tmp_path / "big.arrow")
    _new(path)
    for k in range(4):
        with arrowmm.append_file(path, fsync=False) as w:
            w.write({"x": np.arange(k, k + 500_000, dtype=np.int64)})  # 4 MB per generation
    copied = []
    real = trailer.copy_bytes

    def counting(region, start, length):
        copied.append(length)
        return real(region, start, length)

    monkeypatch.setattr(trailer, "copy_bytes", counting)
    with arrowmm.open_stream(path) as r:
        assert sum(b.num_rows for b in r) == 4 + 4 * 500_000
    assert len(copied) >= 4  # one search per generation boundary (the counter is used)
    assert sum(copied) <= 5 * (4 << 10), copied  # (before: the rest of the file, ~16 MB)


def test_a_footer_larger_than_the_first_step_is_found(tmp_path):
    """A footer over several search steps (thousands of Blocks): the trailer is still found
    (the search grows its step; a magic across a step boundary is not missed)."""
    path = str(tmp_path / "many.arrow")
    with arrowmm.new_file(path, SCHEMA) as w:
        for i in range(3000):
            w.write({"x": [i]})
    with arrowmm.append_file(path, fsync=False) as w:
        w.write({"x": [3000]})
    with arrowmm.open_stream(path) as r:
        assert [v for b in r for v in b.column("x").to_pylist()] == list(range(3001))
