"""The arrowmm command: the demo runs end to end; info and validate report on real files."""
import subprocess
import sys

import pyarrow as pa
import pytest

import arrowmm
from helpers import ipc_bytes


def _run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "arrowmm", *args], capture_output=True,
                          text=stdin is None, input=stdin, timeout=300)


def test_demo_runs_and_leaves_readable_files(tmp_path):
    out = _run("demo", "--local", "--batches", "6", "--rows", "2000", "--folder", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "inside the mapping (zero copies)" in out.stdout
    assert "columns decoded: 1 of 5" in out.stdout
    table = pa.ipc.open_file(tmp_path / "demo.arrow").read_all()
    assert table.num_rows == 12_000
    assert table.column("id").to_pylist() == list(range(12_000))
    assert pa.ipc.open_stream(tmp_path / "demo.arrows").read_all().equals(table)


def test_info_and_validate(tmp_path):
    path = tmp_path / "t.arrow"
    with arrowmm.new_file(path, arrowmm.schema([("s", arrowmm.string())])) as w:
        w.write({"s": ["a", "bb", None]})
    info = _run("info", str(path))
    assert info.returncode == 0 and "s: string" in info.stdout and "3 rows" in info.stdout
    assert _run("validate", str(path)).returncode == 0
    data = bytearray(path.read_bytes())
    i = data.index(b"abb")
    data[i + 1] = 0xFF  # invalid UTF-8 inside the string data
    path.write_bytes(bytes(data))
    assert _run("validate", str(path)).returncode == 0  # structurally sound: values unchecked
    bad = _run("validate", "--full", str(path))
    assert bad.returncode == 1 and "INVALID" in bad.stderr and "UTF-8" in bad.stderr


def _ipc(fmt: str, batches, **options) -> bytes:
    return ipc_bytes(batches, fmt=fmt, **options)


def _sample(fmt: str) -> bytes:
    batch = pa.record_batch({"d": pa.array(["a", "b", None, "a"]).dictionary_encode(),
                             "l": pa.array([[1], None, [2, 3], []])})
    return _ipc(fmt, [batch, batch.slice(1)], compression="zstd")


class _Result:
    def __init__(self, returncode, out):
        self.returncode, self.stdout, self.stderr = returncode, out.out, out.err


@pytest.fixture
def validate(capsys):
    """``arrowmm validate ARGS`` in this process (the console script runs ``cli.main`` too)."""
    from arrowmm.cli.main import main

    def run(*args):
        code = main(["validate", *args])
        return _Result(code, capsys.readouterr())
    return run


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_validate_exit_codes(fmt, tmp_path, validate):
    """0 for a valid file or stream (with and without --full); 1, with where and why on stderr,
    for a truncated one, a corrupted value (only --full looks at values), and a non-IPC file."""
    data = _sample(fmt)
    path = tmp_path / f"ok.{fmt}"
    path.write_bytes(data)
    for extra in ((), ("--full",)):
        ok = validate(*extra, str(path))
        assert ok.returncode == 0, ok.stderr
        assert f"valid Arrow IPC {fmt} (2 batches, 7 rows" in ok.stdout and not ok.stderr

    cut = tmp_path / f"cut.{fmt}"
    cut.write_bytes(data[:len(data) * 2 // 3])
    bad = validate(str(cut))
    assert bad.returncode == 1 and bad.stderr.startswith(f"{cut}: INVALID: ")
    assert ("message 2 at byte" in bad.stderr) if fmt == "stream" else ("magic" in bad.stderr), bad.stderr

    path.write_bytes(_bad_dictionary_index(fmt))  # structurally sound, one bad value
    assert validate(str(path)).returncode == 0
    bad = validate("--full", str(path))
    assert bad.returncode == 1 and "INVALID" in bad.stderr and "index" in bad.stderr, bad.stderr
    assert "7" in bad.stderr and "(1 batch(es) before it were valid)" in bad.stderr, bad.stderr

    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not an arrow file at all" * 3)
    assert validate(str(junk)).returncode == 1
    missing = validate(str(tmp_path / "nope.arrow"))
    assert missing.returncode == 1 and "nope.arrow" in missing.stderr


def _bad_dictionary_index(fmt: str) -> bytes:
    """Two batches; the second's dictionary index 7 points past its 2-value dictionary
    (pyarrow's ``safe=False`` skips the check, and its writer does not validate)."""
    dictionary = pa.array(["a", "b"])
    good = pa.DictionaryArray.from_arrays(pa.array([0, 1, None], pa.int32()), dictionary)
    bad = pa.DictionaryArray.from_arrays(pa.array([7, 1, None], pa.int32()), dictionary, safe=False)
    return _ipc(fmt, [pa.record_batch({"d": good}), pa.record_batch({"d": bad})])


def test_validate_reads_standard_input():
    data = _sample("stream")
    ok = _run("validate", "--full", "-", stdin=data)
    assert ok.returncode == 0 and b"valid Arrow IPC stream (2 batches" in ok.stdout
    bad = _run("validate", "-", stdin=data[:-20])
    assert bad.returncode == 1 and b"INVALID" in bad.stderr
