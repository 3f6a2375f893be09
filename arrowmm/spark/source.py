"""The ``arrowmm`` Spark data source: batch and streaming reads, atomic batch and streaming writes.

Everything here runs in Spark's Python workers, never in the user's process:
``schema()``, ``reader()``, ``pushFilters()`` and ``partitions()`` in
driver-side workers, ``read()`` and ``write()`` in executors, ``commit()``
and ``abort()`` in another driver-side worker.  All state kept on these
objects is pickled between them, so files are opened only inside methods.
"""
from __future__ import annotations

import json
import os
import sys
import uuid
from typing import Iterator, List, Optional

from pyspark.sql.datasource import (DataSource, DataSourceArrowWriter, DataSourceReader,
                                    DataSourceStreamArrowWriter, DataSourceStreamReader,
                                    InputPartition, WriterCommitMessage)
try:  # pyspark >= 4.2: read limits (maxFilesPerTrigger) and Trigger.AvailableNow
    from pyspark.sql.streaming.datasource import (ReadAllAvailable, ReadMaxFiles,
                                                  SupportsTriggerAvailableNow)
except ImportError:  # pyspark 4.0, 4.1: every micro-batch reads all that is available
    ReadAllAvailable = ReadMaxFiles = None

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        """Stands in for pyspark's mixin, which these versions do not have."""

from ..errors import ArrowInvalid, ArrowNotImplementedError
from ..ipc.core.compression import CODEC_NAMES, CODECS
from .commit import abort_job, commit_files, ensure_log
from .directory import Directory
from .files import (ARRIVAL, DataFile, arrival_order, describe_file, find_data_files,
                    load_path_options, seen_by)
from .planning import plan_pieces, read_piece, to_spark_batch
from .pruning import ALL, NONE, verdict
from .storage import MMAP_DEFAULT, Storage, merge_options, s3_options, storage_for
from .types import (SparkTypeError, as_nullable, names_equal_ignoring_case, spark_schema,
                    type_difference, unwritable_columns, with_collations)

__all__ = ["ArrowmmDataSource", "ArrowmmPythonDataSource", "ArrowmmPartition"]

_DEFAULT_PARTITION_BYTES = 128 << 20  # Spark's spark.sql.files.maxPartitionBytes default
_DEFAULT_OPEN_COST = 4 << 20  # Spark's spark.sql.files.openCostInBytes default
# Larger batches go to Spark as zero-copy slices: the JVM starts on a slice while the worker
# sends the next (1M-row batches: 6.1 s; 128K-row slices: 4.2 s, benchmarks/bench_spark.py data)
_DEFAULT_BATCH_ROWS = 131072


def _flag(options, name: str, default: bool) -> bool:
    value = options.get(name.lower())
    if value is None:
        return default
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ArrowInvalid(f"option {name} must be true or false, got {value!r}")


def _storage_options(options, hadoop_s3a: Optional[dict]) -> dict:
    """s3fs's ``storage_options`` for this read or write: the session's S3A settings
    (``hadoop_s3a``, recorded by ``register``), then the option ``storage_options`` (a JSON
    object) over them."""
    text = options.get("storage_options") or options.get("storageoptions")
    extra = {}
    if text:
        try:
            extra = json.loads(text)
        except ValueError as exc:
            raise ArrowInvalid(f"option storage_options is not a JSON object: {exc}") from None
        if not isinstance(extra, dict):
            raise ArrowInvalid(f"option storage_options must be a JSON object (of s3fs's or "
                               f"fsspec's options), got {type(extra).__name__}")
    return merge_options(s3_options(hadoop_s3a), extra)


def _local_only(paths: List[str], what: str) -> None:
    """Refuse ``what`` (a streaming read or write) on an object store, at planning."""
    for p in paths:
        if storage_for(p).in_place:
            raise ArrowNotImplementedError(
                f"{p}: {what} of the Python data source serve local directories only; "
                f"batch reads and writes serve object stores")


