"""``format/_schema_walk``, the C reader of a schema's fields (issue 34): what repeats in a wide
schema (nested and dictionary types, child fields, metadata strings) is made once per walk and
found again by bytes and identities, never confused with what differs, and damage to a field
that looks like the ones before it is still found and named."""
from __future__ import annotations


import pyarrow as pa
import pytest

import arrowmm
from arrowmm.format import decode
from arrowmm.format._fbs.Footer import Footer as FbFooter
from arrowmm.errors import ArrowInvalid
from tests.support.helpers import footer_of


def described(f):
    """Everything a field holds, its dictionary id and children included."""
    dtype = f.type
    value = dtype.value_type if isinstance(dtype, arrowmm.DictionaryType) else dtype
    return (f.name, str(f.type), f.nullable, f.metadata, f.dictionary_id,
            tuple(described(c) for c in (getattr(value, "children", None) or ())))


def by_python(footer: bytes, monkeypatch):
    """The schema as the Python reader (the reference) reads it, no field read in C."""
    with monkeypatch.context() as m:
        m.setattr(decode, "schema_fields", lambda data, start, count, field_cls, types,
                  make_type, other, budget, md_cap: [other(i) for i in range(count)])
        return decode.parse_footer(footer).schema


def calls_to_make_type(footer: bytes, monkeypatch):
    """The schema of ``footer`` read in C, and how many types the walk asked Python to make."""
    calls = []
    real = decode._type_maker

    def counting_maker():
        make = real()

        def counted(params, children):
            calls.append(params[0])
            return make(params, children)
        return counted
    with monkeypatch.context() as m:
        m.setattr(decode, "_type_maker", counting_maker)
        return decode.parse_footer(footer).schema, calls


