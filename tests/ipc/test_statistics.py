"""Per-batch statistics (arrowmm.ipc.core.statistics), the pruning verdicts built on them
(arrowmm.spark.pruning, no Spark session needed) and random access to streams (arrowmm.ipc.read.indexed).

Statistics are checked against min/max of pyarrow's values and its null counts; verdicts
against a row-by-row evaluation of the same filter with Spark's semantics.
"""
from __future__ import annotations

import datetime
import decimal
import hashlib
import io
import json
import math
import random

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.ipc.core.statistics import DIGEST_KEY, STAMP_KEY, STATISTICS_KEY, batch_statistics, \
    decode_statistics, statistics_mismatch

UTC = datetime.timezone.utc

STAT_COLUMNS = {
    "i8": pa.array([3, None, -7, 100], pa.int8()),
    "u64": pa.array([2**64 - 1, 0, None, 5], pa.uint64()),
    "f16": pa.array(np.array([1.5, -2.0, 0.25, 8.0], np.float16)),
    "f64": pa.array([float("nan"), -1.5, None, float("inf")]),
    "dec": pa.array([decimal.Decimal("-12.34"), None, decimal.Decimal("99.99"), decimal.Decimal("0.01")],
                    pa.decimal128(6, 2)),
    "d256": pa.array([decimal.Decimal("-1e40"), decimal.Decimal("3"), None, decimal.Decimal("1e39")],
                     pa.decimal256(45, 0)),
    "d32": pa.array([decimal.Decimal("1.5"), decimal.Decimal("-2.5"), None, None], pa.decimal32(4, 1)),
    "date": pa.array([datetime.date(2024, 1, 1), datetime.date(1960, 5, 5), None, None], pa.date32()),
    "ts": pa.array([5, -1, None, 10**12], pa.timestamp("ms", "Europe/Paris")),
    "s": pa.array(["b", "ab", None, "é"]),
    "ls": pa.array(["zz", "a", "m", None], pa.large_string()),
    "bin": pa.array([b"\xff", b"\x00\x01", None, b""]),
    "bool": pa.array([True, None, True, True]),
    "nulls": pa.array([None, None, None, None], pa.int32()),
}


def _expected(arr: pa.Array) -> dict:
    out = {"nulls": arr.null_count}
    valid = arr.drop_null()
    if pa.types.is_floating(arr.type):
        values = [float(v) for v in valid.to_pylist()]
        finite = [v for v in values if not math.isnan(v)]
        if len(finite) != len(values):
            out["nan"] = True
        if finite:
            out["min"], out["max"] = min(finite), max(finite)
        return out
    if len(valid):
        values = valid.to_pylist()  # Python's order is Arrow's for these types (bytes, code points)
        out["min"], out["max"] = min(values), max(values)
    return out


def _decode(dtype: pa.DataType, stats: dict) -> dict:
    """arrowmm's stored statistics as Python values of the column's type."""
    out = {k: v for k, v in stats.items() if k in ("nulls", "nan")}
    for key in ("min", "max"):
        if key not in stats:
            continue
        v = stats[key]
        if pa.types.is_floating(dtype):
            v = float(v)
        elif pa.types.is_decimal(dtype):
            v = decimal.Decimal(v).scaleb(-dtype.scale)
        elif pa.types.is_timestamp(dtype):
            v = pa.array([v], pa.int64()).cast(dtype)[0].as_py()
        elif pa.types.is_date32(dtype):
            v = pa.array([v], pa.int32()).cast(dtype)[0].as_py()
        elif pa.types.is_binary(dtype):
            v = bytes.fromhex(v)
        elif pa.types.is_boolean(dtype):
            v = bool(v)
        out[key] = v
    return out


@pytest.mark.parametrize("offset", [0, 1])
def test_batch_statistics_match_pyarrow_compute(offset):
    batch = pa.record_batch(STAT_COLUMNS).slice(offset)
    stats = batch_statistics(arrowmm.record_batch(batch))
    assert set(stats) == set(STAT_COLUMNS)
    for name, column in zip(batch.schema.names, batch.columns):
        assert _decode(column.type, stats[name]) == _expected(column), name


def test_a_batch_agrees_with_its_own_statistics_and_not_with_tighter_ones():
    batch = arrowmm.record_batch(pa.record_batch(STAT_COLUMNS))
    entry = {"rows": batch.num_rows, "columns": batch_statistics(batch)}
    assert statistics_mismatch(entry, batch) is None
    for name, stats in entry["columns"].items():
        tighter = [{**stats, "nulls": stats["nulls"] + 1}]
        if stats.get("nan"):
            tighter.append({**stats, "nan": False})
        if "min" in stats:  # (a minimum above the values': "zz" for text, of another kind else)
            tighter.append({**stats, "min": "zz"})
        if isinstance(stats.get("max"), int):
            tighter.append({**stats, "max": stats["max"] - 1})
        for recorded in tighter:
            told = statistics_mismatch({**entry, "columns": {name: recorded}}, batch)
            assert told and told.startswith(f"column {name!r}: "), (name, recorded, told)
    assert "record 5 rows" in statistics_mismatch({**entry, "rows": 5}, batch)


