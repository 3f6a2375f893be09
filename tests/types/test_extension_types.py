"""Extension types: the canonical ``arrow.*`` types read and written with pyarrow's values and
printed forms, user types through ``register_extension_type`` with pyarrow's rules, unknown
extensions kept as storage with their metadata.  Every expected value is pyarrow's."""
import os
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.ipc
import pytest

import arrowmm
from arrowmm.interop._cdata import import_field

GOLD = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir, "shared", "arrow-testing")
GOLD = "/work/shared/arrow-testing" if not os.path.isdir(GOLD) else GOLD
GOLD_EXT = os.path.join(GOLD, "cpp-21.0.0", "generated_extension.arrow_file")

U = [uuid.UUID(int=5), None, uuid.UUID("12345678-1234-5678-1234-567812345678")]


def _pa_columns():
    """One pyarrow array per canonical type, with nulls."""
    tensor = pa.fixed_shape_tensor(pa.float32(), [2, 3], dim_names=["a", "b"], permutation=[1, 0])
    return {
        "u": pa.array([u.bytes if u else None for u in U], pa.uuid()),
        "j": pa.array(['{"a": 1}', None, "[1, 2]"], pa.json_()),
        "jl": pa.array(['{}', "null", None], pa.json_(pa.large_string())),
        "b8": pa.ExtensionArray.from_storage(pa.bool8(), pa.array([1, None, 0], pa.int8())),
        "t": pa.ExtensionArray.from_storage(
            tensor, pa.array([list(range(6)), None, list(range(6, 12))], pa.list_(pa.float32(), 6))),
        "o": pa.ExtensionArray.from_storage(pa.opaque(pa.binary(), "geometry", "postgis"),
                                            pa.array([b"\x01", None, b""])),
    }


@pytest.fixture
def written(tmp_path):
    batch = pa.record_batch(_pa_columns())
    path = tmp_path / "ext.arrow"
    with pa.ipc.new_file(path, batch.schema) as w:
        w.write_batch(batch)
    return str(path), batch


def _pylist(arr):
    return arr.to_pylist()


def test_schema_prints_extension_types_as_pyarrow(written):
    path, batch = written
    with arrowmm.open_file(path) as r:
        for f, pf in zip(r.schema, batch.schema):
            assert str(f.type) == str(pf.type) == str(f.logical_type)  # (the old alias)
            assert f.type is f.extension_type
            assert f.storage_type == arrowmm.array(pa.array([], pf.type.storage_type)).type
            assert f.type.storage_type == f.storage_type
            assert f.metadata == pf.metadata  # (pyarrow leaves out the extension's entries)
        assert str(r.schema).splitlines()[0] == "u: extension<arrow.uuid>"


def test_values_are_pyarrows(written):
    path, batch = written
    with arrowmm.open_file(path) as r:
        got = r.get_batch(0)
        for name in batch.schema.names:
            if name == "t":  # pyarrow's tensor to_pylist is the flat storage lists
                assert got[name].to_pylist() == batch.column(name).to_pylist()
                continue
            assert got[name].to_pylist() == batch.column(name).to_pylist(), name
        assert got.to_pylist() == batch.to_pylist()
        assert got["u"][0] == uuid.UUID(int=5) and isinstance(got["u"][0], uuid.UUID)
        assert got["b8"][0] is True and got["b8"][2] is False
        assert type(got["u"]) is arrowmm.UuidArray and got["u"].type == arrowmm.uuid()
        assert str(got["t"].type) == str(batch.schema.field("t").type)


def test_extension_arrays_export_as_pyarrow_extension_arrays(written):
    path, batch = written
    with arrowmm.open_file(path) as r:
        got = r.get_batch(0)
        back = pa.record_batch(got)
        assert back.schema == batch.schema
        assert back.equals(batch)
        for name in batch.schema.names:
            col = pa.array(got[name])
            assert col.type == batch.column(name).type
            assert col.equals(batch.column(name))


def test_pyarrow_extension_arrays_import(written):
    _, batch = written
    for name in batch.schema.names:
        mm = arrowmm.array(batch.column(name))
        assert isinstance(mm, arrowmm.ExtensionArray)
        assert str(mm.type) == str(batch.column(name).type)
        assert mm == batch.column(name)
    mm_batch = arrowmm.record_batch(batch)
    assert mm_batch["u"].to_pylist() == U


