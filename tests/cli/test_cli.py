"""The arrowmm command: the demo runs end to end; info and validate report on real files."""
import os
import subprocess
import sys

import pyarrow as pa
import pytest

import arrowmm
from tests.support.helpers import ipc_bytes


def _run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "arrowmm", *args], capture_output=True,
                          text=stdin is None, input=stdin, timeout=300)


def test_demo_runs_and_leaves_readable_files_with_keep(tmp_path):
    out = _run("demo", "--local", "--batches", "6", "--rows", "2000", "--folder", str(tmp_path), "--keep")
    assert out.returncode == 0, out.stderr
    assert f"the files are kept in {tmp_path}" in out.stdout
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
    assert bad.stderr.count("\n") == 1  # (one line, the batches before it said on it)

    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not an arrow file at all" * 3)
    assert validate(str(junk)).returncode == 1
    missing = validate(str(tmp_path / "nope.arrow"))
    assert missing.returncode == 1 and "nope.arrow" in missing.stderr


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_validate_full_checks_the_recorded_statistics_against_the_values(fmt, tmp_path, validate):
    """A value changed under its statistics (here in place, the layout kept, so the binding
    still holds) is what a filter would then skip: --full finds it, and names the batch, the
    column and the bounds; a cut string minimum (a looser bound) and NaN are no mismatch."""
    import struct
    schema = arrowmm.schema([("x", arrowmm.int64()), ("s", arrowmm.string()),
                             ("f", arrowmm.float64())])
    path = tmp_path / f"x.{fmt}"
    opener = arrowmm.new_file if fmt == "file" else arrowmm.new_stream
    with opener(path, schema, statistics=True) as writer:
        writer.write({"x": [1, 2, 3, 4], "s": ["b" * 300, None, "a" * 400, "c"],
                      "f": [1.0, float("nan"), None, -0.0]})
        writer.write({"x": [10, 20, 30, 40], "s": ["x", "y", "z", "w"],
                      "f": [3.0, 4.0, float("inf"), 6.0]})
    good = validate("--full", str(path))
    assert good.returncode == 0, good.stderr
    data = bytearray(path.read_bytes())
    at = data.find(struct.pack("<4q", 10, 20, 30, 40))
    data[at + 8:at + 16] = struct.pack("<q", 99)  # (batch 1's max says 40)
    path.write_bytes(bytes(data))
    assert validate(str(path)).returncode == 0  # (structure only: the values are not read)
    bad = validate("--full", str(path))
    assert bad.returncode == 1, bad.stdout
    assert "record batch 1: statistics that do not describe its values" in bad.stderr
    assert "column 'x': the statistics record max 40, the values go up to 99" in bad.stderr
    assert bad.stderr.count("\n") == 1


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


def test_demo_creates_its_folder_and_removes_what_it_wrote(tmp_path):
    """Without --keep the demo removes its files, and the folder too when it made it; files that
    were in the folder before stay."""
    folder = tmp_path / "new" / "deeper"
    out = _run("demo", "--local", "--batches", "2", "--rows", "100", "--folder", str(folder))
    assert out.returncode == 0, out.stderr
    assert "removed what the demo wrote" in out.stdout and not folder.exists()
    (tmp_path / "mine.txt").write_text("keep me")
    out = _run("demo", "--local", "--batches", "2", "--rows", "100", "--folder", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt", "new"]


def test_spark_demo_without_java_says_how_to_get_it(tmp_path):
    """No Java on PATH and no JAVA_HOME: exit code 3 and one line saying how to install it,
    before any Spark is started."""
    pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)  # no java here; the interpreter is run by its full path
    proc = subprocess.run([sys.executable, "-m", "arrowmm", "demo", "--folder", str(tmp_path / "d")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Java" in lines[0] and "openjdk-17" in lines[0], proc.stderr
    assert not (tmp_path / "d").exists()


def test_version():
    """``--version`` prints the package's version, which is the one pyproject.toml declares."""
    import re
    from pathlib import Path
    out = _run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"arrowmm {arrowmm.__version__}"
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == arrowmm.__version__


def _one_line_error(proc, *needles):
    """Exit code 1, nothing on stdout, one line on stderr naming each of ``needles``."""
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    err = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.mark.parametrize("command", ["info", "validate"])
def test_bad_input_is_one_line_never_a_traceback(command, tmp_path):
    _one_line_error(_run(command, str(tmp_path / "missing.arrow")), "missing.arrow",
                    "No such file or directory")
    _one_line_error(_run(command, str(tmp_path)), str(tmp_path), "Is a directory")
    empty = tmp_path / "empty.arrow"
    empty.write_bytes(b"")
    _one_line_error(_run(command, str(empty)), "empty.arrow", "empty (0 bytes)")
    csv = tmp_path / "data.csv"
    csv.write_text("id,name\n1,a\n")
    _one_line_error(_run(command, str(csv)), "data.csv", "CSV")
    parquet = tmp_path / "data.parquet"
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"x": [1, 2]}), parquet)
    _one_line_error(_run(command, str(parquet)), "data.parquet", "Parquet")
    _one_line_error(_run(command, "-", stdin=b"PAR1" + b"\0" * 40), "<stdin>", "Parquet")


