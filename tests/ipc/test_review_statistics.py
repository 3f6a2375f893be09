"""Review of add_statistics, ``convert --statistics`` and ``arrowmm stats`` as a hostile user
drives them: statistics added to a file must never make a dataset filter skip a batch holding a
matching row (checked against the same filter over the file without statistics, over random
data of every kind the statistics describe), bounds are shown exactly, and data the statistics
cannot describe is an ``ArrowInvalid`` naming the column and batch, never a wrong bound."""
import datetime
import decimal
import json
import math
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pa_ipc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arrowmm
from arrowmm.ipc.core.statistics import MAX_BOUND_BYTES, STAMP_KEY, STATISTICS_KEY, \
    encode_file_statistics

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)


def _write(path, table, batch_rows):
    with pa_ipc.new_file(str(path), table.schema) as w:
        w.write_table(table, max_chunksize=batch_rows)
    return path


def _recorded(path) -> dict:
    with arrowmm.open_file(path) as reader:
        return json.loads(reader.footer.metadata[STATISTICS_KEY])


# -- pruning with added statistics never drops a matching row -----------------------------------

_FLOATS = st.one_of(st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1.5, -1.5]),
                    st.floats(-1e6, 1e6, allow_nan=False))
_TEXT = st.one_of(st.text(alphabet="ab\u00e9\u4e2d\U0001f600", max_size=4),
                  st.text(alphabet="ab\u00e9", min_size=MAX_BOUND_BYTES - 2,
                          max_size=MAX_BOUND_BYTES + 3))
_COLUMNS = {
    "i": (st.integers(-50, 50), pa.int64()),
    "u": (st.integers(0, 2 ** 64 - 1), pa.uint64()),
    "f": (_FLOATS, pa.float64()),
    "g": (_FLOATS, pa.float32()),
    "s": (_TEXT, pa.string()),
    "ts": (st.integers(-10 ** 6, 10 ** 6), pa.timestamp("ms", tz="UTC")),
    "tn": (st.integers(-10 ** 12, 10 ** 12), pa.timestamp("ns", tz="Asia/Tokyo")),
    "d": (st.integers(-1000, 1000), pa.date32()),
    "ls": (_TEXT, pa.large_string()),
    "sv": (_TEXT, pa.string_view()),
}
_NUMBER_VALUES = st.one_of(st.integers(-60, 60), st.floats(-60, 60, allow_nan=False),
                           st.integers(2 ** 63, 2 ** 64 - 1), st.sampled_from([math.nan, 0.5]))


def _value(name, raw):
    """A filter value of column ``name``'s kind from a raw drawn value."""
    if name == "ts":
        return EPOCH + datetime.timedelta(milliseconds=raw)
    if name == "tn":
        return EPOCH + datetime.timedelta(microseconds=raw // 1000)
    if name == "d":
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=raw)
    return raw


@st.composite
def _cases(draw):
    n = draw(st.integers(1, 40))
    data = {}
    for name, (values, dtype) in _COLUMNS.items():
        col = draw(st.lists(st.one_of(st.none(), values), min_size=n, max_size=n))
        if name == "g":
            col = [None if v is None else float(np.float32(v)) for v in col]
        data[name] = pa.array(col, dtype) if name not in ("ts", "tn", "d") else \
            pa.array(col, pa.int32() if name == "d" else pa.int64()).cast(dtype)
    terms = []
    for _ in range(draw(st.integers(1, 2))):
        name = draw(st.sampled_from(sorted(_COLUMNS)))
        op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in",
                                   "is null", "is not null"]))
        # values from the column itself half the time (boundaries), else fresh ones
        raw = data[name].cast(pa.int32() if name == "d" else pa.int64()) \
            if name in ("ts", "tn", "d") else data[name]
        pool = [v for v in raw.to_pylist() if v is not None]
        pick = st.sampled_from(pool) if pool and draw(st.booleans()) else \
            _NUMBER_VALUES if name in ("i", "u") and draw(st.booleans()) else _COLUMNS[name][0]
        if op in ("in", "not in"):
            value = [_value(name, draw(pick)) for _ in range(draw(st.integers(1, 3)))]
        elif op in ("is null", "is not null"):
            value = None
        else:
            value = _value(name, draw(pick))
        if name == "g" and isinstance(value, float):  # (float32 data: compare with float32s)
            value = float(np.float32(value))
        terms.append((name, op, value) if value is not None or op.startswith("is") else
                     (name, op))
    terms = [tuple(t) if t[1] not in ("is null", "is not null") else (t[0], t[1], None)
             for t in terms]
    if len(terms) == 2 and draw(st.booleans()):
        terms = [[terms[0]], [terms[1]]]  # (an OR of the two)
    return pa.table(data), draw(st.integers(1, 7)), terms


