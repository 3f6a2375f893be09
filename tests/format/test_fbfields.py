"""fbfields, the lean Field/Int readers, and ``format/_schema_walk.schema_fields``, the C reader of
a schema's fields: schemas read through them equal schemas read through the generated FlatBuffers
code, for every type and for corrupted footers (same schema or same error)."""
from __future__ import annotations


import numpy as np
import pytest
import pyarrow as pa

from tests.support.writer_support import CASES, N

from arrowmm.format import decode
from arrowmm.format._fbs.Field import Field as FbField
from arrowmm.errors import ArrowInvalid, ArrowNotImplementedError
from tests.support.helpers import footer_of


def generated_field(buf, pos):
    f = FbField()
    f.Init(buf, pos)
    return f


def described(f):
    """Everything a field holds, children included (``==`` on fields may skip metadata)."""
    value_type = f.type.value_type if hasattr(f.type, "value_type") else f.type
    return (f.name, str(f.type), f.nullable, f.metadata, f.dictionary_id,
            tuple(described(c) for c in value_type.children))


def outcome(footer: bytes):
    try:
        schema = decode.parse_footer(footer).schema
        return schema.metadata, schema.endianness, tuple(described(f) for f in schema)
    except (ArrowInvalid, ArrowNotImplementedError) as exc:
        return type(exc), str(exc)


def every_field_by_python(data, start, count, field_cls, types, make_type, other, budget, md_cap):
    """``schema_fields`` with no field read in C."""
    return [other(i) for i in range(count)]


def both(footer: bytes, monkeypatch):
    fast = outcome(footer)
    with monkeypatch.context() as m:
        m.setattr(decode, "FastField", generated_field)
        m.setattr(decode, "_FAST", {})
        m.setattr(decode, "schema_fields", every_field_by_python)
        slow = outcome(footer)
    return fast, slow


def leaves_table() -> pa.Table:
    """Every type the C reader makes itself, nullable or not, with a few fields it leaves to
    Python (metadata, a non-ASCII name, an unnamed field) in between."""
    types = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
             pa.uint64(), pa.float16(), pa.float32(), pa.float64(), pa.bool_(), pa.null(),
             pa.string(), pa.large_string(), pa.binary(), pa.large_binary(), pa.string_view(),
             pa.binary_view()]
    fields = []
    for i, dtype in enumerate(types):
        fields.append(pa.field(f"f{i}", dtype, nullable=dtype == pa.null() or i % 2 == 0))
    fields += [pa.field("with metadata", pa.int32(), metadata={"k": "v"}), pa.field("", pa.int8()),
               pa.field("nombre-ñ-名前", pa.float64(), nullable=False), pa.field("t", pa.timestamp("ms"))]
    schema = pa.schema(fields)
    return schema.empty_table()


def fields_left_to_python(footer, expected, monkeypatch) -> list:
    """The indices of the fields the C reader of ``footer`` left to the Python reader (its
    outcome checked against ``expected`` on the way)."""
    left_to_python = []
    real = decode.schema_fields

    def counting(data, start, count, field_cls, types, make_type, other, budget, md_cap):
        def counted(i):
            left_to_python.append(i)
            return other(i)
        return real(data, start, count, field_cls, types, make_type, counted, budget, md_cap)

    with monkeypatch.context() as m:
        m.setattr(decode, "schema_fields", counting)
        assert outcome(footer) == expected
    return left_to_python


def assert_corruptions_read_alike(footer: bytes, seed: int, monkeypatch) -> None:
    """600 copies of ``footer`` with 1-3 random bytes changed give the C reader and the Python
    reader the same schema or the same error, and enough of them an error."""
    rng = np.random.default_rng(seed)
    differing, errors = [], 0
    for trial in range(600):
        buf = bytearray(footer)
        for pos in rng.integers(0, len(buf), int(rng.integers(1, 4))):
            buf[pos] = int(rng.integers(0, 256))
        fast, slow = both(bytes(buf), monkeypatch)
        errors += isinstance(fast[0], type)
        if fast != slow:
            differing.append((trial, fast, slow))
    assert not differing, differing[:3]
    assert errors > 50  # the corruptions did reach the field tables' checks