def test_nested_and_dictionary_columns_have_no_statistics():
    batch = arrowmm.record_batch(pa.record_batch({
        "l": pa.array([[1], [2, 3]]), "d": pa.array(["a", "b"]).dictionary_encode()}))
    assert batch_statistics(batch) == {}


def test_long_strings_keep_a_truncated_minimum_and_no_maximum():
    long_lo, long_hi = "a" * 300 + "z", "b" * 300
    stats = batch_statistics(arrowmm.record_batch({"s": [long_hi, long_lo]}))["s"]
    assert long_lo.startswith(stats["min"]) and len(stats["min"].encode()) <= 256
    assert "max" not in stats


def test_writers_record_statistics_that_other_readers_ignore(tmp_path):
    schema = arrowmm.schema([("x", arrowmm.int64())])
    path = str(tmp_path / "s.arrow")
    with arrowmm.new_file(path, schema, metadata={"k": "v"}, statistics=True) as w:
        w.write({"x": [3, 1, 2]})
        w.write({"x": [None, 10]})
    doc = json.loads(arrowmm.open_file(path).footer.metadata[STATISTICS_KEY])
    assert doc["columns"] == ["x"]
    assert [b["columns"]["x"] for b in doc["batches"]] == [
        {"nulls": 0, "min": 1, "max": 3}, {"nulls": 1, "min": 10, "max": 10}]
    reader = arrowmm.open_file(path)
    assert reader.schema.metadata is None  # metadata= is the footer's
    assert reader.metadata == {"k": "v", STATISTICS_KEY: reader.footer.metadata[STATISTICS_KEY],
                               DIGEST_KEY: reader.footer.metadata[DIGEST_KEY]}
    # the first batch carries the document's id (what binds it to these batches), no other
    assert reader.batch_metadata(0) == {STAMP_KEY: doc["id"]} and not reader.batch_metadata(1)
    assert pa.ipc.open_file(path).read_all().to_pydict() == {"x": [3, 1, 2, None, 10]}
    sink = io.BytesIO()
    with arrowmm.new_stream(sink, schema, statistics=True) as w:
        w.write({"x": [4, 5]})
    (batch,) = arrowmm.open_stream(sink.getvalue())
    assert decode_statistics(batch.metadata, batch.schema)["columns"]["x"] == \
        {"nulls": 0, "min": 4, "max": 5}
    assert pa.ipc.open_stream(sink.getvalue()).read_all().num_rows == 2


GOOD = '{"version": 3, "types": {"x": "int64"}, "columns": {"x": {"nulls": 0}}}'


@pytest.mark.parametrize("text", [
    None, "", "{", "[]", '{"version": 99}', '{"version": 1}', '{"version": 2}', '{"version": 3}',
    '{"version": 3, "types": {}, "columns": {"x": {"nulls": 0}}}',  # (x's type not named)
    '{"version": 3, "types": {"x": "uint64"}, "columns": {"x": {"nulls": 0}}}',  # (another)
    GOOD])
def test_damaged_statistics_are_ignored(text):
    schema = arrowmm.schema([("x", arrowmm.int64())])
    assert decode_statistics(None if text is None else {STATISTICS_KEY: text}, schema) is None
    if text:  # (only the document its digest was made of is taken, only of version 3, and
        # only when it names the type the schema gives every column it describes)
        digest = hashlib.sha256(text.encode()).hexdigest()
        taken = decode_statistics({STATISTICS_KEY: text, DIGEST_KEY: digest}, schema)
        assert (taken is not None) == (text == GOOD)


# -- pruning verdicts against row-by-row truth -------------------------------------------------------
pyspark_datasource = pytest.importorskip("pyspark.sql.datasource",
                                         reason="pyspark is in the test extras; install them")


def _spark_compare(op, a, b):
    """Spark's comparison of two non-null values (NaN is the largest float and equals itself)."""
    def key(v):
        return (1, 0) if isinstance(v, float) and math.isnan(v) else (0, v)
    ka, kb = key(a), key(b)
    return {"EqualTo": ka == kb, "EqualNullSafe": ka == kb, "GreaterThan": ka > kb,
            "GreaterThanOrEqual": ka >= kb, "LessThan": ka < kb, "LessThanOrEqual": ka <= kb}[op]


