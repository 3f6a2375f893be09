"""Type equality as pyarrow's ``==`` (``check_metadata=False``), with pyarrow as the oracle.

A nested type compares its children by type and nullability, by name only where the name is
part of the type (struct and union children; not a list's or a map's), and never by the
children's custom metadata: so a list read from a file whose child carries metadata (an
unregistered extension's, say) equals the plain list, as in pyarrow.  ``hash`` agrees with
``==`` (pyarrow's own hash does not always: only equality is compared with it).
"""
import pyarrow as pa
import pytest

import arrowmm

MD = {"a": "b"}
UNREGISTERED = {"ARROW:extension:name": "no.such.ext", "ARROW:extension:metadata": "x"}

# (name, a, b): each a function of the library (pyarrow or arrowmm) making one type
CASES = [
    ("list child metadata", lambda m: m.list_(m.field("item", m.int32(), metadata=MD)),
     lambda m: m.list_(m.int32())),
    ("list child name", lambda m: m.list_(m.field("x", m.int32())), lambda m: m.list_(m.int32())),
    ("list child nullability", lambda m: m.list_(m.field("item", m.int32(), False)),
     lambda m: m.list_(m.int32())),
    ("large_list child name", lambda m: m.large_list(m.field("x", m.int32())),
     lambda m: m.large_list(m.int32())),
    ("list_view child name", lambda m: m.list_view(m.field("x", m.int32())),
     lambda m: m.list_view(m.int32())),
    ("fixed_size_list child name", lambda m: m.list_(m.field("x", m.int32()), 2),
     lambda m: m.list_(m.int32(), 2)),
    ("fixed_size_list size", lambda m: m.list_(m.int32(), 3), lambda m: m.list_(m.int32(), 2)),
    ("list of unregistered extension", lambda m: m.list_(m.field("item", m.int32(),
                                                                 metadata=UNREGISTERED)),
     lambda m: m.list_(m.int32())),
    ("list of a list with metadata", lambda m: m.list_(m.list_(m.field("item", m.int8(),
                                                                         metadata=MD))),
     lambda m: m.list_(m.list_(m.int8()))),
    ("list of uuid vs its storage", lambda m: m.list_(m.uuid()), lambda m: m.list_(m.binary(16))
     if m is pa else m.list_(m.fixed_size_binary(16))),
    ("struct child metadata", lambda m: m.struct([m.field("x", m.int32(), metadata=MD)]),
     lambda m: m.struct([("x", m.int32())])),
    ("struct child name", lambda m: m.struct([("x", m.int32())]),
     lambda m: m.struct([("y", m.int32())])),
    ("struct child nullability", lambda m: m.struct([m.field("x", m.int32(), False)]),
     lambda m: m.struct([("x", m.int32())])),
    ("map names", lambda m: m.map_(m.field("k", m.string(), False), m.field("v", m.int32())),
     lambda m: m.map_(m.string(), m.int32())),
    ("map item metadata", lambda m: m.map_(m.string(), m.field("value", m.int32(), metadata=MD)),
     lambda m: m.map_(m.string(), m.int32())),
    ("map item nullability", lambda m: m.map_(m.string(), m.field("value", m.int32(), False)),
     lambda m: m.map_(m.string(), m.int32())),
    ("map keys_sorted", lambda m: m.map_(m.string(), m.int32(), True),
     lambda m: m.map_(m.string(), m.int32())),
    ("union child metadata", lambda m: m.sparse_union([m.field("x", m.int32(), metadata=MD)]),
     lambda m: m.sparse_union([m.field("x", m.int32())])),
    ("union child name", lambda m: m.sparse_union([m.field("x", m.int32())]),
     lambda m: m.sparse_union([m.field("y", m.int32())])),
    ("union mode", lambda m: m.sparse_union([m.field("x", m.int32())]),
     lambda m: m.dense_union([m.field("x", m.int32())])),
    ("run_end_encoded values", lambda m: m.run_end_encoded(m.int32(), m.int8()),
     lambda m: m.run_end_encoded(m.int32(), m.int16())),
    ("dictionary of lists with names",
     lambda m: m.dictionary(m.int8(), m.list_(m.field("q", m.int32()))),
     lambda m: m.dictionary(m.int8(), m.list_(m.int32()))),
]


@pytest.mark.parametrize("name, make_a, make_b", CASES, ids=[c[0] for c in CASES])
def test_nested_type_equality_is_pyarrows(name, make_a, make_b):
    expected = make_a(pa) == make_b(pa)
    a, b = make_a(arrowmm), make_b(arrowmm)
    assert (a == b) is expected and (a != b) is (not expected)
    assert (b == a) is expected
    if expected:
        assert hash(a) == hash(b)
    assert str(a) == str(make_a(pa)) and str(b) == str(make_b(pa))


@pytest.mark.parametrize("name, make_a, make_b", CASES, ids=[c[0] for c in CASES])
def test_types_imported_from_pyarrow_equal_ours(name, make_a, make_b):
    """The same type made here and imported from pyarrow (C data interface) is equal."""
    for make in (make_a, make_b):
        theirs = arrowmm.schema(pa.schema([("c", make(pa))])).field("c").type
        assert theirs == make(arrowmm) and hash(theirs) == hash(make(arrowmm))


def test_equal_types_are_one_dict_key():
    plain = arrowmm.list_(arrowmm.int32())
    keys = {plain: "plain"}
    assert keys[arrowmm.list_(arrowmm.field("x", arrowmm.int32(), metadata=MD))] == "plain"
    assert arrowmm.list_(arrowmm.field("x", arrowmm.int32(), False)) not in keys


def test_fields_keep_their_metadata_for_the_writer():
    """Only the type comparison leaves child metadata out: the fields still hold it, and a
    field's own equality still counts its metadata (what a writer writes is unchanged)."""
    t = arrowmm.list_(arrowmm.field("item", arrowmm.int32(), metadata=MD))
    assert t.value_field.metadata == MD
    assert t.value_field != arrowmm.field("item", arrowmm.int32())
