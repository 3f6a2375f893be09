"""Finding the data files of a load path, and what their footers say about each batch.

A path is a file, a directory or a glob.  A directory written by the arrowmm
Spark writer has a log of versioned manifests (``_arrowmm_log/``, see
docs/commit-protocol.md); a reader reads exactly the files the latest version
lists, so files of unfinished, crashed or failed jobs are never read.  A
directory written by older arrowmm versions has only a ``_SUCCESS`` manifest
listing its files, which is trusted the same way.  Without either, a
directory's data files are its visible files (names not starting with ``_``
or ``.``) that begin with Arrow's file or stream framing (a pre-0.15 stream,
which has no marker, only under an Arrow file extension).
"""
from __future__ import annotations

import glob
import json
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from ..ipc.io import MAGIC
from ..ipc.reader import FileReader
from ..errors import ArrowInvalid
from ..ipc.indexed import IndexedStreamReader
from ..ipc.statistics import STATISTICS_KEY, decode_statistics

__all__ = ["MANIFEST", "LOG_DIR", "BatchInfo", "DataFile", "resolve_paths", "load_path_options",
           "describe_file", "read_manifest", "data_files_in", "log_versions", "read_version",
           "latest_manifest", "version_name"]

MANIFEST = "_SUCCESS"
#: The folder of versioned manifests inside a directory (docs/commit-protocol.md).
LOG_DIR = "_arrowmm_log"
FORMAT = "arrowmm-manifest/1"
_VERSION_NAME = re.compile(r"^([0-9]{20})\.json$")
_STREAM_CONTINUATION = b"\xff\xff\xff\xff"
_EXTENSIONS = (".arrow", ".arrows", ".ipc", ".feather")


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


def load_path_options(options) -> List[str]:
    """The paths a ``load(...)`` call gave: ``path`` or the JSON list ``paths``."""
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
        raise ArrowInvalid("no path: use spark.read.format('arrowmm').load(path)")
    return [_strip_file_scheme(p) for p in paths]


def _strip_file_scheme(path: str) -> str:
    return path[len("file:"):] if path.startswith("file:") else path


def resolve_paths(paths: Sequence[str]) -> List[str]:
    """Every data file under ``paths`` (files, directories, globs), in a stable order."""
    out: List[str] = []
    for p in paths:
        if os.path.isdir(p):
            out.extend(data_files_in(p))
        elif os.path.isfile(p):
            out.append(os.path.abspath(p))
        elif glob.has_magic(p):
            # like Spark's file sources, a glob skips _ and . names (_SUCCESS, the commit log)
            matches = sorted(m for m in glob.glob(p)
                             if not os.path.basename(m).startswith(("_", ".")))
            if not matches:
                raise ArrowInvalid(f"path {p!r} matches no file")
            for m in matches:
                out.extend(data_files_in(m) if os.path.isdir(m) else [os.path.abspath(m)])
        else:
            raise ArrowInvalid(f"path {p!r} does not exist")
    seen = set()
    return [p for p in out if not (p in seen or seen.add(p))]


