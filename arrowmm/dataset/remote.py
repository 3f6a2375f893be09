"""Finding a dataset's files on an fsspec filesystem (object stores, memory, local), with the
same rules as ``discovery``: folders walked, Spark manifests honoured, ``_`` / ``.`` names
skipped, files named as Arrow listed whatever their bytes (a damaged one raises when read), the
others only when their first bytes announce Arrow, paths sorted.  Reading them is
``arrowmm.ipc.read.ranged`` (byte ranges, nothing mapped).
"""
from __future__ import annotations

import posixpath
from typing import List, Optional, Tuple

from ..errors import ArrowInvalid
from ..ipc.core.object_store import (client_error, display_url, local_file_url, store_error,
                                     url_to_filesystem)
from ..ipc.core.files import MAGIC as FILE_MAGIC
from ..ipc.read.sniff import KIND_HEAD, ipc_kind
from .discovery import (LOG_DIR, MANIFEST, named_arrow, parse_manifest, parse_version,
                        version_name, version_of)

__all__ = ["filesystem_for", "discover_on"]


def filesystem_for(source, storage_options: Optional[dict] = None):
    """``(filesystem, source)`` for a URL with a scheme fsspec knows (``"s3://b/x"``; the
    filesystem made with ``storage_options``), else ``(None, source)`` (a ``file:`` URL as
    the local path it names)."""
    if isinstance(source, (list, tuple)):
        source = type(source)(local_file_url(s) for s in source)
    else:
        source = local_file_url(source)
    first = source[0] if isinstance(source, (list, tuple)) and source else source
    if not isinstance(first, str) or "://" not in first:
        if storage_options:
            raise ArrowInvalid(f"storage_options= applies to URLs (s3://...), not to the local "
                               f"path {first!r}")
        return None, source
    fs, path = url_to_filesystem(first, storage_options)
    if not isinstance(source, (list, tuple)):
        return fs, path
    return fs, [url_to_filesystem(s)[1] if isinstance(s, str) else s for s in source]


def _sniff(fs, path: str, strict: bool) -> Optional[str]:
    """``discovery.sniff`` on an fsspec filesystem: ``ipc_kind`` of the file's first bytes (one
    ranged read: opened, the file would read ahead a block, on S3 up to 50 MB)."""
    try:
        head = fs.cat_file(path, start=0, end=KIND_HEAD)
    except (OSError, ValueError):  # (also S3's refusal of a range of an empty object)
        return None
    return ipc_kind(head, strict)


def _ends_as_arrow_file(fs, path: str, size) -> bool:
    """``discovery.ends_as_arrow_file`` on an fsspec filesystem (one ranged read)."""
    try:
        size = int(size) if size is not None else fs.size(path)
        if size < len(FILE_MAGIC):
            return False
        return fs.cat_file(path, start=size - len(FILE_MAGIC), end=size) == FILE_MAGIC
    except (OSError, ValueError, TypeError):
        return False


def _manifest_files(fs, directory: str) -> Optional[List[str]]:
    log = posixpath.join(directory, LOG_DIR)
    if fs.isdir(log):
        versions = sorted(v for v in (version_of(posixpath.basename(p))
                                      for p in fs.ls(log, detail=False)) if v is not None)
        if versions:
            path = posixpath.join(log, version_name(versions[-1]))
            doc = parse_version(fs.cat_file(path), path, versions[-1])
            return [posixpath.join(directory, n) for n in doc["files"]]
    path = posixpath.join(directory, MANIFEST)
    if fs.isfile(path):
        doc = parse_manifest(fs.cat_file(path), path)
        if doc is not None:
            return [posixpath.join(directory, n) for n in doc["files"]]
    return None


def _walk(fs, directory: str, out: List[str]) -> None:
    listed = _manifest_files(fs, directory)
    if listed is not None:
        out.extend(listed)
        return
    for entry in sorted(fs.ls(directory, detail=True), key=lambda e: e["name"]):
        path = entry["name"].rstrip("/")
        name = posixpath.basename(path)
        if name.startswith(("_", ".")):
            continue
        if entry["type"] == "directory":
            _walk(fs, path, out)
        elif named_arrow(name) or _sniff(fs, path, strict=True) is not None or \
                _ends_as_arrow_file(fs, path, entry.get("size")):
            out.append(path)


def discover_on(fs, source) -> List[Tuple[str, Optional[str]]]:
    """``(path, base)`` of each data file of ``source`` (a path, a glob or a list) on ``fs``,
    a file given twice read twice (as locally); a store's refusal (credentials, permissions)
    is ``PermissionError`` naming the URL, as are missing credentials, and a store that cannot
    be reached ``ConnectionError``."""
    sources = list(source) if isinstance(source, (list, tuple)) else [source]
    out: List[Tuple[str, Optional[str]]] = []
    for p in sources:
        if not isinstance(p, str):
            raise ArrowInvalid(f"dataset source {p!r} is not a path")
        try:
            _discover_one(fs, p.rstrip("/") or "/", out)
        except Exception as exc:
            if not (isinstance(exc, PermissionError) or client_error(exc)):
                raise
            raise store_error(exc, display_url(fs, fs._strip_protocol(p)), "list") from None
    return out


def _discover_one(fs, p: str, out: List[Tuple[str, Optional[str]]]) -> None:
    """Add the data files of one ``source`` path (a folder, a file or a glob) to ``out``."""
    if fs.isdir(p):
        found: List[str] = []
        _walk(fs, p, found)
        manifest = _manifest_files(fs, p) is not None
        out.extend((f, p) for f in (found if manifest else sorted(found)))
    elif fs.isfile(p):
        out.append((p, None))
    elif any(c in p for c in "*?["):
        matches = sorted(((m, info) for m, info in fs.glob(p, detail=True).items()
                          if not posixpath.basename(m).startswith(("_", "."))),
                         key=lambda match: match[0])
        if not matches:
            raise ArrowInvalid(f"dataset path {p!r} matches no file")
        for m, info in matches:
            if info.get("type") == "directory":  # (walked, as a local glob's folders are)
                below: List[str] = []
                _walk(fs, m, below)
                out.extend((f, None) for f in sorted(below))
            elif info.get("type") == "file" or fs.isfile(m):
                out.append((m, None))
    else:
        raise FileNotFoundError(2, "No such file or directory", p)