def test_arrowmm_writes_extension_types_pyarrow_reads(tmp_path):
    tensor = arrowmm.fixed_shape_tensor(arrowmm.int32(), [2, 2], dim_names=["x", "y"])
    batch = arrowmm.record_batch({
        "u": arrowmm.array(U, arrowmm.uuid()),
        "b8": arrowmm.array([True, None, False], arrowmm.bool8()),
        "j": arrowmm.array(['{"k": [1]}', None, "1"], arrowmm.json_()),
        "t": arrowmm.FixedShapeTensorArray.from_numpy_ndarray(
            np.arange(12, dtype=np.int32).reshape(3, 2, 2), dim_names=["x", "y"]),
        "o": arrowmm.array([b"a", b"b", None], arrowmm.opaque(arrowmm.binary(), "blob", "me")),
    })
    path = str(tmp_path / "mm.arrow")
    with arrowmm.new_file(path, batch.schema) as w:
        w.write(batch)
    theirs = pa.ipc.open_file(path).read_all()
    assert theirs.schema.field("u").type == pa.uuid()
    assert theirs.schema.field("b8").type == pa.bool8()
    assert theirs.schema.field("j").type == pa.json_()
    assert theirs.schema.field("o").type == pa.opaque(pa.binary(), "blob", "me")
    t_type = theirs.schema.field("t").type
    assert isinstance(t_type, pa.FixedShapeTensorType) and t_type.shape == [2, 2]
    assert t_type.dim_names == ["x", "y"] and tensor.shape == [2, 2]
    assert theirs.column("u").to_pylist() == U
    assert theirs.column("b8").to_pylist() == [True, None, False]
    assert theirs.column("j").to_pylist() == ['{"k": [1]}', None, "1"]
    np.testing.assert_array_equal(theirs.column("t").combine_chunks().to_numpy_ndarray(),
                                  np.arange(12, dtype=np.int32).reshape(3, 2, 2))
    # and the capsule path agrees with the file path
    assert pa.record_batch(batch).schema == theirs.schema


def test_bool8_to_numpy_is_a_zero_copy_bool_view(written):
    path, _ = written
    storage = pa.array([1, 0, 1, 1], pa.int8())
    theirs = pa.ExtensionArray.from_storage(pa.bool8(), storage)
    ours = arrowmm.array(theirs)
    view = ours.to_numpy()
    assert view.dtype == np.bool_ and view.tolist() == theirs.to_numpy().tolist()
    assert view.ctypes.data == ours.storage.values().ctypes.data  # the same memory
    with arrowmm.open_file(path) as r:
        with pytest.raises(arrowmm.ArrowInvalid, match="null"):
            r.get_batch(0)["b8"].to_numpy()  # a null: no view
        assert r.get_batch(0)["b8"].to_numpy(zero_copy_only=False).tolist() == [True, None, False]
    odd = arrowmm.array(pa.ExtensionArray.from_storage(pa.bool8(), pa.array([2, 0], pa.int8())))
    assert odd.to_pylist() == [True, False]
    with pytest.raises(arrowmm.ArrowInvalid, match="0 and 1"):
        odd.to_numpy()
    assert odd.to_numpy(zero_copy_only=False).tolist() == [True, False]


def test_fixed_shape_tensor_values_and_ndarray():
    data = np.arange(24, dtype=np.float64).reshape(4, 2, 3)
    theirs = pa.FixedShapeTensorArray.from_numpy_ndarray(data)
    ours = arrowmm.array(theirs)
    assert str(ours.type) == str(theirs.type)
    whole = ours.to_numpy_ndarray()
    np.testing.assert_array_equal(whole, theirs.to_numpy_ndarray())
    assert whole.ctypes.data == ours.storage.flatten().to_numpy().ctypes.data  # zero-copy
    for k in range(4):
        np.testing.assert_array_equal(ours[k], theirs[k].to_numpy())
        assert ours[k].shape == (2, 3)
    mine = arrowmm.FixedShapeTensorArray.from_numpy_ndarray(data)
    assert mine.type == ours.type
    assert pa.array(mine).equals(theirs)


