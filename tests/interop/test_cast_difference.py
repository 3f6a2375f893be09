"""``schema_difference`` and ``cast_problem`` (``interop/cast.py``) name what differs between two
unequal types whose text is the same: a map's or run-end encoded type's values print no
nullability, an extension type neither its storage nor its parameters (review 27: F1, "column
'c' is map<string, int64>, the writer's is map<string, int64>")."""
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.interop.cast import cast_problem, schema_difference

_MAP = arrowmm.map_(arrowmm.string(), arrowmm.int64())
_MAP_NOT_NULL = arrowmm.map_(arrowmm.string(), arrowmm.field("value", arrowmm.int64(), False))


class _Labelled(arrowmm.ExtensionType):
    """An extension over any storage: its text names neither."""

    def __init__(self, storage):
        super().__init__(storage, "test.difference")

    def __arrow_ext_serialize__(self):
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls(storage_type)


@pytest.mark.parametrize("cast", [False, True])
def test_a_writer_names_the_map_value_field_whose_nullability_differs(tmp_path, cast):
    want = pa.map_(pa.string(), pa.field("value", pa.int64(), nullable=False))
    got = pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int64()))
    with pytest.raises(arrowmm.ArrowInvalid) as info:
        with arrowmm.new_file(str(tmp_path / "m.arrow"), pa.schema([("c", want)]),
                              cast=cast) as w:
            w.write(pa.record_batch({"c": got}))
    message = str(info.value)
    assert "map<string, int64>, the writer's is map<string, int64>" not in message
    assert "cannot cast map<string, int64> to map<string, int64>: map<" not in message
    whose = "the target's" if cast else "the writer's"
    assert f"map value field 'value' is nullable, {whose} is not" in message, message


@pytest.mark.parametrize("got, want, says", [
    (_MAP_NOT_NULL, _MAP, "its map value field 'value' is not nullable, the writer's is"),
    (arrowmm.struct([("a", _MAP)]), arrowmm.struct([("a", _MAP_NOT_NULL)]),
     "its struct field 'a' > map value field 'value' is nullable, the writer's is not"),
    (arrowmm.list_(_MAP), arrowmm.list_(_MAP_NOT_NULL),
     "its list item field 'item' > map value field 'value' is nullable, the writer's is not"),
    (arrowmm.dictionary(arrowmm.int32(), _MAP), arrowmm.dictionary(arrowmm.int32(), _MAP_NOT_NULL),
     "its dictionary values > map value field 'value' is nullable, the writer's is not"),
    (arrowmm.run_end_encoded(arrowmm.int32(), arrowmm.int64()),
     arrowmm.run_end_encoded(arrowmm.int32(), arrowmm.field("values", arrowmm.int64(), False)),
     "its run-end encoded field 'values' is nullable, the writer's is not"),
    (_Labelled(arrowmm.int32()), _Labelled(arrowmm.int64()),
     "its extension storage is int32, the writer's is int64"),
], ids=["map", "struct", "list", "dictionary", "run_end_encoded", "extension"])
def test_a_difference_the_type_text_does_not_show_is_named(got, want, says):
    assert got != want and str(got) == str(want)
    message = schema_difference(arrowmm.schema([arrowmm.field("c", got)]),
                                arrowmm.schema([arrowmm.field("c", want)]), "the writer's")
    assert says in message, message
    innermost = says.rsplit("> ", 1)[-1].replace("its ", "")  # (dictionaries: "its values: ")
    assert innermost.replace("the writer's", "the target's") in cast_problem(got, want)
