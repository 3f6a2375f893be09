"""A small reader of Apache Arrow's integration-testing JSON format.

This is *test* code: it turns the ``generated_<case>.json.gz`` files that sit
next to Arrow's "gold" IPC files into plain Python values, so that the tests
can check that arrowmm reads the ``.arrow_file`` / ``.stream`` twins exactly.
It uses only the standard library (no pyarrow, no arrowmm), so it is an
independent oracle.

Format reference: "JSON test data format" in Arrow's
``docs/source/format/Integration.rst`` and the C++ reader
``cpp/src/arrow/integration/json_internal.cc``.  Where the gold files differ
from the prose spec they win (e.g. a dictionary's ``"data"`` is one record
batch object, not a list; bool ``DATA`` is JSON ``true``/``false``).

Public API
----------
``load(path) -> IntegrationFile``
    ``.schema`` (list of :class:`JsonField`), ``.schema_metadata`` (dict or
    None), ``.batches`` (list of batches, each a list of :class:`JsonColumn` in
    schema order), ``.dictionaries`` (id -> decoded dictionary
    :class:`JsonColumn`).
``expected_pylists(path) -> [[(name, values), ...], ...]``
    per batch, per column.
``first_difference(expected, actual) -> str | None``
    strict value comparison used by the tests (``True`` != ``1``,
    ``Decimal("1.0")`` != ``Decimal("1.00")``, list != tuple, ...).

Value convention (``JsonColumn.values``; ``None`` at null slots).  It mirrors
pyarrow's ``to_pylist()`` except that temporal types stay integers:

=========================================  ====================================
null                                       None
bool                                       bool
int (any width/sign)                       int
floatingpoint                              float, rounded to the column's
                                           precision (float32 values are the
                                           float32 nearest the JSON number, as
                                           the C++ writer stored them)
decimal (32/64/128/256)                    decimal.Decimal with exponent -scale
date, time, timestamp, duration            int (the stored count)
interval YEAR_MONTH                        int (months)
interval DAY_TIME                          (days, milliseconds)
interval MONTH_DAY_NANO                    (months, days, nanoseconds)
binary, largebinary, fixedsizebinary,
binaryview                                 bytes
utf8, largeutf8, utf8view                  str
list, largelist, listview, largelistview,
fixedsizelist                              list of child values
struct                                     dict name -> value; ``values`` is
                                           None for a struct with duplicate
                                           child names (compare children)
map                                        list of (key, value) tuples
union (sparse/dense)                       the selected child's value
dictionary-encoded                         the decoded dictionary value
runendencoded                              the expanded logical values
extension (``ARROW:extension:name``)       the storage values
=========================================  ====================================

``values`` is None also for any column that *contains* such a struct (e.g. a
list of a duplicate-name struct): there is no faithful plain value for it.

``JsonColumn.validity`` is the column's validity bitmap as written in the JSON
(``VALIDITY``).  Types without a bitmap get the *logical* validity: ``null``
is all False; union and run-end encoded slots are valid iff their value is not
None.  For a dictionary-encoded column it is the validity of the *indices*
(a valid index may still point at a null dictionary entry, whose value is
None).

``JsonColumn.children`` holds the child columns exactly as stored (list child
= the full flattened child, struct children carry their own validity, map =
one ``entries`` struct column, union = one column per member, run-end encoded
= ``[run_ends, values]``).  Dictionary-encoded columns have no children; they
expose ``indices`` and the decoded ``dictionary`` column instead.
"""
from __future__ import annotations

import gzip
import json
import os
import math
import struct
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

__all__ = [
    "GOLD_DIR",
    "GOLD_CASES",
    "JsonField",
    "JsonColumn",
    "IntegrationFile",
    "load",
    "expected_pylists",
    "first_difference",
]

#: Where the gold files live: ``<repo root>/../shared/arrow-testing/cpp-21.0.0``, or the folder
#: ``ARROWMM_GOLD_DIR`` names.  They come from apache/arrow-testing,
#: ``data/arrow-ipc-stream/integration/cpp-21.0.0`` (``tests/conftest.py`` says how to get them).
GOLD_DIR = Path(os.environ.get("ARROWMM_GOLD_DIR") or
                Path(__file__).resolve().parents[2].parent / "shared" / "arrow-testing" / "cpp-21.0.0")