def _size(options, name: str, default: int) -> int:
    value = options.get(name.lower())
    if value is None:
        return default
    try:
        out = int(value)
    except ValueError:
        raise ArrowInvalid(f"option {name} must be a number of bytes, got {value!r}") from None
    if out <= 0:
        raise ArrowInvalid(f"option {name} must be positive, got {out}")
    return out


class ArrowmmPartition(InputPartition):
    """Pieces of files one task reads: ``(path, format, batch indices, stream entries)``."""

    def __init__(self, pieces):
        super().__init__(pieces)
        self.pieces = pieces


class ArrowmmDataSource(DataSource):
    """``spark.read.format("arrowmm")`` / ``df.write.format("arrowmm")``: Arrow IPC files.

    Read options: ``cast`` (convert columns Spark cannot hold as is, default
    false), ``maxPartitionBytes`` (bytes of batches per task, default 128 MiB),
    ``openCostInBytes`` (what a file counts for when packing small files,
    default 4 MiB), ``maxRecordsPerBatch`` (larger batches reach Spark as zero-copy
    slices of this many rows, default 131072), ``pushdown`` (skip batches by statistics, default false:
    see ``PUSHDOWN_CAVEAT``), ``batchLog`` (a file each task appends the
    batches it read to), ``mmap`` (map local files rather than read each batch by ``pread``,
    default false: a mapped file truncated under a task kills its worker with SIGBUS, a read
    by ``pread`` fails naming the file).
    Write options: ``compression`` (none, lz4, zstd), ``statistics`` (per-batch
    min/max/null counts in the footer, default true).
    Both: ``storage_options`` (a JSON object of s3fs's options, over those the session's
    ``fs.s3a.*`` settings give) for ``s3a://`` paths.
    """

    #: The session's ``fs.defaultFS`` as ``arrowmm.spark.register`` read it (None: not
    #: recorded; see ``paths.default_fs``).  The workers that plan reads and writes cannot ask
    #: the session, so ``register`` records it on the class it registers.
    default_fs: Optional[str] = None
    #: The session's Hadoop S3A settings (``fs.s3a.endpoint``, keys ...) as ``register`` read
    #: them, which configure s3fs for ``s3a://`` paths (``storage.s3_options``).
    hadoop_s3a: Optional[dict] = None

    @classmethod
    def name(cls) -> str:
        return "arrowmm"

    def paths(self, write: bool = False) -> List[str]:
        """The load or save paths, resolved (``files.load_path_options``): every path of this
        source is resolved here, in the driver, before any task runs or any byte is written."""
        how = (f"use df.write.format('{self.name()}').save(path)" if write else
               f"use spark.read.format('{self.name()}').load(path)")
        return load_path_options(self.options, self.default_fs, how)

    def storage_options(self) -> dict:
        """s3fs's options for this source's object-store paths (``_storage_options``)."""
        return _storage_options(self.options, self.hadoop_s3a)

    def schema(self):
        paths = self.paths()
        store = self.storage_options()
        files = find_data_files(paths, store)
        if not files:
            raise ArrowInvalid(f"no Arrow files under {paths}")
        first = describe_file(files[0], False, storage_for(files[0], store))
        return as_nullable(spark_schema(first.schema, _flag(self.options, "cast", False)))

    def reader(self, schema):
        if _flag(self.options, "pushdown", False) and _pushdown_enabled():
            return ArrowmmPushdownReader(self.options, schema, self.paths(), self.storage_options())
        return ArrowmmReader(self.options, schema, self.paths(), self.storage_options())

    def writer(self, schema, overwrite: bool):
        return ArrowmmWriter(self.options, schema, overwrite, self.paths(write=True),
                             self.storage_options())

    def streamReader(self, schema):
        return ArrowmmStreamReader(self.options, schema, self.paths())

    def streamWriter(self, schema, overwrite: bool):
        paths = self.paths(write=True)
        _local_only(paths, "streaming writes")
        return ArrowmmStreamWriter(self.options, schema, overwrite, paths)


