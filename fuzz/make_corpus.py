"""Write the fuzzing seed corpus: small valid IPC files and streams of every type.

``python fuzz/make_corpus.py [OUT]`` (default ``fuzz/corpus/seed``, gitignored).

Batches of every Arrow type arrowmm reads are built with pyarrow (the test
oracle; arrowmm itself never imports it), then written

* by pyarrow: file and stream, uncompressed, LZ4 and ZSTD, and with dictionary deltas;
* by arrowmm's writer: file and stream, big-endian, legacy framing (no continuation
  markers, as before Arrow 0.15), compressed, and streams whose dictionaries grow
  (delta batches) or change (replacement);

plus a few edge cases (no batches, empty batch, no columns).  Each input stays a
few hundred bytes to a few KiB, so libFuzzer's default ``-max_len`` (the largest
seed) keeps mutations cheap.  Names say what a file holds: ``<batch>.<writer>-<options>.<arrow|arrows>``.
"""
from __future__ import annotations

import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pyarrow as pa  # noqa: E402

import arrowmm  # noqa: E402


def batches() -> dict:
    """name -> pyarrow RecordBatch; 5 rows each, nulls where the type has a validity bitmap."""
    from decimal import Decimal as D
    n = [1, None, 3, 4, None]
    s = ["a", None, "ccc", "", "\u00e9t\u00e9"]
    return {
        "ints": pa.record_batch({
            "i8": pa.array(n, pa.int8()), "u16": pa.array(n, pa.uint16()),
            "i32": pa.array(n, pa.int32()), "u64": pa.array(n, pa.uint64())}),
        "floats": pa.record_batch({
            "f16": pa.array([1.0, None, 2.5, -0.0, 3.0], pa.float16()) if hasattr(pa, "float16") else pa.nulls(5),
            "f32": pa.array([1.5, None, float("inf"), -2.0, 0.0], pa.float32()),
            "f64": pa.array([1.5, None, float("-inf"), 1e300, 0.0])}),
        "bool_null": pa.record_batch({"b": pa.array([True, None, False, True, False]), "z": pa.nulls(5)}),
        "decimals": pa.record_batch({
            "d128": pa.array([D("1.25"), None, D("-3.00"), D("4.5"), D("0")], pa.decimal128(12, 2)),
            "d256": pa.array([D("1.125"), None, D("-3"), D("4"), D("5")], pa.decimal256(40, 3))}),
        "temporal": pa.record_batch({
            "d32": pa.array(n, pa.date32()), "d64": pa.array([86_400_000, None, 0, -86_400_000, 864_000_000], pa.date64()),
            "t32": pa.array(n, pa.time32("ms")), "t64": pa.array([1000, None, 3000, 4000, None], pa.time64("ns")),
            "ts": pa.array(n, pa.timestamp("us", tz="Europe/Paris")), "tsn": pa.array(n, pa.timestamp("s")),
            "dur": pa.array(n, pa.duration("ms"))}),
        "intervals": pa.record_batch({
            "mdn": pa.array([pa.MonthDayNano([1, 2, 3]), None, pa.MonthDayNano([0, 0, -1]),
                             pa.MonthDayNano([4, 5, 6]), None], pa.month_day_nano_interval())}),
        "binary": pa.record_batch({
            "s": pa.array(s), "ls": pa.array(s, pa.large_string()),
            "b": pa.array([b"\x00", None, b"xyz", b"", b"q"]),
            "lb": pa.array([b"\x00", None, b"xyz", b"", b"q"], pa.large_binary()),
            "fsb": pa.array([b"abc", None, b"def", b"ghi", b"jkl"], pa.binary(3))}),
        "views": pa.record_batch({
            "sv": pa.array(["short", None, "a string longer than twelve bytes", "", "x"], pa.string_view()),
            "bv": pa.array([b"y" * 20, b"", None, b"z", b"w" * 13], pa.binary_view())}),
        "lists": pa.record_batch({
            "l": pa.array([[1, 2], None, [], [3, None], [4]], pa.list_(pa.int32())),
            "ll": pa.array([["a"], [], None, ["b", None], ["c", "d"]], pa.large_list(pa.string())),
            "fsl": pa.array([[1, 2], None, [3, 4], [5, None], [7, 8]], pa.list_(pa.int16(), 2)),
            "nested": pa.array([[[1]], [], None, [[2, 3], []], [[4]]], pa.list_(pa.list_(pa.int64())))}),
        "list_views": pa.record_batch({
            "lv": pa.array([[1, 2], None, [], [3, None], [4]], pa.list_view(pa.int32())),
            "llv": pa.array([["a"], [], None, ["b"], ["c", "d"]], pa.large_list_view(pa.string()))}),
        "struct_map": pa.record_batch({
            "st": pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}, {"a": 4, "b": None},
                            {"a": 5, "b": "z"}]),
            "m": pa.array([[("k", 1)], None, [], [("a", 2), ("b", None)], [("c", 3)]],
                          pa.map_(pa.string(), pa.int64()))}),
        "unions": pa.record_batch({
            "su": pa.UnionArray.from_sparse(pa.array([0, 1, 0, 1, 1], pa.int8()),
                                            [pa.array([1, 2, 3, 4, 5]), pa.array(list("abcde"))]),
            "du": pa.UnionArray.from_dense(pa.array([0, 1, 0, 1, 0], pa.int8()),
                                           pa.array([0, 0, 1, 1, 2], pa.int32()),
                                           [pa.array([1.0, None, 3.0]), pa.array(["x", "y"])])}),
        "dictionary": pa.record_batch({
            "d": pa.array(["a", "b", None, "a", "c"]).dictionary_encode(),
            "d8": pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 1, 2], pa.int8()),
                                                 pa.array(["ten", "twenty", "thirty"]))}),
        "ree": pa.record_batch({
            "r": pa.RunEndEncodedArray.from_arrays(pa.array([2, 3, 5], pa.int32()),
                                                   pa.array(["a", None, "c"]))}),
    }