#: Every case of the cpp-21.0.0 gold set (``generated_<case>.{arrow_file,stream,json.gz}``).
GOLD_CASES = (
    "binary",
    "binary_no_batches",
    "binary_view",
    "binary_zerolength",
    "custom_metadata",
    "datetime",
    "decimal",
    "decimal256",
    "decimal32",
    "decimal64",
    "dictionary",
    "dictionary_unsigned",
    "duplicate_fieldnames",
    "duration",
    "extension",
    "interval",
    "interval_mdn",
    "large_binary",
    "list_view",
    "map",
    "map_non_canonical",
    "nested",
    "nested_dictionary",
    "nested_large_offsets",
    "null",
    "null_trivial",
    "primitive",
    "primitive_no_batches",
    "primitive_zerolength",
    "recursive_nested",
    "run_end_encoded",
    "union",
)


def gold_path(case: str, suffix: str, gold_dir: Path | None = None) -> Path:
    """``<gold_dir>/generated_<case>.<suffix>`` (suffix: arrow_file, stream, json.gz)."""
    return Path(gold_dir or GOLD_DIR) / f"generated_{case}.{suffix}"


# --------------------------------------------------------------------------
# Data model
# --------------------------------------------------------------------------


@dataclass
class JsonField:
    """One schema field.  ``type`` is the JSON type object (for a
    dictionary-encoded field: the *value* type); ``dictionary`` is the JSON
    ``{"id", "indexType", "isOrdered"}`` object or None; ``metadata`` is a
    str -> str dict, or None when the JSON has none (absent, null or [])."""

    name: str
    type: dict
    nullable: bool
    children: list["JsonField"] = field(default_factory=list)
    dictionary: dict | None = None
    metadata: dict[str, str] | None = None

    @property
    def type_name(self) -> str:
        return self.type["name"]

    @property
    def extension_name(self) -> str | None:
        return (self.metadata or {}).get("ARROW:extension:name")


@dataclass
class JsonColumn:
    """One decoded column (see the module docstring for the conventions)."""

    name: str
    field: JsonField
    count: int
    validity: list[bool]
    values: list | None
    children: list["JsonColumn"] = field(default_factory=list)
    #: dictionary-encoded columns only: the raw indices (None at null slots)
    indices: list[int | None] | None = None
    #: dictionary-encoded columns only: the decoded dictionary column
    dictionary: "JsonColumn | None" = None

    @property
    def null_count(self) -> int:
        return self.validity.count(False)


@dataclass
class IntegrationFile:
    path: Path
    schema: list[JsonField]
    schema_metadata: dict[str, str] | None
    batches: list[list[JsonColumn]]
    dictionaries: dict[int, JsonColumn]
    #: number of rows of each batch (the batch-level ``"count"``)
    batch_lengths: list[int]

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.schema]


# --------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------


def _read_json(path: Path) -> dict:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":  # gzip magic, whatever the suffix
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


def load(path) -> IntegrationFile:
    """Parse an integration JSON file (plain or gzip-compressed)."""
    path = Path(path)
    doc = _read_json(path)
    json_schema = doc["schema"]
    schema = [_parse_field(f) for f in json_schema["fields"]]
    schema_metadata = _parse_metadata(json_schema.get("metadata"))

    dictionaries = _Dictionaries(schema, doc.get("dictionaries") or [])
    dictionaries.decode_all()

    batches: list[list[JsonColumn]] = []
    lengths: list[int] = []
    for b, batch in enumerate(doc.get("batches") or []):
        count = int(batch["count"])
        json_columns = batch["columns"]
        if len(json_columns) != len(schema):
            raise ValueError(
                f"{path.name}: batch {b} has {len(json_columns)} columns, schema has {len(schema)}"
            )
        columns = []
        for fld, obj in zip(schema, json_columns):
            col = _decode(obj, fld, dictionaries, check_name=True)
            if col.count != count:
                raise ValueError(
                    f"{path.name}: batch {b} column {fld.name!r} has count {col.count}, batch has {count}"
                )
            columns.append(col)
        batches.append(columns)
        lengths.append(count)

    return IntegrationFile(
        path=path,
        schema=schema,
        schema_metadata=schema_metadata,
        batches=batches,
        dictionaries=dict(dictionaries.decoded),
        batch_lengths=lengths,
    )


def expected_pylists(path) -> list[list[tuple[str, list | None]]]:
    """Per batch, per column: ``(name, values)`` (values None only for a
    struct with duplicate child names, or a column containing one)."""
    return [[(col.name, col.values) for col in batch] for batch in load(path).batches]


