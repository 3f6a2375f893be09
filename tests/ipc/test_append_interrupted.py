"""An append interrupted at either end: while its marker goes in, and after its trailer.

Two defects review 13 proved: an error after the new trailer (Ctrl-C in its fsync, a failed
state byte) cut an append that readers already saw, whose arrays then read zeros (or SIGBUS
in another process); a disk that filled while the append marker went in left a partial
marker that every reader, and the next append, refused.
"""
import errno
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow.ipc as pa_ipc
import pytest

import arrowmm

SCHEMA = arrowmm.schema([("t", arrowmm.int64())])


def _new(path):
    with arrowmm.new_file(path, SCHEMA) as w:
        w.write({"t": np.arange(3)})


def _t(path):
    """The column as arrowmm and pyarrow read it (they must agree)."""
    with arrowmm.open_file(path) as r:
        values = r.read_all().column("t").to_pylist()
    with pa_ipc.open_file(path) as r:
        assert r.read_all().column("t").to_pylist() == values
    return values


def test_ctrl_c_after_the_trailer_keeps_the_append_readers_saw(tmp_path, monkeypatch):
    """Ctrl-C during the trailer's fsync (the slow step after it): the append is committed,
    a reader that opened it meanwhile keeps its values, and the error still reaches the
    caller."""
    path = str(tmp_path / "log.arrow")
    _new(path)
    old_size = os.path.getsize(path)
    real_fsync = os.fsync
    held = {}

    def fsync(fd):
        real_fsync(fd)
        with open(path, "rb") as f:
            data = f.read()
        if len(data) > old_size and data.endswith(b"ARROW1") and "reader" not in held:
            held["reader"] = reader = arrowmm.open_file(path)  # (sees the append)
            held["values"] = reader.get_batch(1).column("t").to_numpy()
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(KeyboardInterrupt):
        with arrowmm.append_file(path) as w:
            w.write({"t": np.arange(3, 6)})
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert held["values"].tolist() == [3, 4, 5]
    held["reader"].close()
    assert _t(path) == [0, 1, 2, 3, 4, 5]
    with arrowmm.append_file(path) as w:  # (the marker left "in progress" is stale, not damage)
        w.write({"t": [6]})
    assert _t(path) == [0, 1, 2, 3, 4, 5, 6]


def test_a_failed_state_byte_keeps_the_committed_append(tmp_path, monkeypatch):
    """An I/O error setting the marker's state byte, after the trailer: raised, not cut."""
    path = str(tmp_path / "log.arrow")
    _new(path)

    def pwrite(fd, data, offset):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "pwrite", pwrite)
    with pytest.raises(OSError, match="Input/output"):
        with arrowmm.append_file(path) as w:
            w.write({"t": np.arange(3, 6)})
    monkeypatch.undo()
    assert _t(path) == [0, 1, 2, 3, 4, 5]


_FULL_DISK_APPEND = textwrap.dedent("""
    import os, resource, signal, sys, numpy as np, arrowmm
    path, room = sys.argv[1], int(sys.argv[2])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # (then writes past the limit fail: EFBIG)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) + room, hard))
    try:
        with arrowmm.append_file(path) as w:
            w.write({"t": np.arange(3, 6)})
        print("no error")
    except OSError as exc:
        print(f"OSError {exc.errno}")
""")


@pytest.mark.parametrize("room", [1, 10, 37])
def test_a_disk_that_fills_while_the_marker_goes_in_leaves_the_file_as_it_was(tmp_path, room):
    """A process whose file size limit (a full disk) falls inside the padding and append
    marker gets the OSError, and the file keeps its bytes: every reader opens it, the next
    append works."""
    path = str(tmp_path / "log.arrow")
    _new(path)
    with open(path, "rb") as f:
        before = f.read()
    done = subprocess.run([sys.executable, "-c", _FULL_DISK_APPEND, path, str(room)],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == f"OSError {errno.EFBIG}", done.stdout + done.stderr
    with open(path, "rb") as f:
        assert f.read() == before
    assert _t(path) == [0, 1, 2]
    with arrowmm.append_file(path) as w:
        w.write({"t": [3]})
    assert _t(path) == [0, 1, 2, 3]


def test_ctrl_c_in_the_markers_fsync_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    """An append abandoned while its marker is fsync'd leaves no marker (pyarrow would refuse
    a file ending in one)."""
    path = str(tmp_path / "log.arrow")
    _new(path)
    with open(path, "rb") as f:
        before = f.read()

    def fsync(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(KeyboardInterrupt):
        arrowmm.append_file(path)
    monkeypatch.undo()
    with open(path, "rb") as f:
        assert f.read() == before
