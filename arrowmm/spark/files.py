"""Finding the data files of a load path, and what their footers say about each batch.

(Finding the files and reading manifests moved to ``arrowmm.dataset.discovery``, the
layer below, for datasets to share; the names stay importable from here.)

A path is a file, a directory or a glob, resolved by ``paths.resolve_path`` with Spark's
rules (``fs.defaultFS``, relative paths, ``file:`` URIs; object stores as URLs; other
filesystems refused by scheme), and read through its ``storage.Storage`` (``find_data_files``,
``describe_file``: a local file mapped, an object by byte ranges).
A directory written by the arrowmm Spark writer has a log of versioned manifests
(``_arrowmm_log/``, see docs/commit-protocol.md); a reader reads exactly the files the latest
version lists, so files of unfinished, crashed or failed jobs are never read.  A directory
written by older arrowmm versions has only a ``_SUCCESS`` manifest listing its files, which is
trusted the same way.  Without either, a directory's data files are its visible files (names
not starting with ``_`` or ``.``) that begin with Arrow's file or stream framing (a pre-0.15
stream, which has no marker, only under an Arrow file extension).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..dataset.discovery import (FORMAT, LOG_DIR, MANIFEST, check_names,  # noqa: F401
                                 data_files_in, latest_manifest, log_versions, manifest_files,
                                 read_manifest,
                                 read_version, resolve_paths, sniff, version_name)
from ..errors import ArrowInvalid
from ..ipc.read.sniff import KIND_HEAD, ipc_kind
from ..ipc.core.statistics import decode_file_statistics, decode_statistics
from .directory import Directory
from .paths import default_fs, resolve_path
from .storage import Storage, storage_for

__all__ = ["MANIFEST", "LOG_DIR", "BatchInfo", "DataFile", "resolve_paths", "load_path_options",
           "describe_file", "find_data_files", "read_manifest", "data_files_in", "log_versions", "read_version",
           "latest_manifest", "version_name", "arrival_order", "seen_by", "ARRIVAL"]


@dataclass
class BatchInfo:
    """One record batch as planning sees it: size in bytes, rows, statistics (or None)."""
    nbytes: int
    rows: Optional[int]
    stats: Optional[Dict[str, dict]]


@dataclass
class DataFile:
    """A data file's format, schema and batches, read from its footer (or one header scan)."""
    path: str
    format: str  # "file" or "stream"
    schema: object
    batches: List[BatchInfo] = field(default_factory=list)
    entries: Optional[List[Tuple[int, int]]] = None  # streams: the message index
    identity: Optional[tuple] = None  # the planned file's ``file_identity()``, when it has one


def load_path_options(options, default: Optional[str] = None,
                      how: str = "use spark.read.format('arrowmm').load(path)") -> List[str]:
    """The paths a ``load(...)`` or ``save(...)`` call gave (``path``, or the JSON list
    ``paths``), each resolved to a local absolute path by Spark's rules (``paths.resolve_path``:
    ``default`` is the session's ``fs.defaultFS``, None for ``paths.default_fs()``'s); raises
    naming the scheme for a path the Python source cannot serve, and saying ``how`` to give
    one when there is none."""
    if "paths" in options:
        try:
            paths = json.loads(options["paths"])
        except ValueError as exc:
            raise ArrowInvalid(f"option paths is not a JSON list: {exc}") from None
        if isinstance(paths, str):
            paths = [paths]
    elif "path" in options:
        paths = [options["path"]]
    else:
        # (Spark 4.0 to 4.3 give a Python data source no catalog table's LOCATION or OPTIONS)
        raise ArrowInvalid(f"no path: {how}. A catalog table (CREATE TABLE ... USING, "
                           f"saveAsTable) reaches Spark's Python data sources without its "
                           f"location or options: in SQL, CREATE TEMPORARY VIEW ... USING "
                           f"arrowmm_python OPTIONS (path '...'), or the JVM connector's "
                           f"tables (USING arrowmm)")
    fs = default_fs(default)
    return [resolve_path(p, fs) for p in paths]


def find_data_files(paths: List[str], storage_options: Optional[dict] = None) -> List[str]:
    """Every data file under ``paths`` (resolved: files, directories, globs; local or on an
    object store, ``storage_options`` configuring the store), in a stable order: a directory's
    as its manifest lists them (docs/commit-protocol.md §4)."""
    out: List[str] = []
    for p in paths:
        storage = storage_for(p, storage_options)
        if storage.is_dir(p):
            out.extend(Directory(storage, p).data_files())
        elif storage.is_file(p):
            out.append(p)
        elif any(c in p for c in "*?["):
            # like Spark's file sources, a glob skips _ and . names (_SUCCESS, the commit log)
            matches = sorted(m for m in storage.glob(p)
                             if not m.rstrip("/").rsplit("/", 1)[-1].startswith(("_", ".")))
            if not matches:
                raise ArrowInvalid(f"path {p!r} matches no file")
            for m in matches:
                out.extend(Directory(storage, m).data_files() if storage.is_dir(m) else [m])
        else:
            raise ArrowInvalid(f"path {p!r} does not exist")
    seen = set()
    return [p for p in out if not (p in seen or seen.add(p))]


