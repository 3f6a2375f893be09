"""``Dataset``: many IPC files (and their partition folders) read as one table.

A scan yields the files' batches in order (files in order, each file's batches in order),
reading up to a few files ahead on a small thread pool, bounded in memory (``readahead``).
With a ``filter`` (an
``arrowmm.compute`` Expression, or pyarrow.parquet's tuples), a file whose partition values
rule it out is never opened, a batch whose footer statistics rule it out is never read (its
header aside), and the rows left are filtered exactly: the filter's columns are decoded and
judged first (whole-column kernels), then a batch with survivors has its other columns
decoded together and selected in one pass each; a batch with none is never decoded further.
Batches that pass whole keep their lazy columns (a compressed one's output columns are
decoded in the worker, together, before it is handed over).  A filtered scan turns the
reader's read-ahead off (``get_batch(i, read_ahead=False)``): it guesses from the order
columns are asked for, and decompressed columns the scan never takes.

Damage is never skipped: a file the dataset lists (named as Arrow, or listed by a manifest)
that does not read raises ``ArrowInvalid`` naming it, unless ``exclude_invalid_files=True``
leaves it out when the dataset is made and reports it in ``Dataset.excluded_files``.
"""
from __future__ import annotations

import copy
import functools
from typing import Dict, Iterator, List, Optional, Sequence

import numpy as np

from .. import types as t
from ..arrays.array import Array
from ..arrays.batch import RecordBatch
from ..arrays.array import make_array
from ..arrays.provenance import copied_view
from ..arrays.table import Table
from ..compute.predicate import check_expression, selection_mask
from ..compute._kernels import pack_mask
from ..compute.selection import filter_array
from ..errors import ArrowError, ArrowInvalid, ArrowNotImplementedError
from ..interop._cdata import export_schema, export_stream
from ..interop.build import array as build_array
from ..ipc.core.object_store import open_for_ranges, open_for_stream
from ..ipc.read.opening import open as open_ipc
from ..ipc.read.ranged import RangedFileReader, RangeSource
from ..ipc.read.file_reader import FileReader, StreamReader
from ..ipc.read.sniff import KIND_HEAD, ipc_kind
from ..ipc.core.statistics import STATISTICS_KEY, decode_file_statistics, decode_statistics
from .discovery import discover_with_bases, unreadable_head
from .remote import discover_on, filesystem_for
from .filters import (check_term, dnf_expression, partition_verdict, row_filter,
                      statistics_allow, statistics_verdicts)
from .partitioning import hive_pairs, infer_hive, partition_value
from .readahead import BATCH_READAHEAD, FRAGMENT_READAHEAD, named_error, ordered_readahead

__all__ = ["Dataset", "dataset"]

_FORMATS = (None, "arrow", "ipc", "feather", "arrows")


