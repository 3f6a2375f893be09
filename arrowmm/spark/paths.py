"""Where a load or save path of the Python data source points: one resolver, Spark's rules.

Spark's file sources read a path as Hadoop's ``Path`` does and qualify it with the session's
Hadoop configuration: a scheme is what comes before the first ``:`` when no ``/`` comes
before it, an authority follows ``//``, and a path without a scheme means ``fs.defaultFS``
(relative: against that filesystem's working directory, the driver's current directory for
the local one).  ``file:/abs``, ``file:///abs`` and ``file://localhost/abs`` all name
``/abs``; ``file:rel`` is relative.  This module applies the same rules and returns a local
absolute path, or the URL of an object (``s3a://bucket/key``: S3 through s3fs, for reads and
writes; ``gs://``, ``abfs://`` ... through fsspec for reads, when its package is installed;
``storage.py`` serves them).  Everything else (HDFS, ``viewfs://``, an unknown scheme, a
missing package) is refused, naming the scheme and what would serve it, before a task runs
or a byte is written: an ``s3a://`` path used to become the folder ``s3a:/`` in the current
directory, and ``file://localhost/x`` the folder ``/localhost/x``.

The Python source runs its planning in Python workers that Spark starts on the driver, which
cannot ask the session for its Hadoop configuration: ``arrowmm.spark.register(spark)`` records
the session's ``fs.defaultFS`` and S3A settings on the class it registers
(``session_default_fs``, ``session_s3a``); otherwise the worker reads ``fs.defaultFS`` from
``core-site.xml`` in ``HADOOP_CONF_DIR`` (as Hadoop does), and without one the default is the
local filesystem, as in Hadoop.
"""
from __future__ import annotations

import os
import posixpath
import xml.etree.ElementTree as ElementTree
from typing import Optional, Tuple

from ..errors import ArrowInvalid, ArrowNotImplementedError
from .storage import HADOOP_S3A, S3_SCHEMES

__all__ = ["resolve_path", "split_path", "default_fs", "session_default_fs", "session_s3a",
           "LOCAL_FS", "JVM_ONLY"]

#: Hadoop's default ``fs.defaultFS``: the local filesystem.
LOCAL_FS = "file:///"
_LOCAL_HOSTS = ("", "localhost")

#: Hadoop filesystems that only the JVM connector serves (through Hadoop's FileSystem), and
#: how else to reach them.
JVM_ONLY = {
    "hdfs": "mount HDFS locally (its NFS gateway or fuse-dfs)",
    "viewfs": "mount the filesystems its mount table names locally",
    "webhdfs": "mount HDFS locally (its NFS gateway or fuse-dfs)",
    "swebhdfs": "mount HDFS locally (its NFS gateway or fuse-dfs)",
}
#: fsspec protocols that are no shared filesystem of a cluster (each process has its own).
_NOT_SHARED = ("memory", "file", "local")


def split_path(path: str) -> Tuple[Optional[str], Optional[str], str]:
    """``(scheme, authority, path)`` of ``path`` as Hadoop's ``Path(String)`` parses it
    (scheme and authority None when absent; the scheme lower-cased)."""
    scheme = None
    colon, slash = path.find(":"), path.find("/")
    start = 0
    if colon > 0 and (slash == -1 or colon < slash):
        scheme, start = path[:colon].lower(), colon + 1
    authority = None
    if path.startswith("//", start) and len(path) - start > 2:
        end = path.find("/", start + 2)
        end = len(path) if end == -1 else end
        authority, start = path[start + 2:end], end
    return scheme, authority, path[start:]


def resolve_path(path: str, default: str = LOCAL_FS, cwd: Optional[str] = None) -> str:
    """The local absolute path or the object-store URL ``path`` names (glob characters
    kept), by Spark's rules.

    ``default``: the session's ``fs.defaultFS``, which a path without a scheme means;
    ``cwd``: the local filesystem's working directory (the current directory).  Raises
    ArrowNotImplementedError for a filesystem the Python source cannot serve (``path``'s
    scheme, or ``default``'s for a path without one), ArrowInvalid for a ``file:`` URI naming
    another host, a URL without a bucket, or an empty path.
    """
    if not isinstance(path, str) or not path:
        raise ArrowInvalid(f"path {path!r}: a path must be a non-empty string")
    scheme, authority, rest = split_path(path)
    if scheme is None:
        fs_scheme, fs_authority, _ = split_path(default or LOCAL_FS)
        if fs_scheme not in (None, "file"):
            why = _unserved(fs_scheme)
            if why is not None:
                raise ArrowNotImplementedError(
                    f"path {path!r}: unsupported scheme {fs_scheme!r}: a path without a scheme "
                    f"means fs.defaultFS ({default}), which the Python data source "
                    f"(arrowmm_python) cannot read or write: {why}; or give a local path as a "
                    f"file: URI (file:///abs/path), which names the driver's and executors' "
                    f"local filesystem whatever fs.defaultFS is")
            if authority is None:  # "/x" on fs.defaultFS "s3a://bucket"
                if not rest.startswith("/"):
                    raise ArrowInvalid(f"path {path!r}: a relative path on fs.defaultFS "
                                       f"({default}); give it from the bucket's root (/x) or "
                                       f"as a URL ({fs_scheme}://{fs_authority or 'bucket'}/x)")
                authority = fs_authority
            return _remote(path, fs_scheme, authority, rest)
        if authority is not None:  # "//host/x": Hadoop's authority without a scheme
            scheme = "file"
    elif scheme != "file":
        why = _unserved(scheme)
        if why is not None:
            raise ArrowNotImplementedError(
                f"path {path!r}: unsupported scheme {scheme!r}: the Python data source "
                f"(arrowmm_python) reads and writes local files (plain paths and file: URIs) "
                f"and S3 (s3a://, s3://), and reads other object stores through fsspec: {why}")
        return _remote(path, scheme, authority, rest)
    if authority is not None and authority.lower() not in _LOCAL_HOSTS:
        raise ArrowInvalid(f"path {path!r} names host {authority!r}: a file: URI names this "
                           f"machine's files (file:/abs/path, file:///abs/path, "
                           f"file://localhost/abs/path); mount the other host's folder locally")
    if not rest:
        raise ArrowInvalid(f"path {path!r} names no file or folder")
    if not rest.startswith("/"):
        rest = posixpath.join(cwd if cwd is not None else os.getcwd(), rest)
    return posixpath.normpath("/" + rest.lstrip("/"))  # (normpath keeps a leading "//")


