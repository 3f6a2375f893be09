"""Per-batch column statistics (min, max, null count) recorded by arrowmm's writers.

Readers use them to skip record batches that cannot match a filter without
decoding them (the Spark source's filter pushdown does).  Other Arrow readers
ignore them: they live in custom metadata under one namespaced key,
``arrowmm:statistics``, whose value is JSON:

* IPC file: the footer's custom metadata holds every batch::

      {"version": 3, "id": "<32 hex digits>", "columns": ["x", "s"],
       "types": {"x": "int64", "s": "string"},
       "batches": [{"rows": 3, "block": [offset, metaDataLength, bodyLength],
                    "columns": {"x": {"nulls": 0, "min": 1, "max": 7}, ...}}, ...]}

* IPC stream: each record batch message's custom metadata holds its own
  ``{"version": 3, "rows": ..., "types": {...}, "columns": {...}}``.

Statistics decide which rows a filter returns, so a document that does not describe the
data beside it must never be used.  Three things bind it (version 3; documents of versions 1
and 2, which lacked some, are ignored):

* beside the document, ``arrowmm:statistics-sha256`` holds the SHA-256 of its bytes: a
  damaged digit no longer reads as a bound;
* a file's document carries a random ``id`` that its writer also stamps, as
  ``arrowmm:statistics-id``, in the custom metadata of the file's first record batch
  message.  Another writer given the footer's metadata (pyarrow's ``new_file(...,
  metadata=reader.metadata)``) copies the document but not the stamp: its statistics, which
  describe the other file's values, are then ignored.  (One stamp, not one per batch: a
  reader checks it with one header read, and the JVM connector over HDFS with one request.)
* each entry of a file's ``batches`` carries its batch's footer ``Block`` as the writer wrote
  it, and is used only for the message the footer's Block of that index still points at:
  footers may list blocks in any order, so two swapped Blocks read as the batches in another
  order, and without this the filter would judge each by the other's bounds (no I/O: the
  reader holds the footer);
* ``types`` names the type (pyarrow's type string of its storage type) of every column an
  entry describes, as the writer's schema had it; a reader uses the document only when its
  schema gives each the same type: one damaged schema byte (an int32 read as uint32, a
  timestamp's unit) changes what the values are, in every reader, and the bounds recorded
  for the old type would judge the new values.

A column has an entry only when its type is supported (top-level booleans,
integers, floats, decimals, dates, times, timestamps, durations, strings and
binaries; not nested or dictionary columns) and its name is its own (two columns of one
name get none).  ``nulls`` is always present;
``min``/``max`` are absent when every value is null.  Values are stored as
the column's physical values: integers (temporal values in the column's unit,
decimals unscaled, booleans as 0/1), floats (``"inf"``/``"-inf"`` as strings,
NaN excluded from min/max and reported by ``"nan": true``), strings as JSON
strings, binaries as hex.  String and binary bounds are kept only up to
``MAX_BOUND_BYTES``: a longer minimum is stored truncated (still a lower
bound), a longer maximum is omitted.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import secrets
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ... import types as t
from ..._core._offsets import binary_extremes
from ...errors import ArrowInvalid

__all__ = ["STATISTICS_KEY", "DIGEST_KEY", "STAMP_KEY", "MAX_BOUND_BYTES", "batch_statistics",
           "column_statistics", "encode_file_statistics", "encode_batch_statistics",
           "decode_statistics", "decode_file_statistics", "new_statistics_id",
           "without_statistics", "supports_statistics", "unique_names", "statistics_mismatch",
           "type_string"]

STATISTICS_KEY = "arrowmm:statistics"
#: beside a document: the SHA-256 (hex) of its UTF-8 bytes
DIGEST_KEY = "arrowmm:statistics-sha256"
#: in a file's first record batch message: the ``id`` of the footer's document
STAMP_KEY = "arrowmm:statistics-id"
VERSION = 3
_ID = re.compile(r"[0-9a-f]{32}")
MAX_BOUND_BYTES = 256


def supports_statistics(dtype: t.DataType) -> bool:
    """Whether arrowmm records min/max for columns of ``dtype``."""
    return _BOUNDS.get(type(dtype)) is not None


def column_statistics(array, max_bound_bytes: Optional[int] = MAX_BOUND_BYTES) -> Optional[dict]:
    """``{"nulls": n, "min": .., "max": ..}`` of one array, or None for unsupported types.

    ``max_bound_bytes``: string and binary bounds longer than this are cut (a minimum) or
    left out (a maximum), as the writers store them; None keeps them whole (what
    ``arrowmm stats`` shows)."""
    dtype = array.type
    if not supports_statistics(dtype):
        return None
    nulls = int(array.null_count)
    out: dict = {"nulls": nulls}
    if nulls == len(array):
        return out
    _BOUNDS[type(dtype)](array, dtype, out, max_bound_bytes)
    return out


def unique_names(names) -> set:
    """The column names that name one column: statistics are keyed by name, so a name two
    columns share gets none (else one column's bounds would be read as the other's)."""
    seen, twice = set(), set()
    for name in names:
        (twice if name in seen else seen).add(name)
    return seen - twice


def batch_statistics(batch) -> Dict[str, dict]:
    """Statistics of every supported top-level column of ``batch`` whose name is its own, by
    column name."""
    out = {}
    unique = unique_names(batch.schema.names)
    for field, column in zip(batch.schema, batch.storage_columns):
        if field.name not in unique:
            continue
        try:
            stats = column_statistics(column)
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"column {field.name!r}: {exc}") from None
        if stats is not None:
            out[field.name] = stats
    return out


def new_statistics_id() -> str:
    """A file's statistics ``id``: random, so no other file's document carries it."""
    return secrets.token_hex(16)


def _digest(text) -> str:
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")
    return hashlib.sha256(data).hexdigest()


def _signed(doc: dict) -> Dict[str, str]:
    text = json.dumps(doc, separators=(",", ":"))
    return {STATISTICS_KEY: text, DIGEST_KEY: _digest(text)}


def encode_batch_statistics(batch) -> Dict[str, str]:
    """The metadata entries (document and digest) a stream writer stores in a record batch
    message."""
    columns = batch_statistics(batch)
    return _signed({"version": VERSION, "rows": batch.num_rows,
                    "types": _types_of(batch.schema, columns), "columns": columns})


def encode_file_statistics(schema: t.Schema, batches: List[dict], stats_id: str,
                           blocks: Sequence[Tuple[int, int, int]]) -> Dict[str, str]:
    """The footer metadata entries (document and digest) a file writer stores: ``batches``
    are ``{"rows", "columns"}``, ``blocks`` their footer Blocks (offset, metaDataLength,
    bodyLength) in the same order; ``stats_id`` is what the file's first record batch message
    carries under ``STAMP_KEY``."""
    if len(blocks) != len(batches):
        raise ValueError(f"{len(batches)} batches' statistics for {len(blocks)} blocks")
    entries = [{"rows": b["rows"], "block": [int(o), int(m), int(n)], "columns": b["columns"]}
               for b, (o, m, n) in zip(batches, blocks)]
    described = set().union(*(b["columns"] for b in batches))
    return _signed({"version": VERSION, "id": stats_id, "columns": list(schema.names),
                    "types": _types_of(schema, described), "batches": entries})


def type_string(dtype: t.DataType) -> str:
    """What ``types`` records for a column of ``dtype``: pyarrow's string of its storage type."""
    return str(dtype.storage_type if isinstance(dtype, t.ExtensionType) else dtype)


