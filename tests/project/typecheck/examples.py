"""Every public name of ``arrowmm.__all__``, used as the README and the docs show it.

Not a test to run: ``tests/project/test_typing.py`` type-checks this file with pyright and mypy and
expects no error, so a public callable whose hints are wrong or missing (a module where a
function should be, a class attribute a checker cannot see) fails there.  Each function is
one scene; the ``check_*`` names are only there to give each its own scope.
"""
from __future__ import annotations

import os
import uuid

import numpy as np

import arrowmm
from arrowmm.shm import Channel


def check_types() -> None:
    ints = [arrowmm.int8(), arrowmm.int16(), arrowmm.int32(), arrowmm.int64(), arrowmm.uint8(),
            arrowmm.uint16(), arrowmm.uint32(), arrowmm.uint64()]
    floats = [arrowmm.float16(), arrowmm.float32(), arrowmm.float64()]
    flat: list[arrowmm.DataType] = [
        arrowmm.null(), arrowmm.bool_(), arrowmm.string(), arrowmm.binary(),
        arrowmm.large_string(), arrowmm.large_binary(), arrowmm.string_view(),
        arrowmm.binary_view(), arrowmm.date32(), arrowmm.date64(), arrowmm.time32("ms"),
        arrowmm.time64("ns"), arrowmm.timestamp("us", tz="UTC"), arrowmm.duration("s"),
        arrowmm.month_interval(), arrowmm.day_time_interval(),
        arrowmm.month_day_nano_interval(), arrowmm.decimal32(9, 2), arrowmm.decimal64(18, 2),
        arrowmm.decimal128(38, 10), arrowmm.decimal256(76), arrowmm.fixed_size_binary(16),
        *ints, *floats,
    ]
    nested: list[arrowmm.DataType] = [
        arrowmm.list_(arrowmm.int32()), arrowmm.list_(arrowmm.int32(), 3),
        arrowmm.large_list(arrowmm.string()), arrowmm.list_view(arrowmm.int8()),
        arrowmm.large_list_view(arrowmm.int8()), arrowmm.fixed_size_list(arrowmm.float32(), 4),
        arrowmm.struct([("a", arrowmm.int64()), arrowmm.field("b", arrowmm.string())]),
        arrowmm.map_(arrowmm.string(), arrowmm.int64()),
        arrowmm.sparse_union([arrowmm.field("i", arrowmm.int32())]),
        arrowmm.dense_union([arrowmm.field("s", arrowmm.string())], [5]),
        arrowmm.dictionary(arrowmm.int32(), arrowmm.string()),
        arrowmm.run_end_encoded(arrowmm.int32(), arrowmm.float64()),
    ]
    classes: list[type[arrowmm.DataType]] = [
        arrowmm.NullType, arrowmm.BoolType, arrowmm.IntType, arrowmm.FloatType,
        arrowmm.DecimalType, arrowmm.DateType, arrowmm.TimeType, arrowmm.TimestampType,
        arrowmm.DurationType, arrowmm.IntervalType, arrowmm.BinaryType, arrowmm.BinaryViewType,
        arrowmm.FixedSizeBinaryType, arrowmm.ListType, arrowmm.ListViewType,
        arrowmm.FixedSizeListType, arrowmm.StructType, arrowmm.MapType, arrowmm.UnionType,
        arrowmm.DictionaryType, arrowmm.RunEndEncodedType, arrowmm.ExtensionType,
    ]
    assert all(isinstance(t, arrowmm.DataType) for t in flat + nested)
    assert [str(t) for t in flat[:2]] == ["null", "bool"] and len(classes) == 22
    assert arrowmm.IntType(64, True) == arrowmm.int64()

    schema = arrowmm.schema([("x", arrowmm.float64()), ("name", arrowmm.string())],
                            metadata={"origin": "example"})
    field: arrowmm.Field = schema.field("x")
    made: arrowmm.Field = arrowmm.field("y", arrowmm.int8(), nullable=False)
    print(made.name)
    name: str = field.name
    kind: arrowmm.DataType = field.type
    nullable: bool = field.nullable
    print(name, kind, nullable, field.metadata, schema.names, len(schema), schema.metadata)
    for f in schema:
        print(f.name, str(f.type))
    other = arrowmm.Schema([field.with_type(arrowmm.int64())])
    assert not schema.equals(other)


