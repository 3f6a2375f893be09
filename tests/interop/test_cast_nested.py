"""Casts between nested types (``interop/nested_cast.py``) against pyarrow's cast: lists of
every kind to lists and fixed-size lists, maps, structs by field name (reordered, dropped,
missing, non-nullable), nested values cast inside, slices, and the pairs pyarrow refuses.
About 1 s."""
import pyarrow as pa
import pytest

import arrowmm


def _mm_type(pa_type):
    return arrowmm.array(pa.nulls(0, pa_type)).type


def _same(source: pa.Array, target, safe=True):
    """Both cast to equal values and types, or both raise the same kind of error."""
    kinds = {pa.ArrowInvalid: arrowmm.ArrowInvalid,
             pa.ArrowNotImplementedError: arrowmm.ArrowNotImplementedError,
             pa.ArrowTypeError: arrowmm.ArrowTypeError}
    for part in (source, source.slice(1)):
        try:
            want = part.cast(target, safe=safe)
        except tuple(kinds) as exc:
            with pytest.raises(kinds[type(exc)]) as got:
                arrowmm.array(part).cast(_mm_type(target), safe=safe)
            assert str(got.value).split(" using function")[0].replace("utf8", "string") == \
                str(exc).split(" using function")[0].replace("utf8", "string") or \
                isinstance(exc, pa.ArrowNotImplementedError)
            continue
        got = pa.array(arrowmm.array(part).cast(_mm_type(target), safe=safe))
        assert got.type == want.type
        assert got.equals(want), (got.to_pylist(), want.to_pylist())


LISTS = [pa.array([[1, 2], None, [3, None], []], pa.list_(pa.int32())),
         pa.array([[1, 2], None, [3, 4], [5, 6]], pa.large_list(pa.int32())),
         pa.array([[1, 2], None, [3, None], [5, 6]], pa.list_(pa.int32(), 2))]
LIST_TARGETS = [pa.list_(pa.int64()), pa.large_list(pa.int8()), pa.list_(pa.utf8()),
                pa.list_(pa.int64(), 2), pa.list_(pa.int64(), 3),
                pa.list_(pa.field("x", pa.float64(), nullable=False)), pa.utf8(),
                pa.struct([("a", pa.int32())]), pa.map_(pa.int32(), pa.int32()),
                pa.list_view(pa.int64())]


@pytest.mark.parametrize("source", LISTS, ids=lambda a: str(a.type))
@pytest.mark.parametrize("target", LIST_TARGETS, ids=str)
def test_lists(source, target):
    _same(source, target)


def test_lists_of_lists_and_values_that_do_not_fit():
    _same(pa.array([[[1, 2]], None, [[3]]], pa.list_(pa.list_(pa.int32()))),
          pa.large_list(pa.large_list(pa.float64())))
    _same(pa.array([[1, 300], [2]], pa.list_(pa.int32())), pa.list_(pa.int8()))
    _same(pa.array([[1, 300], [2]], pa.list_(pa.int32())), pa.list_(pa.int8()), safe=False)
    _same(pa.array([[1, 2], None, [3, 4]], pa.list_(pa.int32())), pa.list_(pa.int64(), 2))


STRUCT = pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}, {"a": 4, "b": None}],
                  pa.struct([("a", pa.int32()), ("b", pa.utf8())]))


@pytest.mark.parametrize("target", [
    pa.struct([("a", pa.int64()), ("b", pa.large_utf8())]),
    pa.struct([("b", pa.utf8()), ("a", pa.int32())]),
    pa.struct([("a", pa.int64())]),
    pa.struct([("a", pa.int64()), ("c", pa.int8())]),
    pa.struct([("x", pa.int64()), ("y", pa.utf8())]),
    pa.struct([pa.field("a", pa.int32(), nullable=False)]),
    pa.struct([pa.field("c", pa.int32(), nullable=False)]),
    pa.struct([]),
    pa.struct([("a", pa.utf8()), ("b", pa.int32())]),
    pa.list_(pa.int32()),
], ids=str)
def test_structs_by_field_name(target):
    _same(STRUCT, target)


