"""Finding the data files of a path: a file, a directory (its manifest honoured), a glob, a list.

A directory written by the arrowmm Spark writer has a log of versioned manifests
(``_arrowmm_log/``, see docs/commit-protocol.md); a reader reads exactly the files the latest
version lists, so files of unfinished, crashed or failed jobs are never read.  A directory
written by older arrowmm versions has only a ``_SUCCESS`` manifest listing its files, which is
trusted the same way.  Without either, a directory's data files are its visible files (names
not starting with ``_`` or ``.``) that are named as Arrow (``EXTENSIONS``), whatever their bytes,
and the others that begin with Arrow's file magic or a stream's continuation marker.  A file
named as Arrow is never left out for what its bytes are: one that is empty, zero-filled or
otherwise damaged at its start (what a crash, a full disk or an interrupted copy leaves) is
listed, and reading it raises ``ArrowInvalid`` naming it (``unreadable_head`` says why), or a
dataset's ``exclude_invalid_files=True`` leaves it out and reports it.  Other files (``_SUCCESS``,
``.crc``, a README) are left out unless their first bytes announce Arrow.

``resolve_paths`` (the Spark source's) looks one directory deep; ``discover`` (a dataset's)
walks folders recursively, as pyarrow.dataset does, for hive-partitioned layouts.

Symbolic links are followed, to folders and to files, but a folder is never entered twice on
one path down the walk: a link back to a folder the walk is inside (``a/up -> ..``) made every
file under it read again at each level until the kernel's limit (41 times), and two such links
made the walk exponential (a hang).  Such a loop raises ``ArrowInvalid`` naming the link and the
folder it leads back to, as ``find -L`` reports "File system loop detected", rather than being
skipped: a loop in a data folder is a mistake to fix, and a skipped one would be a rule the
user never sees (links to a folder *beside* the walk, such as ``k=2 -> k=1``, are read as the
folders they name).  A link named as Arrow whose target cannot be reached (gone with an
unmounted share, a loop of links) raises the ``OSError`` that says why, naming it, where it
used to leave the dataset silently with every row it held.
"""
from __future__ import annotations

import glob
import json
import os
import re
from typing import Dict, List, Optional, Sequence, Tuple

from ..errors import ArrowInvalid
from ..ipc.core.files import MAGIC as FILE_MAGIC
from ..ipc.read.sniff import KIND_HEAD, ipc_kind

__all__ = ["MANIFEST", "LOG_DIR", "FORMAT", "resolve_paths", "read_manifest", "check_names",
           "version_name", "log_versions", "read_version", "latest_manifest", "data_files_in",
           "sniff", "discover", "discover_with_bases", "manifest_files", "parse_manifest",
           "parse_version", "version_of", "EXTENSIONS", "named_arrow", "unreadable_head",
           "check_reachable"]

MANIFEST = "_SUCCESS"
#: The folder of versioned manifests inside a directory (docs/commit-protocol.md).
LOG_DIR = "_arrowmm_log"
FORMAT = "arrowmm-manifest/1"
_VERSION_NAME = re.compile(r"^([0-9]{20})\.json$")
#: File names that say Arrow IPC: a file so named in a folder is a data file whatever its bytes.
EXTENSIONS = (".arrow", ".arrows", ".ipc", ".feather")


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
    return parse_manifest(text, path)


def parse_manifest(text: bytes, path: str) -> Optional[dict]:
    """A ``_SUCCESS`` manifest's document (None for an empty marker), checked."""
    if not text.strip():
        return None  # an empty _SUCCESS marker (Hadoop-style writers): no list to trust
    try:
        doc = json.loads(text)
        check_names(doc["files"])
    except (ValueError, KeyError, TypeError, RecursionError) as exc:  # (JSON nested too deep)
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
    return sorted(v for v in map(version_of, names) if v is not None)


def version_of(name: str) -> Optional[int]:
    """The version a log file name holds (``00000000000000000007.json``: 7), or None."""
    m = _VERSION_NAME.match(name)
    return int(m.group(1)) if m else None


