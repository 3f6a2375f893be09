"""IPC files on object stores and other fsspec filesystems (``s3://``, ``gs://``, ``memory://``).

Where a path names a remote object, the readers and writers come here:

* **which filesystem**: ``resolve(source, filesystem, storage_options)`` turns a URL with a
  scheme fsspec knows into ``(filesystem, path)``; ``filesystem=`` (an fsspec filesystem, as
  pyarrow's ``filesystem=`` arguments take a filesystem) says where a plain path lives;
  ``storage_options=`` (the name polars, pandas and fsspec use) configures the filesystem a
  URL makes (credentials, endpoint).  ``file:`` URLs and plain paths without ``filesystem=``
  stay local (mapped), as they always were.
* **reading**: an IPC file by byte ranges (``ranged``: the footer, then each batch's header
  and each touched column's buffers, nearby ranges in one request).  The object is opened
  with fsspec's ``"none"`` cache, so a read asks the store for those bytes only, not for a
  readahead block (s3fs's default block is 50 MB).  A stream is read in order, with fsspec's
  readahead.
* **writing**: ``RemoteTarget`` is ``files.AtomicTarget`` for an object: the bytes go to the
  filesystem's uncommitted file (``autocommit=False``: on S3 a multipart upload, which makes
  no object until it completes); ``commit()`` publishes the whole object at once,
  ``abort()`` discards it (aborting the multipart upload).  So a writer that fails, is
  aborted or is garbage-collected leaves no object, and the object under the name is the old
  one or the complete new one.  As locally, ``commit()`` replaces an existing object;
  ``commit(replace=False)`` publishes only if the name is free (S3's conditional
  ``If-None-Match: *``; ``FileExistsError`` otherwise), the primitive a commit protocol's
  create-once names need.
* **appending** is refused (``ObjectStoreAppendError``): objects are immutable.

Errors: a missing object is ``FileNotFoundError`` naming the URL, a refusal by the store
(credentials, permissions) or no credentials at all ``PermissionError``, a store that cannot
be reached ``ConnectionError``, damage ``ArrowInvalid`` as locally.
"""
from __future__ import annotations

import errno
import os
import posixpath
import urllib.parse
from typing import Optional, Tuple

from ...errors import ArrowInvalid, ArrowNotImplementedError
from .files import temporary_name

__all__ = ["is_url", "local_file_url", "resolve", "open_for_ranges", "open_for_stream", "RemoteTarget",
           "remote_target", "local_filesystem", "ObjectStoreAppendError", "refuse_append", "display_url",
           "precondition_failed", "store_error", "client_error"]


class ObjectStoreAppendError(ArrowNotImplementedError):
    """``append_file`` on an object store: objects cannot be changed in place."""


def is_url(source) -> bool:
    """Whether ``source`` is a string URL with a scheme other than ``file:`` (``s3://b/k``)."""
    if not isinstance(source, str):
        return False
    scheme, sep, _ = source.partition("://")
    return bool(sep) and scheme.lower() != "file" and scheme.replace("+", "").replace(
        "-", "").replace(".", "").isalnum()


def local_file_url(source):
    """The local path a ``file:`` URL names (``file:/a``, ``file:///a``, ``file://localhost/a``),
    ``source`` itself when it is not one; ``ArrowInvalid`` for a ``file:`` URL naming another
    host (its files are not on this machine)."""
    if not isinstance(source, str) or source[:5].lower() != "file:":
        return source
    rest = source[5:]
    if rest.startswith("//"):
        host, slash, path = rest[2:].partition("/")
        if host.lower() not in ("", "localhost"):
            raise ArrowInvalid(f"{source!r}: a file: URL of host {host!r}; only this machine's "
                               f"files (file:///path or file://localhost/path) can be read or written")
        return urllib.parse.unquote(slash + path)
    return urllib.parse.unquote(rest)