def test_fixed_shape_tensor_permutation_is_honoured():
    # logical shape (2, 3) stored with permutation [1, 0]: memory holds the (3, 2) transpose
    typ = pa.fixed_shape_tensor(pa.int64(), [2, 3], permutation=[1, 0])
    logical = np.arange(6).reshape(2, 3)
    theirs = pa.ExtensionArray.from_storage(
        typ, pa.array([logical.T.reshape(-1).tolist()], pa.list_(pa.int64(), 6)))
    ours = arrowmm.array(theirs)
    assert ours[0].shape == (2, 3)
    np.testing.assert_array_equal(ours[0], logical)
    # the whole column in memory order, the permuted shape (3, 2): the transposes.  (pyarrow
    # 26 reads the same bytes with strides that scramble them, so its answer is not the oracle
    # here; the canonical extension spec is: the physical layout is the permuted shape.)
    np.testing.assert_array_equal(ours.to_numpy_ndarray(), logical.T[None])
    assert theirs.to_numpy_ndarray().shape == ours.to_numpy_ndarray().shape
    built = arrowmm.array([logical], arrowmm.fixed_shape_tensor(arrowmm.int64(), [2, 3],
                                                               permutation=[1, 0]))
    assert pa.array(built).equals(theirs)


def test_metadata_bytes_match_pyarrow():
    cases = [
        (arrowmm.fixed_shape_tensor(arrowmm.float32(), [2, 3], ["a", "b"], [1, 0]),
         pa.fixed_shape_tensor(pa.float32(), [2, 3], dim_names=["a", "b"], permutation=[1, 0])),
        (arrowmm.opaque(arrowmm.binary(), "geometry", "postgis"),
         pa.opaque(pa.binary(), "geometry", "postgis")),
        (arrowmm.uuid(), pa.uuid()), (arrowmm.bool8(), pa.bool8()), (arrowmm.json_(), pa.json_()),
    ]
    for ours, theirs in cases:
        assert str(ours) == str(theirs)
        assert pa.field("x", theirs).type == pa.schema(arrowmm.schema([("x", ours)])).field("x").type
        got = import_field(pa.field("x", theirs).__arrow_c_schema__())
        assert got.extension_type == ours
        assert got.type == ours and got.metadata is None  # as pyarrow's field shows it
        assert got.storage_metadata["ARROW:extension:metadata"] == \
            arrowmm.field("x", ours).storage_metadata["ARROW:extension:metadata"]  # byte for byte


def test_gold_extension_file_reads_with_pyarrows_values():
    theirs = pa.ipc.open_file(GOLD_EXT).read_all()
    with arrowmm.open_file(GOLD_EXT) as r:
        assert str(r.schema.field("uuids").logical_type) == "extension<arrow.uuid>"
        # an unregistered extension keeps its storage and its metadata, as pyarrow does
        f = r.schema.field("dict_exts")
        assert f.extension_type is None and f.extension_name == "dict-extension"
        assert f.metadata["ARROW:extension:metadata"] == "dict-extension-serialized"
        rows = [row for b in r for row in b.to_pylist()]
    assert rows == theirs.to_pylist()
    assert any(isinstance(row["uuids"], uuid.UUID) for row in rows)


class Rational(pa.ExtensionType):
    def __init__(self):
        super().__init__(pa.struct([("n", pa.int64()), ("d", pa.int64())]), "test.rational")

    def __arrow_ext_serialize__(self):
        return b"v1"

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls()


class MmRational(arrowmm.ExtensionType):
    def __init__(self, version=b"v1"):
        self.version = version
        super().__init__(arrowmm.struct([("n", arrowmm.int64()), ("d", arrowmm.int64())]),
                         "test.rational")

    def __arrow_ext_serialize__(self):
        return self.version

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        if serialized != b"v1":
            raise arrowmm.ArrowInvalid(f"unknown version {serialized!r}")
        return cls(serialized)

    def wrap_value(self, value):
        return value["n"] / value["d"]


def test_user_extension_types_register_like_pyarrow(tmp_path):
    storage = pa.array([{"n": 1, "d": 2}, None, {"n": 3, "d": 4}],
                       pa.struct([("n", pa.int64()), ("d", pa.int64())]))
    path = str(tmp_path / "rational.arrow")
    pa.register_extension_type(Rational())
    try:
        arr = pa.ExtensionArray.from_storage(Rational(), storage)
        with pa.ipc.new_file(path, pa.schema([("r", arr.type)])) as w:
            w.write_batch(pa.record_batch([arr], names=["r"]))
    finally:
        pa.unregister_extension_type("test.rational")
    # not registered: the storage values, the metadata kept
    with arrowmm.open_file(path) as r:
        assert r.get_batch(0)["r"].to_pylist() == storage.to_pylist()
        assert r.schema.field("r").extension_name == "test.rational"
    arrowmm.register_extension_type(MmRational())
    try:
        with pytest.raises(arrowmm.ArrowKeyError, match="already defined"):
            arrowmm.register_extension_type(MmRational())
        with arrowmm.open_file(path) as r:
            col = r.get_batch(0)["r"]
            assert isinstance(col.type, MmRational) and col.type == MmRational()
            assert col.to_pylist() == [0.5, None, 0.75]
            assert str(r.schema.field("r")) == "r: extension<test.rational<MmRational>>"
    finally:
        arrowmm.unregister_extension_type("test.rational")
    with pytest.raises(arrowmm.ArrowKeyError, match="No type extension"):
        arrowmm.unregister_extension_type("test.rational")
    with pytest.raises(KeyError):
        arrowmm.register_extension_type(arrowmm.uuid())  # canonical: registered already