def read_version(directory: str, version: int) -> dict:
    """Manifest ``version`` of ``directory``'s log (FileNotFoundError if it is gone or was
    pruned to a tombstone: only versions well below the latest are)."""
    path = os.path.join(directory, LOG_DIR, version_name(version))
    with open(path, "rb") as f:
        text = f.read()
    return parse_version(text, path, version)


def parse_version(text: bytes, path: str, version: int) -> dict:
    """Manifest ``version``'s document, checked (FileNotFoundError for a tombstone)."""
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
    except (ValueError, KeyError, TypeError, RecursionError) as exc:  # (JSON nested too deep)
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
        if os.path.isfile(path):
            if _is_data_file(path, name):
                out.append(os.path.abspath(path))
        elif not os.path.isdir(path):
            check_reachable(path, name)
    return out


def named_arrow(name: str) -> bool:
    """Whether the file name ``name`` says Arrow IPC (ends with one of ``EXTENSIONS``)."""
    return name.endswith(EXTENSIONS)


def _is_data_file(path: str, name: str) -> bool:
    """Whether the local file ``path`` (named ``name``) found in a folder is a data file: named
    as Arrow, or not so named but starting with Arrow's file magic or a stream's marker, or
    ending with the file magic (a file whose first bytes a crash or a cut copy damaged must
    not leave the dataset unseen: opening it says what is wrong)."""
    return named_arrow(name) or sniff(path, strict=True) is not None or ends_as_arrow_file(path)