def _types_of(schema: t.Schema, names) -> Dict[str, str]:
    return {f.name: type_string(f.type) for f in schema if f.name in names}


def _types_hold(doc: dict, schema: t.Schema, described) -> bool:
    """Whether the document's ``types`` give every ``described`` column name the type the
    reader's ``schema`` gives it (one field of that name)."""
    types = doc.get("types")
    if not isinstance(types, dict):
        return False
    fields: Dict[str, list] = {}
    for f in schema:
        fields.setdefault(f.name, []).append(f)
    for name in described:
        found = fields.get(name)
        if not found or len(found) != 1 or types.get(name) != type_string(found[0].type):
            return False
    return True


def without_statistics(metadata: Optional[dict]) -> Optional[dict]:
    """``metadata`` less the statistics keys: a writer stores its own or none, never ones
    given to it (a footer's or a batch's metadata copied from another file describes that
    file's values)."""
    if not metadata or not any(k in metadata for k in (STATISTICS_KEY, DIGEST_KEY, STAMP_KEY)):
        return metadata
    return {k: v for k, v in metadata.items()
            if k not in (STATISTICS_KEY, DIGEST_KEY, STAMP_KEY)} or None


def _document(metadata: Optional[dict]) -> Optional[dict]:
    """The statistics document of a metadata mapping, or None when it is absent, malformed,
    of another version or not the one its digest was made of (statistics only ever let a
    reader skip work, so a damaged document is ignored rather than trusted or fatal)."""
    text = metadata.get(STATISTICS_KEY) if metadata else None
    if not text or not isinstance(text, (str, bytes)):
        return None
    if metadata.get(DIGEST_KEY) != _digest(text):
        return None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        return None
    return doc