def _remote(path: str, scheme: str, authority: Optional[str], rest: str) -> str:
    """The URL of an object-store path: ``scheme://bucket/key``, the key normalised."""
    if not authority:
        raise ArrowInvalid(f"path {path!r} names no bucket or container ({scheme}://bucket/key)")
    key = posixpath.normpath("/" + rest).lstrip("/") if rest.strip("/") else ""
    return f"{scheme}://{authority}/{key}" if key else f"{scheme}://{authority}"


def _unserved(scheme: str) -> Optional[str]:
    """Why the Python source cannot serve ``scheme`` (naming what would), or None if it can."""
    if scheme in JVM_ONLY:
        return (f"{JVM_ONLY[scheme]} and give the mounted local path, or use the JVM connector "
                f"(the jar on the session: arrowmm.spark.configure), which serves {scheme} "
                f"through Hadoop's FileSystem: format('arrowmm_jvm')")
    protocol = "s3" if scheme in S3_SCHEMES else scheme
    try:
        import fsspec
        from fsspec.registry import known_implementations
    except ImportError:
        return (f"{scheme} is read through fsspec, which is not installed here (pip install "
                f"fsspec s3fs); or use the JVM connector (format('arrowmm_jvm'))")
    if protocol in _NOT_SHARED or (protocol not in known_implementations
                                   and protocol not in fsspec.available_protocols()):
        return (f"{scheme} is no filesystem it or fsspec knows: mount it locally and give the "
                f"mounted local path, or use the JVM connector, which serves any Hadoop "
                f"filesystem: format('arrowmm_jvm')")
    try:
        fsspec.get_filesystem_class(protocol)
    except ImportError as exc:
        return (f"{scheme} is read through fsspec, whose package for it is not installed here "
                f"({exc}); install it on the driver and the executors, or use the JVM "
                f"connector (format('arrowmm_jvm'))")
    return None


def default_fs(recorded: Optional[str] = None) -> str:
    """The ``fs.defaultFS`` a path without a scheme means: ``recorded`` (what ``register``
    read from the session), else ``core-site.xml``'s in ``HADOOP_CONF_DIR``, else the local
    filesystem."""
    if recorded:
        return recorded
    folder = os.environ.get("HADOOP_CONF_DIR")
    if folder:
        found = _core_site_default(os.path.join(folder, "core-site.xml"))
        if found:
            return found
    return LOCAL_FS


def _core_site_default(path: str) -> Optional[str]:
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return None
    for prop in root.iter("property"):
        if (prop.findtext("name") or "").strip() == "fs.defaultFS":
            return (prop.findtext("value") or "").strip() or None
    return None


def session_default_fs(spark) -> Optional[str]:
    """``spark``'s ``fs.defaultFS`` as its file sources see it (the session's Hadoop
    configuration: ``core-site.xml``, ``spark.hadoop.fs.defaultFS`` at start, a session's
    ``fs.defaultFS`` setting), or None when the session does not tell (Connect without one)."""
    try:  # classic: the configuration Spark's file sources use
        value = spark._jsparkSession.sessionState().newHadoopConf().get("fs.defaultFS")
        return str(value) if value else None
    except Exception:  # noqa: BLE001  (Connect, or not a session: py4j and attribute errors alike)
        pass
    for key in ("fs.defaultFS", "spark.hadoop.fs.defaultFS"):  # (in this order, as Spark)
        try:
            value = spark.conf.get(key, None)
        except Exception:  # noqa: BLE001  (any failure to read the setting means: not set)
            return None
        if value:
            return value
    return None


def session_s3a(spark) -> dict:
    """``spark``'s Hadoop S3A settings (``fs.s3a.endpoint``, keys, path style ...: the names of
    ``storage.HADOOP_S3A``) as its file sources see them, {} when the session does not tell."""
    out = {}
    try:  # classic: the configuration Spark's file sources use
        conf = spark._jsparkSession.sessionState().newHadoopConf()
        for name in HADOOP_S3A:
            value = conf.get(name)
            if value:
                out[name] = str(value)
        return out
    except Exception:  # noqa: BLE001  (Connect, or not a session: py4j and attribute errors alike)
        pass
    for name in HADOOP_S3A:
        for key in (name, "spark.hadoop." + name):
            try:
                value = spark.conf.get(key, None)
            except Exception:  # noqa: BLE001  (any failure to read the setting means: not set)
                value = None
            if value:
                out[name] = value
                break
    return out