def _check_filesystem(filesystem) -> None:
    if isinstance(filesystem, str) or not hasattr(filesystem, "open"):
        hint = ("; wrap a pyarrow.fs filesystem as fsspec.implementations.arrow.ArrowFSWrapper(fs)"
                if hasattr(filesystem, "open_input_file") else "")
        raise ArrowInvalid(f"filesystem= takes an fsspec filesystem object (s3fs.S3FileSystem, "
                           f"fsspec.filesystem('s3', ...)), got {type(filesystem).__name__}"
                           f"{hint}")


def resolve(source, filesystem=None, storage_options: Optional[dict] = None
            ) -> Optional[Tuple[object, str]]:
    """``(filesystem, path)`` when ``source`` lives on an fsspec filesystem, None when it is
    local (a path, a ``file:`` URL, a buffer, a file object) and no ``filesystem`` is given.

    A URL with ``filesystem=`` must be of that filesystem's protocol (its scheme is dropped,
    as pyarrow does); ``storage_options`` goes to the filesystem a URL makes, and cannot go
    with ``filesystem=`` (that filesystem is configured already)."""
    if storage_options is not None and not isinstance(storage_options, dict):
        raise ArrowInvalid(f"storage_options= takes a dict of the filesystem's options, got "
                           f"{type(storage_options).__name__}")
    if filesystem is not None:
        _check_filesystem(filesystem)
        if storage_options:
            raise ArrowInvalid("storage_options= configures the filesystem a URL makes; with "
                               "filesystem=, configure that filesystem instead")
        if not isinstance(source, (str, os.PathLike)):
            raise ArrowInvalid(f"filesystem= goes with a path, not a {type(source).__name__}")
        path = os.fspath(source)
        if is_url(path):
            protocols = filesystem.protocol
            protocols = (protocols,) if isinstance(protocols, str) else tuple(protocols)
            scheme = path.partition("://")[0].lower()
            if scheme not in protocols:
                raise ArrowInvalid(f"{path!r}: a {scheme}:// URL, but filesystem= is a "
                                   f"{type(filesystem).__name__} ({'/'.join(protocols)})")
        return filesystem, _folder_slash_kept(path, filesystem._strip_protocol(path))
    if not is_url(source):
        if storage_options:
            raise ArrowInvalid(f"storage_options= applies to URLs (s3://...), not to the local "
                               f"{type(source).__name__} {source!r}")
        return None
    filesystem, path = url_to_filesystem(source, storage_options)
    return filesystem, _folder_slash_kept(source, path)


def url_to_filesystem(url: str, storage_options: Optional[dict] = None) -> Tuple[object, str]:
    """``fsspec.core.url_to_fs(url, **storage_options)``, its failures to make a filesystem as
    ``ArrowNotImplementedError`` naming the URL and what would serve it (every URL arrowmm
    opens goes through here)."""
    try:
        import fsspec  # (optional: only URLs and filesystem= need it)
    except ImportError:
        raise ArrowNotImplementedError(f"{url!r}: a URL needs fsspec and the package of its "
                                       f"scheme (pip install fsspec s3fs, gcsfs, adlfs...)") from None
    try:
        return fsspec.core.url_to_fs(url, **(storage_options or {}))
    except (ImportError, ValueError) as exc:  # (no package for the scheme, an unknown scheme)
        raise ArrowNotImplementedError(f"{url!r}: fsspec cannot serve this URL: {exc}") from None
    except OSError as exc:
        if url.partition("://")[0].lower() != "hdfs":
            raise
        # (fsspec serves hdfs:// through pyarrow's libhdfs: a JVM and Hadoop's native library)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ArrowNotImplementedError(
            f"{url!r}: fsspec reads hdfs:// through pyarrow's libhdfs, which could not load "
            f"({first}); WebHDFS needs neither: webhdfs://<namenode>:<its HTTP port, 9870 by "
            f"default>/path, or read it in Spark with format('arrowmm_jvm')") from None


def _folder_slash_kept(given: str, path: str) -> str:
    """``path`` (as the filesystem strips ``given``) ending in ``/`` when ``given`` does: a
    folder's name, refused where a file is opened, as ``open`` refuses it (fsspec filesystems
    strip the slash: ``x.arrow/`` would be ``x.arrow``)."""
    return path + "/" if given.endswith("/") and not path.endswith("/") else path


