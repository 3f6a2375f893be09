"""Check the integration-JSON reader (tests/support/integration_json.py) against pyarrow.

pyarrow is only a test oracle here: for every gold case and both IPC formats,
the values our stdlib-only JSON reader produces must equal what pyarrow reads
from the ``.arrow_file`` / ``.stream`` twin.  Once that holds, the JSON reader
can serve as the independent expectation for arrowmm (tests/ipc/test_gold_files.py).

How pyarrow's values are made comparable (``_plain_batch``):

* temporal types (date/time/timestamp/duration) would come back as datetime
  objects -- or fail outright (nanoseconds, out-of-range years, durations
  beyond timedelta) -- so they are re-read as the integers they store;
* pyarrow 26 cannot even wrap YEAR_MONTH / DAY_TIME interval columns
  (``batch.column(j)`` raises ``KeyError: 21`` / ``KeyError: 22``); they are
  re-read as int32 and fixed_size_binary(8) (two little-endian int32:
  days, milliseconds);
* extension columns (arrow.uuid -> ``uuid.UUID`` objects) are re-read as
  their storage type.

The re-reading goes through the Arrow C data interface: the batch is exported
and imported again under a schema with those types swapped for layout-identical
ones, so it works at any nesting level (also inside dictionaries).

Structs with duplicate child names (duplicate_fieldnames) cannot be converted
by pyarrow at all (``ValueError``); for them the JSON reader also gives
``values=None``, and the children are compared one by one instead.
"""
from __future__ import annotations

import gzip
import json
import struct
from decimal import Context, Decimal
from pathlib import Path

import pytest

from tests.support import integration_json as ij

pa = pytest.importorskip("pyarrow")
ipc = pytest.importorskip("pyarrow.ipc")

FORMATS = ("file", "stream")
PARAMS = [pytest.param(case, fmt, id=f"{case}-{fmt}") for case in ij.GOLD_CASES for fmt in FORMATS]


@pytest.fixture(scope="module")
def gold_dir() -> Path:
    if not ij.GOLD_DIR.is_dir():
        pytest.skip(f"gold files folder is absent: {ij.GOLD_DIR}")
    return ij.GOLD_DIR


def _read_pyarrow(path: Path, fmt: str):
    """(schema, [RecordBatch]) read by pyarrow."""
    if fmt == "file":
        reader = ipc.open_file(path)
        return reader.schema, [reader.get_batch(i) for i in range(reader.num_record_batches)]
    reader = ipc.open_stream(path)
    return reader.schema, list(reader)


# --------------------------------------------------------------------------
# Making pyarrow's values comparable
# --------------------------------------------------------------------------

_MONTH_INTERVAL_ID = 21  # arrow::Type::INTERVAL_MONTHS (no pyarrow factory)
_DAY_TIME_INTERVAL_ID = 22  # arrow::Type::INTERVAL_DAY_TIME (no pyarrow factory)


def _is_day_time(t) -> bool:
    return t.id == _DAY_TIME_INTERVAL_ID


def _plain_type(t):
    """``t`` with every type whose ``to_pylist`` is unusable replaced by a
    type of identical physical layout that converts to our convention."""
    types = pa.types
    if isinstance(t, pa.BaseExtensionType):
        return _plain_type(t.storage_type)
    if types.is_date32(t) or types.is_time32(t) or t.id == _MONTH_INTERVAL_ID:
        return pa.int32()
    if types.is_date64(t) or types.is_time64(t) or types.is_timestamp(t) or types.is_duration(t):
        return pa.int64()
    if _is_day_time(t):
        return pa.binary(8)
    if types.is_dictionary(t):
        return pa.dictionary(t.index_type, _plain_type(t.value_type), t.ordered)
    if types.is_map(t):
        return pa.map_(_plain_field(t.key_field), _plain_field(t.item_field), t.keys_sorted)
    if types.is_fixed_size_list(t):
        return pa.list_(_plain_field(t.value_field), t.list_size)
    if types.is_large_list(t):
        return pa.large_list(_plain_field(t.value_field))
    if types.is_list(t):
        return pa.list_(_plain_field(t.value_field))
    if types.is_large_list_view(t):
        return pa.large_list_view(_plain_field(t.value_field))
    if types.is_list_view(t):
        return pa.list_view(_plain_field(t.value_field))
    if types.is_struct(t):
        return pa.struct([_plain_field(t.field(i)) for i in range(t.num_fields)])
    if types.is_union(t):
        return pa.union([_plain_field(t.field(i)) for i in range(t.num_fields)], t.mode, t.type_codes)
    if types.is_run_end_encoded(t):
        return pa.run_end_encoded(t.run_end_type, _plain_type(t.value_type))
    return t


