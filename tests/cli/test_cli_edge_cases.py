"""Commands at the edges review 20 probed: targets that cannot be read back (a FIFO,
/dev/null), a closed pipe, values JSON lacks, damage past the first batch, empty standard
input, signals, out-of-range options.  Each failed before: a hang, a traceback, a wrong
exit code, a misleading name or a temporary left behind."""
import importlib
import os
import signal
import subprocess
import sys
import threading
import time

import pyarrow as pa
import pyarrow.ipc
import pytest

cli_main = importlib.import_module("arrowmm.cli.main")  # (the module: arrowmm.cli.main is
# also the name of its function main, which the package exports)


def _arrowmm(*args, **options):
    return subprocess.run([sys.executable, "-m", "arrowmm", *args], capture_output=True,
                          text=True, timeout=120, **options)


def _file(path, table) -> str:
    with pa.ipc.new_file(path, table.schema) as w:
        w.write_table(table)
    return str(path)


def _one_line(stderr: str) -> None:
    assert "Traceback" not in stderr and len(stderr.splitlines()) == 1, stderr


def _to_fifo(tmp_path, *args):
    """``arrowmm *args FIFO`` with a thread reading the FIFO: (exit code, stderr, the bytes
    read); a command that does not exit within 30 s fails the test."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = {}

    def drain():
        with open(fifo, "rb") as f:
            got["bytes"] = f.read()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    proc = subprocess.Popen([sys.executable, "-m", "arrowmm", *args, str(fifo)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"{args[0]} to a FIFO did not exit (it re-opened the FIFO to count rows)")
    reader.join(timeout=5)
    return proc.returncode, err, got.get("bytes", b"")


def test_convert_to_a_fifo_writes_it_and_exits(tmp_path):
    src = _file(tmp_path / "a.arrow", pa.table({"x": [1, 2, 3]}))
    code, err, data = _to_fifo(tmp_path, "convert", src)
    assert code == 0, err
    assert "3 rows" in err
    table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
    assert table.column("x").to_pylist() == [1, 2, 3]


def test_convert_to_dev_null_succeeds(tmp_path):
    src = _file(tmp_path / "a.arrow", pa.table({"x": [1, 2, 3]}))
    done = _arrowmm("convert", src, os.devnull)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"wrote {os.devnull}: Arrow IPC file, 3 rows\n"


@pytest.mark.parametrize("args", [["repair"], ["convert", "--statistics"]])
def test_repair_and_a_statistics_copy_to_a_device_or_fifo_succeed(tmp_path, args):
    # (their fsync failed there: "Invalid argument")
    src = _file(tmp_path / "a.arrow", pa.table({"x": [1, 2, 3]}))
    done = _arrowmm(*args, src, os.devnull)
    assert done.returncode == 0, done.stderr
    code, err, data = _to_fifo(tmp_path, *args, src)
    assert code == 0, err
    assert pa.ipc.open_file(pa.py_buffer(data)).read_all().column("x").to_pylist() == [1, 2, 3]


@pytest.mark.parametrize("args", [["head", "--json"], ["cat", "--to", "jsonl"]])
def test_a_uuid_column_as_json_is_its_canonical_text(tmp_path, args):
    table = pa.table({"u": pa.array([b"0123456789abcdef", None], pa.uuid())})
    path = _file(tmp_path / "u.arrow", table)
    done = _arrowmm(args[0], path, *args[1:])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ['{"u": "30313233-3435-3637-3839-616263646566"}',
                                        '{"u": null}']


def test_an_unexpected_error_is_one_line_naming_the_command(monkeypatch, capsys):
    def broken(*args):
        raise TypeError("a defect\nover two lines")

    monkeypatch.setattr(cli_main, "info", broken)
    assert cli_main.main(["info", "x.arrow"]) == 1
    err = capsys.readouterr().err
    assert err == "arrowmm info: internal error: TypeError: a defect over two lines\n"


def test_repair_to_a_closed_pipe_is_quiet(tmp_path):
    src = _file(tmp_path / "big.arrow", pa.table({"x": pa.array(range(300_000))}))
    proc = subprocess.Popen([sys.executable, "-m", "arrowmm", "repair", src, "-"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0
    assert err == b""


def _damaged_second_batch(path) -> str:
    """Two string batches; the second's offsets are 0, 2, 200, 6 (decreasing)."""
    schema = pa.schema([("i", pa.int64()), ("s", pa.string())])
    with pa.ipc.new_file(path, schema) as w:
        w.write_batch(pa.record_batch([pa.array([1, 2, 3]), pa.array(["aa", "bb", "cc"])],
                                      schema=schema))
        w.write_batch(pa.record_batch([pa.array([4, 5, 6]), pa.array(["dd", "ee", "ff"])],
                                      schema=schema))
    data = bytearray(path.read_bytes())
    offsets = b"".join(v.to_bytes(4, "little") for v in (0, 2, 4, 6))
    at = data.rfind(offsets, 0, data.find(b"ddeeff"))
    data[at + 8:at + 12] = (200).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    return str(path)