def _row_matches(flt, v) -> bool:
    name = type(flt).__name__
    if name == "IsNull":
        return v is None
    if name == "IsNotNull":
        return v is not None
    if name == "EqualNullSafe" and flt.value is None:
        return v is None
    if v is None:
        return False
    if name == "In":
        return any(x is not None and _spark_compare("EqualTo", v, x) for x in flt.value)
    if name == "StringStartsWith":
        return v.startswith(flt.value)
    return _spark_compare(name, v, flt.value)


def _random_filters(rng, values, kind):
    ds = pyspark_datasource
    pool = [v for v in values if v is not None] or (["b"] if kind == "str" else [0])
    def lit():
        if kind == "str":
            return rng.choice(pool)[: rng.randint(0, 3)] + rng.choice(["", "a", "~"])
        v = rng.choice(pool)
        return v if rng.random() < 0.5 else v + rng.choice([-1, 1])
    out = [ds.IsNull(("c",)), ds.IsNotNull(("c",)), ds.EqualNullSafe(("c",), None)]
    for _ in range(6):
        out.append(rng.choice([ds.EqualTo, ds.EqualNullSafe, ds.GreaterThan, ds.GreaterThanOrEqual,
                               ds.LessThan, ds.LessThanOrEqual])(("c",), lit()))
    out.append(ds.In(("c",), [lit() for _ in range(rng.randint(1, 3))] + [None] * rng.randint(0, 1)))
    if kind == "str":
        out.append(ds.StringStartsWith(("c",), lit()))
    return out


@pytest.mark.parametrize("kind", ["int", "float", "str"])
def test_verdicts_never_contradict_the_rows(kind):
    from arrowmm.spark.pruning import ALL, NONE, verdict
    rng = random.Random(kind)
    dtype = {"int": arrowmm.int32(), "float": arrowmm.float64(), "str": arrowmm.string()}[kind]
    judged = 0
    for _ in range(300):
        n = rng.randint(1, 6)
        if kind == "int":
            values = [rng.choice([None, rng.randint(-3, 3)]) for _ in range(n)]
        elif kind == "float":
            values = [rng.choice([None, float("nan"), float("inf"), -0.0, rng.uniform(-2, 2),
                                  float(rng.randint(-2, 2))]) for _ in range(n)]
        else:
            values = [rng.choice([None, "", "a", "ab", "abc", "b", "ba", "é"]) for _ in range(n)]
        batch = arrowmm.record_batch({"c": arrowmm.array(values, type=dtype)})
        stats = batch_statistics(batch)["c"]
        for flt in _random_filters(rng, [v for v in values if not (isinstance(v, float) and math.isnan(v))], kind):
            got = verdict(flt, dtype, stats, n)
            matches = [_row_matches(flt, v) for v in values]
            if got == NONE:
                assert not any(matches), (flt, values, stats)
            elif got == ALL:
                assert all(matches), (flt, values, stats)
            judged += got != "some"
    assert judged > 100  # the verdicts do decide, not only answer SOME


def test_verdicts_on_timestamps_and_decimals():
    from arrowmm.spark.pruning import ALL, NONE, SOME, verdict
    ds = pyspark_datasource
    ts_type = arrowmm.timestamp("ms", "UTC")
    stats = {"nulls": 0, "min": 1_700_000_000_000, "max": 1_700_000_001_000}
    at = datetime.datetime.fromtimestamp(1_700_000_000, UTC)
    assert verdict(ds.GreaterThan(("t",), at + datetime.timedelta(seconds=1)), ts_type, stats, 5) == NONE
    assert verdict(ds.GreaterThanOrEqual(("t",), at), ts_type, stats, 5) == ALL
    assert verdict(ds.LessThan(("t",), at), ts_type, stats, 5) == NONE
    assert verdict(ds.LessThan(("t",), at.replace(tzinfo=None)), ts_type, stats, 5) == SOME  # ntz literal
    dec = arrowmm.decimal128(6, 2)
    stats = {"nulls": 0, "min": -1234, "max": 9999}
    assert verdict(ds.GreaterThan(("d",), decimal.Decimal("99.99")), dec, stats, 3) == NONE
    assert verdict(ds.GreaterThan(("d",), decimal.Decimal("-12.35")), dec, stats, 3) == ALL
    ns = arrowmm.timestamp("ns", "UTC")  # cast to microseconds for Spark: never judged
    assert verdict(ds.IsNull(("t",)), ns, {"nulls": 0, "min": 0, "max": 1}, 2) == SOME


# -- random access to streams ------------------------------------------------------------------------
def _stream_with_dictionaries() -> bytes:
    b1 = pa.record_batch({"d": pa.array(["a", "b", "a"]).dictionary_encode(), "x": [1, 2, 3]})
    b2 = pa.record_batch({"d": pa.array(["c", "c"]).dictionary_encode(), "x": [4, 5]})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, b1.schema) as w:
        for b in (b1, b2, b1, b2):
            w.write_batch(b)  # each change of dictionary is a replacement
    return sink.getvalue().to_pybytes()