def _plain_field(f):
    # Metadata is dropped on purpose: extension keys would re-wrap the storage.
    return pa.field(f.name, _plain_type(f.type), f.nullable)


def _plain_batch(batch):
    """The batch re-imported under the plain schema (a no-op if unchanged)."""
    plain = pa.schema([_plain_field(f) for f in batch.schema])
    if plain.equals(pa.schema([pa.field(f.name, f.type, f.nullable) for f in batch.schema])):
        return batch
    schema_capsule = plain.__arrow_c_schema__()
    _, array_capsule = batch.__arrow_c_array__()
    return pa.RecordBatch._import_from_c_capsule(schema_capsule, array_capsule)


def _fix_values(t, v):
    """Post-process ``to_pylist()`` output of a plain array whose *original*
    type is ``t``: DAY_TIME bytes -> (days, ms), MonthDayNano -> tuple."""
    if v is None:
        return None
    types = pa.types
    if isinstance(t, pa.BaseExtensionType):
        return _fix_values(t.storage_type, v)
    if _is_day_time(t):
        return struct.unpack("<ii", v)
    if types.is_interval(t):  # month_day_nano -> MonthDayNano namedtuple
        return tuple(v)
    if types.is_dictionary(t):
        return _fix_values(t.value_type, v)
    if types.is_run_end_encoded(t):
        return _fix_values(t.value_type, v)
    if types.is_map(t):
        return [(_fix_values(t.key_type, k), _fix_values(t.item_type, x)) for k, x in v]
    if (
        types.is_list(t)
        or types.is_large_list(t)
        or types.is_fixed_size_list(t)
        or types.is_list_view(t)
        or types.is_large_list_view(t)
    ):
        return [_fix_values(t.value_type, x) for x in v]
    if types.is_struct(t):
        return {t.field(i).name: _fix_values(t.field(i).type, v[t.field(i).name]) for i in range(t.num_fields)}
    if types.is_union(t):
        if any(_needs_fix(t.field(i).type) for i in range(t.num_fields)):
            raise NotImplementedError("union with an interval member")  # not in the gold set
        return v
    return v


def _needs_fix(t) -> bool:
    if _is_day_time(t) or pa.types.is_interval(t):
        return True
    if isinstance(t, pa.BaseExtensionType):
        return _needs_fix(t.storage_type)
    if pa.types.is_dictionary(t):
        return _needs_fix(t.value_type)
    if pa.types.is_run_end_encoded(t):
        return _needs_fix(t.value_type)
    return any(_needs_fix(t.field(i).type) for i in range(t.num_fields))


def _pa_children(t, arr):
    """Child arrays in the same order as JsonColumn.children, or None if the
    type has no children to compare."""
    types = pa.types
    if types.is_struct(t) or types.is_union(t):
        return [arr.field(i) for i in range(t.num_fields)]
    if types.is_map(t):
        # JsonColumn: one "entries" struct column.  MapArray.values is the
        # full entries struct array (not sliced by the offsets).
        return [arr.values]
    if (
        types.is_list(t)
        or types.is_large_list(t)
        or types.is_fixed_size_list(t)
        or types.is_list_view(t)
        or types.is_large_list_view(t)
    ):
        return [arr.values]
    if types.is_run_end_encoded(t):
        return [arr.run_ends, arr.values]
    return None