def dataset(source, *, partitioning=None, format=None, schema=None,  # noqa: A002
            filesystem=None, filter=None, exclude_invalid_files: bool = False,
            storage_options: Optional[dict] = None, mmap: bool = True) -> "Dataset":
    """Many Arrow IPC files read as one table, as ``pyarrow.dataset.dataset`` reads them.

    Parameters
    ----------
    source : str, os.PathLike or list of them
        A file, a directory (walked recursively; a directory written by arrowmm's Spark
        writer gives exactly the files its latest manifest lists), a glob, or a list of these.
    partitioning : None or "hive"
        ``"hive"``: ``key=value`` folders become columns appended to the schema.
    format : None, "arrow", "ipc" or "feather"
        Arrow IPC (file or stream format, told apart by each file's first bytes).
    schema : Schema, optional
        The dataset's schema; by default the first file's (plus the partition columns).
    filesystem : an fsspec filesystem, optional
        Where ``source`` lives (also implied by a URL: ``"s3://bucket/dir"``): files are read by
        byte ranges (footers, batch headers, the columns touched), never mapped or downloaded.
    storage_options : dict, optional
        The options of the filesystem a URL makes (s3fs: ``key``, ``secret``,
        ``client_kwargs={"endpoint_url": ...}``), as polars and pandas take them.
    filter : Expression or list of tuples, optional
        Rows every scan keeps (ANDed with a method's own ``filter``), as ``Dataset.filter``.
    exclude_invalid_files : bool, default False
        pyarrow.dataset's option.  False: every file found is read, and one that does not read
        (empty, zero-filled or cut, a damaged footer) raises ``ArrowInvalid`` naming it, when
        the dataset is made (the first file, for the schema) or when a scan reaches it.  True:
        each file is opened now, one at a time (its footer and schema, or a stream's schema),
        and those that fail are left out and listed, with the reason, in
        ``Dataset.excluded_files``; damage past what opening reads still raises in a scan.
        Files not named as Arrow and not starting like Arrow (``_SUCCESS``, ``.crc``, a
        README) are never part of a dataset, either way.
    mmap : bool, default True
        Local files are mapped (zero-copy).  False: read with positioned reads, as
        ``open_file(path, mmap=False)`` does: for folders whose files other programs rewrite in
        place or truncate, where a mapped file cut under a scan kills the process (SIGBUS), and
        a file read by ``pread`` gives ``ArrowInvalid`` naming it.

    Examples
    --------
    >>> import arrowmm, os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> root = tmp.name
    >>> for part in ("a", "b"):
    ...     os.makedirs(os.path.join(root, f"k={part}"))
    ...     with arrowmm.new_file(os.path.join(root, f"k={part}", "0.arrow"),
    ...                           arrowmm.schema([("x", arrowmm.int64())])) as w:
    ...         w.write({"x": [1, 2, 3]})
    >>> ds = arrowmm.dataset(root, partitioning="hive")
    >>> ds.to_table(filter=[("k", "==", "b"), ("x", ">", 1)]).to_pydict()
    {'x': [2, 3], 'k': ['b', 'b']}
    >>> tmp.cleanup()
    """
    if filesystem is None:
        filesystem, source = filesystem_for(source, storage_options)
    elif storage_options:
        raise ArrowInvalid("storage_options= configures the filesystem a URL makes; with "
                           "filesystem=, configure that filesystem instead")
    if format not in _FORMATS:
        raise ArrowInvalid(f"dataset format {format!r}: arrowmm reads Arrow IPC "
                           f"(format None, 'arrow', 'ipc' or 'feather')")
    if partitioning not in (None, "hive"):
        raise ArrowNotImplementedError(f"partitioning={partitioning!r}: only None and 'hive' "
                                       f"are supported")
    if schema is not None and not isinstance(schema, t.Schema):
        raise ArrowInvalid(f"schema must be an arrowmm Schema, got {type(schema).__name__}")
    if filesystem is not None and (isinstance(filesystem, str) or not hasattr(filesystem, "open")):
        raise ArrowInvalid("filesystem= takes an fsspec filesystem object")
    found = discover_with_bases(source) if filesystem is None else \
        discover_on(filesystem, source)
    excluded = []
    if exclude_invalid_files:
        kept = []
        for path, base in found:
            why = invalid_reason(path, filesystem, mmap)
            if why is None:
                kept.append((path, base))
            else:
                excluded.append((path, why))
        found = kept
    out = Dataset([p for p, _ in found], [b for _, b in found], partitioning, schema,
                  filesystem, mmap)
    out.excluded_files = excluded
    return out if filter is None else out.filter(filter)


def open_fragment(path: str, filesystem=None, mmap: bool = True):
    """A reader of one dataset file: mapped (local; read by ``pread`` with ``mmap=False``), or
    read by byte ranges (``filesystem``, fsspec).  ``ArrowInvalid`` naming ``path`` when it is
    not Arrow IPC, saying why."""
    if filesystem is None:
        try:
            return open_ipc(path, mmap=mmap)
        except ArrowInvalid as exc:
            try:
                with open(path, "rb") as f:
                    why = unreadable_head(f.read(KIND_HEAD))
            except OSError:
                why = None
            if why is None:
                raise named_error(exc, path)
            raise ArrowInvalid(f"{path}: not readable as Arrow IPC: {why}") from None
    if isinstance(filesystem, str) or not hasattr(filesystem, "open"):
        raise ArrowInvalid("filesystem= takes an fsspec filesystem object")
    f = open_for_ranges(filesystem, path)  # (each read asks for its bytes only)
    try:
        src = RangeSource(f, path, owns=True)
        src.keep(0, min(src.size, KIND_HEAD))  # (the kind, then a file's magic: read once)
        head = src.pread(0, min(src.size, KIND_HEAD), "first bytes").tobytes()
        why = unreadable_head(head)
        if why is not None:
            raise ArrowInvalid(f"{path}: not readable as Arrow IPC: {why}")
        if ipc_kind(head) == "file":
            return RangedFileReader(src)
        f.close()
        # a stream is read as it comes, in order: with the filesystem's readahead (read by
        # ranges, each message's prefix, metadata and body was a request of its own)
        f = open_for_stream(filesystem, path)
        reader = StreamReader(f, description=path)
        reader._owned = f  # (closed with the reader)
        return reader
    except ArrowError as exc:
        f.close()
        raise named_error(exc, path)
    except BaseException:
        f.close()
        raise