def test_refused_metadata_reads_as_storage():
    bad = pa.field("t", pa.list_(pa.int8(), 4), metadata={
        "ARROW:extension:name": "arrow.fixed_shape_tensor",
        "ARROW:extension:metadata": '{"shape": [3]}'})  # 3 values do not fill 4
    batch = pa.record_batch([pa.array([[1, 2, 3, 4]], bad.type)], schema=pa.schema([bad]))
    got = arrowmm.record_batch(batch)
    assert got.schema.field("t").extension_type is None
    assert got["t"].to_pylist() == [[1, 2, 3, 4]]


def test_from_storage_checks_the_storage_type():
    with pytest.raises(arrowmm.ArrowInvalid, match="fixed_size_binary"):
        arrowmm.ExtensionArray.from_storage(arrowmm.uuid(), arrowmm.array([1, 2]))
    arr = arrowmm.ExtensionArray.from_storage(arrowmm.bool8(), pa.array([0, 1], pa.int8()))
    assert arr.to_pylist() == [False, True]
    assert arr[1:].to_pylist() == [True] and arr.take([1, 0]).to_pylist() == [True, False]


# -- arrow.variable_shape_tensor (pyarrow 26 has no Python class for it: the spec is the
# oracle for values, Arrow C++ for the printed type and the metadata) -----------------------
def _vst_storage(rows, value_type=pa.float32(), ndim=2):
    """pyarrow storage for tensors ``rows`` (numpy arrays or None), data in memory order."""
    storage_type = pa.struct([("data", pa.list_(value_type)),
                              ("shape", pa.list_(pa.int32(), ndim))])
    return pa.array([None if r is None else {"data": r["data"], "shape": r["shape"]}
                     for r in rows], storage_type)


def test_variable_shape_tensor_values_follow_the_spec():
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(4, dtype=np.float32).reshape(4, 1)
    # permutation [1, 0]: each tensor's data is its transpose, row-major
    rows = [{"data": a.T.reshape(-1).tolist(), "shape": [2, 3]}, None,
            {"data": b.T.reshape(-1).tolist(), "shape": [4, 1]}]
    meta = {"ARROW:extension:name": "arrow.variable_shape_tensor",
            "ARROW:extension:metadata": '{"permutation":[1,0],"dim_names":["H","W"]}'}
    storage = _vst_storage(rows)
    theirs = pa.record_batch([storage], schema=pa.schema([pa.field("t", storage.type, metadata=meta)]))
    got = arrowmm.record_batch(theirs)
    col = got["t"]
    assert isinstance(col, arrowmm.VariableShapeTensorArray)
    assert str(col.type) == ("extension<arrow.variable_shape_tensor[value_type=float, ndim=2, "
                             "permutation=[1,0], dim_names=[H,W]]>")  # Arrow C++'s ToString
    np.testing.assert_array_equal(col[0], a)
    assert col[1] is None
    np.testing.assert_array_equal(col[2], b)
    assert col[0].base is not None  # a view, not a copy
    assert col.to_pylist() == storage.to_pylist()  # the storage rows, as pyarrow gives them
    # built from tensors, it is the same storage
    built = arrowmm.array([a, None, b], col.type)
    assert built.storage == storage


def test_variable_shape_tensor_round_trips_through_files(tmp_path):
    ty = arrowmm.variable_shape_tensor(arrowmm.int64(), 3, uniform_shape=[None, 2, None])
    tensors = [np.arange(12).reshape(3, 2, 2), np.arange(2).reshape(1, 2, 1)]
    batch = arrowmm.record_batch({"t": arrowmm.array(tensors, ty)})
    path = str(tmp_path / "vst.arrow")
    with arrowmm.new_file(path, batch.schema) as w:
        w.write(batch)
    theirs = pa.ipc.open_file(path).read_all()
    field = theirs.schema.field("t")
    assert str(field.type) == str(ty)  # Arrow C++ recognises it (no pyarrow class)
    again = import_field(field.__arrow_c_schema__())  # its metadata, as pyarrow exports it
    assert again.storage_metadata["ARROW:extension:metadata"] == '{"uniform_shape":[null,2,null]}'
    assert again.extension_type == ty
    assert theirs.column("t").combine_chunks().storage.to_pylist()[1] == \
        {"data": [0, 1], "shape": [1, 2, 1]}
    with arrowmm.open_file(path) as r:
        col = r[0]["t"]
        assert col.type == ty
        for got, want in zip(col, tensors):  # iteration gives the storage rows
            assert got["shape"] == list(want.shape)
        np.testing.assert_array_equal(col[0], tensors[0])
        np.testing.assert_array_equal(col[1], tensors[1])