@pytest.mark.parametrize("to", ["csv", "jsonl"])
def test_cat_names_the_damaged_batch_by_its_place_in_the_file(tmp_path, to):
    path = _damaged_second_batch(tmp_path / "two.arrow")
    done = _arrowmm("cat", path, "--to", to)
    assert done.returncode == 1
    _one_line(done.stderr)
    assert "batch 1, column 1 ('s')" in done.stderr and "batch 0" not in done.stderr
    assert len(done.stdout.splitlines()) == 3 + (to == "csv")  # (the good batch, streamed)


@pytest.mark.parametrize("data", [b"", b"xx"])
def test_repair_of_bad_standard_input_names_it_stdin(tmp_path, data):
    done = _arrowmm("repair", "-", str(tmp_path / "out.arrow"), input=data.decode())
    assert done.returncode == 1
    _one_line(done.stderr)
    assert done.stderr.startswith("<stdin>: cannot repair: the schema message is unreadable: "
                                  "not an Arrow IPC stream: "), done.stderr
    assert not (tmp_path / "out.arrow").exists()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminated_convert_leaves_no_temporary(tmp_path, signum):
    table = pa.table({"x": pa.array(range(1_000_000))})
    src = tmp_path / "huge.arrows"
    with pa.ipc.new_stream(src, table.schema) as w:
        for batch in table.to_batches(max_chunksize=10_000):
            w.write_batch(batch)
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "arrowmm", "convert", str(src),
                             str(out / "out.arrow"), "--batch-rows", "5"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not os.listdir(out) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert os.listdir(out), "the temporary never appeared"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum
    assert os.listdir(out) == []
    assert err == ""


def test_sigterm_is_caught_while_a_command_runs_and_an_ignored_sighup_stays_ignored(
        monkeypatch, capsys):
    seen = {}

    def info(*args):
        seen["handlers"] = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
        return 0

    monkeypatch.setattr(cli_main, "info", info)
    old = signal.signal(signal.SIGTERM, signal.SIG_DFL), signal.signal(signal.SIGHUP,
                                                                         signal.SIG_IGN)
    try:
        assert cli_main.main(["info", "x.arrow"]) == 0
        after = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
    finally:
        signal.signal(signal.SIGTERM, old[0])
        signal.signal(signal.SIGHUP, old[1])
    assert seen["handlers"][0] not in (signal.SIG_DFL, signal.SIG_IGN, None)
    assert seen["handlers"][1] == signal.SIG_IGN  # (under nohup: still ignored)
    assert after == (signal.SIG_DFL, signal.SIG_IGN)


@pytest.mark.parametrize("option", [["--batches", "0"], ["--batches", "-1"],
                                    ["--rows", "0", "--batches", "1"], ["--rows", "-3"]])
def test_demo_refuses_a_count_below_one(tmp_path, option):
    done = _arrowmm("demo", "--local", "--folder", str(tmp_path / "demo"), *option)
    assert done.returncode == 2
    assert f"argument {option[0]}: {option[1]}: must be > 0" in done.stderr, done.stderr
    assert not (tmp_path / "demo").exists()


_INTERRUPT_WHILE_IMPORTING = '''\
import os, signal, sys


class _Interrupt:  # (Ctrl-C as the package imports its first module: arrowmm.limits)
    def find_spec(self, name, path=None, target=None):
        if name == "arrowmm.limits":
            os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, _Interrupt())
'''


@pytest.mark.parametrize("form", ["python -m arrowmm", "arrowmm script"])
def test_ctrl_c_while_the_command_imports_exits_130_without_a_traceback(tmp_path, form):
    # (review 20: F10; the imports run before main's own KeyboardInterrupt handler, and
    # Python printed a traceback through importlib)
    env = dict(os.environ)
    if form == "python -m arrowmm":
        (tmp_path / "sitecustomize.py").write_text(_INTERRUPT_WHILE_IMPORTING)
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path)] + [
            p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        argv = [sys.executable, "-m", "arrowmm", "info", "missing.arrow"]
    else:  # (a console script is a file named arrowmm importing arrowmm.cli)
        script = tmp_path / "arrowmm"
        script.write_text(_INTERRUPT_WHILE_IMPORTING +
                          "from arrowmm.cli import main\nsys.exit(main())\n")
        argv = [sys.executable, str(script), "info", "missing.arrow"]
    got = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env,
                         cwd=tmp_path)
    assert "Traceback" not in got.stderr, got.stderr[-600:]
    assert got.returncode == 130, got.stderr[-600:]


def test_a_program_importing_arrowmm_keeps_pythons_ctrl_c():
    # (only the command's own process exits 130 quietly: a program's Ctrl-C while it imports
    # arrowmm is its KeyboardInterrupt, as before)
    got = subprocess.run([sys.executable, "-c",
                          "import signal, arrowmm; "
                          "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"],
                         capture_output=True, text=True, timeout=120)
    assert got.stdout.strip() == "True", got.stderr[-600:]
