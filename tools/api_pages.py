"""Write docs/api/*.md: one autodoc entry per public name, grouped as ``arrowmm.__all__`` is.

Run it after adding a public name (``python tools/api_pages.py``); ``tests/project/test_docs.py``
fails while a public name or method is missing from the built reference.  The pages are
committed, so reviewers see the reference's shape change in a diff.
"""
from __future__ import annotations

import inspect
from pathlib import Path

import arrowmm
import arrowmm.shm
import arrowmm.spark

DOCS_API = Path(__file__).resolve().parents[1] / "docs" / "api"

#: page stem -> (title, why a reader opens it, the names it documents, their module)
PAGES = {
    "reading": ("Reading", "Opening files and streams and the readers they return.",
                ["open_file", "open_stream", "open", "FileReader", "StreamReader",
                 "IndexedStreamReader", "index_stream", "FeatherV1Reader", "repair",
                 "RepairReport"], "arrowmm"),
    "writing": ("Writing", "Writers, one-call writers and appending to a file.",
                ["new_file", "new_stream", "write_file", "write_stream", "append_file",
                 "FileWriter", "StreamWriter", "AppendWriter", "add_statistics"], "arrowmm"),
    "data": ("Arrays, batches and tables", "The values a reader hands out.",
             ["RecordBatch", "Table", "ChunkedArray", "Array", "NullArray", "BooleanArray",
              "PrimitiveArray", "FixedSizeBinaryArray", "BinaryArray", "BinaryViewArray",
              "ListArray", "ListViewArray", "MapArray", "FixedSizeListArray", "StructArray",
              "UnionArray", "DictionaryArray", "RunEndEncodedArray", "ExtensionArray",
              "UuidArray", "JsonArray", "Bool8Array", "FixedShapeTensorArray", "OpaqueArray",
              "VariableShapeTensorArray", "DayTimeInterval", "MonthDayNano",
              "BufferView", "Region"], "arrowmm"),
    "types": ("Types, fields and schemas", "Type factories, type classes, fields and schemas.",
              ["schema", "field", "Schema", "Field", "DataType", "null", "bool_", "int8",
               "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
               "float32", "float64", "string", "utf8", "binary", "large_string", "large_utf8",
               "large_binary",
               "string_view", "binary_view", "date32", "date64", "time32", "time64",
               "timestamp", "duration", "month_interval", "day_time_interval",
               "month_day_nano_interval", "decimal32", "decimal64", "decimal128", "decimal256",
               "fixed_size_binary", "list_", "large_list", "list_view", "large_list_view",
               "fixed_size_list", "struct", "map_", "sparse_union", "dense_union", "dictionary",
               "run_end_encoded", "NullType", "BoolType", "IntType", "FloatType",
               "DecimalType", "DateType", "TimeType", "TimestampType", "DurationType",
               "IntervalType", "BinaryType", "BinaryViewType", "FixedSizeBinaryType", "ListType",
               "ListViewType",
               "FixedSizeListType", "StructType", "MapType", "UnionType", "DictionaryType",
               "RunEndEncodedType", "type_for_alias", "unify_schemas", "ExtensionType",
               "register_extension_type",
               "unregister_extension_type", "uuid", "json_", "bool8", "fixed_shape_tensor",
               "opaque", "variable_shape_tensor", "UuidType", "JsonType", "Bool8Type",
               "FixedShapeTensorType", "OpaqueType", "VariableShapeTensorType"], "arrowmm"),
    "interchange": ("Interchange and messages",
                    "Building arrowmm data from other libraries, and framing messages yourself.",
                    ["array", "record_batch", "table", "chunked_array", "concat_tables",
                     "concat_arrays", "concat_batches", "nulls", "repeat", "infer_type",
                     "RecordBatchReader", "Message", "MessageReader",
                     "read_message", "read_schema", "read_record_batch", "serialize_schema",
                     "serialize_batch"], "arrowmm"),
    "tensors": ("Tensors", "Dense and sparse tensor messages.",
                ["Tensor", "read_tensor", "write_tensor", "get_tensor_size", "SparseCOOTensor",
                 "SparseCSRMatrix", "SparseCSCMatrix", "SparseCSFTensor", "read_sparse_tensor",
                 "write_sparse_tensor"], "arrowmm"),
    "datasets": ("Datasets and expressions", "Many files as one table, and the predicates that filter them.",
                 ["dataset", "Dataset", "Expression", "compute"], "arrowmm"),
    "errors": ("Errors and limits", "What the library raises, and the limits on untrusted input.",
               ["ArrowError", "ArrowInvalid", "ArrowNotImplementedError", "ArrowKeyError",
                "ArrowTypeError",
                "ProducerDiedError", "set_limits", "limits"], "arrowmm"),
    "shm": ("Shared memory (arrowmm.shm)", "Segments and the channel.",
            list(arrowmm.shm.__all__), "arrowmm.shm"),
    "spark": ("Spark (arrowmm.spark)", "Registering the data source and the connector's jar.",
              list(arrowmm.spark.__all__), "arrowmm.spark"),
}