def test_variable_shape_tensor_refuses_a_shape_its_data_does_not_fill():
    rows = [{"data": [1.0, 2.0, 3.0], "shape": [2, 2]}]
    meta = {"ARROW:extension:name": "arrow.variable_shape_tensor"}
    storage = _vst_storage(rows)
    got = arrowmm.record_batch(pa.record_batch(
        [storage], schema=pa.schema([pa.field("t", storage.type, metadata=meta)])))
    with pytest.raises(arrowmm.ArrowInvalid, match="holds 4 values, its data 3"):
        got["t"][0]


# -- a field's type is the extension type, as in pyarrow --------------------------------------

def _both_schemas():
    ours = arrowmm.schema([arrowmm.field("u", arrowmm.uuid()),
                           arrowmm.field("b", arrowmm.bool8(), nullable=False),
                           arrowmm.field("j", arrowmm.json_(), metadata={"k": "v"}),
                           arrowmm.field("t", arrowmm.fixed_shape_tensor(arrowmm.int32(), [2, 2])),
                           arrowmm.field("x", arrowmm.int64())])
    theirs = pa.schema([pa.field("u", pa.uuid()), pa.field("b", pa.bool8(), nullable=False),
                        pa.field("j", pa.json_(), metadata={"k": "v"}),
                        pa.field("t", pa.fixed_shape_tensor(pa.int32(), [2, 2])),
                        pa.field("x", pa.int64())])
    return ours, theirs


def test_field_type_is_the_extension_type_as_in_pyarrow():
    ours, theirs = _both_schemas()
    assert ours.field("u").type == arrowmm.uuid()
    assert [str(x) for x in ours.types] == [str(x) for x in theirs.types]
    for f, pf in zip(ours, theirs):
        assert str(f) == str(pf)[len("pyarrow.Field<"):-1] and \
            repr(f) == repr(pf).replace("pyarrow.", "arrowmm.")
        want_md = {k.decode(): v.decode() for k, v in pf.metadata.items()} if pf.metadata else None
        assert f.metadata == want_md  # no ARROW:extension:* entries, as pyarrow
        if isinstance(pf.type, pa.BaseExtensionType):
            assert f.type.extension_name == pf.type.extension_name
            assert str(f.type.storage_type) == str(pf.type.storage_type) == str(f.storage_type)
            assert f.logical_type is f.type and f.extension_type is f.type  # (old names)
        else:
            assert f.type is f.storage_type and f.extension_type is None
    assert str(ours).splitlines()[:3] == str(theirs).splitlines()[:3]


def test_pyarrow_sees_the_extension_types_through_the_c_interface():
    ours, theirs = _both_schemas()
    assert pa.schema(ours).equals(theirs, check_metadata=True)
    assert pa.field(ours.field("u")).type == pa.uuid()
    assert pa.DataType._import_from_c_capsule(arrowmm.uuid().__arrow_c_schema__()) == pa.uuid()
    back = arrowmm.schema([import_field(f.__arrow_c_schema__()) for f in theirs])
    assert back == ours and back.types == ours.types


def test_extension_fields_survive_renames_pickles_and_nesting():
    import pickle
    f = arrowmm.field("u", arrowmm.uuid(), metadata={"k": "v"})
    for g in (f.with_name("w"), f.with_metadata({"z": "1"}), pickle.loads(pickle.dumps(f)),
              f.with_nullable(False)):
        assert g.type == arrowmm.uuid() and g.storage_type == arrowmm.fixed_size_binary(16)
    assert f.with_metadata({"z": "1"}).metadata == {"z": "1"}
    assert f.with_type(arrowmm.int8()).type == arrowmm.int8()
    assert f.with_type(arrowmm.int8()).storage_metadata == {"k": "v"}  # the extension dropped
    nested = arrowmm.list_(arrowmm.field("item", arrowmm.uuid()))
    assert str(nested) == str(pa.list_(pa.field("item", pa.uuid()))) == \
        "list<item: extension<arrow.uuid>>"
    # (``value_type`` is the extension, as pyarrow's; the layout is the field's storage type)
    assert nested.value_type == arrowmm.uuid() == nested.value_field.type
    assert nested.value_field.storage_type == arrowmm.fixed_size_binary(16)


