"""arrowmm: the Arrow IPC file and stream formats, read zero-copy from memory maps.

The face of the package: every public name, grouped by the layer it comes from
(``../shared/CONTRACT.md`` lists the contract).  Layers, lowest first: ``errors``,
``limits``, ``types`` (ground); ``_core`` (Cython kernels); ``format`` (FlatBuffers
metadata); ``arrays`` (typed arrays, batches, tables); ``interop`` (building arrays, the C
data interface); ``ipc`` (readers and writers); ``shm`` (shared memory) and ``dataset`` (many
files as one table); ``spark``; ``cli``.
"""
from typing import TYPE_CHECKING

from . import _startup  # noqa: F401  (first: the command's Ctrl-C during the imports exits 130)

__version__ = "0.1.0"

from . import limits
from .errors import (ArrowError, ArrowIndexError, ArrowInvalid, ArrowKeyError,
                     ArrowNotImplementedError, ArrowTypeError, ProducerDiedError)
from .limits import set_limits
from .types import (  # noqa: F401  (the type factories: int64(), list_(...), ...)
    DataType, NullType, BoolType, IntType, FloatType, DecimalType,
    DateType, TimeType, TimestampType, DurationType, IntervalType, BinaryType, BinaryViewType,
    FixedSizeBinaryType, ListType, ListViewType, FixedSizeListType, StructType, MapType, UnionType,
    DictionaryType, RunEndEncodedType, Field, Schema, null, bool_,
    int8, int16, int32, int64, uint8, uint16,
    uint32, uint64, float16, float32, float64, string, utf8, large_utf8,
    binary, large_string, large_binary, string_view, binary_view, date32,
    date64, time32, time64, timestamp, duration, month_interval,
    day_time_interval, month_day_nano_interval, decimal32, decimal64, decimal128, decimal256,
    fixed_size_binary, list_, large_list, list_view, large_list_view, fixed_size_list,
    struct, map_, sparse_union, dense_union, dictionary, run_end_encoded, type_for_alias,
    unify_schemas,
    ExtensionType, register_extension_type, unregister_extension_type,
)
# (from factories: beside the function, ``arrowmm.types`` holds a module named ``schema``,
# which type checkers would take ``arrowmm.schema`` for)
from .types.factories import schema
from ._core._region import BufferView, Region
from .arrays import (Array, BinaryArray, BinaryViewArray, BooleanArray, DayTimeInterval,
                     DictionaryArray, FixedSizeBinaryArray, FixedSizeListArray, ListArray,
                     ListViewArray, MapArray, MonthDayNano, NullArray, PrimitiveArray,
                     RecordBatch, RunEndEncodedArray, StructArray, UnionArray,
                     ExtensionArray, UuidArray, JsonArray, Bool8Array, FixedShapeTensorArray,
                     OpaqueArray, UuidType, JsonType, Bool8Type, FixedShapeTensorType, OpaqueType,
                     uuid, json_, bool8, fixed_shape_tensor, opaque, VariableShapeTensorType,
                     VariableShapeTensorArray, variable_shape_tensor)
from .arrays import ChunkedArray, Table
from . import compute
from .compute import Expression, field  # (a Field with a type; a filter's column reference without)
from .interop import RecordBatchReader, array, record_batch
from .interop.tables import chunked_array, concat_tables, table
from .interop.constructors import concat_arrays, concat_batches, nulls, repeat
from .interop.infer import infer_type
from .ipc import (AppendWriter, FeatherV1Reader, FileReader, FileWriter, IndexedStreamReader, RepairReport, StreamReader,
                  StreamWriter, index_stream, new_file, new_stream, open, open_file,  # noqa: A004
                  open_stream, repair, append_file, add_statistics)
from .ipc.write.writer import write_file, write_stream
from .ipc.messages import (Message, MessageReader, read_message, read_record_batch,
                           read_schema, serialize_batch, serialize_schema)