def decode_statistics(metadata: Optional[dict], schema: t.Schema) -> Optional[dict]:
    """The statistics document of a stream batch message's metadata, or None unless
    ``_document`` takes it and its ``types`` are those of the stream's ``schema`` for every
    column it describes."""
    doc = _document(metadata)
    if doc is None:
        return None
    columns = doc.get("columns")
    return doc if _types_hold(doc, schema, columns if isinstance(columns, dict) else ()) \
        else None


def decode_file_statistics(footer_metadata: Optional[dict],
                           first_batch_metadata: Callable[[], Optional[dict]],
                           blocks: np.ndarray, schema: t.Schema) -> Optional[dict]:
    """The statistics document of an IPC file's footer, or None unless ``_document`` takes
    it, it has an entry per record batch Block of the footer (``blocks``: the footer's
    ``BLOCK`` records) recording that very Block, its ``types`` are those of the footer's
    ``schema`` for every column it describes, and the file's first record batch message
    (``first_batch_metadata()``, called only then) carries its ``id``: the document was
    written with these batches, each entry for the message its Block points at."""
    doc = _document(footer_metadata)
    if doc is None:
        return None
    stats_id = doc.get("id")
    if not isinstance(stats_id, str) or not _ID.fullmatch(stats_id):
        return None
    entries = doc.get("batches")
    if not isinstance(entries, list) or len(entries) != len(blocks):
        return None
    footer_rows = zip(blocks["offset"].tolist(), blocks["metadata_length"].tolist(),
                      blocks["body_length"].tolist())
    described = set()
    for entry, row in zip(entries, footer_rows):
        recorded = entry.get("block") if isinstance(entry, dict) else None
        if not isinstance(recorded, list) or len(recorded) != 3 or \
                any(type(x) is not int for x in recorded) or tuple(recorded) != row:
            return None
        columns = entry.get("columns")
        if isinstance(columns, dict):
            described.update(columns)
    if not _types_hold(doc, schema, described):
        return None
    try:
        stamp = (first_batch_metadata() or {}).get(STAMP_KEY)
    except ArrowInvalid:
        return None  # (a damaged first batch: the reader reports it when it reads it)
    return doc if stamp == stats_id else None


def statistics_mismatch(entry, batch) -> Optional[str]:
    """What of one batch's recorded statistics (``entry``: ``{"rows", "columns"}``, as a file's
    document or a stream batch's holds it) its values contradict, or None.  A filter trusts
    them to skip (or, in the Spark source, to keep without looking) rows, and the binding
    only proves they came with the data: a program that changed the values and copied each
    batch's custom metadata too leaves statistics that no longer hold, which only reading the
    values finds (``arrowmm validate --full`` does).  A recorded bound may be looser than the
    values' (a cut string minimum); it must not be tighter."""
    if not isinstance(entry, dict):
        return None
    rows = entry.get("rows")
    if rows != batch.num_rows:
        return f"the statistics record {rows!r} rows, the batch has {batch.num_rows}"
    recorded = entry.get("columns")
    if not isinstance(recorded, dict):
        return None
    unique = unique_names(batch.schema.names)
    for field, column in zip(batch.schema, batch.storage_columns):
        rec = recorded.get(field.name)
        if field.name not in unique or not isinstance(rec, dict):
            continue
        fresh = column_statistics(column)
        if fresh is None:
            continue
        problem = _bounds_problem(rec, fresh, column.type)
        if problem:
            return f"column {field.name!r}: {problem}"
    return None