def test_unregistered_extension_field_keeps_storage_and_metadata():
    md = {"ARROW:extension:name": "no.such.ext", "ARROW:extension:metadata": "x"}
    f = arrowmm.field("a", arrowmm.int32(), metadata=md)
    pf = pa.field("a", pa.int32(), metadata=md)
    assert f.type == arrowmm.int32() and f.extension_type is None
    assert f.metadata == md and f.extension_name == "no.such.ext"
    assert pa.field(f).equals(pf, check_metadata=True)


def _nested_cases():
    pu = pa.ExtensionArray.from_storage(pa.uuid(), pa.array([U[0].bytes, None], pa.binary(16)))
    pb8 = pa.ExtensionArray.from_storage(pa.bool8(), pa.array([1, 0], pa.int8()))
    return {
        "list": pa.ListArray.from_arrays([0, 1, 2], pu),
        "large_list": pa.LargeListArray.from_arrays([0, 1, 2], pu),
        "list_view": pa.ListViewArray.from_arrays([0, 1], [1, 1], pu),
        "fixed_size_list": pa.FixedSizeListArray.from_arrays(pu, 1),
        "sliced list": pa.ListArray.from_arrays([0, 2], pb8).slice(0, 1),
        "struct": pa.StructArray.from_arrays([pu, pb8], names=["u", "b"]),
        "map": pa.MapArray.from_arrays([0, 2], pa.array(["a", "b"]), pb8),
        "sparse_union": pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()), [pu, pb8]),
        "dense_union": pa.UnionArray.from_dense(pa.array([0, 1], pa.int8()),
                                                pa.array([0, 1], pa.int32()), [pu, pb8]),
        "run_end_encoded": pa.RunEndEncodedArray.from_arrays(pa.array([1, 2], pa.int32()), pb8),
    }


@pytest.mark.parametrize("name", sorted(_nested_cases()))
def test_extension_values_at_any_depth_are_pyarrows(tmp_path, name):
    """An extension type below the top level gives its own values (uuid.UUID, bool), through
    the C data interface and through a file, as pyarrow's to_pylist does."""
    theirs = _nested_cases()[name]
    ours = arrowmm.array(theirs)
    assert str(ours.type) == str(theirs.type)
    assert ours.to_pylist() == theirs.to_pylist()
    assert [ours[i] for i in range(len(ours))] == theirs.to_pylist()
    path = str(tmp_path / "nested.arrow")
    with arrowmm.new_file(path, arrowmm.schema([arrowmm.field("c", ours.type)])) as w:
        w.write(arrowmm.record_batch({"c": ours}))
    with arrowmm.open_file(path) as r:
        assert r.get_batch(0).to_pylist() == [{"c": v} for v in theirs.to_pylist()]
    assert pa.ipc.open_file(path).read_all().column("c").to_pylist() == theirs.to_pylist()


@pytest.mark.parametrize("name", ["uuid", "bool8"])
def test_dictionary_of_extension_values_gives_pyarrows_values(name):
    """A dictionary imported from pyarrow holds the extension's storage: its values go through
    the extension's conversion, as a run-end encoded array's do (review 28: F3, they were the
    storage's: bytes, and 1 / 0 for True / False); to_numpy stays pyarrow's (the storage's)."""
    pu = pa.ExtensionArray.from_storage(pa.uuid(), pa.array([U[0].bytes, U[2].bytes], pa.binary(16)))
    pb8 = pa.ExtensionArray.from_storage(pa.bool8(), pa.array([1, 0], pa.int8()))
    theirs = pa.DictionaryArray.from_arrays(pa.array([1, 0, None, 1], pa.int8()),
                                            {"uuid": pu, "bool8": pb8}[name])
    typed = lambda values: [(type(v), v) for v in values]  # noqa: E731  (True == 1 in Python)
    for ours in (arrowmm.array(theirs), arrowmm.table({"d": theirs}).column("d").chunk(0)):
        assert str(ours.type) == str(theirs.type)
        assert typed(ours.to_pylist()) == typed(theirs.to_pylist())
        assert typed(ours[i] for i in range(len(ours))) == typed(theirs.to_pylist())
        assert typed(ours.slice(1).to_pylist()) == typed(theirs.slice(1).to_pylist())
        np.testing.assert_array_equal(ours.to_numpy(zero_copy_only=False),
                                      theirs.to_numpy(zero_copy_only=False))


