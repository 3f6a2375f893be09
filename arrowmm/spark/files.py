"""Finding the data files of a load path, and what their footers say about each batch.

A path is a file, a directory or a glob; a directory written by the arrowmm
Spark writer has a ``_SUCCESS`` manifest listing its committed files, and a
reader trusts that list (files of unfinished or failed jobs are ignored).
Without a manifest, a directory's data files are its visible files (names
not starting with ``_`` or ``.``) that begin with Arrow's file or stream
framing (a pre-0.15 stream, which has no marker, only under an Arrow file
extension).
"""
from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from ..ipc import reader as _reader
from ..errors import ArrowInvalid
from ..ipc.indexed import IndexedStreamReader
from ..ipc.statistics import STATISTICS_KEY, decode_statistics

__all__ = ["MANIFEST", "BatchInfo", "DataFile", "resolve_paths", "load_path_options",
           "describe_file", "read_manifest", "data_files_in"]

MANIFEST = "_SUCCESS"
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
            matches = sorted(glob.glob(p))
            if not matches:
                raise ArrowInvalid(f"path {p!r} matches no file")
            for m in matches:
                out.extend(data_files_in(m) if os.path.isdir(m) else [os.path.abspath(m)])
        else:
            raise ArrowInvalid(f"path {p!r} does not exist")
    seen = set()
    return [p for p in out if not (p in seen or seen.add(p))]


def read_manifest(directory: str) -> Optional[dict]:
    """The ``_SUCCESS`` manifest of ``directory``, or None when there is none."""
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
        files = doc["files"]
        if not isinstance(files, list) or not all(isinstance(n, str) for n in files):
            raise ValueError("files is not a list of names")
    except (ValueError, KeyError, TypeError) as exc:
        raise ArrowInvalid(f"{path}: not an arrowmm manifest ({exc})") from None
    return doc


def data_files_in(directory: str) -> List[str]:
    """The data files of one directory: its manifest's list, else its Arrow files."""
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
    if head[:6] == _reader.MAGIC:
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
        reader = _reader.FileReader(path)
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