class ArrowmmPythonDataSource(ArrowmmDataSource):
    """The same data source under ``arrowmm_python``: the name that reaches it in a session
    whose ``arrowmm`` is the JVM connector (Spark resolves a name to a JVM source first)."""

    @classmethod
    def name(cls) -> str:
        return "arrowmm_python"


PUSHDOWN_CAVEAT = """\
Spark 4.3 keeps the read plan made while pushing a query's filters on the
DataFrame's relation, and a later query on the same DataFrame that pushes no
filter (none at all, or only OR-ed ones) reuses it.  A plan that skipped
batches would then silently miss rows, so batch skipping is opt-in
(option("pushdown", "true")) and each such read should come from its own
spark.read...load() (newer Spark versions keep the plan per scan)."""


def _pushdown_enabled() -> bool:
    """Whether Spark will accept a reader that implements ``pushFilters``.

    With ``spark.sql.python.filterPushdown.enabled`` off, Spark plans the read
    in ``plan_data_source_read`` and rejects such a reader; with it on, it
    calls ``pushFilters`` from ``data_source_pushdown_filters``.  The caller
    tells which, so users never meet DATA_SOURCE_PUSHDOWN_DISABLED.
    """
    try:
        frame = sys._getframe(2)
    except ValueError:
        return False
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.endswith("plan_data_source_read"):
            return False
        if module.endswith("data_source_pushdown_filters"):
            return True
        frame = frame.f_back
    return False


# -- reading --------------------------------------------------------------------------------------
class ArrowmmReader(DataSourceReader):
    """Plans partitions from the footers; tasks read the batches (by ``pread``, or mapped with
    option ``mmap``) and yield them zero-copy."""

    def __init__(self, options, schema, paths: Optional[List[str]] = None,
                 storage_options: Optional[dict] = None):
        self.schema = schema
        self.storage_options = (_storage_options(options, None) if storage_options is None
                                else storage_options)
        self.mmap = _flag(options, "mmap", MMAP_DEFAULT)  # (whether local files are mapped)
        self.cast = _flag(options, "cast", False)
        self.max_bytes = _size(options, "maxPartitionBytes", _DEFAULT_PARTITION_BYTES)
        self.open_cost = _size(options, "openCostInBytes", _DEFAULT_OPEN_COST)
        self.log = options.get("batchlog")
        self.max_rows = _size(options, "maxRecordsPerBatch", _DEFAULT_BATCH_ROWS)
        self.paths = find_data_files(load_path_options(options) if paths is None else paths,
                                     self.storage_options)
        self._files: Optional[List[DataFile]] = None
        self._skip = set()

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_files"] = None  # planning state stays on the driver
        state["_skip"] = set()
        return state

    def files(self) -> List[DataFile]:
        if self._files is None:
            self._files = [describe_file(p, True, storage_for(p, self.storage_options, self.mmap))
                           for p in self.paths]
            _check_schemas(self._files, self.cast)
        return self._files

    def partitions(self):
        parts = plan_pieces(self.files(), lambda f, b: (f, b) not in self._skip,
                            self.max_bytes, self.open_cost)
        return [ArrowmmPartition(p) for p in parts] or [ArrowmmPartition([])]

    def read(self, partition) -> Iterator[object]:
        from pyspark.sql.pandas.types import to_arrow_schema
        target = to_arrow_schema(self.schema, timezone="UTC")
        step = self.max_rows
        for piece in partition.pieces:
            for batch in read_piece(piece, self.log, self.storage_options, self.mmap):
                for start in range(0, max(batch.num_rows, 1), step):  # zero-copy slices
                    part = batch if batch.num_rows <= step else batch.slice(start, step)
                    yield to_spark_batch(part, target)