def _rows(path, terms):
    table = arrowmm.dataset(str(path)).to_table(filter=terms)
    return table.to_pylist()


def _same(a, b) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        for k in x:
            u, v = x[k], y[k]
            if isinstance(u, float) and isinstance(v, float) and math.isnan(u) and math.isnan(v):
                continue
            if u != v or (isinstance(u, float) and math.copysign(1, u) != math.copysign(1, v)):
                return False
    return True


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large])
@given(case=_cases())
def test_pruning_by_added_statistics_never_drops_a_matching_row(tmp_path_factory, case):
    table, batch_rows, terms = case
    folder = tmp_path_factory.mktemp("prune")
    src = _write(folder / "src.arrow", table, batch_rows)
    dst = folder / "dst.arrow"
    arrowmm.add_statistics(src, dst)
    want = _rows(src, terms)  # (no statistics: every batch judged row by row)
    got = _rows(dst, terms)
    assert _same(got, want), (terms, len(got), len(want))


def test_a_float_column_against_an_int_beyond_2_53_prunes_as_rows_are_judged(tmp_path):
    """Rows of a float column are judged against float(value) (2**53+1 rounds to 2.0**53 and
    matches); the statistics judged the exact int and pruned the batch holding the match."""
    src = _write(tmp_path / "src.arrow", pa.table({"f": pa.array([2.0 ** 53])}), 1)
    dst = tmp_path / "dst.arrow"
    arrowmm.add_statistics(src, dst)
    for op in ("==", ">=", "<="):
        term = [("f", op, 2 ** 53 + 1)]
        assert arrowmm.dataset(str(dst)).count_rows(filter=term) == \
            arrowmm.dataset(str(src)).count_rows(filter=term), op


# -- bounds shown exactly ----------------------------------------------------------------------