# --------------------------------------------------------------------------
# Schema
# --------------------------------------------------------------------------


def _parse_metadata(obj) -> dict[str, str] | None:
    # Spec: null | [{"key": ..., "value": ...}]; absent/null/[] mean "none".
    # Duplicate keys are allowed by the spec; the last one wins here.
    if not obj:
        return None
    if isinstance(obj, dict):  # tolerate a plain mapping
        return {str(k): str(v) for k, v in obj.items()} or None
    return {str(kv["key"]): str(kv["value"]) for kv in obj}


def _parse_field(obj: dict) -> JsonField:
    return JsonField(
        name=obj["name"],
        type=dict(obj["type"]),
        nullable=bool(obj["nullable"]),
        children=[_parse_field(c) for c in obj.get("children") or []],
        dictionary=dict(obj["dictionary"]) if obj.get("dictionary") is not None else None,
        metadata=_parse_metadata(obj.get("metadata")),
    )


# --------------------------------------------------------------------------
# Dictionaries
# --------------------------------------------------------------------------


class _Dictionaries:
    """Decodes the file's "dictionaries" section lazily, by id, so that a
    dictionary whose values are themselves dictionary-encoded (nested
    dictionaries) is decoded after the dictionaries it refers to."""

    def __init__(self, schema: list[JsonField], json_dicts: list[dict]):
        self.value_fields: dict[int, JsonField] = {}
        for fld in schema:
            self._collect(fld)
        self.raw: dict[int, dict] = {}
        for d in json_dicts:
            dict_id = int(d["id"])
            if dict_id in self.raw:
                # The JSON format has no way to say "delta" or "replacement".
                raise NotImplementedError(f"dictionary id {dict_id} appears more than once")
            self.raw[dict_id] = d
        self.decoded: dict[int, JsonColumn] = {}
        self._in_progress: set[int] = set()

    def _collect(self, fld: JsonField) -> None:
        if fld.dictionary is not None:
            dict_id = int(fld.dictionary["id"])
            value_field = replace(fld, dictionary=None)
            known = self.value_fields.get(dict_id)
            if known is not None and known.type != value_field.type:
                raise ValueError(f"dictionary id {dict_id} used with two value types")
            self.value_fields.setdefault(dict_id, value_field)
        for child in fld.children:
            self._collect(child)

    def decode_all(self) -> None:
        for dict_id in self.raw:
            self[dict_id]

    def __getitem__(self, dict_id: int) -> JsonColumn:
        if dict_id in self.decoded:
            return self.decoded[dict_id]
        if dict_id not in self.raw:
            raise KeyError(f"dictionary id {dict_id} is used but not present in 'dictionaries'")
        if dict_id not in self.value_fields:
            raise KeyError(f"dictionary id {dict_id} is not referenced by any schema field")
        if dict_id in self._in_progress:
            raise ValueError(f"dictionary id {dict_id} refers to itself")
        self._in_progress.add(dict_id)
        try:
            data = self.raw[dict_id]["data"]
            if isinstance(data, list):  # the prose spec says [RecordBatch]
                if len(data) != 1:
                    raise NotImplementedError("dictionary with several record batches")
                data = data[0]
            columns = data["columns"]
            if len(columns) != 1:
                raise ValueError(f"dictionary {dict_id} batch must have exactly one column")
            col = _decode(columns[0], self.value_fields[dict_id], self, check_name=False)
            if col.count != int(data["count"]):
                raise ValueError(f"dictionary {dict_id}: column count != batch count")
        finally:
            self._in_progress.discard(dict_id)
        self.decoded[dict_id] = col
        return col


# --------------------------------------------------------------------------
# Columns
# --------------------------------------------------------------------------

_INT_RANGES = {
    (True, 8): (-(2**7), 2**7 - 1),
    (True, 16): (-(2**15), 2**15 - 1),
    (True, 32): (-(2**31), 2**31 - 1),
    (True, 64): (-(2**63), 2**63 - 1),
    (False, 8): (0, 2**8 - 1),
    (False, 16): (0, 2**16 - 1),
    (False, 32): (0, 2**32 - 1),
    (False, 64): (0, 2**64 - 1),
}

# Types whose Arrow layout has no validity bitmap (and no VALIDITY in JSON).
_NO_BITMAP = {"null", "union", "runendencoded"}