class ArrowmmPushdownReader(ArrowmmReader):
    """Also skips batches whose statistics exclude the query's filters (see ``pruning``)."""

    def pushFilters(self, filters):
        files = self.files()
        judged = []
        for flt in filters:
            column = _filter_column(flt)
            dtypes = [_column_type(f, column) for f in files] if column else [None]
            if any(d is None for d in dtypes):
                judged.append((flt, None))  # not judged: Spark checks it
                continue
            judged.append((flt, [[verdict(flt, dtypes[fi], (b.stats or {}).get(column[0]), b.rows)
                                  for b in info.batches] for fi, info in enumerate(files)]))
        skip = set()
        for _, verdicts in judged:
            if verdicts is None:
                continue
            for fi, per_batch in enumerate(verdicts):
                skip.update((fi, bi) for bi, v in enumerate(per_batch) if v == NONE)
        self._skip = skip
        for flt, verdicts in judged:
            exact = verdicts is not None and all(
                v == ALL or (fi, bi) in skip
                for fi, per_batch in enumerate(verdicts) for bi, v in enumerate(per_batch))
            if not exact:
                yield flt  # Spark checks it row by row


def _filter_column(flt) -> Optional[tuple]:
    """The column path ``flt`` tests (under any ``Not``), or None for a filter class this
    source does not know: it goes back to Spark unjudged."""
    while type(flt).__name__ == "Not":
        flt = getattr(flt, "child", None)
    column = getattr(flt, "attribute", None)
    return column if isinstance(column, tuple) and column else None


def _column_type(info: DataFile, attribute):
    if len(attribute) != 1:
        return None
    for field in info.schema:
        if field.name == attribute[0]:
            return field.storage_type  # (pushdown compares stored values)
    return None


def _check_schemas(files: List[DataFile], cast: bool) -> None:
    """Every file has the first's Spark types, nullability aside (the table's is nullable)."""
    if not files:
        return
    first = spark_schema(files[0].schema, cast)
    for info in files[1:]:
        other = spark_schema(info.schema, cast)
        where = type_difference(other, first)
        if where:
            raise ArrowInvalid(f"{info.path}: schema {other.simpleString()} differs from "
                               f"{files[0].path}: {first.simpleString()} (at {where})")


# -- writing --------------------------------------------------------------------------------------
class WrittenFile(WriterCommitMessage):
    """What one task wrote: its temporary file, the final name, its row count, and (streaming)
    the id of the query that ran it."""

    def __init__(self, tmp: str, name: str, rows: int, query: Optional[str] = None):
        self.tmp, self.name, self.rows, self.query = tmp, name, rows, query

    def __repr__(self):
        return f"WrittenFile({self.name!r}, rows={self.rows})"