def invalid_reason(path: str, filesystem=None, mmap: bool = True) -> Optional[str]:
    """Why file ``path`` does not open as Arrow IPC (its footer and schema, or a stream's
    schema), or None when it opens: ``exclude_invalid_files``'s test.  ``OSError``s (a file
    missing, not readable) are raised, not taken as invalid, as pyarrow.dataset's are."""
    try:
        reader = open_fragment(path, filesystem, mmap)
    except ArrowError as exc:
        return str(exc)
    try:
        reader.schema
    except ArrowError as exc:
        return str(named_error(exc, path))
    finally:
        reader.close()
    return None


def promotable(src: t.DataType, dst: t.DataType) -> bool:
    """Whether every ``src`` value is exactly a ``dst`` value (a wider integer, or a float
    wide enough): the promotions a dataset makes between files."""
    if isinstance(src, t.IntType) and isinstance(dst, t.IntType):
        if src.signed == dst.signed:
            return dst.bit_width >= src.bit_width
        return dst.signed and dst.bit_width > src.bit_width
    if isinstance(src, t.IntType) and isinstance(dst, t.FloatType):
        return src.bit_width <= {16: 8, 32: 16, 64: 32}[dst.bit_width]  # (within the mantissa)
    if isinstance(src, t.FloatType) and isinstance(dst, t.FloatType):
        return dst.bit_width >= src.bit_width
    return False


def promote(array: Array, dtype: t.DataType) -> Array:
    """``array`` (numbers) as ``dtype``: a copy, nulls kept."""
    values = np.asarray(array.values()).astype(dtype.numpy_dtype)
    mask = ~array.is_valid() if array.null_count else None
    return build_array(values, dtype, mask=mask)



def _first_batch_metadata(reader) -> Optional[dict]:
    """The custom metadata of ``reader``'s record batch 0 (its header alone is read), None when
    it has no batch or that header does not read (the scan reports it where it belongs)."""
    if not reader.num_record_batches:
        return None
    try:
        return reader.batch_metadata(0)
    except ArrowInvalid:
        return None


class _Columns:
    """A loader of a dataset batch's columns: ``("col", i)`` column ``i`` of a file's batch
    (decoded when touched), ``("cast", i)`` the same promoted to the dataset's type,
    ``("const", value)`` a partition value repeated, ``("null",)`` a column the file lacks."""

    __slots__ = ("batch", "plan", "types")

    def __init__(self, batch: RecordBatch, plan, types):
        self.batch = batch
        self.plan = plan
        self.types = types

    @property
    def num_rows(self) -> int:
        return self.batch.num_rows

    def column(self, k: int, decoded=None) -> Array:
        how = self.plan[k]
        if how[0] == "col":
            return self.batch.column(how[1])
        if how[0] == "cast":
            return promote(self.batch.column(how[1]), self.types[k])
        n = self.batch.num_rows
        return constant_array(how[1] if how[0] == "const" else None, self.types[k], n)


def constant_array(value, dtype: t.DataType, n: int) -> Array:
    """``value`` repeated ``n`` times (None: nulls) as an array of ``dtype``."""
    if value is not None and isinstance(dtype, t.IntType):
        return build_array(np.full(n, value, dtype=dtype.numpy_dtype), dtype)
    return build_array([value] * n, dtype)


def filter_value_column(value, dtype: t.DataType, n: int) -> Array:
    """A partition value (or None: a column a file lacks) as ``n`` rows for a filter to judge:
    a one-value dictionary (judged once, then spread by index), or a null array."""
    if value is None:
        return make_array(t.null(), n, [], null_count=n)
    indices = copied_view(np.zeros(n, dtype=np.int32), "partition value")
    return make_array(t.dictionary(t.int32(), dtype), n, [None, indices], null_count=0,
                      dictionary=build_array([value], dtype))