def _to_float(x, precision: str) -> float:
    if isinstance(x, bool):
        raise TypeError(f"bool {x!r} in floating-point data")
    v = float(x)  # JSON number, or a string such as "NaN" / "Infinity"
    fmt = {"HALF": "e", "SINGLE": "f", "DOUBLE": None}[precision]
    if fmt is None or math.isnan(v) or math.isinf(v):
        return v
    try:
        # Round to the stored precision exactly as C++ does
        # (static_cast<float>(double)): round-to-nearest-even.
        return struct.unpack("<" + fmt, struct.pack("<" + fmt, v))[0]
    except OverflowError:  # out of the format's range: rounds to infinity
        return math.copysign(math.inf, v)


def _to_decimal(x, scale: int) -> Decimal:
    # The JSON holds the unscaled integer as a string.  Build the Decimal
    # directly from its digits (Decimal.scaleb would round to the context's 28
    # digits, too few for decimal256).
    unscaled = int(x)
    sign = 1 if unscaled < 0 else 0
    digits = tuple(int(c) for c in str(abs(unscaled)))
    return Decimal((sign, digits, -scale))


def _hex(x: str) -> bytes:
    return bytes.fromhex(x)


def _ints(seq) -> list[int]:
    return [int(v) for v in seq]


def _decode(obj: dict, fld: JsonField, dicts: _Dictionaries, *, check_name: bool) -> JsonColumn:
    name = obj.get("name", "")
    if check_name and name != fld.name:
        raise ValueError(f"column name {name!r} does not match field name {fld.name!r}")
    count = int(obj["count"])

    if fld.dictionary is not None:
        return _decode_dictionary_encoded(obj, fld, dicts, count)

    tname = fld.type_name
    if tname in _NO_BITMAP:
        validity = None  # derived below
    else:
        validity = [bool(v) for v in obj["VALIDITY"]]
        if len(validity) != count:
            raise ValueError(f"{fld.name!r}: VALIDITY has {len(validity)} entries, count is {count}")

    children: list[JsonColumn] = []
    t = fld.type

    def data(key: str = "DATA") -> list:
        arr = obj[key]
        if len(arr) != count:
            raise ValueError(f"{fld.name!r}: {key} has {len(arr)} entries, count is {count}")
        return arr

    def each(conv, key: str = "DATA") -> list:
        return [conv(v) if ok else None for ok, v in zip(validity, data(key))]

    def decode_children() -> list[JsonColumn]:
        json_children = obj.get("children") or []
        if len(json_children) != len(fld.children):
            raise ValueError(
                f"{fld.name!r}: {len(json_children)} child columns, field has {len(fld.children)}"
            )
        return [_decode(c, f, dicts, check_name=True) for c, f in zip(json_children, fld.children)]

    def offsets(n: int, key: str = "OFFSET") -> list[int]:
        offs = _ints(obj[key])
        if len(offs) != n:
            raise ValueError(f"{fld.name!r}: {key} has {len(offs)} entries, expected {n}")
        return offs

    if tname == "null":
        validity = [False] * count
        values: list | None = [None] * count

    elif tname == "bool":
        values = each(bool)

    elif tname == "int":
        lo, hi = _INT_RANGES[(bool(t["isSigned"]), int(t["bitWidth"]))]

        def conv_int(v):
            if isinstance(v, bool):
                raise TypeError(f"{fld.name!r}: bool {v!r} in integer data")
            i = int(v)
            if not lo <= i <= hi:
                raise ValueError(f"{fld.name!r}: {i} out of range for {t}")
            return i

        values = each(conv_int)

    elif tname == "floatingpoint":
        values = each(lambda v: _to_float(v, t["precision"]))

    elif tname == "decimal":
        scale = int(t.get("scale", 0))
        values = each(lambda v: _to_decimal(v, scale))

    elif tname in ("date", "time", "timestamp", "duration"):
        values = each(int)

    elif tname == "interval":
        unit = t["unit"]
        if unit == "YEAR_MONTH":
            values = each(int)
        elif unit == "DAY_TIME":
            values = each(lambda v: (int(v["days"]), int(v["milliseconds"])))
        elif unit == "MONTH_DAY_NANO":
            values = each(lambda v: (int(v["months"]), int(v["days"]), int(v["nanoseconds"])))
        else:
            raise NotImplementedError(f"interval unit {unit!r}")

    elif tname in ("binary", "largebinary", "utf8", "largeutf8"):
        offs = offsets(count + 1)
        is_utf8 = tname in ("utf8", "largeutf8")
        raw = data()
        values = []
        for i, (ok, v) in enumerate(zip(validity, raw)):
            if not ok:
                values.append(None)
                continue
            b = v.encode("utf-8") if is_utf8 else _hex(v)
            if len(b) != offs[i + 1] - offs[i]:
                raise ValueError(f"{fld.name!r}[{i}]: value length disagrees with OFFSET")
            values.append(v if is_utf8 else b)

    elif tname == "fixedsizebinary":
        width = int(t["byteWidth"])

        def conv_fsb(v):
            b = _hex(v)
            if len(b) != width:
                raise ValueError(f"{fld.name!r}: {len(b)} bytes, byteWidth is {width}")
            return b

        values = each(conv_fsb)

    elif tname in ("binaryview", "utf8view"):
        is_utf8 = tname == "utf8view"
        buffers = [_hex(b) for b in obj.get("VARIADIC_DATA_BUFFERS") or []]
        views = data("VIEWS")
        values = []
        for i, (ok, view) in enumerate(zip(validity, views)):
            if not ok:
                values.append(None)
                continue
            size = int(view["SIZE"])
            if size <= 12:
                inl = view["INLINED"]
                b = inl.encode("utf-8") if is_utf8 else _hex(inl)
            else:
                buf = buffers[int(view["BUFFER_INDEX"])]
                start = int(view["OFFSET"])
                b = buf[start : start + size]
                if b[:4] != _hex(view["PREFIX_HEX"]):
                    raise ValueError(f"{fld.name!r}[{i}]: PREFIX_HEX disagrees with the buffer")
            if len(b) != size:
                raise ValueError(f"{fld.name!r}[{i}]: view SIZE {size}, got {len(b)} bytes")
            values.append(b.decode("utf-8") if is_utf8 else b)

    elif tname in ("list", "largelist"):
        offs = offsets(count + 1)
        children = decode_children()
        child_values = children[0].values
        if child_values is None:
            values = None
        else:
            values = [
                child_values[offs[i] : offs[i + 1]] if ok else None for i, ok in enumerate(validity)
            ]

    elif tname in ("listview", "largelistview"):
        offs = offsets(count)
        sizes = offsets(count, "SIZE")
        children = decode_children()
        child_values = children[0].values
        if child_values is None:
            values = None
        else:
            values = [
                child_values[offs[i] : offs[i] + sizes[i]] if ok else None
                for i, ok in enumerate(validity)
            ]

    elif tname == "fixedsizelist":
        n = int(t["listSize"])
        children = decode_children()
        child_values = children[0].values
        if children[0].count != n * count:
            raise ValueError(f"{fld.name!r}: child count {children[0].count} != {n} * {count}")
        if child_values is None:
            values = None
        else:
            values = [child_values[i * n : (i + 1) * n] if ok else None for i, ok in enumerate(validity)]

    elif tname == "struct":
        children = decode_children()
        names = [c.name for c in fld.children]
        if len(set(names)) != len(names) or any(c.values is None for c in children):
            values = None  # no faithful dict; callers compare children
        else:
            values = [
                {nm: c.values[i] for nm, c in zip(names, children)} if ok else None
                for i, ok in enumerate(validity)
            ]

    elif tname == "map":
        offs = offsets(count + 1)
        children = decode_children()
        entries = children[0]
        if len(entries.children) != 2:
            raise ValueError(f"{fld.name!r}: map entries must have 2 children")
        keys, items = entries.children[0].values, entries.children[1].values
        if keys is None or items is None:
            values = None
        else:
            values = [
                [(keys[j], items[j]) for j in range(offs[i], offs[i + 1])] if ok else None
                for i, ok in enumerate(validity)
            ]

    elif tname == "union":
        mode = t["mode"]
        if mode not in ("SPARSE", "DENSE"):
            raise NotImplementedError(f"union mode {mode!r}")
        type_ids = _ints(t.get("typeIds") or range(len(fld.children)))
        child_index = {code: k for k, code in enumerate(type_ids)}
        codes = _ints(data("TYPE_ID"))
        children = decode_children()
        dense_offs = offsets(count) if mode == "DENSE" else None
        if any(c.values is None for c in children):
            values = None
        else:
            values = []
            for i, code in enumerate(codes):
                child = children[child_index[code]]
                j = dense_offs[i] if dense_offs is not None else i
                values.append(child.values[j])

    elif tname == "runendencoded":
        children = decode_children()
        run_ends_col, values_col = children
        run_ends = run_ends_col.values
        if values_col.values is None:
            values = None
        else:
            values = []
            run = 0
            for i in range(count):
                while run_ends[run] <= i:
                    run += 1
                values.append(values_col.values[run])

    else:
        raise NotImplementedError(f"type {tname!r} (field {fld.name!r})")

    if validity is None:  # union / run-end encoded: logical validity
        if values is None:
            raise NotImplementedError(f"{fld.name!r}: cannot derive validity")
        validity = [v is not None for v in values]

    return JsonColumn(name=name, field=fld, count=count, validity=validity, values=values, children=children)