@pytest.mark.parametrize("cache", ["empty", "full"])
def test_repeated_nested_and_dictionary_types_are_made_once_per_walk(monkeypatch, cache):
    """1,000 fields of each of three nested kinds and a dictionary: the C walk finds the type
    it made for the first one (the Python type maker was called once per field before).  Also
    when the process-wide cache of childless types is full of others (timezones, decimal
    scales of earlier files): its plain leaves are still kept, or every nested type built on
    them would be made anew (as it was: 253 calls)."""
    types = {("other", k): None for k in range(4096)} if cache == "full" else {}  # (the walk's
    # MAX_CACHED_TYPES: no more entries are added past it)
    monkeypatch.setattr(decode, "_WALKED_TYPES", types)
    n = 1000
    kinds = [pa.struct([("a", pa.int8())]), pa.list_(pa.utf8()), pa.list_(pa.int16(), 3),
             pa.dictionary(pa.int32(), pa.utf8())]
    schema = pa.schema([pa.field(f"f{i}", kinds[i % len(kinds)]) for i in range(n)])
    footer = footer_of(schema)
    got, calls = calls_to_make_type(footer, monkeypatch)
    assert len(calls) <= 2 * len(kinds), calls[:20]
    assert [described(f) for f in got] == [described(f) for f in by_python(footer, monkeypatch)]
    assert [f.dictionary_id for f in got.fields[3::4]] == list(range(n // 4))  # (each its own)
    assert len({id(f.type) for f in got.fields[3::4]}) == 1


def test_types_the_memo_lost_are_found_again_not_made_again(monkeypatch):
    """600 distinct nested types (more than the memo's 256 slots, whose places depend on
    addresses: two types may share one in one run and not in another), each twice, far
    apart: each is made once per walk, whatever the memo kept (a struct of the same child
    made anew per field was a test failing one run in many)."""
    monkeypatch.setattr(decode, "_WALKED_TYPES", {})
    kinds = [pa.list_(pa.int8(), k) for k in range(1, 601)]
    schema = pa.schema([pa.field(f"f{i}", kinds[i % 600]) for i in range(1200)])
    footer = footer_of(schema)
    got, calls = calls_to_make_type(footer, monkeypatch)
    assert sorted(calls) == [2] + [16] * 600  # (the int8 leaf, then each list size once)
    assert [described(f) for f in got] == [described(f) for f in by_python(footer, monkeypatch)]
    assert got.field(0).type is got.field(600).type


def test_more_distinct_children_and_types_than_the_memos_hold_read_as_python_reads_them(
        monkeypatch):
    """600 struct types of differently named and typed children, a dictionary of each index
    type and ordering and 400 metadata entries, each seen twice and far apart: entries replaced
    in the memos (256 slots each) are never taken for others."""
    leaves = [pa.int8(), pa.int16(), pa.uint8(), pa.float32(), pa.utf8(), pa.bool_()]
    structs = [pa.struct([pa.field(f"c{i % 300}", leaves[i % 6], nullable=i % 7 != 0),
                          ("z", leaves[(i // 6) % 6])]) for i in range(600)]
    dicts = [pa.dictionary(index, pa.utf8(), ordered) for index in
             (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16())
             for ordered in (False, True)]
    fields = []
    for rnd in range(2):
        fields += [pa.field(f"s{rnd}_{i}", t) for i, t in enumerate(structs)]
        fields += [pa.field(f"d{rnd}_{i}", t) for i, t in enumerate(dicts)]
        fields += [pa.field(f"m{rnd}_{i}", pa.int8(), metadata={f"key{i}": f"value{i % 150}"})
                   for i in range(400)]
    schema = pa.schema(fields)
    footer = footer_of(schema)
    got = decode.parse_footer(footer).schema
    assert [described(f) for f in got] == [described(f) for f in by_python(footer, monkeypatch)]
    assert [str(f.type) for f in got] == [str(f.type) for f in schema]
    assert [f.nullable for f in got.fields[5].type] == [True, True]
    assert got.field("m1_399").metadata == {"key399": "value99"}


def test_each_field_gets_its_own_metadata_dict_with_shared_strings():
    key, value = "a key longer than one character", "and its value"
    schema = pa.schema([pa.field(f"f{i}", pa.int8(), metadata={key: value}) for i in range(3)])
    got = decode.parse_footer(footer_of(schema)).schema
    first, second = got.field(0).metadata, got.field(1).metadata
    assert first == second == {key: value} and first is not second
    first["mine"] = "only"  # (Field.metadata is a plain dict: one field's, never another's)
    assert got.field(1).metadata == {key: value}
    # the strings are made once per walk: immutable, so shared
    assert next(iter(second)) is next(iter(got.field(2).metadata))


def _child_int_table_at(footer: bytes, field: int) -> int:
    """The byte position of the Int type table of field ``field``'s first child."""
    schema = FbFooter.GetRootAs(footer, 0).Schema()
    child = schema.Fields(field).Children(0)
    rel = child._tab.Offset(10)  # (slot 3: the type table's uoffset)
    at = child._tab.Pos + rel
    return at + int.from_bytes(footer[at:at + 4], "little")


def _set_bit_width(footer: bytes, table: int, width: int) -> bytes:
    """``footer`` with the bitWidth of the Int table at ``table`` set to ``width``."""
    vt = table - int.from_bytes(footer[table:table + 4], "little", signed=True)
    rel = int.from_bytes(footer[vt + 4:vt + 6], "little")  # (slot 0: bitWidth)
    assert rel, "the writer left bitWidth at its default"
    buf = bytearray(footer)
    buf[table + rel:table + rel + 4] = width.to_bytes(4, "little", signed=True)
    return bytes(buf)


@pytest.mark.parametrize("width, expected", [(16, "int16"), (7, None), (-8, None)])
def test_a_field_like_those_before_it_but_for_damage_is_read_or_refused_on_its_own(
        monkeypatch, width, expected):
    """Field 200 of 300 struct<a: int8> fields has its child's bit width changed: read as its
    own type when valid, refused naming the field when not, never the struct read before."""
    schema = pa.schema([pa.field(f"f{i}", pa.struct([("a", pa.int8())])) for i in range(300)])
    footer = footer_of(schema)
    changed = _set_bit_width(footer, _child_int_table_at(footer, 200), width)
    if expected is None:
        with pytest.raises(ArrowInvalid, match=r"schema field 200 \('f200'\)\.a.*bitWidth"):
            decode.parse_footer(changed)
        return
    got = decode.parse_footer(changed).schema
    assert [str(f.type) for f in got.fields[198:202]] == [
        "struct<a: int8>", "struct<a: int8>", f"struct<a: {expected}>", "struct<a: int8>"]
    assert [described(f) for f in got] == [described(f) for f in by_python(changed, monkeypatch)]
