"""The faces of split modules: ``arrowmm.types`` and ``arrowmm.arrays.array`` were each one
module and are now several, one per concept; every public name they defined stays importable
from where it was, as the same object its new home holds, and a pickled type still loads."""
import importlib
import pickle

import pytest

import arrowmm
from arrowmm import types as t
from arrowmm.arrays.array import array_class

# the public names each module defined before the split (its own, not the ones it imported),
# less the registration functions that ``arrowmm.hooks`` replaced (issue 33):
# register_schema_importer, register_schema_serializer, register_array_to_pandas,
# register_selection, selection, reduce_registered
TYPES_NAMES = """
BinaryType BoolType DataType DateType DecimalType DictionaryType DurationType EXTENSION_METADATA
EXTENSION_NAME ExtensionType Field FixedSizeBinaryType FixedSizeListType FloatType IntType
IntervalType ListType MapType NullType RunEndEncodedType Schema StructType TimeType
TimestampType UnionType binary binary_view bool_ date32 date64 day_time_interval decimal128
decimal256 decimal32 decimal64 dense_union dictionary duration extension_type_of field
fixed_size_binary fixed_size_list float16 float32 float64 int16 int32 int64 int8 large_binary
large_list large_list_view large_string list_ list_view map_ month_day_nano_interval
month_interval null register_extension_type
run_end_encoded schema sparse_union string string_view struct time32 time64 timestamp uint16
uint32 uint64 uint8 unregister_extension_type utf8
""".split()
ARRAY_NAMES = """
Array BinaryArray BinaryViewArray BooleanArray DictionaryArray FixedSizeBinaryArray
FixedSizeListArray ListArray ListViewArray MAX_UNBACKED_ROWS MapArray NullArray PrimitiveArray
RunEndEncodedArray StructArray UnionArray array_class exported_array exported_schema
imported_array imported_batch make_array unbacked_rows
""".split()


@pytest.mark.parametrize("module, names", [("arrowmm.types", TYPES_NAMES),
                                           ("arrowmm.arrays.array", ARRAY_NAMES)])
def test_every_public_name_is_still_importable(module, names):
    face = importlib.import_module(module)
    missing = [n for n in names if not hasattr(face, n)]
    assert missing == []
    listed = set(face.__all__)
    assert [n for n in listed if not hasattr(face, n)] == []  # (__all__ names nothing absent)


@pytest.mark.parametrize("module", ["arrowmm.types", "arrowmm.arrays.array"])
def test_the_face_hands_out_the_home_modules_objects(module):
    """A class reached through the face is the class its home module defines (not a copy),
    so ``isinstance`` agrees whichever way it was imported."""
    face = importlib.import_module(module)
    for name in face.__all__:
        obj = getattr(face, name)
        home = getattr(obj, "__module__", None)
        if isinstance(obj, type) and home and home.startswith("arrowmm."):
            assert getattr(importlib.import_module(home), obj.__name__) is obj


def test_contract_type_names_keep_working():
    """CONTRACT.md's spelling of types and their strings, through the package and the face."""
    assert str(arrowmm.int64()) == "int64"
    assert str(t.timestamp("us", tz="UTC")) == "timestamp[us, tz=UTC]"
    assert str(t.list_(t.int32())) == "list<item: int32>"
    assert str(t.dictionary(t.int32(), t.string())) == \
        "dictionary<values=string, indices=int32, ordered=0>"
    assert isinstance(arrowmm.schema([("a", t.int8())]).field("a").type, t.IntType)


@pytest.mark.parametrize("dtype", [
    t.int16(), t.timestamp("ns", "Europe/Paris"), t.list_(t.field("x", t.string(), False)),
    t.map_(t.string(), t.float64(), True), t.dense_union([t.field("a", t.int8())], [5]),
    t.dictionary(t.int8(), t.large_string(), True), t.run_end_encoded(t.int32(), t.bool_()),
    arrowmm.uuid(), t.schema([("a", t.decimal128(10, 2))]),
])
def test_types_pickle_through_their_new_modules(dtype):
    assert pickle.loads(pickle.dumps(dtype)) == dtype


@pytest.mark.parametrize("dtype", [
    t.null(), t.bool_(), t.int64(), t.float16(), t.decimal128(10, 2), t.fixed_size_binary(4),
    t.string(), t.large_binary(), t.string_view(), t.binary_view(),
    t.list_(t.int8()), t.large_list(t.int8()), t.list_view(t.int8()), t.fixed_size_list(t.int8(), 2),
    t.struct([t.field("a", t.int8())]), t.map_(t.string(), t.int8()),
    t.dense_union([t.field("a", t.int8())], [0]), t.dictionary(t.int8(), t.string()),
    t.run_end_encoded(t.int32(), t.int8()),
    t.date32(), t.time64("us"), t.timestamp("ms"), t.duration("s"), t.month_interval(),
], ids=str)
def test_an_array_class_lives_in_the_module_named_as_its_types(dtype):
    """``arrays/`` is named as ``types/``: a type in ``types.nested`` has its array class in
    ``arrays.nested``, and so on; the times share ``PrimitiveArray`` with the numbers (their
    values are fixed-width numbers too), so ``types.temporal``'s arrays are in ``primitive``."""
    type_module = type(dtype).__module__.rsplit(".", 1)[1]
    array_module = array_class(dtype).__module__
    expected = "primitive" if type_module == "temporal" else type_module
    assert array_module == f"arrowmm.arrays.{expected}", (str(dtype), type(dtype).__module__)