def test_indexed_stream_reads_any_batch_with_its_dictionaries(tmp_path):
    data = _stream_with_dictionaries()
    expected = [b.to_pydict() for b in pa.ipc.open_stream(data)]
    path = tmp_path / "d.arrows"
    path.write_bytes(data)
    for source in (data, str(path)):
        reader = arrowmm.index_stream(source)
        assert reader.num_record_batches == 4
        for i in [3, 0, 2, 1, 1, -1]:
            assert reader.get_batch(i).to_pydict() == expected[i]
        with pytest.raises(IndexError):
            reader.get_batch(4)
        extents = reader.batch_extents()
        assert all(o > 0 and n > 0 for o, n in extents) and extents == sorted(extents)
        for k in range(4):
            alone = arrowmm.index_stream(source, reader.entries_for([k]))
            assert [b.to_pydict() for b in alone] == [expected[k]]


def test_indexed_stream_reads_each_dictionary_message_once_in_any_order(monkeypatch):
    """Reverse order used to replay the stream from its start for every batch (quadratic):
    now every dictionary message is read once, whatever the order, deltas included."""
    from arrowmm.ipc.read import indexed
    batches = []
    for i in range(40):  # a delta or a replacement before every batch
        values = pa.array([f"v{i}", f"w{i}", f"v{i}"]).dictionary_encode()
        batches.append(pa.record_batch({"d": values, "x": [i, i, i]}))
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)
    with pa.ipc.new_stream(sink, batches[0].schema, options=options) as w:
        for b in batches:
            w.write_batch(b)
    data = sink.getvalue().to_pybytes()
    expected = [b.to_pydict() for b in pa.ipc.open_stream(data)]
    reader = arrowmm.index_stream(data)
    kinds = [kind for kind, _ in reader.entries]
    n_dictionaries = kinds.count(indexed._DICTIONARY)
    assert n_dictionaries >= 40
    reads = []
    real_read = indexed.IndexedStreamReader._read
    monkeypatch.setattr(indexed.IndexedStreamReader, "_read",
                        lambda self, position, kind: reads.append(kind) or real_read(self, position, kind))
    order = list(range(39, -1, -1)) + [7, 33, 0, 39]
    assert [reader.get_batch(i).to_pydict() for i in order] == [expected[i] for i in order]
    assert reads.count(indexed._DICTIONARY) == n_dictionaries


def test_indexed_stream_rejects_damage():
    data = _stream_with_dictionaries()
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.index_stream(data[:-30])
    with pytest.raises(arrowmm.ArrowInvalid):
        arrowmm.index_stream(b"\xff\xff\xff\xff\x00\x00\x00\x00")
    reader = arrowmm.index_stream(data, [(3, 8)])  # an entry pointing at the schema message
    with pytest.raises(arrowmm.ArrowInvalid):
        reader.get_batch(0)


def test_binary_extremes_kernel_matches_python_order():
    """The C kernel behind string/binary bounds picks the rows Python's min/max (byte order, a
    prefix first) pick, skipping nulls, for int32 and int64 offsets and sliced arrays."""
    from arrowmm._core._offsets import binary_extremes
    rng = random.Random(7)
    for case in range(200):
        n = rng.randint(1, 40)
        values = [None if rng.random() < 0.2 else
                  bytes(rng.choice(b"ab\x00\xff") for _ in range(rng.randint(0, 4)))
                  for _ in range(n)]
        arr = pa.array(values, pa.large_binary() if case % 2 else pa.binary())
        start = rng.randint(0, n - 1)
        part = arr.slice(start, rng.randint(0, n - start))
        mm = arrowmm.array(part)
        lo, hi = binary_extremes(mm._buffers[2], mm.value_offsets(), len(mm),
                                 mm.validity if mm.null_count else None, mm.offset, "test")
        live = [v for v in part.to_pylist() if v is not None]
        if not live:
            assert (lo, hi) == (-1, -1)
            continue
        assert part[lo].as_py() == min(live) and part[hi].as_py() == max(live), case


def test_binary_extremes_kernel_refuses_offsets_outside_the_data():
    from arrowmm._core._offsets import binary_extremes
    data = np.frombuffer(b"abcdef", dtype=np.uint8)
    with pytest.raises(arrowmm.ArrowInvalid, match="value 1 has offsets \\[2, 9\\)"):
        binary_extremes(data, np.array([0, 2, 9], dtype=np.int32), 2, None, 0, "test")
    with pytest.raises(arrowmm.ArrowInvalid, match="value 0"):
        binary_extremes(data, np.array([3, 1], dtype=np.int64), 1, None, 0, "test")
    with pytest.raises(arrowmm.ArrowInvalid, match="2 offsets for 2 values"):
        binary_extremes(data, np.array([0, 1], dtype=np.int32), 2, None, 0, "test")