class _WriterOptions:
    def __init__(self, options, schema, paths: Optional[List[str]] = None,
                 storage_options: Optional[dict] = None, append: bool = False):
        paths = load_path_options(options) if paths is None else paths
        if len(paths) != 1:
            raise ArrowInvalid(f"write to one directory, got {paths}")
        self.directory = paths[0]
        self.storage = storage_for(paths[0], _storage_options(options, None)
                                   if storage_options is None else storage_options)
        if not self.storage.writable:
            raise ArrowNotImplementedError(
                f"{self.directory}: the Python data source writes to local paths and S3 "
                f"(s3a://, s3://) only: committing needs a create-only-if-absent, which it makes "
                f"on S3 with a conditional PUT (docs/commit-protocol.md §12); reads of this "
                f"store work")
        compression = (options.get("compression") or "none").lower()
        if compression not in ("none", "uncompressed") and compression not in CODEC_NAMES:
            raise ArrowInvalid(f"option compression must be none, {', '.join(CODECS)}, got "
                               f"{compression!r}")
        self.compression = None if compression in ("none", "uncompressed") else \
            CODEC_NAMES[compression]
        self.statistics = _flag(options, "statistics", True)
        self.schema = schema
        self.job = uuid.uuid4().hex
        self.options = {k: options[k] for k in ("checkpointlocation",) if k in options}
        problems = unwritable_columns(schema) if schema is not None else []
        if problems:
            raise SparkTypeError(f"{self.directory}: these columns have Spark types the Python "
                                 f"data source cannot write as themselves:\n  "
                                 + "\n  ".join(problems))
        same = names_equal_ignoring_case(schema) if schema is not None else []
        if same:
            raise ArrowInvalid(f"{self.directory}: these columns have names equal ignoring case, "
                               f"which a Spark session (spark.sql.caseSensitive=false, the "
                               f"default) cannot select, and Parquet's writes refuse: "
                               f"{'; '.join(same)}. Rename them; the Python data source cannot "
                               f"see the session's setting (the JVM connector writes them in a "
                               f"case-sensitive session)")
        if append:
            _check_append(self.directory, self.storage, schema)
        # the commit log exists before any task writes: a new directory reads as empty (not
        # file by file) until the job commits
        ensure_log(self.directory, self.storage, self.job)

    def _check_append_onto(self, path: str) -> None:
        """At commit: an overwrite of another schema may have committed since planning."""
        if self.schema is not None:
            _check_append_onto(self.directory, self.storage, self.schema, path,
                               " (an overwrite committed them while this job ran; nothing of "
                               "it was published)")

    @property
    def temporary_prefix(self) -> str:
        """Task files start hidden (readers skip names starting with '.') until committed."""
        return f".arrowmm-{self.job}-"

    def write_task(self, iterator, prefix: str) -> WrittenFile:
        """Write this task's batches to a file of the job (empty tasks too: the schema).

        Locally a hidden temporary that the commit renames to the job's final name; on an
        object store (``Storage.in_place``) the final name of this task attempt,
        ``part-<partition>-<job>-<attempt>.arrow``, through an upload that makes no object
        until it completes (docs/commit-protocol.md §5.2)."""
        import pyarrow as pa

        import arrowmm
        from pyspark import TaskContext
        ctx = TaskContext.get()
        part, attempt = (ctx.partitionId(), ctx.attemptNumber()) if ctx else (0, 0)
        storage = self.storage
        storage.make_dirs(self.directory)
        if storage.in_place:
            tmp = None
            name = f"{prefix}part-{part:05d}-{self.job}-{attempt}.arrow"
            path = storage.join(self.directory, name)
        else:
            name = f"{prefix}part-{part:05d}-{self.job}.arrow"
            tmp = path = storage.join(self.directory, f"{self.temporary_prefix}{prefix}part-"
                                                      f"{part:05d}-{attempt}-"
                                                      f"{uuid.uuid4().hex[:8]}.arrow")
        options = dict(compression=self.compression, statistics=self.statistics,
                       **storage.writer_options())
        writer = None
        marked = None  # Spark's Arrow schema with the collations recorded (None: none to record)
        rows = 0
        try:
            for pb in iterator:
                if writer is None:
                    marked = with_collations(pb.schema, self.schema)
                if marked is not None:
                    pb = pa.RecordBatch.from_arrays(pb.columns, schema=marked)
                batch = arrowmm.record_batch(pb)
                if writer is None:
                    writer = arrowmm.new_file(storage.sink(path), batch.schema, **options)
                writer.write(batch)
                rows += batch.num_rows
            if writer is None:  # an empty task still records the schema
                from pyspark.sql.pandas.types import to_arrow_schema
                empty = to_arrow_schema(self.schema, timezone="UTC")
                writer = arrowmm.new_file(storage.sink(path),
                                          with_collations(empty, self.schema) or empty, **options)
            writer.close()
        except BaseException:
            if writer is not None:
                writer.abort()
            raise
        query = ctx.getLocalProperty("sql.streaming.queryId") if ctx else None
        return WrittenFile(tmp, name, rows, query)