from .ipc.tensor.sparse import (SparseCOOTensor, SparseCSCMatrix, SparseCSFTensor,
                                SparseCSRMatrix, read_sparse_tensor, write_sparse_tensor)
from .ipc.tensor.dense import Tensor, get_tensor_size, read_tensor, write_tensor
from . import shm
from .dataset import Dataset

if TYPE_CHECKING:  # a checker cannot call a module: it sees the function the package forwards to
    from .dataset.scan import dataset
else:  # the package, which is also callable: arrowmm.dataset(source, ...), as pyarrow.dataset
    from . import dataset

__all__ = [
    "__version__",
    # errors and limits
    "ArrowError", "ArrowInvalid", "ArrowNotImplementedError", "ArrowKeyError", "ArrowTypeError",
    "ArrowIndexError", "ProducerDiedError", "limits",
    "set_limits",
    # types
    "DataType", "NullType", "BoolType", "IntType", "FloatType", "DecimalType",
    "DateType", "TimeType", "TimestampType", "DurationType", "IntervalType", "BinaryType",
    "BinaryViewType", "FixedSizeBinaryType", "ListType", "ListViewType", "FixedSizeListType",
    "StructType", "MapType", "UnionType",
    "DictionaryType", "RunEndEncodedType", "Field", "Schema", "null", "bool_",
    "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "float16", "float32", "float64", "string", "utf8", "large_utf8",
    "binary", "large_string", "large_binary", "string_view", "binary_view", "date32",
    "date64", "time32", "time64", "timestamp", "duration", "month_interval",
    "day_time_interval", "month_day_nano_interval", "decimal32", "decimal64", "decimal128", "decimal256",
    "fixed_size_binary", "list_", "large_list", "list_view", "large_list_view", "fixed_size_list",
    "struct", "map_", "sparse_union", "dense_union", "dictionary", "run_end_encoded",
    "field", "schema", "type_for_alias", "unify_schemas",
    "ExtensionType", "register_extension_type", "unregister_extension_type",
    # memory
    "BufferView", "Region",
    # arrays
    "Array", "NullArray", "BooleanArray", "PrimitiveArray", "FixedSizeBinaryArray",
    "BinaryArray", "BinaryViewArray", "ListArray", "ListViewArray", "MapArray",
    "FixedSizeListArray", "StructArray", "UnionArray", "DictionaryArray", "RunEndEncodedArray",
    "RecordBatch", "DayTimeInterval", "MonthDayNano", "Table", "ChunkedArray", "Expression",
    "ExtensionArray", "UuidArray", "JsonArray", "Bool8Array", "FixedShapeTensorArray",
    "OpaqueArray", "UuidType", "JsonType", "Bool8Type", "FixedShapeTensorType", "OpaqueType",
    "uuid", "json_", "bool8", "fixed_shape_tensor", "opaque", "VariableShapeTensorType",
    "VariableShapeTensorArray", "variable_shape_tensor",
    # interop
    "array", "record_batch", "RecordBatchReader", "table", "chunked_array", "concat_tables",
    "concat_arrays", "concat_batches", "nulls", "repeat", "infer_type",
    # ipc
    "open_file", "open_stream", "open", "FileReader", "StreamReader", "FeatherV1Reader",
    "new_file", "new_stream", "write_file", "write_stream", "FileWriter", "StreamWriter",
    "append_file", "AppendWriter",
    "IndexedStreamReader", "index_stream", "repair", "RepairReport", "add_statistics",
    "Message", "MessageReader", "read_message", "read_schema", "read_record_batch",
    "serialize_schema", "serialize_batch",
    "Tensor", "read_tensor", "write_tensor", "get_tensor_size",
    "SparseCOOTensor", "SparseCSRMatrix", "SparseCSCMatrix", "SparseCSFTensor",
    "read_sparse_tensor", "write_sparse_tensor",
    # filters and row selection
    "compute",
    # shared memory
    "shm",
    # datasets
    "dataset", "Dataset",
]