def test_info_reads_standard_input():
    for fmt in ("file", "stream"):
        out = _run("info", "-", stdin=_sample(fmt))
        assert out.returncode == 0, out.stderr
        assert f"<stdin>: Arrow IPC {fmt}".encode() in out.stdout and b"7 rows" in out.stdout, out.stdout


def test_usage_error_exit_code():
    out = _run("info")
    assert out.returncode == 2 and "usage:" in out.stderr


@pytest.mark.parametrize("args", [["info"], ["validate"], ["schema"], ["head"], ["stats"],
                                  ["cat", "--to", "csv"], ["convert", "{out}"],
                                  ["append", "{good}"]],
                         ids=lambda a: a[0])
def test_every_command_names_the_input_it_could_not_read(args, tmp_path):
    # Random bytes fail deep in a message header, whose error says where in the bytes but
    # knows no file name: the one line still says which file (append: the SOURCE, not DST).
    good = tmp_path / "good.arrow"
    good.write_bytes(_sample("file"))
    bad = tmp_path / "random.bin"
    bad.write_bytes(b"\x8e\x6a\xc9\xbc" + os.urandom(3000))
    names = {"out": str(tmp_path / "out.arrow"), "good": str(good)}
    cmd, *rest = args
    where = [a.format(**names) for a in rest]
    argv = [cmd, *where, str(bad)] if cmd == "append" else [cmd, str(bad), *where]
    _one_line_error(_run(*argv), str(bad), "negative metadata length")
    if cmd != "append":
        _one_line_error(_run(*argv[:1], "-", *argv[2:], stdin=bad.read_bytes()),
                        "<stdin>: INVALID" if cmd == "validate" else "<stdin>",
                        "negative metadata length")
    _one_line_error(_run(*[("" if a == str(bad) else a) for a in argv]), "'': No such file")
    assert not (tmp_path / "out.arrow").exists()
    assert good.read_bytes() == _sample("file")


def test_a_truncated_file_says_how_to_repair_it(tmp_path):
    cut = tmp_path / "cut.arrow"
    cut.write_bytes(_sample("file")[:-40])
    _one_line_error(_run("head", str(cut)), "cut.arrow", "arrowmm repair", "recover=True")


def test_an_input_is_named_even_when_its_name_is_part_of_the_message(tmp_path):
    # (the name was searched for in the message: a bad SOURCE called st.arrow went unnamed
    # when the message named DST dst.arrow, as did short names found in any message)
    dst = tmp_path / "dst.arrow"
    dst.write_bytes(_sample("file"))
    before = dst.read_bytes()
    other = tmp_path / "st.arrow"
    with arrowmm.new_file(other, arrowmm.schema([("zz", arrowmm.int8())])) as w:
        w.write({"zz": [1]})
    out = subprocess.run([sys.executable, "-m", "arrowmm", "append", "dst.arrow", "st.arrow"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    _one_line_error(out, "append: st.arrow: ", "schema")
    assert dst.read_bytes() == before


def test_standard_input_closed_is_one_line():
    for args in (["info", "-"], ["head", "-"], ["validate", "-"]):
        proc = subprocess.run([sys.executable, "-m", "arrowmm", *args], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120,
                              preexec_fn=lambda: os.close(0))
        _one_line_error(proc, "standard input is closed")