def _check_append(directory: str, storage: Storage, schema) -> None:
    """Refuse an append of rows of ``schema`` to a directory whose files have other columns or
    types (nullability aside), before any task writes: mixed files make every row of the
    directory unreadable.  The JVM connector refuses it in the same words."""
    if not storage.is_dir(directory):
        return
    files = Directory(storage, directory).data_files()
    if files:
        _check_append_onto(directory, storage, schema, files[0])


def _check_append_onto(directory: str, storage: Storage, schema, path: str, when: str = "") -> None:
    """Refuse rows of ``schema`` beside ``path``, a file of ``directory``; ``when`` says when."""
    try:
        have = spark_schema(describe_file(path, False, storage).schema)
    except SparkTypeError as exc:
        raise ArrowInvalid(f"{directory}: cannot append rows to a directory whose files have "
                           f"columns Spark cannot hold ({path}: {exc}); write with "
                           f"mode('overwrite') to replace them") from None
    where = type_difference(schema, have)
    if where:
        raise ArrowInvalid(f"{directory}: cannot append rows of schema {schema.simpleString()} "
                           f"to a directory whose files have {have.simpleString()} ({path}; "
                           f"differs at {where}){when}; write with mode('overwrite') to "
                           f"replace them")


class ArrowmmWriter(_WriterOptions, DataSourceArrowWriter):
    """Each task writes ``part-<partition>-<job>.arrow`` under a hidden temporary name;
    ``commit`` renames them in and publishes the next manifest version (retrying when another
    job published first: docs/commit-protocol.md); ``abort`` removes the job's files (those of
    failed attempts too) that no published version lists."""

    def __init__(self, options, schema, overwrite: bool, paths: Optional[List[str]] = None,
                 storage_options: Optional[dict] = None):
        _WriterOptions.__init__(self, options, schema, paths, storage_options,
                                append=not overwrite)
        self.overwrite = overwrite

    def write(self, iterator):
        return self.write_task(iterator, "")

    def commit(self, messages):
        commit_files(self.directory, [m for m in messages if m is not None], self.job,
                     overwrite=self.overwrite, storage=self.storage,
                     check_append=self._check_append_onto)
        abort_job(self.directory, self.job, self.storage)  # files of failed attempts

    def abort(self, messages):
        abort_job(self.directory, self.job, self.storage)


class ArrowmmStreamWriter(_WriterOptions, DataSourceStreamArrowWriter):
    """Structured Streaming sink: each micro-batch commits its files like a batch append.

    The manifest records the last batch id committed per query id, so a
    micro-batch Spark runs again after a failure is committed once, and
    several queries can write into one directory.
    """

    def __init__(self, options, schema, overwrite: bool, paths: Optional[List[str]] = None):
        _WriterOptions.__init__(self, options, schema, paths, append=True)  # (each batch appends)

    def write(self, iterator):
        return self.write_task(iterator, "")

    def commit(self, messages, batchId):
        done = [m for m in messages if m is not None]
        for m in done:
            m.name = f"batch-{batchId:08d}-{m.name}"
        commit_files(self.directory, done, self.job, overwrite=False, storage=self.storage,
                     stream=(self.query_id(done), batchId), check_append=self._check_append_onto)
        abort_job(self.directory, self.job, self.storage)  # files of failed attempts

    def query_id(self, messages) -> str:
        """The streaming query's id (kept across restarts from one checkpoint), which the
        tasks read from Spark; the checkpoint location when they could not."""
        for m in messages:
            if getattr(m, "query", None):
                return m.query
        where = self.options.get("checkpointlocation")
        if where:
            return "checkpoint:" + where
        raise ArrowInvalid(f"{self.directory}: cannot tell which streaming query wrote this "
                           f"micro-batch (no query id from Spark, no checkpointLocation)")

    def abort(self, messages, batchId):
        abort_job(self.directory, self.job, self.storage)