def display_url(filesystem, path: str) -> str:
    """``path`` on ``filesystem`` as a URL (``s3://bucket/key``), for messages."""
    try:
        return filesystem.unstrip_protocol(path)
    except Exception:  # (a filesystem without protocols: the path as it is)
        return path


def _store_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is the filesystem's or its client's (translated by ``store_error``)."""
    return isinstance(exc, (OSError, ValueError)) or client_error(exc)


def client_error(exc: BaseException) -> bool:
    """Whether ``exc`` is an error of a store's client library that is no ``OSError``:
    botocore's (no credentials, an endpoint that cannot be reached), known by class name, so
    that arrowmm does not import botocore."""
    return any(c.__name__ == "BotoCoreError" for c in type(exc).__mro__)


def store_error(exc: BaseException, url: str, action: str) -> BaseException:
    """An error of the filesystem or its client as the conventional type, naming ``url``:
    what ``open`` would raise locally, ``PermissionError`` for credentials refused or
    missing, ``ConnectionError`` for a store that cannot be reached."""
    if client_error(exc):
        names = [c.__name__ for c in type(exc).__mro__]
        if any("Credential" in n for n in names):
            return PermissionError(errno.EACCES, f"No credentials for the store ({exc}); give "
                                   f"them (storage_options=, the AWS_* variables)", url)
        if any(n in ("ConnectionError", "HTTPClientError") for n in names):
            return ConnectionError(f"cannot {action} {url}: the store cannot be reached: {exc}")
        return OSError(f"cannot {action} {url}: {type(exc).__name__}: {exc}")
    if isinstance(exc, FileNotFoundError):
        return FileNotFoundError(errno.ENOENT, "No such file or directory", url)
    if isinstance(exc, IsADirectoryError):
        return IsADirectoryError(errno.EISDIR, "Is a directory", url)
    if isinstance(exc, NotADirectoryError):
        return NotADirectoryError(errno.ENOTDIR, "Not a directory", url)
    if isinstance(exc, PermissionError):
        return PermissionError(errno.EACCES, f"Permission denied by the store ({exc}); check "
                               f"the credentials (storage_options=, the AWS_* variables)", url)
    if isinstance(exc, FileExistsError):
        return FileExistsError(errno.EEXIST, "File exists", url)
    if isinstance(exc, OSError):
        return type(exc)(exc.errno, f"cannot {action} {url}: {exc}", url)
    return ArrowInvalid(f"cannot {action} {url}: {type(exc).__name__}: {exc}")


def _refuse_folder_name(filesystem, path: str, url: str, writing: bool) -> None:
    """What ``open(path)`` raises for a ``path`` ending in ``/`` (a folder's name):
    ``IsADirectoryError`` for a folder, ``NotADirectoryError`` for a file, and for nothing
    there ``FileNotFoundError`` (reading) or ``IsADirectoryError`` (writing)."""
    name = path.rstrip("/") or path
    if filesystem.isdir(name) or (writing and not filesystem.isfile(name)):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", url)
    if filesystem.isfile(name):
        raise NotADirectoryError(errno.ENOTDIR, "Not a directory", url)
    raise FileNotFoundError(errno.ENOENT, "No such file or directory", url)


def _is_folder(file) -> bool:
    """Whether an opened fsspec file describes a folder (``details``, no request made)."""
    details = file.__dict__.get("details") if hasattr(file, "__dict__") else None
    if details is None:
        details = getattr(file, "_details", None)
    return isinstance(details, dict) and details.get("type") == "directory"


def _open_read(filesystem, path: str, ranges: bool):
    """``path`` opened for reading, ``ranges``: with fsspec's ``"none"`` cache.  A file opened
    as a folder is opened again past the filesystem's listing cache (where a key is also a
    prefix, ``a.arrow`` and ``a.arrow/b.arrow``, s3fs's cache of a listing holds both, and
    its ``info`` may answer with the folder's), and ``IsADirectoryError`` if it is one still
    (s3fs opens a prefix as a 0-byte file)."""
    url = display_url(filesystem, path)
    try:
        if path.endswith("/"):
            _refuse_folder_name(filesystem, path, url, writing=False)
        for attempt in range(2):
            if ranges:
                try:
                    file = filesystem.open(path, "rb", cache_type="none")
                except TypeError:  # (an implementation whose open takes no cache options)
                    file = filesystem.open(path, "rb")
            else:
                file = filesystem.open(path, "rb")
            if not _is_folder(file):
                return file
            file.close()
            if attempt:
                raise IsADirectoryError(errno.EISDIR, "Is a directory", url)
            filesystem.invalidate_cache(path)
    except Exception as exc:
        if not _store_failure(exc):
            raise
        raise store_error(exc, url, "open") from None


def open_for_ranges(filesystem, path: str):
    """``path`` opened for reading by ranges: each read asks the store for those bytes only
    (fsspec's ``"none"`` cache; a filesystem without caches is opened as it opens)."""
    return _open_read(filesystem, path, ranges=True)


def open_for_stream(filesystem, path: str):
    """``path`` opened for reading in order, with the filesystem's readahead."""
    return _open_read(filesystem, path, ranges=False)


#: The fsspec implementations whose files opened with ``autocommit=False`` publish nothing
#: until ``commit()`` (s3fs: a multipart upload; gcsfs: a resumable upload).  Others are
#: written under a hidden temporary name beside the target and moved over it on commit:
#: ``memory://`` creates the file when it is opened, and fsspec's local file is written in
#: $TMPDIR and moved with ``shutil.move``, a copy into the final name from another filesystem.
UNCOMMITTED_UPLOADS = ("s3fs", "gcsfs")


def _module_of(filesystem) -> str:
    return type(filesystem).__module__


def local_filesystem(filesystem) -> bool:
    """Whether ``filesystem`` is fsspec's own local one: its files are this machine's, written
    as a local path is (``files.atomic_target``: an existing file's mode and owner kept,
    ``fsync`` honoured, ``replace=False`` by a link), not as an object."""
    return _module_of(filesystem) == "fsspec.implementations.local"


def _uploads_uncommitted(filesystem) -> bool:
    module = _module_of(filesystem)
    return any(module == m or module.startswith(m + ".") for m in UNCOMMITTED_UPLOADS)


class RemoteTarget:
    """An object being written, published whole by ``commit()`` or discarded by ``abort()``:
    ``files.AtomicTarget``'s interface (``path``, ``commit``, ``abort``, ``done``) over an fsspec
    file (``file``) opened with ``autocommit=False``, or, on a filesystem that publishes at
    open, under a temporary name (``tmp``) moved over the target on commit."""

    __slots__ = ("path", "file", "tmp", "_fs", "_key", "_done", "_pid")

    def __init__(self, filesystem, key: str, file, tmp: Optional[str] = None):
        self.path = display_url(filesystem, key)
        self.file = file
        self.tmp = tmp
        self._fs = filesystem
        self._key = key
        self._done = False
        self._pid = os.getpid()

    @property
    def done(self) -> bool:
        return self._done

    def commit(self, fsync: bool = False, replace: bool = True) -> None:
        """Publish the object (``fsync``: nothing more to do, a store's commit is durable).
        ``replace=False``: only if no object has the name (``FileExistsError`` otherwise,
        the upload discarded); on S3 a conditional write, so a concurrent creator's object
        is never replaced (elsewhere a check then a move, which a concurrent creator can
        race)."""
        if self._done:
            raise ValueError(f"{self.path}: already committed or aborted")
        self._done = True
        try:
            self.file.close()  # (uploads what is buffered; publishes nothing yet)
            if not replace and not _conditional(self.file) and self._fs.exists(self._key):
                raise FileExistsError(errno.EEXIST, "File exists", self.path)
            if self.tmp is None:
                self.file.commit()
            else:
                self._fs.mv(self.tmp, self._key)
        except BaseException as exc:
            self._discard()
            if isinstance(exc, FileExistsError) or precondition_failed(exc):
                raise FileExistsError(errno.EEXIST, "File exists (created by another writer "
                                      "while this one wrote)", self.path) from None
            if _store_failure(exc) and not isinstance(exc, (ArrowInvalid, FileExistsError)):
                raise store_error(exc, self.path, "write") from exc
            raise

    def abort(self) -> None:
        """Discard what was written: no object is made, an existing one keeps its bytes."""
        if self._done:
            return
        self._done = True
        if os.getpid() != self._pid:  # (a forked child's copy, finalized as it exits: the
            try:                      # upload is the parent's, still being written)
                self.file.closed = True  # (and its buffer is not sent from here)
            except AttributeError:
                pass
            return
        self._discard()

    def _discard(self) -> None:
        try:
            if self.tmp is None:
                self.file.discard()
        finally:
            try:
                self.file.closed = True  # (fsspec files: close() would upload the buffer)
            except AttributeError:  # (an io file, a local one: closing uploads nothing)
                self.file.close()
            if self.tmp is not None:
                try:
                    self._fs.rm(self.tmp)
                except (OSError, ValueError):
                    pass

    def __repr__(self):
        return f"<arrowmm.RemoteTarget {self.path!r}>"


def _conditional(file) -> bool:
    """Whether ``file``'s commit is conditional on the name being free (s3fs, mode ``xb``)."""
    return "x" in getattr(file, "mode", "") and type(file).__module__.startswith("s3fs")


def precondition_failed(exc: BaseException) -> bool:
    """Whether ``exc`` is a store's refusal of a conditional request (HTTP 412: an
    If-None-Match put over an object, or a read pinned to an ETag the object no longer has,
    which s3fs raises as ``OSError(EBUSY)``)."""
    text = f"{type(exc).__name__} {exc}"
    if isinstance(exc, OSError) and exc.errno == errno.EBUSY and "etag" in text.lower():
        return True
    return "PreconditionFailed" in text or ("412" in text and "condition" in text.lower())


def remote_target(filesystem, path: str, replace: bool = True) -> RemoteTarget:
    """A ``RemoteTarget`` for ``path`` on ``filesystem``: nothing is visible until ``commit``.
    ``replace=False`` opens the object in exclusive mode where the filesystem has one (S3:
    the upload completes only if no object has the name)."""
    url = display_url(filesystem, path)
    try:
        if path.endswith("/"):
            _refuse_folder_name(filesystem, path, url, writing=True)
        if filesystem.isdir(path):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", url)
    except Exception as exc:
        if isinstance(exc, (IsADirectoryError, NotADirectoryError)) or not _store_failure(exc):
            raise
        raise store_error(exc, url, "write") from None
    tmp = None
    try:
        if _uploads_uncommitted(filesystem):
            mode = "xb" if not replace and _module_of(filesystem).startswith("s3fs") else "wb"
            file = filesystem.open(path, mode, autocommit=False)
        else:
            folder, name = posixpath.split(path)
            tmp = posixpath.join(folder, temporary_name(name))
            file = filesystem.open(tmp, "wb")
    except Exception as exc:
        if not _store_failure(exc):
            raise
        raise store_error(exc, url, "write") from None
    return RemoteTarget(filesystem, path, file, tmp)


def refuse_append(path, filesystem=None) -> None:
    """Raise ``ObjectStoreAppendError`` when ``path`` names an object on a remote store."""
    if filesystem is None and not is_url(path):
        return
    url = os.fspath(path) if filesystem is None else display_url(filesystem, os.fspath(path))
    raise ObjectStoreAppendError(
        f"{url}: cannot append to an object store's file: objects are immutable (a store "
        f"replaces an object whole, it never extends one). Write the new batches as a new "
        f"file beside it in a dataset folder (arrowmm.write_file('{url.rsplit('/', 1)[0]}/"
        f"part-<n>.arrow', batches)) and read the folder with arrowmm.dataset(...)")
