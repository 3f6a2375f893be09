"""``repair(src, dst)`` of a file that another process appends to (round 3 review, finding 7):
``src`` is read under the append lock, so an appender never cuts the unfinished tail the salvage
walks through its mapping (the repairing process died of SIGBUS), and a new ``dst`` is never
more readable than ``src`` (finding 9)."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.ipc.read.trailer import IN_PROGRESS, STATE_OFFSET, aligned

_APPENDER = textwrap.dedent("""
    import sys
    import numpy as np
    import arrowmm
    path, timeout = sys.argv[1], (None if sys.argv[2] == "wait" else float(sys.argv[2]))
    try:
        with arrowmm.append_file(path, lock_timeout=timeout) as w:  # (cuts the unfinished tail)
            w.write({"x": np.arange(7) + 100})
    except TimeoutError as exc:
        print("busy:", exc)
        sys.exit(3)
    print("appended")
""")


def _killed_append(path) -> int:
    """``path`` as a SIGKILLed append leaves it (the committed 3 rows, the append marker still
    in progress, 20 complete batches, no trailer); returns the committed end."""
    arrowmm.write_file(str(path), {"x": np.arange(3)})
    committed = os.path.getsize(path)
    with arrowmm.append_file(str(path)) as w:
        for i in range(20):
            w.write({"x": np.arange(1000) + i})
    with open(path, "r+b") as f:
        f.seek(aligned(committed) + STATE_OFFSET)
        f.write(bytes([IN_PROGRESS]))  # (what the marker held before the trailer was written)
        f.truncate(os.path.getsize(path) - 10)
    with arrowmm.open_file(str(path)) as r:
        assert r.unfinished_bytes > 0 and r.num_rows == 3
    return committed


def test_an_appender_started_while_repair_reads_the_tail_waits_instead_of_killing_it(tmp_path):
    # The repairing process starts a real appender while the salvage is about to walk the
    # unfinished tail through the mapping.  Before, the appender took the lock at once, cut the
    # tail and appended; the walk then touched cut pages: SIGBUS (rc -7).  Now the appender,
    # asked not to wait (lock_timeout=0), finds the file locked by the repair.  (unfinished:
    # the salvage keeps the tail's batches; it walked them, and died, with False as well.)
    unfinished = True
    log, saved = tmp_path / "log.arrow", tmp_path / "saved.arrow"
    _killed_append(log)
    child = textwrap.dedent(f"""
        import subprocess, sys
        import arrowmm, arrowmm.ipc.write.repair as rep
        real = rep.salvage_messages
        def appender_then_salvage(region, *a, **k):
            run = subprocess.run([sys.executable, "-c", {_APPENDER!r}, {str(log)!r}, "0"],
                                 capture_output=True, text=True)
            print("appender:", run.returncode, run.stdout.strip(), run.stderr[-300:])
            return real(region, *a, **k)
        rep.salvage_messages = appender_then_salvage
        print(arrowmm.repair({str(log)!r}, {str(saved)!r}, unfinished={unfinished}).rows, "rows")
    """)
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, f"repair died (rc {run.returncode}; -7 is SIGBUS): " \
                                f"{run.stdout} {run.stderr[-500:]}"
    assert f"appender: 3 busy: [Errno 11] another process is appending to the file (its lock " \
           f"was not released within 0 s): '{log}'" in run.stdout
    rows = 3 + 20 * 1000 * unfinished
    assert f"\n{rows} rows" in run.stdout
    assert pa.ipc.open_file(str(saved)).read_all().num_rows == rows
    # the appender started after the repair cuts the tail and appends, as it would have
    after = subprocess.run([sys.executable, "-c", _APPENDER, str(log), "wait"],
                           capture_output=True, text=True, timeout=120)
    assert after.stdout.strip() == "appended", after.stderr[-500:]
    assert pa.ipc.open_file(str(log)).read_all()["x"].to_pylist() == [0, 1, 2] + \
        list(range(100, 107))


def test_repair_of_a_file_being_appended_to_waits_for_the_append_then_times_out(tmp_path):
    log, saved = tmp_path / "log.arrow", tmp_path / "saved.arrow"
    arrowmm.write_file(str(log), {"x": np.arange(3)})
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, numpy as np, arrowmm
        with arrowmm.append_file({str(log)!r}) as w:
            w.write({{"x": np.arange(5)}})
            print("appending", flush=True)
            sys.stdin.readline()  # (holds the lock until told)
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "appending"
        with pytest.raises(TimeoutError, match="cannot repair: another process is appending "
                                               "to the file") as caught:
            arrowmm.repair(str(log), str(saved), lock_timeout=0)
        assert caught.value.filename == str(log)
        assert not saved.exists() and os.listdir(tmp_path) == ["log.arrow"]
    finally:
        holder.communicate("go\n", timeout=120)
    assert holder.returncode == 0
    # src named through another path than dst: one lock on the one file, no wait on itself
    os.symlink("log.arrow", tmp_path / "link.arrow")
    report = arrowmm.repair(str(tmp_path / "link.arrow"), str(log), lock_timeout=0)
    assert report.complete and report.rows == 8


def test_a_new_repaired_file_is_never_more_readable_than_its_source(tmp_path):
    # a 0600 file was salvaged into a 0644 one (0666 less the umask), readable by every user
    old = os.umask(0o022)
    try:
        for mode, expected in ((0o600, 0o600), (0o640, 0o640), (0o604, 0o604), (0o444, 0o444),
                               (0o755, 0o644)):
            src, dst = tmp_path / f"{mode:o}.arrow", tmp_path / f"{mode:o}.saved.arrow"
            arrowmm.write_file(str(src), {"x": np.arange(5)})
            os.chmod(src, mode)
            arrowmm.repair(str(src), str(dst))
            assert stat.S_IMODE(os.stat(dst).st_mode) == expected, (oct(mode),
                                                                   oct(os.stat(dst).st_mode))
        # an existing destination keeps its own mode, as every rewrite does
        os.chmod(tmp_path / "600.saved.arrow", 0o660)
        arrowmm.repair(str(tmp_path / "604.arrow"), str(tmp_path / "600.saved.arrow"))
        assert stat.S_IMODE(os.stat(tmp_path / "600.saved.arrow").st_mode) == 0o660
        # a buffer has no mode to keep: 0666 less the umask, as open(path, "wb") gives
        arrowmm.repair((tmp_path / "600.arrow").read_bytes(), str(tmp_path / "buffer.arrow"))
        assert stat.S_IMODE(os.stat(tmp_path / "buffer.arrow").st_mode) == 0o644
    finally:
        os.umask(old)


def test_a_derived_path_narrows_a_new_file_to_its_source_when_it_has_one(tmp_path):
    # what `arrowmm convert` hands new_file / new_stream: the source's bits where it is a
    # regular file; a pipe or device narrows nothing (as `cat src > dst`); a source gone since
    # it was read gives a private file (in doubt, private); URLs and "-" are passed through
    from arrowmm.ipc.core.files import DerivedPath, derived_path
    src, fifo = tmp_path / "src.arrow", tmp_path / "fifo"
    arrowmm.write_file(str(src), {"x": np.arange(3)})
    os.chmod(src, 0o640)
    os.mkfifo(fifo)
    schema = arrowmm.schema([("x", arrowmm.int64())])
    old = os.umask(0o022)
    try:
        for source, expected in ((src, 0o640), (fifo, 0o644), (tmp_path / "gone", 0o600)):
            dst = tmp_path / f"from-{source.name}.arrows"
            with arrowmm.new_stream(derived_path(str(dst), str(source)), schema) as w:
                w.write({"x": [1]})
            assert stat.S_IMODE(os.stat(dst).st_mode) == expected, (source.name, oct(expected))
    finally:
        os.umask(old)
    assert isinstance(derived_path(str(tmp_path / "d.arrow"), str(src)), DerivedPath)
    for dst, source in (("s3://bucket/d.arrow", str(src)), ("-", str(src)),
                        (str(tmp_path / "d.arrow"), "-"), ("file:///tmp/d.arrow", str(src))):
        assert derived_path(dst, source) == dst