def ends_as_arrow_file(path: str) -> bool:
    """Whether the local file ``path`` ends with the IPC file format's closing magic."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() < len(FILE_MAGIC):
                return False
            f.seek(-len(FILE_MAGIC), os.SEEK_END)
            return f.read(len(FILE_MAGIC)) == FILE_MAGIC
    except OSError:
        return False


def unreadable_head(head: bytes) -> Optional[str]:
    """Why a source whose first ``KIND_HEAD`` bytes are ``head`` cannot be Arrow IPC in any
    form (the file magic, a stream's marker or a pre-0.15 stream's metadata length), or None
    when it may be.

    Examples
    --------
    >>> unreadable_head(b"")
    'it is empty (0 bytes)'
    >>> unreadable_head(bytes(8))[:44]
    'its first 8 bytes are all zeros: neither the'
    >>> unreadable_head(b"ARROW1") is None
    True
    """
    if ipc_kind(head) is not None:
        return None
    if not head:
        return "it is empty (0 bytes)"
    if len(head) < 4:
        return (f"it holds only {len(head)} bytes ({head.hex(' ')}), too few for an Arrow IPC "
                f"file or stream")
    zeros = "are all zeros" if not any(head) else f"start with 4 zero bytes ({head.hex(' ')})"
    return (f"its first {len(head)} bytes {zeros}: neither the file magic 'ARROW1' nor a "
            f"stream's first message; it is damaged (a crash, a full disk or an interrupted copy "
            f"leaves zeros or nothing at a file's start)")


def sniff(path: str, strict: bool = False) -> Optional[str]:
    """"file", "stream" or None, as ``arrowmm.ipc.read.sniff.ipc_kind`` judges the first bytes of
    the local file ``path`` (None also when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            head = f.read(KIND_HEAD)
    except OSError:
        return None
    return ipc_kind(head, strict)


def manifest_files(directory: str) -> Optional[List[str]]:
    """The files ``directory``'s latest manifest lists (the log's, else ``_SUCCESS``'s), as
    absolute paths, or None when it has no manifest."""
    manifest = latest_manifest(directory)
    if manifest is None:
        manifest = read_manifest(directory)
    if manifest is None:
        return None
    return [os.path.abspath(os.path.join(directory, n)) for n in manifest["files"]]


def check_reachable(path: str, name: str) -> None:
    """Raise the ``OSError`` of the folder entry ``path`` (named ``name``), neither a file nor a
    folder, when it is named as Arrow and cannot be reached: a symbolic link whose target is
    gone (``FileNotFoundError``), a loop of links, a target this user may not reach.  A FIFO or
    a socket so named, and entries not named as Arrow, are left out as before."""
    if not named_arrow(name):
        return
    try:
        os.stat(path)
    except OSError as exc:
        link = f"a symbolic link to {os.readlink(path)!r}" if os.path.islink(path) else "an entry"
        raise type(exc)(exc.errno, f"{exc.strerror}: {link}, named as an Arrow file of the "
                        f"dataset, does not reach a file", os.path.abspath(path)) from None


def _folder_id(path: str) -> Tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _walk(directory: str, out: List[str], inside: Optional[Dict[Tuple[int, int], str]] = None
          ) -> None:
    """Add the data files under ``directory`` to ``out``.  ``inside``: the folders the walk is in
    (device and inode: path), ``directory`` among them once entered, so that a link back to one
    of them is a loop (see the module docstring)."""
    if inside is None:
        inside = {_folder_id(directory): os.path.abspath(directory)}
    listed = manifest_files(directory)
    if listed is not None:
        out.extend(listed)
        return
    try:
        names = sorted(os.listdir(directory))
    except OSError as exc:
        raise ArrowInvalid(f"cannot list {directory!r}: {exc}") from None
    for name in names:
        if name.startswith(("_", ".")):
            continue
        path = os.path.join(directory, name)
        if os.path.isdir(path):
            key = _folder_id(path)
            if key in inside:
                _refuse_loop(path, inside[key])
            inside[key] = os.path.abspath(path)
            try:
                _walk(path, out, inside)
            finally:
                del inside[key]
        elif os.path.isfile(path):
            if _is_data_file(path, name):
                out.append(os.path.abspath(path))
        else:
            check_reachable(path, name)


def _refuse_loop(path: str, earlier: str) -> None:
    link = f" (a symbolic link to {os.readlink(path)!r})" if os.path.islink(path) else ""
    raise ArrowInvalid(f"{os.path.abspath(path)}{link}: a folder loop: it leads back to "
                       f"{earlier}, a folder the dataset's walk is already inside, so every "
                       f"file below would be read again and again; remove the link, or give "
                       f"the dataset the files or folders to read (a list or a glob)")


def discover(source) -> List[str]:
    """The data files of a dataset ``source`` (see ``discover_with_bases``)."""
    return [path for path, _ in discover_with_bases(source)]


def discover_with_bases(source) -> List[Tuple[str, Optional[str]]]:
    """``(path, base)`` of each data file of a dataset ``source``: a path to a file, a directory (walked
    recursively; a directory with a manifest gives exactly the files it lists), a glob, or a
    list of those, in a stable order (a directory's files sorted by path, as pyarrow.dataset
    sorts them).  ``base``: the directory given whose folders below hold partition values
    (None for a file or a glob given directly).  A file given twice (or found by two entries
    of a list) is read twice, as pyarrow.dataset reads every path it is given."""
    if isinstance(source, (str, os.PathLike)):
        sources = [os.fspath(source)]
    elif isinstance(source, (list, tuple)):
        sources = [os.fspath(s) if isinstance(s, os.PathLike) else s for s in source]
        bad = [s for s in sources if not isinstance(s, str)]
        if bad:
            raise ArrowInvalid(f"dataset source list holds {bad[0]!r}, not a path")
    else:
        raise ArrowInvalid(f"dataset source must be a path, a glob or a list of paths, got "
                           f"{type(source).__name__}")
    out: List[Tuple[str, Optional[str]]] = []
    for p in sources:
        if os.path.isdir(p):
            found: List[str] = []
            _walk(p, found)
            base = os.path.abspath(p)
            out.extend((f, base) for f in
                       (found if manifest_files(p) is not None else sorted(found)))
        elif os.path.isfile(p):
            out.append((os.path.abspath(p), None))
        elif glob.has_magic(p):
            matches = sorted(m for m in glob.glob(p)
                             if not os.path.basename(m).startswith(("_", ".")))
            if not matches:
                raise ArrowInvalid(f"dataset path {p!r} matches no file")
            for m in matches:
                if os.path.isdir(m):
                    found = []
                    _walk(m, found)
                    out.extend((f, None) for f in sorted(found))
                else:
                    out.append((os.path.abspath(m), None))
        else:
            raise FileNotFoundError(2, "No such file or directory", p)
    return out
