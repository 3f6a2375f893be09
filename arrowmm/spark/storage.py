"""Where a directory's bytes live: the few operations the commit protocol and the reader need.

The Python data source reads and writes through one ``Storage`` per path (as the JVM
connector does through ``Storage.java``): ``LocalStorage`` for local paths (``os``: mapped
reads, hard links, renames) and ``FsspecStorage`` for object stores (``s3a://``, ``s3://``,
``s3n://`` through s3fs; ``gs://``, ``abfs://`` ... through fsspec when their package is
installed: reads by byte ranges, objects published whole).  ``storage_for(path, options)``
picks one from the path's scheme (``paths.resolve_path`` already refused every scheme that
cannot be served).

What differs per store is said here once:

* ``create_once``, the commit protocol's primitive (docs/commit-protocol.md §5.5, §12):
  locally ``link(2)`` of a complete, fsynced temporary; on S3 a conditional PUT
  (``If-None-Match: *``, ``RemoteTarget.commit(replace=False)``).  Either creates the name
  only if it is free, whole or not at all.  Other fsspec stores have no such operation wired
  up, so they are served for reads only (``writable``).
* ``in_place``: locally a task writes a hidden temporary that the commit renames to the
  job's final name; on an object store (a rename is a copy and a delete) a task writes its
  file directly under a final name unique to its attempt, invisible until a version lists it
  (§5.2), through ``RemoteTarget`` (nothing is visible until the upload completes).
* ``open_reader``: locally a reader that maps nothing (``ipc.read.unmapped``: each message read
  by ``pread`` into memory of its own), so a file another program truncates under a task is
  ``ArrowInvalid`` naming it and where it now ends, not a SIGBUS that kills the worker; the
  read option ``mmap`` (``storage_for``'s ``mmap``) keeps them mapped.  On a
  store ``open_ranged`` (the footer, then each batch's header and buffers by byte ranges,
  never the whole object).

S3 settings: ``s3_options(hadoop)`` turns the session's Hadoop S3A settings
(``fs.s3a.endpoint``, ``fs.s3a.access.key``, ``fs.s3a.path.style.access`` ...: what
``arrowmm.spark.register`` records) into s3fs's ``storage_options``; the read/write option
``storage_options`` (a JSON object) adds to or overrides them, and without either s3fs finds
credentials and endpoint as boto does (the ``AWS_*`` variables, ``~/.aws``).
"""
from __future__ import annotations

import errno
import glob as globbing
import os
import posixpath
import uuid
from typing import Dict, List, Optional

from ..errors import ArrowError, ArrowInvalid, ArrowNotImplementedError
from ..ipc.core.object_store import open_for_ranges, remote_target
from ..ipc.read.file_reader import FileReader
from ..ipc.read.indexed import IndexedStreamReader
from ..ipc.read.ranged import RangedFileReader, RangeSource
from ..ipc.read.unmapped import UnmappedFileReader, UnmappedIndexedStreamReader

__all__ = ["Storage", "LocalStorage", "FsspecStorage", "storage_for", "scheme_of", "S3_SCHEMES",
           "s3_options", "merge_options", "HADOOP_S3A", "MMAP_DEFAULT"]

#: Hadoop's S3 schemes, all served by s3fs (its protocol ``s3``).
S3_SCHEMES = ("s3a", "s3", "s3n")

#: Local reads map nothing unless asked: Spark copies each batch to the JVM anyway, so the copy
#: a read makes cost the Python source's full scan in benchmarks/bench_spark.py about 0-6%
#: (within the noise of a shared machine), and a cut file is an error, not a dead worker.
MMAP_DEFAULT = False


def scheme_of(path: str) -> Optional[str]:
    """The lower-cased scheme of a resolved path (``s3a``), None for a local path."""
    head, sep, _ = path.partition("://")
    return head.lower() if sep and "/" not in head else None