def test_leaf_fields_read_in_c_read_the_same(monkeypatch):
    footer = footer_of(leaves_table())
    fast, slow = both(footer, monkeypatch)
    assert fast == slow
    fields = fast[2]
    assert [f[0] for f in fields][-4:] == ["with metadata", "", "nombre-ñ-名前", "t"]
    assert [f[2] for f in fields[:4]] == [True, False, True, False]
    assert fields[-4][3] == {"k": "v"}
    # (metadata and a timestamp included: every field read in C)
    assert fields_left_to_python(footer, fast, monkeypatch) == []
    rng = np.random.default_rng(12)
    differing = []
    for trial in range(300):
        buf = bytearray(footer)
        for pos in rng.integers(0, len(buf), int(rng.integers(1, 4))):
            buf[pos] = int(rng.integers(0, 256))
        fast, slow = both(bytes(buf), monkeypatch)
        if fast != slow:
            differing.append((trial, fast, slow))
    assert not differing, differing[:3]


def every_type_table() -> pa.Table:
    table = pa.table({name: build(N, True) for name, build in CASES.items()})
    fields = [f.with_metadata({"k": f"v{i}"}) if i % 3 == 0 else f for i, f in enumerate(table.schema)]
    schema = pa.schema(fields, metadata={"origin": "test"})
    table = table.cast(schema)
    dictionary = pa.array(["a", "b", "a", None] * (N // 4) + ["a"] * (N % 4)).dictionary_encode()
    return table.append_column(pa.field("dict", dictionary.type), pa.chunked_array([dictionary]))


def test_every_type_reads_the_same(monkeypatch):
    fast, slow = both(footer_of(every_type_table()), monkeypatch)
    assert fast == slow
    schema_metadata, _, fields = fast
    assert schema_metadata == {"origin": "test"} and len(fields) == len(CASES) + 1
    assert any(f[3] for f in fields) and fields[-1][4] is not None  # field metadata, dictionary id


def test_corrupted_footers_give_the_same_schema_or_error(monkeypatch):
    assert_corruptions_read_alike(footer_of(every_type_table()), 11, monkeypatch)


def _schema_message_with_long_string(kind: str) -> bytes:
    """A schema message whose last string (a field name, or a metadata value) is declared one
    byte longer than the bytes that follow it."""
    import pyarrow as pa
    meta = {"k": "v"} if kind == "metadata" else None
    name = "n" if kind == "metadata" else "name_at_the_end"
    schema = pa.schema([pa.field(name, pa.int8(), metadata=meta)])
    data = bytearray(schema.serialize().to_pybytes()[8:])  # the FlatBuffers bytes of the message
    target = b"v" if kind == "metadata" else name.encode()
    at = data.rfind(target) - 4
    length = int.from_bytes(data[at:at + 4], "little")
    assert length == len(target)
    data[at:at + 4] = (len(data) - at - 4 + 1).to_bytes(4, "little")  # one byte past the end
    return bytes(data)


@pytest.mark.parametrize("kind", ["name", "metadata"])
def test_a_string_running_past_the_metadata_is_refused_not_cut_short(kind):
    """The FlatBuffers runtime returns what is there of an overlong string; a field name or a
    metadata value cut short would be a wrong value, so it is refused."""
    data = _schema_message_with_long_string(kind)
    with pytest.raises(ArrowInvalid, match="runs past the end"):
        decode.parse_message(data)


def nested_schema() -> pa.Schema:
    """Nested, dictionary, metadata and parameterised fields (the wide schemas that used to
    be read field by field in Python), every type table ``schema_fields`` reads itself."""
    fields = [
        pa.field("l", pa.list_(pa.field("item", pa.int32(), metadata={"m": "1"})),
                 metadata={"k": "v", "ñ": "名前"}),
        pa.field("ll", pa.large_list(pa.list_(pa.float32()))),
        pa.field("d", pa.dictionary(pa.int16(), pa.string(), ordered=True)),
        pa.field("du", pa.dictionary(pa.uint8(), pa.list_(pa.int64()))),
        pa.field("s", pa.struct([("x", pa.int8()), ("y", pa.timestamp("ns", "Europe/Paris"))])),
        pa.field("m", pa.map_(pa.string(), pa.float64(), keys_sorted=True)),
        pa.field("u", pa.union([pa.field("a", pa.int32()), pa.field("b", pa.string())], "dense",
                               [3, 7])),
        pa.field("us", pa.union([pa.field("a", pa.int32())], "sparse")),
        pa.field("fsl", pa.list_(pa.int16(), 3)),
        pa.field("fsb", pa.binary(5)),
        pa.field("dec", pa.decimal128(20, 4)), pa.field("dec256", pa.decimal256(50, -2)),
        pa.field("dt", pa.date32()), pa.field("dtm", pa.date64()),
        pa.field("t32", pa.time32("s")), pa.field("t64", pa.time64("us")),
        pa.field("ts", pa.timestamp("ms")), pa.field("tsz", pa.timestamp("s", "")),
        pa.field("dur", pa.duration("ns")),
        pa.field("iv", pa.month_day_nano_interval()),
        pa.field("ree", pa.run_end_encoded(pa.int32(), pa.utf8())),
        pa.field("lv", pa.list_view(pa.int8())), pa.field("llv", pa.large_list_view(pa.int8())),
        pa.field("empty_md", pa.int8(), metadata={}),
        pa.field("ext", pa.int8(), metadata={"ARROW:extension:name": "no.such.ext",
                                              "ARROW:extension:metadata": ""}),
    ]
    return pa.schema(fields, metadata={"origin": "nested"})


def test_nested_dictionary_and_metadata_fields_are_read_in_c(monkeypatch):
    footer = footer_of(nested_schema())
    fast, slow = both(footer, monkeypatch)
    assert fast == slow
    names = [f[0] for f in fast[2]]
    assert names[:3] == ["l", "ll", "d"] and len(names) == len(nested_schema())
    assert fast[2][0][3] == {"k": "v", "ñ": "名前"}
    assert fields_left_to_python(footer, fast, monkeypatch) == []
    assert_corruptions_read_alike(footer, 13, monkeypatch)


@pytest.mark.parametrize("limit", [dict(max_nesting=1), dict(max_fields=5),
                                   dict(max_custom_metadata_size=4)])
def test_limits_hold_in_the_c_reader(monkeypatch, limit):
    """A field beyond a limit is refused with the Python reader's error, the budget of the
    fields read before it in C counted."""
    import arrowmm
    footer = footer_of(nested_schema())
    with arrowmm.limits.override(**limit):
        fast, slow = both(footer, monkeypatch)
    assert fast == slow
    assert issubclass(fast[0], ArrowInvalid) and next(iter(limit)) in fast[1]


def test_a_parameterless_type_table_out_of_the_buffer_is_refused(monkeypatch):
    """utf8, bool, binary, struct, list, ... need nothing from their type table, but one that
    is there must lie in the buffer: the C walk refuses it as the Python reader (and pyarrow)
    do, rather than accept a corrupt schema."""
    from arrowmm.format._fbs.Footer import Footer
    table = pa.table({"s": pa.array(["a"]), "b": pa.array([True]), "y": pa.array([b"x"]),
                      "n": pa.array([None]), "l": pa.array([[1]]),
                      "t": pa.array([{"x": 1}]), "i": pa.array([1], pa.int32())})
    footer = footer_of(table)
    fields = Footer.GetRootAs(footer, 0).Schema()
    checked = 0
    for i in range(fields.FieldsLength()):
        f = fields.Fields(i)
        rel = f._tab.Offset(10)  # (slot 3: the type table's uoffset)
        if not rel:
            continue
        buf = bytearray(footer)
        at = f._tab.Pos + rel
        buf[at:at + 4] = (len(buf) + 65_000 - at).to_bytes(4, "little")  # 65 KB past the end
        fast, slow = both(bytes(buf), monkeypatch)
        assert fast == slow, (f.Name(), fast, slow)
        assert issubclass(fast[0], ArrowInvalid), (f.Name(), fast)
        checked += 1
    assert checked == 7


def test_fields_naming_no_extension_stay_out_of_the_cyclic_collector():
    # (10^6 tracked fields made the collector two thirds of the open of such a schema, and 10^5
    # fields with metadata a sixth; a field read in C whose metadata names no extension type
    # refers to nothing that can lead back to it)
    import gc
    schema = pa.schema([pa.field("a", pa.int64()), pa.field("b", pa.list_(pa.utf8())),
                        pa.field("c", pa.float32(), metadata={"k": "v"}),
                        pa.field("d", pa.dictionary(pa.int16(), pa.utf8())),
                        pa.field("e", pa.binary(16), metadata={
                            "ARROW:extension:name": "arrowmm.test.not_registered"})])
    got = decode.parse_footer(footer_of(schema)).schema
    assert [gc.is_tracked(f) for f in got.fields] == [False, False, False, False, True]
    gc.collect()
    assert got.field("c").metadata == {"k": "v"} and got.field("c").extension_type is None
    assert got.field("e").extension_type is None  # (looked up on first use: none registered)
    assert [str(f.type) for f in got.fields] == \
        ["int64", "list<item: string>", "float", "dictionary<values=string, indices=int16, ordered=0>",
         "fixed_size_binary[16]"]
    assert got.field("b").type.value_field.name == "item"


def test_a_wide_schema_s_repeated_nested_and_dictionary_types_are_one_instance_each():
    """Issue 34: 10^5 struct or dictionary fields were read into 10^5 equal types (and the
    struct's children into 10^5 equal fields); one walk now gives them one instance, which is
    safe because types and fields are immutable."""
    struct = pa.struct([("a", pa.int8()), ("b", pa.list_(pa.utf8()))])
    dictionary = pa.dictionary(pa.int32(), pa.utf8())
    fields = ([pa.field(f"s{i}", struct) for i in range(50)]
              + [pa.field(f"d{i}", dictionary) for i in range(50)]
              + [pa.field("other", pa.struct([("a", pa.int16())])),
                 pa.field("renamed", pa.struct([("z", pa.int8()), ("b", pa.list_(pa.utf8()))])),
                 pa.field("strict", pa.struct([pa.field("a", pa.int8(), nullable=False),
                                               ("b", pa.list_(pa.utf8()))]))])
    got = decode.parse_footer(footer_of(pa.schema(fields))).schema
    structs = {id(f.type) for f in got.fields[:50]}
    dictionaries = {id(f.type) for f in got.fields[50:100]}
    assert len(structs) == 1 and len(dictionaries) == 1
    # children that differ in type, name or nullability are not taken for the repeated ones
    assert [str(f.type) for f in got.fields[100:]] == [
        "struct<a: int16>", "struct<z: int8, b: list<item: string>>",
        "struct<a: int8 not null, b: list<item: string>>"]
    assert str(got.field("s7").type) == "struct<a: int8, b: list<item: string>>"
    assert str(got.field("d3").type) == "dictionary<values=string, indices=int32, ordered=0>"


def test_a_field_s_metadata_read_in_c_names_its_extension_type_when_first_asked():
    """A field with metadata is made in C now (it went through Field's constructor): its
    extension type is still looked up on first use, so one registered after the read counts."""
    schema = pa.schema([pa.field("u", pa.binary(16), metadata={
        "ARROW:extension:name": "arrowmm.test.uuid_like", "ARROW:extension:metadata": ""})])
    got = decode.parse_footer(footer_of(schema)).schema
    field = got.field("u")
    assert field.metadata == {"ARROW:extension:name": "arrowmm.test.uuid_like",
                              "ARROW:extension:metadata": ""}
    assert str(field.type) == "fixed_size_binary[16]"  # nothing registered under that name


def test_a_wide_schema_pauses_the_collector_only_while_it_is_read_and_only_if_it_runs(monkeypatch):
    import gc
    schema = pa.schema([pa.field(f"f{i}", pa.int8(), metadata={"k": "v"})
                        for i in range(decode._PAUSE_COLLECTOR_FROM)])
    footer = footer_of(schema)
    seen = []
    real = decode.schema_fields

    def watching(*args):
        seen.append(gc.get_threshold()[0])
        return real(*args)
    monkeypatch.setattr(decode, "schema_fields", watching)
    before = gc.get_threshold()
    assert before[0] > 0
    assert len(decode.parse_footer(footer).schema) == decode._PAUSE_COLLECTOR_FROM
    assert seen == [0] and gc.get_threshold() == before and gc.isenabled()
    small = footer_of(pa.schema([pa.field("a", pa.int8(), metadata={"k": "v"})]))
    decode.parse_footer(small)
    assert seen == [0, before[0]]  # (a narrow schema leaves the collector alone)
    gc.set_threshold(0, *before[1:])  # a program that turned automatic runs off
    try:
        decode.parse_footer(footer)
        assert gc.get_threshold()[0] == 0  # left off, as the program had it
    finally:
        gc.set_threshold(*before)