def check_extension_types() -> None:
    ids = arrowmm.array([uuid.UUID(int=1), None], arrowmm.uuid())
    tensors = arrowmm.FixedShapeTensorArray.from_numpy_ndarray(np.arange(12.0).reshape(3, 2, 2))
    batch = arrowmm.record_batch({"id": ids.take([0, 0, 1]), "t": tensors})
    assert batch.schema.field("id").type == arrowmm.uuid()
    exts: list[arrowmm.ExtensionType] = [
        arrowmm.uuid(), arrowmm.json_(), arrowmm.bool8(),
        arrowmm.fixed_shape_tensor(arrowmm.float32(), [2, 2]),
        arrowmm.opaque(arrowmm.binary(), "geometry", "example.org"),
        arrowmm.variable_shape_tensor(arrowmm.float64(), 2),
    ]
    ext_classes = [arrowmm.UuidType, arrowmm.JsonType, arrowmm.Bool8Type,
                   arrowmm.FixedShapeTensorType, arrowmm.OpaqueType,
                   arrowmm.VariableShapeTensorType]
    arrays = [arrowmm.ExtensionArray, arrowmm.UuidArray, arrowmm.JsonArray, arrowmm.Bool8Array,
              arrowmm.FixedShapeTensorArray, arrowmm.OpaqueArray,
              arrowmm.VariableShapeTensorArray]
    print(exts, ext_classes, arrays)
    mine = arrowmm.opaque(arrowmm.binary(), "mine", "example.org")
    arrowmm.register_extension_type(mine)
    arrowmm.unregister_extension_type("arrow.opaque")


def check_quick_start(folder: str) -> None:
    schema = arrowmm.schema([("x", arrowmm.float64()), ("name", arrowmm.string())])
    path = os.path.join(folder, "data.arrow")
    with arrowmm.new_file(path, schema) as writer:
        writer.write({"x": np.linspace(0, 1, 10), "name": list("abcdefghij")})
    with arrowmm.new_stream(path + "s", schema, compression="zstd") as swriter:
        swriter.write_batch(arrowmm.record_batch({"x": [1.0], "name": ["k"]}))

    with arrowmm.open_file(path) as reader:
        print(reader.schema, reader.num_record_batches, reader.metadata, reader.num_rows)
        batch = reader.get_batch(-1)
        x = batch.column("x").to_numpy()
        rows = batch.slice(0, 5).to_pylist()
        print(x.sum(), rows[0]["x"], batch.to_pydict(), batch.num_columns, batch.columns)
        batch.validate(full=True)
        table = reader.read_all()
        print(table.column("name").to_pylist(), table.num_rows)
    with open(path + "s", "rb") as f:
        for b in arrowmm.open_stream(f):
            print(b.num_rows, b.column("name")[0])
    stream = arrowmm.open_stream(path + "s")
    first = stream.read_next_batch()
    stream.close()
    print(first.schema)
    any_reader = arrowmm.open(path)
    print(any_reader.schema)


