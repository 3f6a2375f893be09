"""Commands whose write fails (a full disk) or whose target name is near the length limit.

Two defects review 13 proved: a failed write printed the bare OS error ("No space left on
device") without the file being written (``repair`` named only its source); a target name
that ``open`` accepts (250 bytes) was refused, naming a hidden temporary.
"""
import os
import resource
import subprocess
import sys

import numpy as np
import pytest

import arrowmm

SCHEMA = arrowmm.schema([("t", arrowmm.int64())])


def _arrowmm(*args, stdout=subprocess.PIPE, **options):
    return subprocess.run([sys.executable, "-m", "arrowmm", *args], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=120, **options)


@pytest.fixture
def log(tmp_path):
    path = str(tmp_path / "a.arrow")
    with arrowmm.new_file(path, SCHEMA) as w:
        w.write({"t": np.arange(3)})
    return path


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", ["convert", "repair"])
def test_a_write_to_a_full_disk_names_the_file_written(log, command):
    done = _arrowmm(command, log, "/dev/full")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "/dev/full: No space left on device" in done.stderr, done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_conversion_to_a_full_standard_output_names_it(log):
    with open("/dev/full", "wb") as full:
        done = _arrowmm("convert", log, "-", stdout=full)
    assert done.returncode == 1 and "<stdout>: No space left on device" in done.stderr


def _limit_file_size(size):
    def limit():
        import signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # (then writes past it fail: EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE,
                           (size, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    return limit


def test_an_append_that_fills_the_disk_names_its_file(log, tmp_path):
    """The disk fills (here a file size limit) while ``arrowmm append`` writes its batches:
    the error names the file appended to, which is left as it was."""
    big = str(tmp_path / "big.arrow")
    with arrowmm.new_file(big, SCHEMA) as w:
        w.write({"t": np.arange(100_000)})
    with open(log, "rb") as f:
        before = f.read()
    done = _arrowmm("append", log, big, preexec_fn=_limit_file_size(len(before) + 4096))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{os.path.realpath(log)}: File too large" in done.stderr, done.stderr
    with open(log, "rb") as f:
        assert f.read() == before


def test_convert_writes_a_name_near_the_length_limit(log, tmp_path):
    dst = str(tmp_path / ("x" * 244 + ".arrow"))
    done = _arrowmm("convert", log, dst)
    assert done.returncode == 0, done.stderr
    with arrowmm.open_file(dst) as r:
        assert r.read_all().column("t").to_pylist() == [0, 1, 2]
