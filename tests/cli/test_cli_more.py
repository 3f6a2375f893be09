"""The command line beyond the file commands: ``append``, ``--json`` on every command that
prints facts (parsed here), progress bars on a terminal (a real pseudo-terminal) and never
when piped, and an example in every command's ``--help``."""
import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios

import numpy as np
import pyarrow.ipc as pa_ipc
import pytest

import arrowmm
from tests.support.helpers import torn_append

SCHEMA = arrowmm.schema([("x", arrowmm.int64())])
COMMANDS = ["demo", "info", "validate", "repair", "schema", "head", "stats", "cat", "convert",
            "append", "shm"]


def run(*args, stdin=None, env=None):
    return subprocess.run([sys.executable, "-m", "arrowmm", *map(str, args)], input=stdin,
                          capture_output=True, timeout=300, env=env)


def _file(path, batches=1, rows=5, start=0):
    with arrowmm.new_file(path, SCHEMA) as w:
        for b in range(batches):
            w.write({"x": np.arange(start + b * rows, start + (b + 1) * rows)})
    return path


def _stream(path, rows=3, start=100):
    with arrowmm.new_stream(path, SCHEMA) as w:
        w.write({"x": np.arange(start, start + rows)})
    return path


def test_append_files_streams_and_stdin(tmp_path):
    dst = _file(tmp_path / "d.arrow")
    f2 = _file(tmp_path / "f.arrow", start=50)
    s = _stream(tmp_path / "s.arrows")
    out = run("append", dst, f2, s, "--json")
    assert out.returncode == 0, out.stderr
    facts = json.loads(out.stdout)
    assert facts["batches_added"] == 2 and facts["rows_added"] == 8
    assert facts["batches"] == 3 and facts["rows"] == 13 and facts["batches_before"] == 1
    out = run("append", dst, "-", "--compression", "zstd", stdin=open(s, "rb").read())
    assert out.returncode == 0, out.stderr
    assert b"appended 1 batch (3 rows)" in out.stdout
    got = pa_ipc.open_file(dst).read_all().column("x").to_pylist()
    assert got == list(range(5)) + list(range(50, 55)) + [100, 101, 102] * 2


def test_append_refuses_another_schema_and_keeps_the_file(tmp_path):
    dst = _file(tmp_path / "d.arrow")
    before = open(dst, "rb").read()
    other = tmp_path / "o.arrow"
    with arrowmm.new_file(other, arrowmm.schema([("y", arrowmm.int64())])) as w:
        w.write({"y": [1]})
    ok = _stream(tmp_path / "s.arrows")
    out = run("append", dst, ok, other)  # the first source's batch is not kept either
    assert out.returncode == 1
    err = out.stderr.decode()
    assert err.count("\n") == 1 and "column 0 is named 'y', the file's 'x'" in err
    assert open(dst, "rb").read() == before
    assert run("append", tmp_path / "missing.arrow", ok).returncode == 1


def test_json_of_info_validate_repair_shm(tmp_path):
    path = _file(tmp_path / "a.arrow", batches=2)
    info = json.loads(run("info", path, "--json").stdout)
    assert info == {"path": str(path), "format": "file",
                    "fields": [{"name": "x", "type": "int64", "nullable": True}],
                    "batches": 2, "rows": 10}
    stream = _stream(tmp_path / "s.arrows")
    info = json.loads(run("info", "-", "--json", stdin=open(stream, "rb").read()).stdout)
    assert (info["format"], info["rows"], info["batches"]) == ("stream", 3, 1)
    verdict = json.loads(run("validate", path, "--json", "--full").stdout)
    assert verdict["valid"] is True and verdict["validation"] == "full" and verdict["rows"] == 10
    broken = tmp_path / "broken.arrow"
    data = open(path, "rb").read()
    broken.write_bytes(data[:len(data) // 2])
    out = run("validate", broken, "--json")
    assert out.returncode == 1
    verdict = json.loads(out.stdout)
    assert verdict["valid"] is False and verdict["error"]
    out = run("repair", broken, tmp_path / "fixed.arrow", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["complete"] is False and report["dropped_bytes"] > 0
    assert report["rows"] == pa_ipc.open_file(tmp_path / "fixed.arrow").read_all().num_rows
    segments = json.loads(run("shm", "ls", "--json").stdout)
    assert isinstance(segments, list)
    assert all({"name", "kind", "size", "pid", "alive", "stale"} <= set(s) for s in segments)


def test_repair_cuts_an_interrupted_append(tmp_path):
    path = _file(tmp_path / "a.arrow")
    with arrowmm.append_file(path) as w:
        w.write({"x": [5, 6]})
    added = torn_append(path, b"\xff\xff\xff\xff\x40\x00\x00\x00" + b"\x01" * 30)
    out = run("repair", path, path, "--json")
    report = json.loads(out.stdout)
    assert report["rows"] == 7 and report["dropped_bytes"] == added
    assert "interrupted" in report["reason"]
    assert pa_ipc.open_file(path).read_all().column("x").to_pylist() == list(range(7))


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_an_example(command):
    out = run(command, "--help")
    assert out.returncode == 0
    assert b"example: arrowmm " + command.encode() in out.stdout


def _progress_on_pty(args, env):
    """(what the child wrote on its terminal stderr, its exit code)."""
    master, slave = pty.openpty()
    # a terminal of 24 x 100 (a fresh pty is 0 x 0: tqdm fits its bar into no columns)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    child = subprocess.Popen([sys.executable, "-m", "arrowmm", *map(str, args)],
                             stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        code = child.wait(timeout=120)
    finally:
        os.close(master)
        if child.poll() is None:
            child.kill()
    return seen, code


@pytest.mark.parametrize("command", ["convert", "cat", "append", "validate", "repair", "stats",
                                     "statistics"])
def test_progress_on_a_terminal_and_not_when_piped(tmp_path, command):
    src = _file(tmp_path / "src.arrow", batches=40, rows=1000)
    args = {"convert": ["convert", src, tmp_path / "out.arrow"],
            "stats": ["stats", src],
            "statistics": ["convert", src, tmp_path / "indexed.arrow", "--statistics"],
            "cat": ["cat", src, "--to", "jsonl"],
            "append": ["append", _file(tmp_path / "dst.arrow"), src],
            "validate": ["validate", src],
            "repair": ["repair", src, tmp_path / "rep.arrow"]}[command]
    env = {**os.environ, "ARROWMM_PROGRESS_DELAY": "0"}
    env.pop("ARROWMM_PROGRESS", None)
    seen, code = _progress_on_pty(args, env)
    assert code == 0, seen
    desc = {"convert": b"writing", "cat": b"cat", "append": b"append", "validate": b"validate",
            "repair": b"repair", "stats": b"stats", "statistics": b"statistics"}[command]
    assert desc in seen and b"%|" in seen, seen  # a tqdm bar: 'writing:  50%|###  |'
    piped = subprocess.run([sys.executable, "-m", "arrowmm", *map(str, args)],
                           capture_output=True, env=env, timeout=300)
    assert piped.returncode == 0
    assert b"\r" not in piped.stderr and b"it/s" not in piped.stderr
    assert b"rows/s" not in piped.stderr and b"%|" not in piped.stderr