#: Modules whose docstring does not build (none now: arrowmm.limits' table was narrower than
#: its longest name, a docutils error, until widened): their functions without it.
MODULES_WITHOUT_DOCSTRING: set = set()


def directive(module: str, name: str) -> str:
    """The autodoc entry (reStructuredText, inside the page's ``eval-rst`` block) for one
    public name."""
    obj = getattr(__import__(module, fromlist=[name]), name)
    target = f"{module}.{name}"
    if inspect.ismodule(obj) and not callable(obj):
        if target in MODULES_WITHOUT_DOCSTRING:
            return f".. py:module:: {target}\n\n" + "\n".join(
                directive(target, member) for member in obj.__all__
                if callable(getattr(obj, member)))
        elsewhere = sorted(member for member in getattr(obj, "__all__", ())
                           if any(getattr(obj, member) is getattr(arrowmm, name, None)
                                  for name in arrowmm.__all__))   # documented on their own
        exclude = f"   :exclude-members: {', '.join(elsewhere)}\n" if elsewhere else ""
        return f".. automodule:: {target}\n   :members:\n{exclude}"
    if inspect.isclass(obj):
        options = ["   :members:", "   :undoc-members:"]
        if not issubclass(obj, BaseException):  # (not the builtins' with_traceback, ...)
            options.append("   :inherited-members:")
        return f".. autoclass:: {target}\n" + "\n".join(options) + "\n"
    if callable(obj):
        return f".. autofunction:: {target}\n"
    return f".. autodata:: {target}\n"


def main() -> None:
    placed = [name for _, _, names, module in PAGES.values() if module == "arrowmm"
              for name in names]
    missing = [name for name in arrowmm.__all__
               if name not in placed and name not in ("__version__", "shm")]
    pages = dict(PAGES)
    if missing:  # documented at once; a topical page in PAGES is where they belong
        print(f"tools/api_pages.py: give these public names a page in PAGES: {missing}")
        pages["more"] = ("More public names", "Names not yet given a page of their own.",
                         missing, "arrowmm")
    DOCS_API.mkdir(exist_ok=True)
    for stem in set(p.stem for p in DOCS_API.glob("*.md")) - set(pages) - {"index"}:
        (DOCS_API / f"{stem}.md").unlink()
    for stem, (title, why, names, module) in pages.items():
        entries = "\n".join(directive(module, n) for n in names)
        if module != "arrowmm":  # the module itself first: its docstring introduces the page
            entries = f".. automodule:: {module}\n\n" + entries
        text = f"# {title}\n\n{why}\n\n```{{eval-rst}}\n{entries}```\n"
        (DOCS_API / f"{stem}.md").write_text(text)
    index = ("# API reference\n\nGenerated from the docstrings by `tools/api_pages.py` (every "
             "name of `arrowmm.__all__`, `arrowmm.shm.__all__` and `arrowmm.spark.__all__`).\n\n"
             "```{toctree}\n:maxdepth: 1\n\n" + "\n".join(pages) + "\n```\n")
    (DOCS_API / "index.md").write_text(index)


if __name__ == "__main__":
    main()