class Storage:
    """The operations on one filesystem that the Python source uses (see the module's text).

    Paths are what ``paths.resolve_path`` returns: local absolute paths, or URLs.
    """

    #: Tasks write final, attempt-unique names in place (nothing renamed at commit).
    in_place = False
    #: Jobs can be committed here (the store has a create-only-if-absent).
    writable = True

    def join(self, directory: str, name: str) -> str:
        """``name`` inside ``directory``."""
        raise NotImplementedError

    def names(self, directory: str) -> List[str]:
        """The names in ``directory`` (FileNotFoundError when it has none or is missing)."""
        raise NotImplementedError

    def is_dir(self, path: str) -> bool:
        """Whether ``path`` is a folder (on a store: a prefix some object has)."""
        raise NotImplementedError

    def is_file(self, path: str) -> bool:
        """Whether ``path`` is a file (an object)."""
        raise NotImplementedError

    def read(self, path: str) -> bytes:
        """The whole content of a small file (a manifest); FileNotFoundError when missing."""
        raise NotImplementedError

    def head(self, path: str, size: int) -> Optional[bytes]:
        """The first ``size`` bytes of ``path``, None when it cannot be read."""
        raise NotImplementedError

    def glob(self, pattern: str) -> List[str]:
        """The paths matching ``pattern``."""
        raise NotImplementedError

    def make_dirs(self, path: str) -> None:
        """Make the folder ``path`` (and its parents) if missing."""

    def make_log_folder(self, path: str) -> None:
        """Make the commit log's folder ``path`` if missing; an error if something else is there."""

    def sync_dir(self, path: str) -> None:
        """Make the names created in folder ``path`` durable."""

    def create_once(self, path: str, data: bytes) -> bool:
        """Create ``path`` holding ``data``, whole, only if the name is free: False when it is
        taken (docs/commit-protocol.md §5.5)."""
        raise NotImplementedError

    def put(self, path: str, data: bytes) -> None:
        """Replace ``path`` by ``data`` atomically (``_SUCCESS``, tombstones)."""
        raise NotImplementedError

    def delete(self, path: str) -> None:
        """Remove the file ``path`` (nothing when it is gone already)."""
        raise NotImplementedError

    def rename_new(self, src: str, dst: str) -> None:
        """Move ``src`` to the free name ``dst`` (stores writing in place never rename)."""
        raise NotImplementedError

    def writer_options(self) -> Dict[str, object]:
        """Keyword arguments of ``arrowmm.new_file`` for a task's data file here."""
        raise NotImplementedError

    def sink(self, path: str) -> str:
        """What ``arrowmm.new_file`` takes as the sink for ``path`` (with ``writer_options``)."""
        return path

    def open_reader(self, path: str, fmt: str, entries=None):
        """A reader of the data file ``path`` (``fmt``: "file" or "stream"; ``entries``: a
        stream's message index)."""
        raise NotImplementedError


class LocalStorage(Storage):
    """Local files: ``os`` calls, hard links for the primitive, renames, reads by ``pread``
    (``mmap``: mapped)."""

    def __init__(self, mmap: bool = MMAP_DEFAULT):
        self.mmap = mmap

    def join(self, directory: str, name: str) -> str:
        return os.path.join(directory, name)

    def names(self, directory: str) -> List[str]:
        try:
            return os.listdir(directory)
        except NotADirectoryError:
            raise FileNotFoundError(errno.ENOENT, "Not a folder", directory) from None

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def is_file(self, path: str) -> bool:
        return os.path.isfile(path)

    def read(self, path: str) -> bytes:
        with open(path, "rb") as f:
            return f.read()

    def head(self, path: str, size: int) -> Optional[bytes]:
        try:
            with open(path, "rb") as f:
                return f.read(size)
        except OSError:
            return None

    def glob(self, pattern: str) -> List[str]:
        return [os.path.abspath(p) for p in globbing.glob(pattern)]

    def make_dirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def make_log_folder(self, path: str) -> None:
        try:
            os.mkdir(path)
        except FileExistsError:
            pass
        if not os.path.isdir(path) or os.path.islink(path):
            raise ArrowInvalid(f"{path}: the commit log must be a folder (found something else)")

    def sync_dir(self, path: str) -> None:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _write_temporary(self, folder: str, data: bytes) -> str:
        tmp = os.path.join(folder, f".tmp-{os.getpid()}-{uuid.uuid4().hex}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_NOFOLLOW", 0), 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        return tmp

    def create_once(self, path: str, data: bytes) -> bool:
        """``link(2)`` of a complete, fsynced temporary: ``link`` never replaces a name."""
        folder = os.path.dirname(path)
        tmp = self._write_temporary(folder, data)
        try:
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
            except OSError as exc:
                if exc.errno in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV,
                                 errno.EMLINK):
                    raise ArrowError(f"{folder}: cannot create {os.path.basename(path)}: this "
                                     f"filesystem refuses hard links ({exc.strerror}), which the "
                                     f"commit protocol needs to create a version without "
                                     f"replacing one") from exc
                raise
        finally:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        self.sync_dir(folder)
        return True

    def put(self, path: str, data: bytes) -> None:
        tmp = self._write_temporary(os.path.dirname(path), data)
        os.replace(tmp, path)

    def delete(self, path: str) -> None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass

    def rename_new(self, src: str, dst: str) -> None:
        if os.path.lexists(dst):
            raise ArrowInvalid(f"{dst}: already exists; a job's file names must be unique and "
                               f"committed once")
        os.rename(src, dst)

    def writer_options(self) -> Dict[str, object]:
        return {"fsync": True}

    def open_reader(self, path: str, fmt: str, entries=None):
        if self.mmap:
            return FileReader(path) if fmt == "file" else IndexedStreamReader(path, entries)
        return (UnmappedFileReader(path) if fmt == "file"
                else UnmappedIndexedStreamReader(path, entries))

    def __repr__(self):
        return f"LocalStorage(mmap={self.mmap})"


