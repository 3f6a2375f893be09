"""``arrowmm repair`` with ``-``: standard input is read as the damaged file (it was taken for
a file named ``-``), standard output receives the repaired file (it wrote a file named ``-``),
and the report then goes to stderr so it never mixes with the file's bytes."""
import subprocess
import sys

import pyarrow as pa
import pyarrow.ipc

from tests.support.helpers import ipc_bytes


def _run(*args, stdin: bytes = b"", cwd=None):
    return subprocess.run([sys.executable, "-m", "arrowmm", *args], capture_output=True,
                          input=stdin, timeout=300, cwd=cwd)


def _table():
    return pa.table({"a": list(range(10)), "s": [str(i) * i for i in range(10)]})


def _batches(n: int):
    return [_table().to_batches()[0]] * n


def test_repair_reads_standard_input(tmp_path):
    whole = ipc_bytes(_batches(2), fmt="file")
    (tmp_path / "-").write_bytes(b"not this file")  # (a file named '-' must not be read)
    out = _run("repair", "-", "out.arrow", stdin=whole[:-40], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode().startswith("<stdin>: Arrow IPC file, incomplete")
    repaired = pa.ipc.open_file(tmp_path / "out.arrow").read_all()
    assert repaired.equals(pa.concat_tables([_table(), _table()]))


def test_repair_writes_standard_output_and_reports_on_stderr(tmp_path):
    whole = ipc_bytes(_batches(2), fmt="file")
    (tmp_path / "cut.arrow").write_bytes(whole[:-40])
    out = _run("repair", "cut.arrow", "-", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "-").exists()
    assert b"-> <stdout>" in out.stderr
    table = pa.ipc.open_file(pa.BufferReader(out.stdout)).read_all()
    assert table.equals(pa.concat_tables([_table(), _table()]))


def test_repair_pipe_to_pipe_and_json(tmp_path):
    whole = ipc_bytes(_batches(3), fmt="stream")
    out = _run("repair", "-", "-", "--json", stdin=whole[:-20], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert b'"src": "<stdin>"' in out.stderr and b'"dst": "<stdout>"' in out.stderr
    table = pa.ipc.open_file(pa.BufferReader(out.stdout)).read_all()
    assert table.num_rows == 20  # (the third batch was cut)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_repair_of_bad_standard_input_is_one_line(tmp_path):
    for data, why in ((b"", "it is empty"), (b"xx", "looks like text")):
        out = _run("repair", "-", "out.arrow", stdin=data, cwd=tmp_path)
        assert out.returncode == 1
        err = out.stderr.decode()
        assert err.startswith("<stdin>: cannot repair: the schema message is unreadable") and why in err
        assert "Traceback" not in err and err.count("\n") == 1
        assert not (tmp_path / "out.arrow").exists()