def _child_types(t):
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    if pa.types.is_map(t):
        return [pa.struct([t.key_field, t.item_field])]
    if pa.types.is_run_end_encoded(t):
        return [t.run_end_type, t.value_type]
    return [t.field(i).type for i in range(t.num_fields)]


def compare_column(col: ij.JsonColumn, arr, orig_type, where: str, *, map_entries: bool = False) -> None:
    """Compare one JsonColumn with a (plain) pyarrow array, level by level.

    ``orig_type`` is the type pyarrow read from the file (before
    ``_plain_type``), needed to post-process DAY_TIME intervals.
    ``map_entries``: ``col`` is a map's entries struct, whose child names
    pyarrow canonicalises to "key"/"value" (see compare_field)."""
    assert len(arr) == col.count, f"{where}: length {len(arr)} != JSON count {col.count}"
    # is_valid() is the physical bitmap for bitmap types, and the logical
    # validity for union / run-end encoded / null -- the same convention as
    # JsonColumn.validity.  For a dictionary array pyarrow's is_valid() is
    # logical too (an index pointing at a null entry counts as null), while
    # JsonColumn.validity is the indices' bitmap: compare with the indices.
    validity_of = arr.indices if pa.types.is_dictionary(arr.type) else arr
    got_validity = validity_of.is_valid().to_pylist()
    assert got_validity == col.validity, f"{where}: validity differs"

    if col.values is None:
        # Only structs with duplicate child names (pyarrow raises ValueError:
        # "Converting to Python dictionary is not supported when duplicate
        # field names are present") -- compare the children instead.
        assert pa.types.is_struct(arr.type), f"{where}: values=None for a {arr.type}"
        with pytest.raises(ValueError):
            arr.to_pylist()
    else:
        got = [_fix_values(orig_type, v) for v in arr.to_pylist()]
        if map_entries:
            json_names = [c.name for c in col.field.children]
            got = [None if d is None else dict(zip(json_names, d.values())) for d in got]
        diff = ij.first_difference(col.values, got, where)
        assert diff is None, diff

    t = arr.type
    if pa.types.is_dictionary(t):
        assert col.dictionary is not None, f"{where}: JSON column is not dictionary-encoded"
        assert arr.indices.to_pylist() == col.indices, f"{where}: dictionary indices differ"
        compare_column(col.dictionary, arr.dictionary, orig_type.value_type, f"{where}.dictionary")
        return
    assert col.dictionary is None, f"{where}: JSON column is dictionary-encoded, pyarrow's is {t}"

    pa_children = _pa_children(t, arr)
    if pa_children is None:
        assert col.children == [], f"{where}: JSON has children, pyarrow type {t} has none"
        return
    assert len(pa_children) == len(col.children), f"{where}: number of children differs"
    for k, (child_col, child_arr, child_type) in enumerate(
        zip(col.children, pa_children, _child_types(orig_type))
    ):
        compare_column(
            child_col, child_arr, child_type, f"{where}.children[{k}]", map_entries=pa.types.is_map(t)
        )


# --------------------------------------------------------------------------
# Schema comparison
# --------------------------------------------------------------------------