def _bounds_problem(rec: dict, fresh: dict, dtype) -> Optional[str]:
    if rec.get("nulls") != fresh["nulls"]:
        return f"the statistics record {rec.get('nulls')!r} nulls, the values hold {fresh['nulls']}"
    if fresh.get("nan") and not rec.get("nan"):
        return "the values hold NaN, the statistics say none"
    as_value = float if isinstance(dtype, t.FloatType) else (lambda v: v)
    try:
        if "min" in fresh and not ("min" in rec and as_value(rec["min"]) <= as_value(fresh["min"])):
            return (f"the statistics record min {rec.get('min')!r}, the values go down to "
                    f"{fresh['min']!r}")
        if "max" in fresh and "max" in rec and not as_value(rec["max"]) >= as_value(fresh["max"]):
            return (f"the statistics record max {rec['max']!r}, the values go up to "
                    f"{fresh['max']!r}")
    except (TypeError, ValueError):
        return f"the statistics record bounds of another kind ({rec.get('min')!r}, {rec.get('max')!r})"
    return None


# -- bounds per physical kind -------------------------------------------------------------------
def _valid_values(array, values: np.ndarray) -> np.ndarray:
    if array.null_count:
        return values[array.is_valid()]
    return values


def _numeric_bounds(array, dtype, out: dict) -> None:
    if isinstance(dtype, t.BoolType):
        values = np.asarray(array.to_numpy(zero_copy_only=False), dtype=bool)
        values = _valid_values(array, values)
        out["min"], out["max"] = int(values.min()), int(values.max())
        return
    values = _valid_values(array, _raw_numpy(array, dtype))
    if isinstance(dtype, t.FloatType):
        values = values.astype(np.float64) if values.dtype != np.float64 else values
        nan = np.isnan(values)
        if nan.any():
            out["nan"] = True
            values = values[~nan]
            if not len(values):
                return
        out["min"], out["max"] = _float(values.min()), _float(values.max())
    else:
        out["min"], out["max"] = int(values.min()), int(values.max())


def _raw_numpy(array, dtype) -> np.ndarray:
    """The stored values (integers for temporal types) as a numpy view."""
    width = dtype.byte_width
    if isinstance(dtype, (t.IntType, t.FloatType)):
        np_dtype = dtype.numpy_dtype
    else:  # dates, times, timestamps, durations: signed integers in the column's unit
        np_dtype = np.dtype(f"=i{width}")
    start = array.offset * width
    data = memoryview(array.buffers()[1])[start:start + len(array) * width]
    return np.frombuffer(data, dtype=np_dtype)


def _float(x) -> object:
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _decimal_bounds(array, dtype, out: dict) -> None:
    width = dtype.byte_width
    data = array.buffers()[1]
    start = array.offset * width
    raw = np.frombuffer(memoryview(data)[start:start + len(array) * width], dtype=np.uint8)
    raw = raw.reshape(len(array), width)
    if array.null_count:
        raw = raw[array.is_valid()]
    limbs = raw.view("<u8" if width >= 8 else f"<u{width}")  # little-endian limbs, low first
    out["min"] = _extreme_decimal(limbs, width, np.argmin)
    out["max"] = _extreme_decimal(limbs, width, np.argmax)