def _decode_dictionary_encoded(obj: dict, fld: JsonField, dicts: _Dictionaries, count: int) -> JsonColumn:
    index_field = JsonField(name=fld.name, type=dict(fld.dictionary["indexType"]), nullable=fld.nullable)
    idx = _decode(obj, index_field, dicts, check_name=False)
    dictionary = dicts[int(fld.dictionary["id"])]
    if dictionary.values is None:
        values = None
    else:
        values = []
        for i in idx.values:
            if i is None:
                values.append(None)
            elif not 0 <= i < dictionary.count:
                raise IndexError(f"{fld.name!r}: index {i} outside a dictionary of {dictionary.count}")
            else:
                values.append(dictionary.values[i])
    return JsonColumn(
        name=obj.get("name", ""),
        field=fld,
        count=count,
        validity=idx.validity,
        values=values,
        children=[],
        indices=idx.values,
        dictionary=dictionary,
    )


# --------------------------------------------------------------------------
# Strict comparison
# --------------------------------------------------------------------------


def first_difference(expected: Any, actual: Any, path: str = "") -> str | None:
    """Describe the first difference between two values in the convention
    above, or return None if they are identical.  Stricter than ``==``:
    types must match (bool vs int, float vs int, bytes vs str, list vs
    tuple), Decimals must have the same digits *and* exponent, dict keys the
    same order, floats the same value (NaN equals NaN, 0.0 differs from
    -0.0)."""
    where = path or "<top>"
    if expected is None or actual is None:
        if expected is None and actual is None:
            return None
        return f"{where}: expected {expected!r}, got {actual!r}"
    if isinstance(expected, bool) or isinstance(actual, bool):
        if type(expected) is bool and type(actual) is bool and expected == actual:
            return None
        return f"{where}: expected {expected!r}, got {actual!r}"
    if isinstance(expected, int):
        if isinstance(actual, int) and not isinstance(actual, bool) and expected == actual:
            return None
        return f"{where}: expected int {expected!r}, got {type(actual).__name__} {actual!r}"
    if isinstance(expected, float):
        if isinstance(actual, float):
            if math.isnan(expected) and math.isnan(actual):
                return None
            if expected == actual and math.copysign(1, expected) == math.copysign(1, actual):
                return None
        return f"{where}: expected float {expected!r}, got {type(actual).__name__} {actual!r}"
    if isinstance(expected, Decimal):
        if isinstance(actual, Decimal) and expected.as_tuple() == actual.as_tuple():
            return None
        return f"{where}: expected Decimal {str(expected)!r}, got {actual!r}"
    if isinstance(expected, (str, bytes)):
        if type(actual) is type(expected) and actual == expected:
            return None
        return f"{where}: expected {expected!r}, got {actual!r}"
    if isinstance(expected, (list, tuple)):
        want = tuple if isinstance(expected, tuple) else list
        if not isinstance(actual, want) or (want is tuple) != isinstance(actual, tuple):
            return f"{where}: expected a {want.__name__}, got {type(actual).__name__} {actual!r}"
        if len(expected) != len(actual):
            return f"{where}: expected length {len(expected)}, got {len(actual)}: {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            diff = first_difference(e, a, f"{path}[{i}]")
            if diff:
                return diff
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: expected a dict, got {type(actual).__name__} {actual!r}"
        if list(expected) != list(actual):
            return f"{where}: expected keys {list(expected)!r}, got {list(actual)!r}"
        for k in expected:
            diff = first_difference(expected[k], actual[k], f"{path}[{k!r}]")
            if diff:
                return diff
        return None
    if type(expected) is type(actual) and expected == actual:
        return None
    return f"{where}: expected {expected!r}, got {actual!r}"