def _pa_type_from_json(f: ij.JsonField):
    """The pyarrow type that a JSON field describes (extension types are
    described by their storage type; the extension shows in metadata)."""
    t = f.type
    name = t["name"]
    kids = [_pa_field_from_json(c) for c in f.children]
    if name == "null":
        value = pa.null()
    elif name == "bool":
        value = pa.bool_()
    elif name == "int":
        value = getattr(pa, ("int" if t["isSigned"] else "uint") + str(t["bitWidth"]))()
    elif name == "floatingpoint":
        value = {"HALF": pa.float16(), "SINGLE": pa.float32(), "DOUBLE": pa.float64()}[t["precision"]]
    elif name == "decimal":
        factory = {32: pa.decimal32, 64: pa.decimal64, 128: pa.decimal128, 256: pa.decimal256}
        value = factory[t.get("bitWidth", 128)](t["precision"], t["scale"])
    elif name == "date":
        value = pa.date32() if t["unit"] == "DAY" else pa.date64()
    elif name == "time":
        unit = {"SECOND": "s", "MILLISECOND": "ms", "MICROSECOND": "us", "NANOSECOND": "ns"}[t["unit"]]
        value = pa.time32(unit) if t["bitWidth"] == 32 else pa.time64(unit)
    elif name == "timestamp":
        unit = {"SECOND": "s", "MILLISECOND": "ms", "MICROSECOND": "us", "NANOSECOND": "ns"}[t["unit"]]
        value = pa.timestamp(unit, tz=t.get("timezone"))
    elif name == "duration":
        unit = {"SECOND": "s", "MILLISECOND": "ms", "MICROSECOND": "us", "NANOSECOND": "ns"}[t["unit"]]
        value = pa.duration(unit)
    elif name == "interval":
        if t["unit"] != "MONTH_DAY_NANO":
            # pyarrow has no factory for month_interval / day_time_interval;
            # _type_matches compares their type ids instead.
            raise NotImplementedError(f"pyarrow type for interval {t['unit']}")
        value = pa.month_day_nano_interval()
    elif name in ("binary", "largebinary", "utf8", "largeutf8", "binaryview", "utf8view"):
        value = {
            "binary": pa.binary(),
            "largebinary": pa.large_binary(),
            "utf8": pa.string(),
            "largeutf8": pa.large_string(),
            "binaryview": pa.binary_view(),
            "utf8view": pa.string_view(),
        }[name]
    elif name == "fixedsizebinary":
        value = pa.binary(t["byteWidth"])
    elif name == "list":
        value = pa.list_(kids[0])
    elif name == "largelist":
        value = pa.large_list(kids[0])
    elif name == "listview":
        value = pa.list_view(kids[0])
    elif name == "largelistview":
        value = pa.large_list_view(kids[0])
    elif name == "fixedsizelist":
        value = pa.list_(kids[0], t["listSize"])
    elif name == "struct":
        value = pa.struct(kids)
    elif name == "map":
        entries = kids[0].type
        value = pa.map_(entries.field(0), entries.field(1), t.get("keysSorted", False))
    elif name == "union":
        value = pa.union(kids, t["mode"].lower(), t.get("typeIds"))
    elif name == "runendencoded":
        value = pa.run_end_encoded(kids[0].type, kids[1].type)
    else:
        raise NotImplementedError(name)
    if f.dictionary is not None:
        index = _pa_type_from_json(ij.JsonField("", f.dictionary["indexType"], False))
        value = pa.dictionary(index, value, f.dictionary.get("isOrdered", False))
    return value


def _pa_field_from_json(f: ij.JsonField):
    return pa.field(f.name, _pa_type_from_json(f), f.nullable, metadata=f.metadata)


def _pa_metadata(field) -> dict[str, str] | None:
    """A pyarrow field's metadata as the JSON writes it: when pyarrow
    recognised an extension type it has moved the ``ARROW:extension:*`` keys
    into the type; put the name back (the serialized metadata of pyarrow's
    built-in canonical extensions is not exposed, hence checked apart)."""
    md = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
    if isinstance(field.type, pa.BaseExtensionType):
        md["ARROW:extension:name"] = field.type.extension_name
        serialize = getattr(field.type, "__arrow_ext_serialize__", None)
        if serialize is not None:
            md["ARROW:extension:metadata"] = serialize().decode()
    return md or None