class FsspecStorage(Storage):
    """An object store through an fsspec filesystem (s3fs for ``s3a://``/``s3://``/``s3n://``).

    ``scheme``: the scheme paths here are written with (kept as the user gave it);
    ``options``: the filesystem's ``storage_options``.  The filesystem is made on first use in
    the process that uses it (a task, the committer), without a listing cache: a listing of
    the commit log must show what other writers created meanwhile.  Pickles as its options.
    """

    in_place = True

    def __init__(self, scheme: str, options: Optional[dict] = None):
        self.scheme = scheme
        self.options = dict(options or {})
        self.protocol = "s3" if scheme in S3_SCHEMES else scheme
        self.writable = self.protocol == "s3"
        self._fs = None

    def __getstate__(self):
        return {"scheme": self.scheme, "options": self.options}

    def __setstate__(self, state):
        self.__init__(state["scheme"], state["options"])

    @property
    def fs(self):
        """The fsspec filesystem (made on first use)."""
        if self._fs is None:
            import fsspec
            options = dict(self.options)
            options.setdefault("use_listings_cache", False)
            options.setdefault("skip_instance_cache", True)
            self._fs = fsspec.filesystem(self.protocol, **options)
        return self._fs

    def key(self, path: str) -> str:
        """``path`` as the filesystem names it (``bucket/key`` for ``s3a://bucket/key``)."""
        if self.protocol == "s3":
            return path.partition("://")[2]
        return self.fs._strip_protocol(path)

    def url(self, key: str) -> str:
        """The path of ``key`` written with this storage's scheme."""
        return f"{self.scheme}://{key.lstrip('/')}"

    def join(self, directory: str, name: str) -> str:
        return posixpath.join(directory, name)

    def names(self, directory: str) -> List[str]:
        key = self.key(directory).rstrip("/")
        self.fs.invalidate_cache(key)
        return [posixpath.basename(p.rstrip("/")) for p in self.fs.ls(key, detail=False)
                if p.rstrip("/") != key]

    def is_dir(self, path: str) -> bool:
        return self.fs.isdir(self.key(path))

    def is_file(self, path: str) -> bool:
        return self.fs.isfile(self.key(path))

    def read(self, path: str) -> bytes:
        return self.fs.cat_file(self.key(path))

    def head(self, path: str, size: int) -> Optional[bytes]:
        try:
            return self.fs.cat_file(self.key(path), start=0, end=size)
        except OSError:
            return None

    def glob(self, pattern: str) -> List[str]:
        return [self.url(k) for k in self.fs.glob(self.key(pattern))]

    def _refuse_writes(self) -> None:
        if not self.writable:
            raise ArrowNotImplementedError(
                f"{self.scheme}://: the Python data source writes to local paths and S3 only "
                f"(docs/commit-protocol.md §12: committing needs a create-only-if-absent, "
                f"which it makes on S3 with a conditional PUT)")

    def create_once(self, path: str, data: bytes) -> bool:
        """A conditional PUT (``If-None-Match: *``): S3 stores the object only if no object
        has the key, and answers 412 to the loser.  A refusal whose object holds exactly
        ``data`` is taken as this writer's own (a PUT retried after a lost answer)."""
        self._refuse_writes()
        key = self.key(path)
        target = remote_target(self.fs, key, replace=False)
        try:
            target.file.write(data)
        except BaseException:
            target.abort()
            raise
        try:
            target.commit(replace=False)
        except FileExistsError:
            try:
                return self.fs.cat_file(key) == data
            except FileNotFoundError:
                return False
        return True

    def put(self, path: str, data: bytes) -> None:
        self._refuse_writes()
        self.fs.pipe_file(self.key(path), data)

    def delete(self, path: str) -> None:
        try:
            self.fs.rm_file(self.key(path))
        except FileNotFoundError:
            pass

    def rename_new(self, src: str, dst: str) -> None:
        raise ArrowNotImplementedError(f"{src}: objects are written in place, never renamed")

    def writer_options(self) -> Dict[str, object]:
        self._refuse_writes()
        return {"filesystem": self.fs}

    def sink(self, path: str) -> str:
        return self.key(path)

    def open_reader(self, path: str, fmt: str, entries=None):
        if fmt != "file":
            raise ArrowNotImplementedError(
                f"{path}: an Arrow IPC stream on an object store: the Python data source reads "
                f"the IPC file format there (by byte ranges, from its footer); rewrite it as a "
                f"file (arrowmm.new_file) or read it with the JVM connector (format('arrowmm_jvm'))")
        key = self.key(path)
        # (fsspec's "none" cache: each read asks for its bytes only, no readahead block)
        source = RangeSource(open_for_ranges(self.fs, key), description=path, owns=True)
        try:
            return RangedFileReader(source)
        except BaseException:
            source.close()
            raise

    def __repr__(self):
        return f"FsspecStorage({self.scheme!r})"