def test_maps():
    source = pa.array([[("a", 1)], None, [("b", 300), ("c", 2)]], pa.map_(pa.utf8(), pa.int32()))
    for target in (pa.map_(pa.large_utf8(), pa.int64()), pa.map_(pa.utf8(), pa.int8()),
                   pa.list_(pa.struct([("key", pa.utf8()), ("value", pa.int32())])),
                   pa.large_list(pa.struct([("key", pa.large_utf8()), ("value", pa.float64())]))):
        _same(source, target)
        _same(source, target, safe=False)


def test_map_entries_cast_by_position_as_pyarrow():
    """A map's key/value structs go to the target's two fields by position (their names are
    the target's); any other target value type is pyarrow's ArrowTypeError."""
    source = pa.array([[("a", 1)], None, [("b", 2), ("c", 3)]], pa.map_(pa.string(), pa.int8()))
    for target in (pa.list_(pa.struct([("k", pa.large_string()), ("v", pa.int64())])),
                   pa.list_(pa.struct([("value", pa.string()), ("key", pa.int16())])),
                   pa.map_(pa.large_string(), pa.int16()),
                   pa.list_(pa.struct([("key", pa.string()), ("value", pa.int16())]), 1),
                   pa.list_(pa.struct([("k", pa.string())])),
                   pa.list_(pa.struct([("k", pa.string()), ("v", pa.int8()), ("w", pa.int8())])),
                   pa.list_(pa.int32())):
        _same(source, target)
    renamed = pa.map_(pa.field("kk", pa.string(), nullable=False), pa.field("vv", pa.int16()))
    _same(source, renamed)


def test_repeated_struct_field_names_match_in_order():
    source = pa.StructArray.from_arrays([pa.array([1, 2]), pa.array([3, 4]), pa.array(["x", "y"])],
                                        names=["a", "a", "b"])
    for target in (pa.struct([("a", pa.int64()), ("a", pa.string())]),
                   pa.struct([("b", pa.string()), ("a", pa.int8()), ("a", pa.int16()),
                              ("a", pa.int32())])):
        want = source.cast(target)
        got = pa.array(arrowmm.array(source).cast(_mm_type(target)))
        assert [got.field(i).to_pylist() for i in range(got.type.num_fields)] == \
            [want.field(i).to_pylist() for i in range(want.type.num_fields)]


@pytest.mark.parametrize("view", [pa.list_view(pa.int8()), pa.large_list_view(pa.int8())],
                         ids=str)
@pytest.mark.parametrize("target", [pa.list_(pa.int16()), pa.large_list(pa.int8())], ids=str)
def test_list_views_to_lists_gather_every_view(view, target):
    """pyarrow casts these too, but loses values (a view after a null one comes out empty, or
    the array is invalid): the oracle is the views' own values, in row order; views may
    overlap and come in any order."""
    offsets = pa.array([4, 0, 0, 1, 2], pa.int32() if view == pa.list_view(pa.int8()) else pa.int64())
    sizes = pa.array([2, 0, 3, 1, 3], offsets.type)
    values = pa.array([1, 2, 3, 4, 5, 6], pa.int8())
    source = type(pa.array([], view)).from_arrays(offsets, sizes, values,
                                                  mask=pa.array([False, True, False, False, False]))
    got = pa.array(arrowmm.array(source).cast(_mm_type(target)))
    got.validate(full=True)
    assert got.type == target
    assert got.to_pylist() == [[5, 6], None, [1, 2, 3], [2], [3, 4, 5]]
    assert pa.array(arrowmm.array(source.slice(2)).cast(_mm_type(target))).to_pylist() == \
        [[1, 2, 3], [2], [3, 4, 5]]