def _type_matches(jf: ij.JsonField, t) -> bool:
    if jf.type_name == "interval" and jf.dictionary is None and jf.type["unit"] != "MONTH_DAY_NANO":
        return t.id == {"YEAR_MONTH": _MONTH_INTERVAL_ID, "DAY_TIME": _DAY_TIME_INTERVAL_ID}[jf.type["unit"]]
    # DataType.equals ignores list/map child names; compare_field's recursion
    # checks child names, nullability and metadata itself.
    return t.equals(_pa_type_from_json(jf))


def compare_field(jf: ij.JsonField, pf, where: str, *, check_names: bool = True) -> None:
    if check_names:
        assert pf.name == jf.name, f"{where}: name {pf.name!r} != JSON {jf.name!r}"
    assert pf.nullable == jf.nullable, f"{where}: nullable {pf.nullable} != JSON {jf.nullable}"
    md = _pa_metadata(pf)
    want = dict(jf.metadata) if jf.metadata else None
    if isinstance(pf.type, pa.BaseExtensionType) and want and "ARROW:extension:metadata" not in (md or {}):
        want.pop("ARROW:extension:metadata", None)
    assert md == want, f"{where}: metadata {md!r} != JSON {want!r}"

    t = pf.type
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    assert _type_matches(jf, t), f"{where}: type {t} does not match JSON {jf.type} / {jf.dictionary}"

    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_map(t):
        # pyarrow (Arrow C++) canonicalises map child names on read
        # ("entries", "key", "value"): map_non_canonical's names
        # "some_entries" / "some_key" / "some_value" are not visible through
        # pyarrow even where the IPC file stores them, so names are not
        # compared below a map.
        (entries,) = jf.children
        assert entries.nullable is False
        for k, (jc, pc) in enumerate(zip(entries.children, [t.key_field, t.item_field])):
            compare_field(jc, pc, f"{where}.entries.{k}", check_names=False)
        return
    if pa.types.is_run_end_encoded(t):
        return  # the children (run_ends, values) are fully described by the type check
    pa_children = [t.field(i) for i in range(t.num_fields)]
    assert len(pa_children) == len(jf.children), f"{where}: number of children differs"
    for jc, pc in zip(jf.children, pa_children):
        compare_field(jc, pc, f"{where}.{jc.name}", check_names=check_names)


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------


def test_gold_case_list_is_complete(gold_dir):
    found = sorted(p.name[len("generated_") : -len(".json.gz")] for p in gold_dir.glob("generated_*.json.gz"))
    assert found == sorted(ij.GOLD_CASES)
    for case in ij.GOLD_CASES:
        for suffix in ("arrow_file", "stream", "json.gz"):
            assert ij.gold_path(case, suffix).is_file()


@pytest.mark.parametrize("case, fmt", PARAMS)
def test_schema_matches_pyarrow(gold_dir, case, fmt):
    expected = ij.load(ij.gold_path(case, "json.gz", gold_dir))
    schema, _ = _read_pyarrow(ij.gold_path(case, "arrow_file" if fmt == "file" else "stream", gold_dir), fmt)
    assert schema.names == expected.names
    assert len(schema) == len(expected.schema)
    md = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()} or None
    assert md == expected.schema_metadata
    for j, (jf, pf) in enumerate(zip(expected.schema, schema)):
        compare_field(jf, pf, f"field {j} ({jf.name})")


@pytest.mark.parametrize("case, fmt", PARAMS)
def test_values_match_pyarrow(gold_dir, case, fmt):
    expected = ij.load(ij.gold_path(case, "json.gz", gold_dir))
    _, batches = _read_pyarrow(ij.gold_path(case, "arrow_file" if fmt == "file" else "stream", gold_dir), fmt)
    assert len(batches) == len(expected.batches)
    for b, (batch, json_batch) in enumerate(zip(batches, expected.batches)):
        assert batch.num_rows == expected.batch_lengths[b]
        assert batch.num_columns == len(json_batch)
        plain = _plain_batch(batch)
        for j, col in enumerate(json_batch):
            assert col.name == batch.schema.field(j).name
            compare_column(col, plain.column(j), batch.schema.field(j).type, f"batch {b} column {j} ({col.name})")