class Dataset:
    """Arrow IPC files read as one table: ``arrowmm.dataset(...)`` makes one.

    ``files``: the files read, in order; ``excluded_files``: ``(path, reason)`` of each file
    ``exclude_invalid_files=True`` left out (empty otherwise)."""

    def __init__(self, files: Sequence[str], bases: Sequence[Optional[str]], partitioning,
                 schema: Optional[t.Schema] = None, filesystem=None, mmap: bool = True):
        self.files = list(files)
        self.mmap = mmap  # (local files mapped, or read by pread)
        self.excluded_files: List[tuple] = []
        self.filesystem = filesystem  # an fsspec filesystem (files read by ranges), or None
        self.partitioning = partitioning
        if partitioning == "hive":
            fields, texts = infer_hive([hive_pairs(f, b) for f, b in zip(files, bases)], files)
        else:
            fields, texts = [], [{} for _ in files]
        self._filter = None  # the DNF every scan ANDs with its own (Dataset.filter)
        self._statistics = {}  # file index -> (its footer's identity, per-batch statistics or None)
        if schema is None:
            if self.files:
                first = self._open(0)
                try:
                    file_schema = first.schema
                finally:
                    first.close()
            else:
                file_schema = t.Schema([])
            self._schema_origin = self.files[0] if self.files else "the dataset's schema"
            clash = [f.name for f in fields if f.name in file_schema.names]
            if clash:
                raise ArrowInvalid(f"partition key(s) {clash} are also columns of "
                                   f"{self.files[0]}")
            schema = t.Schema(list(file_schema.fields) + fields, file_schema.metadata,
                              endianness=file_schema.endianness)
            self._partition_names = [f.name for f in fields]
            typed = fields
        else:
            self._schema_origin = "the schema given"
            keys = {f.name for f in fields}
            self._partition_names = [f.name for f in schema if f.name in keys]
            typed = [f for f in schema if f.name in keys]
            for f in typed:
                if not isinstance(f.storage_type, (t.IntType, t.BinaryType, t.BinaryViewType)):
                    raise ArrowNotImplementedError(f"partition column {f.name!r} as {f.type}: "
                                                   f"integers and strings only")
        # (each value is its folder's text until its type is final: "007" as string stays "007")
        final = {f.name: f for f in typed}
        self._partition_values: List[Dict[str, object]] = [
            {key: partition_value(text, final[key], path) if text is not None and key in final
             else text for key, text in values.items()}
            for path, values in zip(self.files, texts)]
        self.schema = schema

    def __repr__(self):
        excluded = f" ({len(self.excluded_files)} excluded)" if self.excluded_files else ""
        return f"<arrowmm.Dataset {len(self.files)} files{excluded}>\n{self.schema}"

    def _open(self, k: int):
        """A reader of file ``k``: mapped (local), or read by byte ranges (a filesystem)."""
        return open_fragment(self.files[k], self.filesystem, self.mmap)

    # -- planning ------------------------------------------------------------------------------
    def _field_index(self, name: str, what: str) -> int:
        """The index of column ``name`` in the dataset's schema: ``ArrowInvalid`` when there is
        none, or several (duplicate names are legal in Arrow, but a dataset matches a file's
        columns by name, so such a name is ambiguous: pyarrow.dataset refuses them too)."""
        hits = [i for i, f in enumerate(self.schema) if f.name == name]
        if not hits:
            raise ArrowInvalid(f"{what}: no column named {name!r} in the dataset; it has "
                               f"{self.schema.names}")
        if len(hits) > 1:
            raise ArrowInvalid(f"{what}: column name {name!r} is ambiguous: "
                               f"{self._schema_origin} has {len(hits)} columns named {name!r} "
                               f"(at {hits}), and a dataset finds columns by name (open the "
                               f"file with arrowmm.open_file to read them by index)")
        return hits[0]

    def _check_names(self, names, what: str) -> None:
        for n in names:
            self._field_index(n, what)

    def _output(self, columns) -> List[int]:
        if columns is None:
            for name in self.schema.names:
                self._field_index(name, "columns=None (every column)")
            return list(range(len(self.schema)))
        if isinstance(columns, str) or not hasattr(columns, "__iter__"):
            raise ArrowInvalid(f"columns must be a list of column names, got {columns!r}")
        columns = list(columns)
        self._check_names([c for c in columns if isinstance(c, str)], "columns")
        out = []
        for c in columns:
            if not isinstance(c, str):
                raise ArrowInvalid(f"columns: {c!r} is not a column name")
            out.append(self._field_index(c, "columns"))
        return out

    def _file_plan(self, k: int, reader, names: Sequence[str], casts: dict
                   ) -> Dict[str, Optional[int]]:
        """Each data column's index in file ``k`` (None: the file lacks it, filled with nulls),
        checking its type against the dataset's (``casts`` gets the columns to promote)."""
        fschema = reader.schema
        plan = {}
        for name in names:
            field = self.schema.field(name)
            hits = [i for i, f in enumerate(fschema) if f.name == name]
            if not hits:
                if not field.nullable:
                    raise ArrowInvalid(f"{self.files[k]}: has no column {name!r}, which the "
                                       f"dataset's schema says is not nullable")
                plan[name] = None
                continue
            if len(hits) > 1:
                raise ArrowInvalid(f"{self.files[k]}: has {len(hits)} columns named {name!r} (at "
                                   f"{hits}): ambiguous, as a dataset finds columns by name")
            got = fschema.fields[hits[0]].storage_type
            if got != field.storage_type:
                if not promotable(got, field.storage_type):
                    raise ArrowInvalid(f"{self.files[k]}: column {name!r} is {got}, the "
                                       f"dataset's schema says {field.type}, and {got} values "
                                       f"do not all fit in {field.type}")
                casts[name] = got
            plan[name] = hits[0]
        return plan

    # -- scanning ------------------------------------------------------------------------------
    def _dnf(self, filter):  # noqa: A002
        """``filter`` (an Expression or tuples) and this dataset's own as one RowFilter (or
        None), its column names and values checked against the schema before any read."""
        rf = row_filter(filter)
        if rf is not None:
            self._check_names(rf.columns(), "filter")
            check_expression(rf.expression, lambda name: self.schema.field(name).storage_type)
            for group in rf.dnf or ():
                for term in group:
                    check_term(term, self.schema.field(term.column).storage_type)
        if self._filter is None:
            return rf
        if rf is None:
            return self._filter
        return self._filter & rf

    def filter(self, filter) -> "Dataset":  # noqa: A002
        """A dataset of the rows matching ``filter`` (and this one's), as pyarrow's
        ``Dataset.filter``: nothing is read now."""
        out = copy.copy(self)
        out._filter = self._dnf(filter)
        return out

    def to_batches(self, columns=None, filter=None, *, use_threads: bool = True,  # noqa: A002
                   batch_readahead: int = BATCH_READAHEAD,
                   fragment_readahead: int = FRAGMENT_READAHEAD) -> Iterator[RecordBatch]:
        """The dataset's batches, lazily and in order (files in order, batches in order):
        ``columns`` (names, in that order; default all), rows matching ``filter``
        (an ``arrowmm.compute`` Expression, ``arrowmm.field("x") > 3``, or pyarrow.parquet's
        list-of-tuples form; see ``arrowmm.dataset.filters``).

        With ``use_threads`` (pyarrow.dataset's names and defaults), up to
        ``fragment_readahead`` files are read ahead on worker threads, each up to
        ``batch_readahead`` batches ahead of the caller; the order is the same.  An error of a
        file is raised when the scan reaches it, naming the file.  Closing the iterator early
        (or leaving a ``for`` loop) stops the workers."""
        out_idx = self._output(columns)
        return self._scan(out_idx, self._dnf(filter),
                          fragment_readahead if use_threads else 0, batch_readahead)

    def _scan(self, out_idx: List[int], rf, fragment_readahead: int = FRAGMENT_READAHEAD,
              batch_readahead: int = BATCH_READAHEAD) -> Iterator[RecordBatch]:
        schema = t.Schema([self.schema.fields[k] for k in out_idx], self.schema.metadata,
                          endianness=self.schema.endianness)
        out_names = [f.name for f in schema]
        parts = set(self._partition_names)
        data_names = [n for n in out_names if n not in parts]
        for name in ([] if rf is None else rf.columns()):
            if name not in parts and name not in data_names:
                data_names.append(name)
        dnf = None if rf is None else rf.dnf
        todo = []
        for k, path in enumerate(self.files):
            values = self._partition_values[k]
            groups = None if dnf is None else [g for g in dnf if partition_verdict(g, values)]
            if groups is not None and not groups:
                continue  # the partition values rule the file out: it is never opened
            for planned, part in self._parts(k, rf):
                todo.append((path, functools.partial(self._scan_file, k, schema, out_names,
                                                     data_names, rf, groups, values, part,
                                                     planned)))
        # (a file read by byte ranges fetches a column's bytes when the column is decoded:
        # the workers do that ahead; a mapped column decodes in place, when it is touched)
        prepare = _decode_all if self.filesystem is not None else None
        if prepare is None and len(todo) < 2:
            # (one mapped file: a worker would only do, under the GIL, what the caller does,
            # and each hand-off can wait out the interpreter's switch interval: 3x slower)
            fragment_readahead = 0
        return ordered_readahead(todo, fragment_readahead=fragment_readahead,
                                 batch_readahead=batch_readahead, prepare=prepare)

    def _parts(self, k: int, rf) -> list:
        """``(identity, batches)`` of each part of file ``k`` scanned apart (``(None, None)``:
        the whole file at once).  A filtered scan of a mapped file cuts it in up to
        FRAGMENT_READAHEAD parts, so that the threads judge and select (in kernels that
        release the GIL) different batches of one file at once; a file read by ranges, or
        without a filter, is one.  Each part opens the file when its turn comes (a reader
        kept from here would hold every file of the dataset open at once) and refuses
        another file put under the path since it was cut (``identity``): the parts of a file
        replaced midway mixed the two files' rows."""
        if rf is None or self.filesystem is not None:
            return [(None, None)]
        try:
            reader = self._open(k)
        except ArrowError:
            return [(None, None)]  # (the scan raises it, naming the file, when it gets there)
        try:
            if not isinstance(reader, FileReader):
                return [(None, None)]
            n = reader.num_record_batches
            identity = reader.file_identity()
        finally:
            reader.close()
        step = max(1, -(-n // FRAGMENT_READAHEAD))
        return [(identity, range(a, min(a + step, n))) for a in range(0, n, step)] or \
            [(identity, None)]

    def _scan_file(self, k, schema, out_names, data_names, rf, groups, values, part=None,
                   planned=None):
        reader = self._open(k)
        if planned is not None and reader.file_identity() != planned:
            raise ArrowInvalid(f"{self.files[k]}: replaced while the scan read it (another file "
                               f"now has its name, and its batches were cut from the old one); "
                               f"scan again to read the new one")
        casts = {}
        plan = self._file_plan(k, reader, data_names, casts)
        types = [f.storage_type for f in schema]
        layout = [(("cast" if n in casts else "col"), plan[n]) if n in plan and plan[n] is not None
                  else ("const", values.get(n)) if n in values else ("null",) for n in out_names]
        # (statistics and row tests judge the file's own values, before any promotion, but a
        # column promoted to a float type is judged as that type: isin casts its set to the
        # column's type, and float32(16777217) is 16777216, not a float64 row's 16777217)
        as_float = {n: self.schema.field(n).storage_type for n in casts
                    if isinstance(self.schema.field(n).storage_type, t.FloatType)}
        dtypes = {n: as_float.get(n, casts.get(n, self.schema.field(n).storage_type))
                  for n in data_names}
        if isinstance(reader, FileReader):
            stats = self._file_statistics(k, reader) if groups else None
            batches = ((i, None) for i in (range(reader.num_record_batches) if part is None
                                           else part))
        else:
            stats = None
            batches = enumerate(reader)
        file_live = None if stats is None else self._file_groups(groups, stats, plan, dtypes)
        out_idx = list(dict.fromkeys(how[1] for how in layout if how[0] in ("col", "cast")))
        filter_idx = [] if rf is None else \
            list(dict.fromkeys(plan[c] for c in rf.columns() if plan.get(c) is not None))
        for i, batch in batches:
            live = groups
            if file_live is not None:
                live = file_live[i]
                if not live:
                    continue  # the statistics rule the batch out: its body is never read
            elif groups:
                doc_i = stats[i] if stats is not None else None
                if batch is not None and doc_i is None:
                    doc_i = decode_statistics(batch.metadata, batch.schema)
                rows = batch.num_rows if batch is not None else \
                    (doc_i.get("rows") if isinstance(doc_i, dict) else None)
                live = self._statistics_groups(groups, doc_i, rows, plan, dtypes)
                if not live:
                    continue  # the statistics rule the batch out: its body is never read
            if batch is None:
                # (filtered: the scan says which columns decode and when, so the reader's
                # read-ahead, which guesses from the order columns are asked for, is off: it
                # decoded the columns after the filter's, often ones the scan never takes)
                batch = reader.get_batch(i) if rf is None else \
                    reader.get_batch(i, read_ahead=False)
            if batch.num_rows == 0:
                continue
            if rf is None:
                yield RecordBatch(schema, batch.num_rows, loader=_Columns(batch, layout, types))
                continue
            # the filter's columns first (only those decode, together), judged over whole
            # columns; then the output columns of a batch with survivors, together
            if batch.compression is not None and filter_idx:
                batch.decode_columns(filter_idx)
            expr = rf.expression if live is None else dnf_expression(live)
            mask = pack_mask(np.ascontiguousarray(selection_mask(
                expr, self._filter_columns(batch, plan, values, as_float), batch.num_rows)))
            n = mask.count  # (packed and counted once, for every output column)
            if n and batch.compression is not None:
                batch.decode_columns(out_idx)  # (in this worker, while the caller goes on)
            if n == batch.num_rows:
                yield RecordBatch(schema, batch.num_rows, loader=_Columns(batch, layout, types))
                continue
            if n == 0:
                continue  # no survivor: the batch's other columns are never decoded
            cols = [filter_array(batch.storage_column(how[1]), mask, n) if how[0] == "col" else
                    promote(filter_array(batch.storage_column(how[1]), mask, n), types[j])
                    if how[0] == "cast"
                    else constant_array(how[1] if how[0] == "const" else None, types[j], n)
                    for j, how in enumerate(layout)]
            yield RecordBatch(schema, n, cols)

    def _file_statistics(self, k: int, reader) -> Optional[list]:
        """File ``k``'s per-batch statistics from its footer, bound to the file
        (``decode_file_statistics``) and each batch's row count checked against its header: a
        document that disagrees with the file is not trusted at all.  Kept for the next scan
        while the footer's blocks and document stay the same (a file replaced or appended to
        between two scans of one dataset is judged again: it was pruned by the old file's
        statistics, or indexed past their end)."""
        footer = reader.footer
        text = (footer.metadata or {}).get(STATISTICS_KEY)
        first = _first_batch_metadata(reader) if text is not None else None
        key = (footer.record_batches.tobytes(), text, repr(first))
        kept = self._statistics.get(k)
        if kept is not None and kept[0] == key:
            return kept[1]
        doc = None if text is None else decode_file_statistics(footer.metadata, lambda: first,
                                                                footer.record_batches,
                                                                reader.schema)
        stats = doc.get("batches") if doc else None
        if not isinstance(stats, list) or len(stats) != reader.num_record_batches or \
                [s.get("rows") if isinstance(s, dict) else None for s in stats] != \
                reader.batch_num_rows():
            stats = None
        self._statistics[k] = (key, stats)
        return stats

    @staticmethod
    def _file_groups(groups, stats: list, plan, dtypes) -> list:
        """``_statistics_groups`` for every batch of a file (its footer's ``stats``), each
        term judged across all the batches at once (``statistics_verdicts``)."""
        cols = [s.get("columns") if isinstance(s, dict) else None for s in stats]
        rows = [s.get("rows") if isinstance(s, dict) else None for s in stats]
        known = [isinstance(c, dict) for c in cols]
        live = [[] for _ in stats]
        for g in groups:
            ok = [True] * len(stats)
            for term in g:
                if plan.get(term.column) is None:
                    continue  # a partition column (judged already) or one the file lacks
                docs = [c.get(term.column) if h else None for c, h in zip(cols, known)]
                verdicts = statistics_verdicts(term, dtypes[term.column], docs, rows)
                ok = [a and b for a, b in zip(ok, verdicts)]
            for i, (h, o) in enumerate(zip(known, ok)):
                if o or not h:
                    live[i].append(g)
        return live

    @staticmethod
    def _statistics_groups(groups, doc, rows, plan, dtypes):
        columns = doc.get("columns") if isinstance(doc, dict) else None
        if not isinstance(columns, dict):
            return groups
        live = []
        for g in groups:
            ok = True
            for term in g:
                if plan.get(term.column) is None:
                    continue  # a partition column (judged already) or one the file lacks
                if not statistics_allow(term, dtypes[term.column], columns.get(term.column), rows):
                    ok = False
                    break
            if ok:
                live.append(g)
        return live

    def _filter_columns(self, batch, plan, values, as_float):
        """Column ``name`` of a file's ``batch`` for a filter: the file's own values (before
        any promotion, except to the float type ``as_float`` names), a partition value, or
        nulls where the file lacks the column."""
        def column(name: str) -> Array:
            if name in values:
                return filter_value_column(values[name], self.schema.field(name).storage_type,
                                           batch.num_rows)
            if plan.get(name) is None:
                return filter_value_column(None, None, batch.num_rows)
            if name in as_float:
                return promote(batch.storage_column(plan[name]), as_float[name])
            return batch.storage_column(plan[name])
        return column

    # -- answers -------------------------------------------------------------------------------
    def to_table(self, columns=None, filter=None, *, use_threads: bool = True,  # noqa: A002
                 batch_readahead: int = BATCH_READAHEAD,
                 fragment_readahead: int = FRAGMENT_READAHEAD) -> Table:
        """The rows matching ``filter``, columns ``columns``, as an ``arrowmm.Table``
        (threads and read-ahead as for ``to_batches``)."""
        out_idx = self._output(columns)
        schema = t.Schema([self.schema.fields[k] for k in out_idx], self.schema.metadata,
                          endianness=self.schema.endianness)
        return Table(schema, list(self.to_batches(
            columns, filter, use_threads=use_threads, batch_readahead=batch_readahead,
            fragment_readahead=fragment_readahead)))

    def to_pandas(self, columns=None, filter=None, *, use_threads: bool = True,  # noqa: A002
                  batch_readahead: int = BATCH_READAHEAD,
                  fragment_readahead: int = FRAGMENT_READAHEAD, **options):
        """The rows matching ``filter``, columns ``columns``, as a ``pandas.DataFrame``: the
        frame ``to_table(columns, filter).to_pandas(**options)`` gives (only those columns
        are read), with ``Table.to_pandas``'s options (``types_mapper``, which receives
        arrowmm types, ``categories``, ``ignore_metadata``, ...).  Needs pandas."""
        return self.to_table(columns, filter, use_threads=use_threads,
                             batch_readahead=batch_readahead,
                             fragment_readahead=fragment_readahead).to_pandas(**options)

    def head(self, num_rows: int, columns=None, filter=None) -> Table:  # noqa: A002
        """The first ``num_rows`` rows (files and batches past them are not read, beyond the
        scan's bounded read-ahead, which stops when they are there)."""
        n = int(num_rows)
        if n < 0:
            raise ArrowInvalid(f"head(num_rows): must be >= 0, got {n}")
        out_idx = self._output(columns)
        schema = t.Schema([self.schema.fields[k] for k in out_idx], self.schema.metadata,
                          endianness=self.schema.endianness)
        got, have = [], 0
        if n:
            batches = self.to_batches(columns, filter)
            try:
                for b in batches:
                    got.append(b if have + b.num_rows <= n else b.slice(0, n - have))
                    have += got[-1].num_rows
                    if have >= n:
                        break
            finally:
                batches.close()  # (stops the read-ahead now, not when collected)
        return Table(schema, got)

    def count_rows(self, filter=None, *, use_threads: bool = True) -> int:  # noqa: A002
        """Rows matching ``filter``; all rows from metadata alone (each file's footer and
        batch headers, or a stream's headers: no body is read), files on the thread pool."""
        if filter is None and self._filter is None:
            parts = [(path, functools.partial(self._count_file, k))
                     for k, path in enumerate(self.files)]
            threads = use_threads and (len(parts) > 1 or self.filesystem is not None)
            return sum(ordered_readahead(parts, fragment_readahead=FRAGMENT_READAHEAD
                                         if threads else 0))
        return sum(b.num_rows for b in self.to_batches([], filter, use_threads=use_threads))

    def _count_file(self, k: int):
        reader = self._open(k)
        try:
            yield reader.count_rows()
        finally:
            reader.close()

    def __arrow_c_schema__(self):
        return export_schema(self.schema)

    def __arrow_c_stream__(self, requested_schema=None):
        """Every batch as an Arrow C stream (pyarrow.table, polars, duckdb), zero-copy."""
        return export_stream(self.schema, self.to_batches(), requested_schema)


def _decode_all(batch: RecordBatch) -> None:
    """Decode every column of ``batch`` now (a read-ahead worker's: fetches their bytes)."""
    for k in range(batch.num_columns):
        batch.column(k)