def _extreme_decimal(limbs: np.ndarray, width: int, pick) -> int:
    """Min or max of two's-complement integers stored as little-endian limbs (O(n) per limb)."""
    candidates = np.arange(len(limbs))
    top = limbs[:, -1].view(limbs.dtype.str.replace("u", "i"))  # the signed most significant limb
    keys = [top] + [limbs[:, k] for k in range(limbs.shape[1] - 2, -1, -1)]
    for key in keys:
        col = key[candidates]
        best = col[pick(col)]
        candidates = candidates[col == best]
        if len(candidates) == 1:
            break
    return int.from_bytes(limbs[candidates[0]].tobytes(), "little", signed=True)


def _bytes_extremes(array, dtype):
    """The smallest and largest non-null value as bytes, in byte order (which is also code point
    order for UTF-8): compared in C over the offsets for binary and string columns."""
    if isinstance(dtype, t.BinaryType):
        offsets = array.value_offsets()
        data = array._buffers[2]
        lo, hi = binary_extremes(data, offsets, len(array),
                                 array.validity if array.null_count else None, array.offset,
                                 f"{dtype} column")
        view = memoryview(data)
        return (bytes(view[int(offsets[lo]):int(offsets[lo + 1])]),
                bytes(view[int(offsets[hi]):int(offsets[hi + 1])]))
    values = [v for v in array.to_pylist() if v is not None]
    utf8 = isinstance(dtype, (t.BinaryType, t.BinaryViewType)) and dtype.utf8
    lo, hi = min(values), max(values)
    return (lo.encode(), hi.encode()) if utf8 else (bytes(lo), bytes(hi))


def _bytes_bounds(array, dtype, out: dict, limit: Optional[int]) -> None:
    utf8 = isinstance(dtype, (t.BinaryType, t.BinaryViewType)) and dtype.utf8
    lo_b, hi_b = _bytes_extremes(array, dtype)
    limit = max(len(lo_b), len(hi_b)) if limit is None else limit
    if len(lo_b) > limit:
        lo_b = lo_b[:limit]
        if utf8:  # cut on a character boundary: still a prefix, so still <= every value
            lo_b = _whole_characters(lo_b)
    out["min"] = _text(lo_b) if utf8 else lo_b.hex()
    if len(hi_b) <= limit:
        out["max"] = _text(hi_b) if utf8 else hi_b.hex()


def _whole_characters(cut: bytes) -> bytes:
    """``cut`` (UTF-8 cut short) less the one character the cut split, if any: a prefix of it,
    so still a lower bound.  (Decoding with errors="ignore" also dropped invalid bytes inside
    it, which can make the result larger than the value: those are left for ``_text``.)"""
    try:
        cut.decode()
    except UnicodeDecodeError as exc:
        if exc.end == len(cut) and exc.reason == "unexpected end of data":
            return cut[:exc.start]
    return cut


def _text(value: bytes) -> str:
    try:
        return value.decode()
    except UnicodeDecodeError as exc:
        raise ArrowInvalid(f"string column statistics: a bound is not valid UTF-8 ({exc})") from None


def _numeric(array, dtype, out: dict, limit: Optional[int]) -> None:
    _numeric_bounds(array, dtype, out)


def _decimal(array, dtype, out: dict, limit: Optional[int]) -> None:
    _decimal_bounds(array, dtype, out)


#: how each type class's min/max is found; None: decided, no bounds for this type (nested,
#: encoded and interval values have no order a filter could use; null columns no values)
_BOUNDS = {
    t.BoolType: _numeric, t.IntType: _numeric, t.FloatType: _numeric,
    t.DateType: _numeric, t.TimeType: _numeric, t.TimestampType: _numeric,
    t.DurationType: _numeric, t.DecimalType: _decimal, t.BinaryType: _bytes_bounds,
    t.BinaryViewType: _bytes_bounds, t.FixedSizeBinaryType: _bytes_bounds,
    t.NullType: None, t.IntervalType: None, t.ListType: None, t.ListViewType: None,
    t.FixedSizeListType: None, t.StructType: None, t.MapType: None, t.UnionType: None,
    t.DictionaryType: None, t.RunEndEncodedType: None,
}

#: this module's type-keyed tables, for tests/types/test_type_coverage.py
TYPE_TABLES = {"statistics bounds": _BOUNDS}