@pytest.mark.parametrize("case", ij.GOLD_CASES)
def test_expected_pylists_shape(gold_dir, case):
    path = ij.gold_path(case, "json.gz", gold_dir)
    loaded = ij.load(path)
    pylists = ij.expected_pylists(path)
    assert len(pylists) == len(loaded.batches)
    for batch, rows, count in zip(pylists, loaded.batches, loaded.batch_lengths):
        assert [name for name, _ in batch] == loaded.names
        for (name, values), col in zip(batch, rows):
            assert ij.first_difference(col.values, values) is None
            assert values is None or len(values) == count
    # values=None only where a struct has duplicate child names
    none_columns = {name for batch in pylists for name, values in batch if values is None}
    assert none_columns == ({"struct"} if case == "duplicate_fieldnames" and pylists else set())


# --- the comparison must be able to fail -----------------------------------


def test_first_difference_is_strict():
    fd = ij.first_difference
    assert fd([1, None, "a"], [1, None, "a"]) is None
    assert fd(True, 1) is not None
    assert fd(1, True) is not None
    assert fd(1, 1.0) is not None
    assert fd(1.5, 1.5) is None
    assert fd(float("nan"), float("nan")) is None
    assert fd(0.0, -0.0) is not None
    assert fd(Decimal("1.00"), Decimal("1.00")) is None
    assert fd(Decimal("1.0"), Decimal("1.00")) is not None  # same number, other exponent
    assert fd(b"a", "a") is not None
    assert fd(b"a", bytearray(b"a")) is not None
    assert fd([("k", 1)], [["k", 1]]) is not None  # map entries are tuples
    assert fd([[1]], [(1,)]) is not None  # lists are lists
    assert fd({"a": 1, "b": 2}, {"b": 2, "a": 1}) is not None  # struct field order
    assert fd({"a": 1}, {"a": 2}) is not None
    assert fd([1, 2], [1, 2, 3]) is not None
    assert fd(None, 0) is not None
    assert fd((1, 2, 3), pa.scalar((1, 2, 3), pa.month_day_nano_interval()).as_py()) is None


@pytest.mark.parametrize(
    "case, mutate",
    [
        ("primitive", lambda v: v + 1 if isinstance(v, int) and not isinstance(v, bool) else v),
        ("primitive", lambda v: (not v) if isinstance(v, bool) else v),
        ("primitive", lambda v: float(f"{v:.3f}") if isinstance(v, float) else v),  # JSON text, unrounded
        ("decimal256", lambda v: v.scaleb(0, Context(prec=28)) if isinstance(v, Decimal) else v),
        ("decimal", lambda v: v.normalize() if isinstance(v, Decimal) else v),
        ("datetime", lambda v: v * 1000 if isinstance(v, int) else v),
        ("binary", lambda v: v[::-1] if isinstance(v, bytes) and len(v) > 1 else v),
        ("interval", lambda v: v[::-1] if isinstance(v, tuple) else v),
    ],
    ids=["int+1", "bool-flip", "float32-unrounded", "decimal256-28-digits", "decimal-exponent", "temporal-unit", "bytes-reversed", "daytime-swapped"],
)
def test_oracle_catches_corrupted_values(gold_dir, case, mutate):
    """Corrupt the JSON reader's values in typical ways; the pyarrow
    comparison must notice."""
    expected = ij.load(ij.gold_path(case, "json.gz", gold_dir))
    _, batches = _read_pyarrow(ij.gold_path(case, "arrow_file", gold_dir), "file")
    caught = False
    for b, (batch, json_batch) in enumerate(zip(batches, expected.batches)):
        plain = _plain_batch(batch)
        for j, col in enumerate(json_batch):
            mutated = [None if v is None else mutate(v) for v in col.values]
            if ij.first_difference(col.values, mutated) is None:
                continue  # the mutation did not change this column
            col.values = mutated
            with pytest.raises(AssertionError):
                compare_column(col, plain.column(j), batch.schema.field(j).type, "mutated")
            caught = True
    assert caught, "the mutation changed nothing; the test is vacuous"