def _pyarrow(batch, fmt: str, **options) -> bytes:
    sink = io.BytesIO()
    new = pa.ipc.new_file if fmt == "file" else pa.ipc.new_stream
    with new(sink, batch.schema, options=pa.ipc.IpcWriteOptions(**options)) as w:
        w.write_batch(batch)
        w.write_batch(batch.slice(1, 3))
    return sink.getvalue()


def _arrowmm(batches, fmt: str, **options) -> bytes:
    sink = io.BytesIO()
    first = arrowmm.record_batch(batches[0])
    new = arrowmm.new_file if fmt == "file" else arrowmm.new_stream
    with new(sink, first.schema, **options) as w:
        for b in batches:
            w.write(arrowmm.record_batch(b))
    return sink.getvalue()


def _growing_dictionaries():
    """Batches whose dictionary grows (deltas) and then changes (replacement, streams only)."""
    d = pa.array(["a", "b"]).dictionary_encode()
    grown = pa.DictionaryArray.from_arrays(pa.array([2, 0, None], pa.int32()), pa.array(["a", "b", "c"]))
    changed = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), pa.array(["z", "y"]))
    return [pa.record_batch({"d": x}) for x in (d, grown, changed)]


def corpus() -> dict:
    """file name -> bytes."""
    out = {}
    for name, batch in batches().items():
        for fmt, ext in (("file", "arrow"), ("stream", "arrows")):
            for codec in (None, "lz4", "zstd"):
                out[f"{name}.pyarrow-{codec or 'plain'}.{ext}"] = _pyarrow(batch, fmt, compression=codec)
            try:
                out[f"{name}.arrowmm-plain.{ext}"] = _arrowmm([batch, batch.slice(2)], fmt)
                out[f"{name}.arrowmm-bigendian.{ext}"] = _arrowmm([batch], fmt, endianness="big")
                out[f"{name}.arrowmm-legacy-zstd.{ext}"] = _arrowmm([batch], fmt, legacy_format=True,
                                                                  compression="zstd")
            except arrowmm.ArrowError as exc:  # a type the writer cannot produce in that form
                print(f"skipped {name} {fmt} (arrowmm writer): {exc}", file=sys.stderr)
    grow = _growing_dictionaries()
    out["dict_deltas.pyarrow-plain.arrows"] = _pyarrow_many(grow[:2], emit_dictionary_deltas=True)
    out["dict_deltas.pyarrow-plain.arrow"] = _pyarrow_many(grow[:2], "file", emit_dictionary_deltas=True)
    out["dict_replaced.arrowmm-plain.arrows"] = _arrowmm(grow, "stream")
    out["dict_deltas.arrowmm-lz4.arrows"] = _arrowmm(grow[:2], "stream", compression="lz4")
    out["dict_deltas.arrowmm-legacy.arrows"] = _arrowmm(grow[:2], "stream", legacy_format=True)
    schema = pa.schema([("x", pa.int64())], metadata={"origin": "make_corpus"})
    empty = pa.record_batch({"x": pa.array([], pa.int64())}, schema=schema)
    out["no_batches.pyarrow-plain.arrow"] = _pyarrow_many([], "file", schema=schema)
    out["no_batches.pyarrow-plain.arrows"] = _pyarrow_many([], schema=schema)
    out["empty_batch.pyarrow-plain.arrows"] = _pyarrow_many([empty])
    no_columns = pa.Table.from_pydict({"a": [1, 2, 3]}).drop_columns(["a"]).to_batches()[0]
    out["no_columns.pyarrow-plain.arrows"] = _pyarrow_many([no_columns])
    return out


def _pyarrow_many(batches, fmt: str = "stream", schema=None, **options) -> bytes:
    sink = io.BytesIO()
    new = pa.ipc.new_file if fmt == "file" else pa.ipc.new_stream
    with new(sink, schema or batches[0].schema, options=pa.ipc.IpcWriteOptions(**options)) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out_dir = argv[0] if argv else os.path.join(HERE, "corpus", "seed")
    os.makedirs(out_dir, exist_ok=True)
    files = corpus()
    for name, data in files.items():
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
    total = sum(map(len, files.values()))
    print(f"wrote {len(files)} inputs ({total:,} bytes, largest {max(map(len, files.values())):,}) to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