def check_arrays() -> None:
    batch = arrowmm.record_batch({"x": [1, 2, 3, 4], "s": ["a", None, "c", "d"]})
    assert batch["x"][-1] == 4 and batch[1:3].num_rows == 2
    assert batch.filter(np.array([True, False, True, True]))["s"].to_pylist() == ["a", "c", "d"]
    assert batch.take([3, 0]).to_pylist() == [{"x": 4, "s": "d"}, {"x": 1, "s": "a"}]
    assert batch.rename_columns({"x": "id"}).select(["id"]) == \
        arrowmm.record_batch({"id": [1, 2, 3, 4]})
    col: arrowmm.Array = batch.column(0)
    print(col.type, len(col), col.null_count, col[0], col.to_pylist(), col.slice(1, 2),
          col.buffers(), col.to_numpy(zero_copy_only=True))
    col.validate(full=True)
    array_classes = [arrowmm.NullArray, arrowmm.BooleanArray, arrowmm.PrimitiveArray,
                     arrowmm.FixedSizeBinaryArray, arrowmm.BinaryArray, arrowmm.BinaryViewArray,
                     arrowmm.ListArray, arrowmm.ListViewArray, arrowmm.MapArray,
                     arrowmm.FixedSizeListArray, arrowmm.StructArray, arrowmm.UnionArray,
                     arrowmm.DictionaryArray, arrowmm.RunEndEncodedArray]
    assert all(issubclass(c, arrowmm.Array) for c in array_classes)
    chunked = arrowmm.ChunkedArray([col, col])
    table = arrowmm.Table.from_batches([batch, batch])
    assert isinstance(table, arrowmm.Table) and chunked.num_chunks == 2
    rb: arrowmm.RecordBatch = table.to_batches()[0]
    built: arrowmm.Table = arrowmm.table({"x": [1, 2], "s": ["a", "b"]}, metadata={"k": "v"})
    more: arrowmm.Table = arrowmm.concat_tables([built, arrowmm.table([[3], ["c"]],
                                                                      names=["x", "s"])])
    grown = more.append_column("n", arrowmm.chunked_array([[1, 2], [3]], type="int32"))
    assert grown.drop_columns("s").remove_column(0).set_column(0, "m", [4, 5, 6]).num_rows == 3
    assert grown.combine_chunks().replace_schema_metadata(None).num_columns == 3
    rows = arrowmm.RecordBatch.from_pylist([{"x": 1}]).add_column(0, "y", ["z"])
    assert rows.drop_columns(["y"]) == arrowmm.RecordBatch.from_pydict({"x": [1]})
    print(rb, arrowmm.DayTimeInterval(1, 2), arrowmm.MonthDayNano(1, 2, 3))
    region = arrowmm.Region.from_path(__file__)
    view: arrowmm.BufferView = region.view(0, 4)
    print(view.to_bytes())


def check_interop() -> None:
    batch = arrowmm.record_batch({"x": [1, 2, 3]})
    with arrowmm.RecordBatchReader.from_batches(batch.schema, [batch]) as reader:
        for b in reader:
            print(b.num_rows)
    schema_bytes, batch_bytes = arrowmm.serialize_schema(batch.schema), \
        arrowmm.serialize_batch(batch)
    msg: arrowmm.Message = arrowmm.read_message(batch_bytes)
    assert msg.type == "record batch"
    back = arrowmm.read_record_batch(batch_bytes, arrowmm.read_schema(schema_bytes))
    assert back == batch
    assert [m.type for m in arrowmm.MessageReader.open_stream(schema_bytes + batch_bytes)] == \
        ["schema", "record batch"]


def check_writing(folder: str) -> None:
    path = os.path.join(folder, "frame.arrow")
    data = {"id": [0, 1], "kind": ["a", "b"]}
    arrowmm.write_file(path, data)
    arrowmm.write_stream(path + "s", data, compression="lz4")
    with arrowmm.append_file(path, cast=True) as writer:
        writer.write({"id": [1], "kind": ["b"]})
    assert isinstance(writer, arrowmm.AppendWriter)
    classes = [arrowmm.FileWriter, arrowmm.StreamWriter, arrowmm.FileReader,
               arrowmm.StreamReader, arrowmm.FeatherV1Reader, arrowmm.IndexedStreamReader]
    indexed: arrowmm.IndexedStreamReader = arrowmm.index_stream(path + "s")
    print(indexed.num_record_batches, classes)
    report: arrowmm.RepairReport = arrowmm.repair(path, path + ".fixed")
    print(report.rows, report.complete)
    written: str = arrowmm.add_statistics(path, path + ".stats")
    print(written)