def describe_file(path: str, with_batches: bool = True, storage: Optional[Storage] = None
                  ) -> DataFile:
    """The schema and (optionally) the per-batch sizes and statistics of one data file
    (on ``storage``, by default ``storage_for(path)``: an object's footer read by ranges)."""
    storage = storage if storage is not None else storage_for(path)
    fmt = ipc_kind(storage.head(path, KIND_HEAD) or b"")
    if fmt == "file":
        reader = storage.open_reader(path, "file")
        info = DataFile(path, "file", reader.schema, identity=reader.file_identity())
        if with_batches:
            extents = reader.batch_extents()
            doc = decode_file_statistics(reader.footer.metadata, lambda: reader.batch_metadata(0)
                                         if extents else None, reader.footer.record_batches,
                                         reader.schema)
            stats = doc.get("batches") if doc else None
            if not isinstance(stats, list) or len(stats) != len(extents):
                stats = [None] * len(extents)
            info.batches = [_batch_info(n, s) for (_, n), s in zip(extents, stats)]
        reader.close()
        return info
    if fmt == "stream":
        reader = storage.open_reader(path, "stream")
        info = DataFile(path, "stream", reader.schema, entries=reader.entries,
                        identity=reader.file_identity())
        if with_batches:
            extents = reader.batch_extents()
            for k, (_, n) in enumerate(extents):
                meta = reader.batch_metadata(k) or {}
                info.batches.append(_batch_info(n, decode_statistics(meta, reader.schema)))
        reader.close()
        return info
    raise ArrowInvalid(f"{path}: not an Arrow IPC file or stream")


def _batch_info(nbytes: int, doc) -> BatchInfo:
    if not isinstance(doc, dict):
        return BatchInfo(nbytes, None, None)
    rows, columns = doc.get("rows"), doc.get("columns")
    return BatchInfo(nbytes, rows if isinstance(rows, int) else None,
                     columns if isinstance(columns, dict) else None)


def arrival_order(directory: str) -> Tuple[List[str], bool]:
    """The committed data files of ``directory`` (names) in the order they arrived, and whether
    that order is commit order.

    A directory with a manifest (the commit log's latest version, else ``_SUCCESS``) lists its
    files in commit order: an append puts its files after those already listed, whatever their
    names (a batch append's are random).  Without one, the visible Arrow files are taken in name
    order, so there files must arrive in name order (as time-stamped or numbered names do).
    """
    listed = manifest_files(directory)
    if listed is not None:
        return [os.path.relpath(p, directory) for p in listed], True
    return sorted(os.path.basename(p) for p in data_files_in(directory)), False


#: What stream offsets of the arrival rule carry; offsets without it (arrowmm before it) meant
#: "every file whose name sorts at or before ``last``".
ARRIVAL = "arrival"


def seen_by(directory: str, names: List[str], offset: dict, ordered: bool) -> List[bool]:
    """For each of ``names`` (from :func:`arrival_order`), whether stream offset ``offset``
    (``{"last": name, "order": "arrival"}``; ``{"last": ""}`` before the first file) counts it
    as read.

    In commit order, the files up to and including ``last``; by name (a directory without a
    manifest, or an offset written before the arrival rule, so that a query restarted from an
    older checkpoint reads no file twice), the files whose names sort at or before ``last``.
    Raises ArrowInvalid when ``names`` is in commit order and no longer lists ``last`` (an
    overwrite replaced it): where to resume is then unknown, and guessing could skip or repeat.
    """
    last = (offset or {}).get("last", "")
    if not last:
        return [False] * len(names)
    if not ordered or (offset or {}).get("order") != ARRIVAL:
        return [n <= last for n in names]
    try:
        at = names.index(last)
    except ValueError:
        raise ArrowInvalid(f"{directory}: the stream has read up to file {last!r}, which the "
                           f"directory no longer lists (an overwrite or a deletion replaced it); "
                           f"a streaming read follows a directory that jobs only append to. "
                           f"Start the query with a new checkpoint to read the directory again "
                           f"from its start") from None
    return [i <= at for i in range(len(names))]