@pytest.mark.parametrize("name", ["uuid", "bool8"])
def test_to_pandas_of_a_dictionary_of_extension_values_gives_pyarrows_categories(name):
    # (review 29: F3, a uuid dictionary's categories were its 16-byte storage, not UUIDs, so
    # the column compared equal to no UUID; bool8's are its int8 storage in pyarrow too)
    pu = pa.ExtensionArray.from_storage(pa.uuid(), pa.array([U[0].bytes, U[2].bytes], pa.binary(16)))
    pb8 = pa.ExtensionArray.from_storage(pa.bool8(), pa.array([1, 0], pa.int8()))
    theirs = pa.DictionaryArray.from_arrays(pa.array([1, 0, None, 1], pa.int8()),
                                            {"uuid": pu, "bool8": pb8}[name])
    want = theirs.to_pandas()
    for got in (arrowmm.array(theirs).to_pandas(), arrowmm.table({"d": theirs}).to_pandas()["d"]):
        assert [(type(v), v) for v in got.cat.categories] == \
            [(type(v), v) for v in want.cat.categories]
        assert got.cat.codes.tolist() == want.cat.codes.tolist()


def _child_types(dtype):
    """A nested type's children as its accessors give them (``value_type``, ``key_type``,
    ``item_type``, ``run_end_type``, ``field(i).type``): the names pyarrow and arrowmm share."""
    out = {name: getattr(dtype, name) for name in ("value_type", "key_type", "item_type",
                                                   "run_end_type") if hasattr(dtype, name)}
    if isinstance(dtype, (pa.StructType, pa.UnionType, arrowmm.types.StructType,
                          arrowmm.types.UnionType)):
        out.update({f"field({i})": dtype.field(i).type for i in range(len(dtype.children)
                    if hasattr(dtype, "children") else dtype.num_fields)})
    return out


def _write_pa(path, arr):
    with pa.ipc.new_file(path, pa.schema([("c", arr.type)])) as w:
        w.write_batch(pa.record_batch([arr], names=["c"]))


@pytest.mark.parametrize("name", sorted(_nested_cases()))
def test_child_types_of_nested_types_are_pyarrows(tmp_path, name):
    """``list.value_type`` (large, view, fixed-size), map ``item_type``, run-end ``value_type``
    and struct / union ``field(i).type`` of an extension child are the extension type, as
    pyarrow gives them: the same strings, and equal to arrowmm's instance of that type, not
    to its storage (they were the storage type)."""
    theirs = _nested_cases()[name]
    path = str(tmp_path / "nested.arrow")
    _write_pa(path, theirs)
    with arrowmm.open_file(path) as r:
        from_file = r.schema.field("c").type
    for ours in (from_file, arrowmm.array(theirs).type):  # (read from a file, imported)
        mine, pas = _child_types(ours), _child_types(theirs.type)
        assert {k: str(v) for k, v in mine.items()} == {k: str(v) for k, v in pas.items()}
        for key, child in pas.items():
            expected = arrowmm.schema(pa.schema([("x", child)])).field(0).type  # (ours)
            assert mine[key] == expected and hash(mine[key]) == hash(expected)
            if isinstance(child, pa.BaseExtensionType):
                assert isinstance(mine[key], arrowmm.ExtensionType)
                assert mine[key] != expected.storage_type
        assert ours == from_file


def test_list_of_an_extension_is_not_a_list_of_its_storage():
    for make in (arrowmm.list_, arrowmm.large_list, lambda v: arrowmm.list_(v, 2)):
        assert make(arrowmm.uuid()) != make(arrowmm.fixed_size_binary(16))
        assert make(arrowmm.uuid()) == make(arrowmm.uuid())
        assert make(arrowmm.uuid()).value_type == arrowmm.uuid()
    assert pa.list_(pa.uuid()) != pa.list_(pa.binary(16))  # (the oracle agrees)
    m = arrowmm.map_(arrowmm.string(), arrowmm.uuid())
    assert m.item_type == arrowmm.uuid()
    assert m.item_field.storage_type == arrowmm.fixed_size_binary(16)
    assert m.key_type == arrowmm.string()
    ree = arrowmm.run_end_encoded(arrowmm.int32(), arrowmm.bool8())
    assert ree.value_type == arrowmm.bool8() and ree.run_end_type == arrowmm.int32()
    assert str(ree.value_type) == str(pa.run_end_encoded(pa.int32(), pa.bool8()).value_type)