def read_manifest(directory: str) -> Optional[dict]:
    """The ``_SUCCESS`` manifest of ``directory`` (the layout older arrowmm versions write and
    this one mirrors), or None when there is none."""
    path = os.path.join(directory, MANIFEST)
    try:
        with open(path, "rb") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    if not text.strip():
        return None  # an empty _SUCCESS marker (Hadoop-style writers): no list to trust
    try:
        doc = json.loads(text)
        check_names(doc["files"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ArrowInvalid(f"{path}: not an arrowmm manifest ({exc})") from None
    return doc


def check_names(files) -> List[str]:
    """``files`` if it is a list of plain file names (no folder part): ValueError if not."""
    if not isinstance(files, list) or not all(isinstance(n, str) for n in files):
        raise ValueError("files is not a list of names")
    for n in files:
        if not n or n in (".", "..") or "/" in n or os.sep in n or "\0" in n:
            raise ValueError(f"file name {n!r} is not a plain name inside the directory")
    return files


def version_name(version: int) -> str:
    """The file name of manifest ``version`` in the log: 20 digits, ``.json``."""
    return f"{version:020d}.json"


def log_versions(directory: str) -> List[int]:
    """The manifest versions present in ``directory``'s log, ascending ([] without a log)."""
    try:
        names = os.listdir(os.path.join(directory, LOG_DIR))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(int(m.group(1)) for m in map(_VERSION_NAME.match, names) if m)


def read_version(directory: str, version: int) -> dict:
    """Manifest ``version`` of ``directory``'s log (FileNotFoundError if it is gone or was
    pruned to a tombstone: only versions well below the latest are)."""
    path = os.path.join(directory, LOG_DIR, version_name(version))
    with open(path, "rb") as f:
        text = f.read()
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError(f"format is not {FORMAT!r}")
        if doc.get("version") != version:
            raise ValueError(f"it says version {doc.get('version')!r}")
        if doc.get("pruned") is True:
            raise FileNotFoundError(f"{path}: version {version} was pruned (a tombstone)")
        check_names(doc["files"])
        streams = doc.get("streams", {})
        if not isinstance(streams, dict) or not all(
                isinstance(k, str) and isinstance(b, int) for k, b in streams.items()):
            raise ValueError("streams is not a map of query id to batch id")
    except (ValueError, KeyError, TypeError) as exc:
        raise ArrowInvalid(f"{path}: not a manifest of version {version} ({exc})") from None
    return doc


def latest_manifest(directory: str) -> Optional[dict]:
    """The latest version of ``directory``'s log, or None when the log has none."""
    for _ in range(100):
        versions = log_versions(directory)
        if not versions:
            return None
        try:
            return read_version(directory, versions[-1])
        except FileNotFoundError:  # removed by a writer keeping the log short: list again
            continue
    raise ArrowInvalid(f"{os.path.join(directory, LOG_DIR)}: the latest manifest keeps "
                       f"disappearing while read")


def data_files_in(directory: str) -> List[str]:
    """The data files of one directory: its latest manifest's list (the log's, else
    ``_SUCCESS``'s), else its Arrow files."""
    manifest = latest_manifest(directory)
    if manifest is None:
        manifest = read_manifest(directory)
    if manifest is not None:
        return [os.path.abspath(os.path.join(directory, n)) for n in manifest["files"]]
    out = []
    for name in sorted(os.listdir(directory)):
        if name.startswith(("_", ".")):
            continue
        path = os.path.join(directory, name)
        if os.path.isfile(path) and _sniff(path, strict=not name.endswith(_EXTENSIONS)) is not None:
            out.append(os.path.abspath(path))
    return out


def _sniff(path: str, strict: bool = False) -> Optional[str]:
    """"file", "stream" or None.  A pre-0.15 stream starts with a bare length, which any
    file might: ``strict`` (files found in a folder, not named for Arrow) rules that out."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return None
    if head[:6] == MAGIC:
        return "file"
    if head[:4] == _STREAM_CONTINUATION:
        return "stream"
    if not strict and len(head) >= 4 and head[:4] != b"\x00\x00\x00\x00":
        return "stream"
    return None


def describe_file(path: str, with_batches: bool = True) -> DataFile:
    """The schema and (optionally) the per-batch sizes and statistics of one data file."""
    fmt = _sniff(path)
    if fmt == "file":
        reader = FileReader(path)
        info = DataFile(path, "file", reader.schema)
        if with_batches:
            doc = decode_statistics((reader.footer.metadata or {}).get(STATISTICS_KEY))
            stats = doc.get("batches") if doc else None
            extents = reader.batch_extents()
            if not isinstance(stats, list) or len(stats) != len(extents):
                stats = [None] * len(extents)
            info.batches = [_batch_info(n, s) for (_, n), s in zip(extents, stats)]
        reader.close()
        return info
    if fmt == "stream":
        reader = IndexedStreamReader(path)
        info = DataFile(path, "stream", reader.schema, entries=reader.entries)
        if with_batches:
            extents = reader.batch_extents()
            for k, (_, n) in enumerate(extents):
                meta = reader.batch_metadata(k) or {}
                info.batches.append(_batch_info(n, decode_statistics(meta.get(STATISTICS_KEY))))
        reader.close()
        return info
    raise ArrowInvalid(f"{path}: not an Arrow IPC file or stream")


def _batch_info(nbytes: int, doc) -> BatchInfo:
    if not isinstance(doc, dict):
        return BatchInfo(nbytes, None, None)
    rows, columns = doc.get("rows"), doc.get("columns")
    return BatchInfo(nbytes, rows if isinstance(rows, int) else None,
                     columns if isinstance(columns, dict) else None)
