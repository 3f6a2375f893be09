"""The arrowmm command: the demo runs end to end; info and validate report on real files."""
import subprocess
import sys

import pyarrow as pa

import arrowmm


def _run(*args):
    return subprocess.run([sys.executable, "-m", "arrowmm", *args], capture_output=True, text=True,
                          timeout=300)


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
    bad = _run("validate", str(path))
    assert bad.returncode == 1 and "INVALID" in bad.stderr and "UTF-8" in bad.stderr