@pytest.mark.parametrize(
    "case, where",
    [
        ("nested_dictionary", lambda f: f.dictionaries[0]),  # inner dictionary of nested ones
        ("union", lambda f: f.batches[1][1].children[0]),  # dense union member
        ("run_end_encoded", lambda f: f.batches[1][0].children[1]),  # REE values
        ("map", lambda f: f.batches[1][0].children[0].children[0]),  # map keys
    ],
    ids=["nested-dictionary", "dense-union-child", "ree-values", "map-keys"],
)
def test_oracle_catches_corrupted_children(gold_dir, case, where):
    """Same for data that only shows through a parent: corrupt a child /
    dictionary column's values in place and re-compare the top level."""
    expected = ij.load(ij.gold_path(case, "json.gz", gold_dir))
    _, batches = _read_pyarrow(ij.gold_path(case, "arrow_file", gold_dir), "file")
    target = where(expected)
    k = next(i for i, v in enumerate(target.values) if v is not None)
    v = target.values[k]
    target.values[k] = v + "x" if isinstance(v, str) else v + 1
    plain = _plain_batch(batches[1])
    with pytest.raises(AssertionError):
        for j, col in enumerate(expected.batches[1]):
            compare_column(col, plain.column(j), batches[1].schema.field(j).type, "mutated")


# --- behaviour outside the gold set ----------------------------------------


def _one_column(tmp_path: Path, field: dict, column: dict) -> ij.JsonColumn:
    doc = {"schema": {"fields": [field]}, "batches": [{"count": column["count"], "columns": [column]}]}
    path = tmp_path / f"{field['name']}.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return ij.load(path).batches[0][0]


def test_float16_and_negative_scale_decimal(tmp_path):
    col = _one_column(
        tmp_path,
        {"name": "h", "type": {"name": "floatingpoint", "precision": "HALF"}, "nullable": True, "children": []},
        {"name": "h", "count": 3, "VALIDITY": [1, 1, 0], "DATA": [0.1, 70000.0, 1.0]},
    )
    assert col.values == [0.0999755859375, float("inf"), None]
    col = _one_column(
        tmp_path,
        {"name": "d", "type": {"name": "decimal", "precision": 5, "scale": -2, "bitWidth": 128}, "nullable": True, "children": []},
        {"name": "d", "count": 1, "VALIDITY": [1], "DATA": ["-123"]},
    )
    assert ij.first_difference([Decimal("-1.23E+4")], col.values) is None


def test_duplicate_name_struct_inside_list_has_no_values(tmp_path):
    item = {
        "name": "item",
        "type": {"name": "struct"},
        "nullable": True,
        "children": [
            {"name": "a", "type": {"name": "bool"}, "nullable": True, "children": []},
            {"name": "a", "type": {"name": "bool"}, "nullable": True, "children": []},
        ],
    }
    col = _one_column(
        tmp_path,
        {"name": "l", "type": {"name": "list"}, "nullable": True, "children": [item]},
        {
            "name": "l",
            "count": 1,
            "VALIDITY": [1],
            "OFFSET": [0, 1],
            "children": [
                {
                    "name": "item",
                    "count": 1,
                    "VALIDITY": [1],
                    "children": [
                        {"name": "a", "count": 1, "VALIDITY": [1], "DATA": [True]},
                        {"name": "a", "count": 1, "VALIDITY": [0], "DATA": [False]},
                    ],
                }
            ],
        },
    )
    assert col.values is None
    assert col.children[0].values is None
    assert [c.values for c in col.children[0].children] == [[True], [None]]