# -- streaming reads ------------------------------------------------------------------------------
class ArrowmmStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """A directory into which jobs commit (or move) complete ``.arrow`` files.

    Offsets are file names: ``{"last": name, "order": "arrival"}`` means every
    committed file up to and including ``name`` in arrival order
    (``files.arrival_order``: commit order where the directory has a manifest,
    else name order) has been read; ``{"last": name}`` (checkpoints of arrowmm
    before this rule) every file whose name sorts at or before ``name``
    (``files.seen_by``).
    A micro-batch's files are fixed by its two offsets, so a query restarted
    from its checkpoint reads again exactly the files of the batch it had not
    finished, then the new ones.  The JVM source (``ArrowmmMicroBatchStream``)
    follows the same rules.  Option ``maxFilesPerTrigger``: at most that many
    files per micro-batch.
    """

    def __init__(self, options, schema, paths: Optional[List[str]] = None):
        self.schema = schema
        self.options = dict(options)
        paths = load_path_options(options) if paths is None else paths
        _local_only(paths, "streaming reads")
        if len(paths) != 1 or not os.path.isdir(paths[0]):
            raise ArrowInvalid(f"a streaming read needs one directory, got {paths}")
        self.directory = paths[0]
        self.max_files = (_size(options, "maxFilesPerTrigger", 1)
                          if options.get("maxfilespertrigger") is not None else None)
        self.available_now: Optional[dict] = None

    def initialOffset(self):
        return {"last": ""}

    def getDefaultReadLimit(self):
        if ReadMaxFiles is None and self.max_files is not None:
            raise ArrowInvalid("option maxFilesPerTrigger needs pyspark 4.2 or later")
        return ReadAllAvailable() if self.max_files is None else ReadMaxFiles(self.max_files)

    def prepareForTriggerAvailableNow(self):
        names, _ = arrival_order(self.directory)
        self.available_now = {"last": names[-1], "order": ARRIVAL} if names else {"last": ""}

    def latestOffset(self, start, limit):
        names, ordered = arrival_order(self.directory)
        seen = seen_by(self.directory, names, start, ordered)
        new = [i for i, done in enumerate(seen) if not done]
        if self.available_now is not None:
            cap = seen_by(self.directory, names, self.available_now, ordered)
            new = [i for i in new if cap[i]]
        if ReadMaxFiles is not None and isinstance(limit, ReadMaxFiles):
            new = new[:limit.max_files]
        # the end offset counts every file up to its own in arrival order as read: after an
        # offset of the name rule, files it read may come later in that order than the new
        # ones, so the end reaches the last of them too (the batch then reads every unread
        # file before it: once, when a query moves from an older checkpoint to this rule)
        top = max(new[-1:] + [i for i, done in enumerate(seen) if done], default=-1)
        if top < 0:
            return dict(start or {"last": ""})
        return {"last": names[top], "order": ARRIVAL}

    def partitions(self, start, end):
        names, ordered = arrival_order(self.directory)
        before = seen_by(self.directory, names, start, ordered)
        after = seen_by(self.directory, names, end, ordered)
        chosen = [n for n, a, b in zip(names, before, after) if b and not a]
        if not chosen:
            return [ArrowmmPartition([])]
        paths = [os.path.join(self.directory, n) for n in chosen]  # (resolved: local, absolute)
        return ArrowmmReader(self.options, self.schema, paths).partitions()

    def read(self, partition):
        return ArrowmmReader.read(_StreamReadState(self.schema, self.options), partition)

    def commit(self, end):
        pass


class _StreamReadState:
    """The attributes ``ArrowmmReader.read`` uses, for the stream reader's tasks."""

    def __init__(self, schema, options):
        self.schema = schema
        self.log = options.get("batchlog")
        self.max_rows = _size(options, "maxRecordsPerBatch", _DEFAULT_BATCH_ROWS)
        self.storage_options = None
        self.mmap = _flag(options, "mmap", MMAP_DEFAULT)