def test_stats_shows_decimal_bounds_with_every_digit(tmp_path):
    """Bounds of a 38-digit decimal128 / 76-digit decimal256 were rounded to 28 digits (the
    default decimal context) and shown as another number: 1.234...679E+33."""
    values = [decimal.Decimal("1234567890123456789012345678901234.5678"),
              decimal.Decimal("-0.0001")]
    wide = [decimal.Decimal("-" + "9" * 76), decimal.Decimal("1" * 75)]
    table = pa.table({"d": pa.array(values, pa.decimal128(38, 4)),
                      "w": pa.array(wide, pa.decimal256(76, 0)),
                      "n": pa.array([decimal.Decimal("-5E+3"), decimal.Decimal("0")],
                                    pa.decimal128(5, -3)),
                      "z": pa.array([decimal.Decimal("0.00")] * 2, pa.decimal128(5, 2))})
    path = _write(tmp_path / "dec.arrow", table, 2)
    proc = subprocess.run([sys.executable, "-m", "arrowmm", "stats", "--json", str(path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    cols = {c["name"]: c for c in json.loads(proc.stdout)["columns"]}
    for name in ("d", "w", "n", "z"):
        bounds = [decimal.Decimal(cols[name]["min"]), decimal.Decimal(cols[name]["max"])]
        column = table.column(name).to_pylist()
        assert bounds == [min(column), max(column)], name
    assert cols["d"]["max"] == str(values[0]) and cols["z"]["min"] == "0.00"
    # the footer statistics, once added, are shown the same way
    dst = tmp_path / "with.arrow"
    arrowmm.add_statistics(path, dst)
    proc = subprocess.run([sys.executable, "-m", "arrowmm", "stats", "--json", str(dst)],
                          capture_output=True, text=True, timeout=300)
    cols2 = {c["name"]: c for c in json.loads(proc.stdout)["columns"]}
    assert [(c["min"], c["max"]) for c in cols2.values()] == \
        [(c["min"], c["max"]) for c in cols.values()]
    assert {c["from"] for c in cols2.values()} == {"footer"}


# -- string columns that are not UTF-8 ---------------------------------------------------------

def _bad_utf8_file(path, values):
    strings = pa.array(values, pa.binary()).view(pa.string())  # (pyarrow does not validate)
    return _write(path, pa.table({"ok": pa.array(range(len(values))), "bad": strings}), 2)


def test_invalid_utf8_in_a_string_column_is_an_error_naming_column_and_batch(tmp_path):
    src = _bad_utf8_file(tmp_path / "bad.arrow", [b"a", b"b", b"\xff", b"c"])
    with pytest.raises(arrowmm.ArrowInvalid, match=r"(?s)batch 1.*'bad'.*UTF-8"):
        arrowmm.add_statistics(src, tmp_path / "out.arrow")
    assert not (tmp_path / "out.arrow").exists()
    for cmd in (["stats", str(src)], ["convert", str(src), str(tmp_path / "o.arrow"),
                                     "--statistics"]):
        proc = subprocess.run([sys.executable, "-m", "arrowmm", *cmd], capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert "'bad'" in proc.stderr and "batch 1" in proc.stderr and "UTF-8" in proc.stderr


def test_a_long_minimum_with_a_stray_byte_is_never_cut_into_a_larger_bound(tmp_path):
    """A minimum longer than MAX_BOUND_BYTES is cut; cutting by decoding with errors='ignore'
    dropped a stray byte inside it (b'a\\x80\\xc3\\xa9...' became 'a\\xe9...', larger than the
    value itself: a filter s < 'a\\xc2' would skip the batch).  Either an error, or a prefix."""
    low = b"a\x80" + "\u00e9".encode() * MAX_BOUND_BYTES
    src = _bad_utf8_file(tmp_path / "bad.arrow", [low, b"zz"])
    try:
        arrowmm.add_statistics(src, tmp_path / "out.arrow")
    except arrowmm.ArrowInvalid as exc:
        assert "'bad'" in str(exc) and "UTF-8" in str(exc)
        return
    got = _recorded(tmp_path / "out.arrow")["batches"][0]["columns"]["bad"]["min"]
    assert low.startswith(got.encode())


def test_a_long_utf8_minimum_is_cut_on_a_character_boundary(tmp_path):
    low = "ab" + "\u4e2d" * MAX_BOUND_BYTES  # (3-byte characters: the cut falls inside one)
    assert (MAX_BOUND_BYTES - 2) % 3
    src = _write(tmp_path / "s.arrow", pa.table({"s": [low, "\u4e2e"]}), 2)
    arrowmm.add_statistics(src, tmp_path / "out.arrow")
    got = _recorded(tmp_path / "out.arrow")["batches"][0]["columns"]["s"]
    assert low.startswith(got["min"]) and len(got["min"].encode()) > MAX_BOUND_BYTES - 3
    assert "max" in got and got["max"] == "\u4e2e"
    assert arrowmm.dataset(str(tmp_path / "out.arrow")).count_rows(
        filter=[("s", "==", low)]) == 1


# -- two columns of one name ------------------------------------------------------------------

def test_columns_sharing_a_name_get_no_statistics_and_none_are_shown_as_theirs(tmp_path):
    """Statistics are keyed by column name: two columns named x got the second one's bounds
    under "x", and ``arrowmm stats`` showed them for both (column 0, holding 0..9, "from footer:
    min 100, max 109")."""
    table = pa.Table.from_arrays([pa.array(range(10)), pa.array(range(100, 110)),
                                  pa.array(range(10))],
                                 names=["x", "x", "y"])
    src = _write(tmp_path / "dup.arrow", table, 10)
    dst = tmp_path / "dst.arrow"
    arrowmm.add_statistics(src, dst)
    assert list(_recorded(dst)["batches"][0]["columns"]) == ["y"]
    written = tmp_path / "written.arrow"  # (arrowmm's own writer records the same)
    with arrowmm.new_file(str(written), arrowmm.record_batch(table.to_batches()[0]).schema,
                          statistics=True) as w:
        w.write(arrowmm.record_batch(table.to_batches()[0]))
    assert list(_recorded(written)["batches"][0]["columns"]) == ["y"]
    # a file an older writer gave the second x's bounds under "x" (signed and stamped, as
    # if written so today): not shown for either (the document is not used at all: "x" names
    # no one column whose type it could record)
    older = tmp_path / "older.arrow"
    stats_id = "0123456789abcdef" * 2
    entries = [{"rows": 10, "columns": {"x": {"nulls": 0, "min": 100, "max": 109},
                                        "y": {"nulls": 0, "min": 0, "max": 9}}}]
    blocks = [(0, 0, 0)]
    for _ in range(2):  # (the second time with the Block pyarrow wrote the batch at)
        footer = encode_file_statistics(arrowmm.schema(table.schema), entries, stats_id,
                                        blocks)
        with pa_ipc.new_file(str(older), table.schema, metadata=footer) as w:
            w.write_batch(table.to_batches()[0], custom_metadata={STAMP_KEY: stats_id})
        with arrowmm.open_file(str(older)) as r:
            blocks = r.footer.record_batches.tolist()
    for path, y_from in ((dst, "footer"), (older, "computed")):
        proc = subprocess.run([sys.executable, "-m", "arrowmm", "stats", "--json", str(path)],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        cols = json.loads(proc.stdout)["columns"]
        assert [(c["min"], c["max"]) for c in cols] == [(0, 9), (100, 109), (0, 9)]
        assert [c["from"] for c in cols] == ["computed", "computed", y_from]