def test_child_types_of_an_unregistered_extension_read_from_a_file(tmp_path):
    """Unregistered, a child extension reads as its storage (metadata kept), in pyarrow and
    here alike; registered, as the extension type."""
    storage = pa.array([{"n": 1, "d": 2}, None, {"n": 3, "d": 4}],
                       pa.struct([("n", pa.int64()), ("d", pa.int64())]))
    pa.register_extension_type(Rational())
    try:
        ext = pa.ExtensionArray.from_storage(Rational(), storage)
        cases = {
            "list": pa.ListArray.from_arrays([0, 2, 3], ext),
            "large_list": pa.LargeListArray.from_arrays([0, 2, 3], ext),
            "fixed_size_list": pa.FixedSizeListArray.from_arrays(ext, 1),
            "map": pa.MapArray.from_arrays([0, 2, 3], pa.array(["a", "b", "c"]), ext),
            "struct": pa.StructArray.from_arrays([ext], names=["r"]),
        }
        for name, arr in cases.items():
            _write_pa(str(tmp_path / f"{name}.arrow"), arr)
    finally:
        pa.unregister_extension_type("test.rational")
    plain = arrowmm.struct([("n", arrowmm.int64()), ("d", arrowmm.int64())])
    for name in cases:
        path = str(tmp_path / f"{name}.arrow")
        theirs = pa.ipc.open_file(path).schema.field("c").type  # (unregistered in pyarrow too)
        with arrowmm.open_file(path) as r:
            ours = r.schema.field("c").type
            values = r.get_batch(0)["c"].to_pylist()
        assert str(ours) == str(theirs)
        mine = _child_types(ours)
        assert {k: str(v) for k, v in mine.items()} == \
            {k: str(v) for k, v in _child_types(theirs).items()}
        (child,) = [v for k, v in mine.items() if k in ("value_type", "item_type", "field(0)")]
        assert child == plain and not isinstance(child, arrowmm.ExtensionType)
        assert ours.children[0].name in ("item", "r", "entries")
        assert values == pa.ipc.open_file(path).read_all().column("c").to_pylist()
        arrowmm.register_extension_type(MmRational())
        try:
            with arrowmm.open_file(path) as r:
                ours = r.schema.field("c").type
            (child,) = [v for k, v in _child_types(ours).items()
                        if k in ("value_type", "item_type", "field(0)")]
            assert child == MmRational() and child != plain
            assert str(ours) == str(theirs).replace(str(plain),
                                                    "extension<test.rational<MmRational>>")
        finally:
            arrowmm.unregister_extension_type("test.rational")


def test_schema_of_a_producer_as_pyarrow_schema_takes_one():
    theirs = pa.schema([pa.field("u", pa.uuid()), ("x", pa.int8())], metadata={"a": "b"})
    ours = arrowmm.schema(theirs)  # any __arrow_c_schema__ producer, as pa.schema(obj)
    assert ours.field("u").type == arrowmm.uuid() and ours.metadata == {"a": "b"}
    assert str(ours) == str(theirs) and pa.schema(ours).equals(theirs, check_metadata=True)
    assert arrowmm.schema(theirs, metadata={"c": "d"}).metadata == {"c": "d"}
    with pytest.raises(arrowmm.ArrowInvalid, match="must be a struct"):
        arrowmm.schema(pa.int8())


class _Labelled(arrowmm.ExtensionType):
    """An extension over any storage (the storage it is read with is the one it keeps)."""

    def __init__(self, storage):
        super().__init__(storage, "test.labelled")

    def __arrow_ext_serialize__(self):
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls(storage_type)


def test_extension_read_twice_keeps_each_storages_child_names():
    """Storage types equal but for a list's child name (which == ignores, as pyarrow's) each
    resolve to an extension over their own storage, not one cached for the other."""
    md = {"ARROW:extension:name": "test.labelled", "ARROW:extension:metadata": ""}
    named = arrowmm.list_(arrowmm.field("x", arrowmm.int32()))
    plain = arrowmm.list_(arrowmm.int32())
    assert named == plain and str(named) != str(plain)
    arrowmm.register_extension_type(_Labelled(plain))
    try:
        for storage in (plain, named, plain):
            ext = arrowmm.field("c", storage, metadata=md).type
            assert isinstance(ext, _Labelled) and str(ext.storage_type) == str(storage)
    finally:
        arrowmm.unregister_extension_type("test.labelled")
