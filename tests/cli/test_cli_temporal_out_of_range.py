"""``head`` and ``cat`` print a date, time, timestamp or duration that Python's types cannot
hold (before year 1, after 9999) as text, in text, CSV and JSON output, and exit 0: they
failed, suggesting ``to_pylist(temporal='int')``, which a command-line user cannot pass."""
import csv
import importlib
import io
import json

import pyarrow as pa
import pytest

from tests.support.helpers import ipc_bytes

cli_main = importlib.import_module("arrowmm.cli.main")  # (the module, not its main)

YEAR_300000_S = 300_000 * 365 * 86_400
#: column -> (type, stored values: in range, before year 1, past 9999, null)
COLUMNS = {
    "ts_s": (pa.timestamp("s"), [0, -70_000_000_000, YEAR_300000_S, None]),
    "ts_ms_utc": (pa.timestamp("ms", "UTC"), [0, -70_000_000_000_000, 253_402_300_800_000, None]),
    "ts_us_zone": (pa.timestamp("us", "Europe/Paris"), [0, -70_000_000_000_000_000, 2**62, None]),
    "d32": (pa.date32(), [0, -1_000_000, 3_000_000, None]),
    "d64": (pa.date64(), [0, -86_400_000_000_000, 259_200_000_000_000, None]),
    "t32": (pa.time32("s"), [3_600, -1, 90_000, None]),  # (outside the day: damage, shown)
    "dur_s": (pa.duration("s"), [60, -2**62, 2**62, None]),
    "dur_ms": (pa.duration("ms"), [1_000, -2**62, 2**62, None]),
}
#: what each value prints as (pyarrow's text where it has one, else the count and its unit)
TEXT = {
    "ts_s": ["1970-01-01T00:00:00", "-0249-10-15T19:33:20", f"{YEAR_300000_S} s from 1970-01-01",
             None],
    "ts_ms_utc": ["1970-01-01T00:00:00+00:00", "-0249-10-15T19:33:20.000Z",
                  "10000-01-01T00:00:00.000Z", None],
    "ts_us_zone": ["1970-01-01T01:00:00+01:00", "-0249-10-15T19:33:20.000000Z",
                   f"{2**62} us from 1970-01-01", None],
    "d32": ["1970-01-01", "-0768-02-04", "10183-09-21", None],
    "d64": ["1970-01-01", "-0768-02-04", "10183-09-21", None],
    "t32": ["01:00:00", "-1 s from midnight", "90000 s from midnight", None],
    "dur_s": ["0:01:00", f"{-2**62} s", f"{2**62} s", None],
    "dur_ms": ["0:00:01", f"{-2**62} ms", f"{2**62} ms", None],
}
JSON = dict(TEXT, dur_s=[60.0, -2**62, 2**62, None], dur_ms=[1.0, -2**62 / 1e3, 2**62 / 1e3, None])


@pytest.fixture
def path(tmp_path):
    table = pa.table({name: pa.array(values, type_) for name, (type_, values) in COLUMNS.items()})
    out = tmp_path / "far.arrow"
    out.write_bytes(ipc_bytes(table, fmt="file"))
    return str(out)


def _run(capsys, *args) -> str:
    assert cli_main.main(list(args)) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def test_cat_to_csv_prints_every_value(path, capsys):
    rows = list(csv.DictReader(io.StringIO(_run(capsys, "cat", path, "--to", "csv"))))
    for name, texts in TEXT.items():
        assert [r[name] for r in rows] == [t if t is not None else "" for t in texts], name


@pytest.mark.parametrize("args", [["cat", "--to", "jsonl"], ["head", "--json"]], ids=str)
def test_json_lines_hold_every_value(args, path, capsys):
    command, *options = args
    rows = [json.loads(line) for line in _run(capsys, command, path, *options).splitlines()]
    for name, values in JSON.items():
        assert [r[name] for r in rows] == values, name


def test_head_prints_every_value(path, capsys):
    lines = _run(capsys, "head", path).splitlines()
    cells = [[c.strip() for c in line.split(" | ")] for line in lines[2:6]]
    for k, (name, texts) in enumerate(TEXT.items()):
        assert lines[0].split(" | ")[k].strip() == name
        assert [r[k] for r in cells] == [t if t is not None else "null" for t in texts], name


def test_many_values_out_of_range_among_others(tmp_path, capsys):
    # (the column is halved until each failing value is alone: every other one here)
    stored = [k if k % 2 else -(2 * 10**12 + k) for k in range(5_000)]
    path = tmp_path / "many.arrow"
    path.write_bytes(ipc_bytes(pa.table({"t": pa.array(stored, pa.timestamp("s"))}), fmt="file"))
    lines = _run(capsys, "cat", str(path), "--to", "csv").splitlines()
    assert lines[0] == "t" and len(lines) == 5_001
    assert lines[1:5] == ["-2000000000000 s from 1970-01-01", "1970-01-01T00:00:01",
                          "-2000000000002 s from 1970-01-01", "1970-01-01T00:00:03"]
    assert lines[-1] == "1970-01-01T01:23:19"


def test_a_damaged_value_is_still_an_error(tmp_path, capsys):
    # (a date64 of part of a day is no question of range: the command fails naming it)
    days = pa.Array.from_buffers(pa.date64(), 2, [None, pa.py_buffer(
        pa.array([-86_400_000_000_000, 1], pa.int64()).buffers()[1])])
    path = tmp_path / "cut.arrow"
    path.write_bytes(ipc_bytes(pa.table({"d": days}), fmt="file"))
    assert cli_main.main(["cat", str(path), "--to", "csv"]) == 1
    assert "is not a whole number of days" in capsys.readouterr().err