_LOCAL = {mapped: LocalStorage(mapped) for mapped in (False, True)}


def storage_for(path: str, options: Optional[dict] = None,
                mmap: bool = MMAP_DEFAULT) -> Storage:
    """The storage of a resolved path: ``LocalStorage`` for a local one (mapping its files with
    ``mmap``), else an ``FsspecStorage`` made with ``options`` (s3fs's ``storage_options``)."""
    scheme = scheme_of(path)
    if scheme is None:
        return _LOCAL[bool(mmap)]
    return FsspecStorage(scheme, options or {})


#: Hadoop S3A settings and where each goes in s3fs's ``storage_options``.
HADOOP_S3A = ("fs.s3a.endpoint", "fs.s3a.access.key", "fs.s3a.secret.key",
              "fs.s3a.session.token", "fs.s3a.path.style.access",
              "fs.s3a.connection.ssl.enabled", "fs.s3a.endpoint.region", "fs.s3a.anonymous")


def _truth(value) -> bool:
    return str(value).strip().lower() == "true"


def s3_options(hadoop: Optional[dict]) -> dict:
    """s3fs's ``storage_options`` for the Hadoop S3A settings in ``hadoop`` (``fs.s3a.*``
    names to values; those not set are left to s3fs's own lookup: ``AWS_*`` variables)."""
    hadoop = {k: v for k, v in (hadoop or {}).items() if v not in (None, "")}
    out: dict = {}
    client: dict = {}
    ssl = _truth(hadoop.get("fs.s3a.connection.ssl.enabled", "true"))
    endpoint = hadoop.get("fs.s3a.endpoint")
    if endpoint:
        if "://" not in endpoint:
            endpoint = ("https://" if ssl else "http://") + endpoint
        client["endpoint_url"] = endpoint
    if hadoop.get("fs.s3a.endpoint.region"):
        client["region_name"] = hadoop["fs.s3a.endpoint.region"]
    if client:
        out["client_kwargs"] = client
    if "fs.s3a.connection.ssl.enabled" in hadoop and not ssl:
        out["use_ssl"] = False
    for name, option in (("fs.s3a.access.key", "key"), ("fs.s3a.secret.key", "secret"),
                         ("fs.s3a.session.token", "token")):
        if hadoop.get(name):
            out[option] = hadoop[name]
    if _truth(hadoop.get("fs.s3a.path.style.access", "false")):
        out["config_kwargs"] = {"s3": {"addressing_style": "path"}}
    if _truth(hadoop.get("fs.s3a.anonymous", "false")):
        out["anon"] = True
    return out


def merge_options(base: Optional[dict], extra: Optional[dict]) -> dict:
    """``base`` with ``extra`` laid over it, nested dicts (``client_kwargs``) merged."""
    out = dict(base or {})
    for key, value in (extra or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out