def check_tensors(folder: str) -> None:
    path = os.path.join(folder, "t.arrow")
    written: int = arrowmm.write_tensor(np.arange(12.0).reshape(3, 4), path)
    tensor: arrowmm.Tensor = arrowmm.read_tensor(path)
    print(written, tensor.to_numpy().shape, arrowmm.get_tensor_size(tensor))
    dense = np.eye(3)
    coo = arrowmm.SparseCOOTensor.from_dense_numpy(dense)
    arrowmm.write_sparse_tensor(coo, path + ".sparse")
    print(arrowmm.read_sparse_tensor(path + ".sparse"), arrowmm.SparseCSRMatrix,
          arrowmm.SparseCSCMatrix, arrowmm.SparseCSFTensor)


def check_datasets(root: str) -> None:
    ds: arrowmm.Dataset = arrowmm.dataset(root, partitioning="hive")
    hits = ds.to_table(columns=["year", "x"], filter=[("x", ">", 10), ("year", "==", 2024)])
    print(hits.to_pydict())
    print(ds.count_rows(filter=[[("x", "<", 2)], [("name", "is null")]]))
    expr: arrowmm.Expression = (arrowmm.field("x") > 10) & (arrowmm.field("year") == 2024)
    print(ds.to_table(filter=expr).num_rows)
    batch = arrowmm.record_batch({"x": [1, 2]})
    print(arrowmm.compute.filter(batch, np.array([True, False])))


def check_shared_memory() -> None:
    batches = [arrowmm.record_batch({"x": np.arange(k, k + 10.0)}) for k in range(4)]
    with arrowmm.shm.share(batches) as shared:
        reader = arrowmm.shm.open_shared(shared.name)
        print(reader.num_record_batches)
    schema = arrowmm.schema([("x", arrowmm.int64())])
    with Channel.create(None, schema, capacity=1 << 20, slots=8, on_slow="wait") as ch:
        ch.send({"x": [1, 2]}, timeout=30)


def check_errors_and_limits() -> None:
    try:
        arrowmm.open_file(b"not arrow")
    except arrowmm.ArrowInvalid as e:
        print(e)
    except (arrowmm.ArrowNotImplementedError, arrowmm.ArrowKeyError,
            arrowmm.ProducerDiedError, arrowmm.ArrowTypeError) as e:
        print(e)
    except arrowmm.ArrowError:
        raise
    try:
        arrowmm.array([1, 2]).take([5])
    except arrowmm.ArrowIndexError as e:  # (also an IndexError, as pyarrow's)
        print(e)
    as_text = arrowmm.array([1, 2]).cast("string")
    as_float: arrowmm.DataType = arrowmm.type_for_alias("double")
    print(as_text.cast(as_float, safe=False))
    texts: list[arrowmm.DataType] = [arrowmm.utf8(), arrowmm.large_utf8(),
                                     arrowmm.infer_type([1, None])]
    unified: arrowmm.Schema = arrowmm.unify_schemas(
        [arrowmm.schema([("a", arrowmm.int8())]), arrowmm.schema([("a", arrowmm.int16())])],
        promote_options="permissive")
    filled: arrowmm.Array = arrowmm.concat_arrays([arrowmm.nulls(2, "int8"),
                                                   arrowmm.repeat(1, 3).cast("int8")])
    joined: arrowmm.RecordBatch = arrowmm.concat_batches(
        [arrowmm.record_batch({"x": [1]}), arrowmm.record_batch({"x": [2]})])
    print(texts, unified.append(arrowmm.field("b", "string")).empty_table(), filled.tolist(),
          joined.num_rows)
    old: dict[str, int] = arrowmm.set_limits(max_fields=100)
    print(old, arrowmm.limits.current(), arrowmm.__version__)
