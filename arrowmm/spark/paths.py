"""Where a load or save path of the Python data source points: one resolver, Spark's rules.

Spark's file sources read a path as Hadoop's ``Path`` does and qualify it with the session's
Hadoop configuration: a scheme is what comes before the first ``:`` when no ``/`` comes
before it, an authority follows ``//``, and a path without a scheme means ``fs.defaultFS``
(relative: against that filesystem's working directory, the driver's current directory for
the local one).  ``file:/abs``, ``file:///abs`` and ``file://localhost/abs`` all name
``/abs``; ``file:rel`` is relative.  This module applies the same rules and returns a local
absolute path, or refuses, naming the scheme, anything the Python source cannot read or write
(every filesystem but the local one) before a task runs or a byte is written: an ``s3a://``
path used to become the folder ``s3a:/`` in the current directory, and ``file://localhost/x``
the folder ``/localhost/x``.

The Python source runs its planning in Python workers that Spark starts on the driver, which
cannot ask the session for its Hadoop configuration: ``arrowmm.spark.register(spark)`` records
the session's ``fs.defaultFS`` on the class it registers (``default_fs_of``); otherwise the
worker reads ``fs.defaultFS`` from ``core-site.xml`` in ``HADOOP_CONF_DIR`` (as Hadoop does),
and without one the default is the local filesystem, as in Hadoop.
"""
from __future__ import annotations

import os
import posixpath
import xml.etree.ElementTree as ElementTree
from typing import Optional, Tuple

from ..errors import ArrowInvalid, ArrowNotImplementedError

__all__ = ["resolve_path", "split_path", "default_fs", "session_default_fs", "LOCAL_FS"]

#: Hadoop's default ``fs.defaultFS``: the local filesystem.
LOCAL_FS = "file:///"
_LOCAL_HOSTS = ("", "localhost")

#: What would serve a scheme, for the error that refuses it.
_SERVED_BY = {
    "s3a": "mount the bucket locally (mountpoint-s3, s3fs-fuse, goofys)",
    "s3": "mount the bucket locally (mountpoint-s3, s3fs-fuse, goofys)",
    "s3n": "mount the bucket locally (mountpoint-s3, s3fs-fuse, goofys)",
    "gs": "mount the bucket locally (gcsfuse)",
    "abfs": "mount the container locally (blobfuse2)",
    "abfss": "mount the container locally (blobfuse2)",
    "wasb": "mount the container locally (blobfuse2)",
    "wasbs": "mount the container locally (blobfuse2)",
    "hdfs": "mount HDFS locally (its NFS gateway or fuse-dfs)",
    "viewfs": "mount the filesystems its mount table names locally",
}


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
    """The local absolute path ``path`` names (glob characters kept), by Spark's rules.

    ``default``: the session's ``fs.defaultFS``, which a path without a scheme means;
    ``cwd``: the local filesystem's working directory (the current directory).  Raises
    ArrowNotImplementedError for a filesystem other than the local one (``path``'s scheme,
    or ``default``'s for a path without one), ArrowInvalid for a ``file:`` URI naming
    another host or an empty path.
    """
    if not isinstance(path, str) or not path:
        raise ArrowInvalid(f"path {path!r}: a path must be a non-empty string")
    scheme, authority, rest = split_path(path)
    if scheme is None:
        fs_scheme, fs_authority, _ = split_path(default or LOCAL_FS)
        if fs_scheme not in (None, "file"):
            raise ArrowNotImplementedError(
                f"path {path!r}: unsupported scheme {fs_scheme!r}: a path without a scheme "
                f"means fs.defaultFS ({default}), which the Python data source (arrowmm_python) "
                f"cannot read or write; it serves local files only. {_served_by(fs_scheme)}; "
                f"or give a local path as a file: URI (file:///abs/path), which names the "
                f"driver's and executors' local filesystem whatever fs.defaultFS is")
        if authority is not None:  # "//host/x": Hadoop's authority without a scheme
            scheme = "file"
    elif scheme != "file":
        raise ArrowNotImplementedError(
            f"path {path!r}: unsupported scheme {scheme!r}: the Python data source "
            f"(arrowmm_python) reads and writes local files only (plain paths and file: URIs). "
            f"{_served_by(scheme)}")
    if authority is not None and authority.lower() not in _LOCAL_HOSTS:
        raise ArrowInvalid(f"path {path!r} names host {authority!r}: a file: URI names this "
                           f"machine's files (file:/abs/path, file:///abs/path, "
                           f"file://localhost/abs/path); mount the other host's folder locally")
    if not rest:
        raise ArrowInvalid(f"path {path!r} names no file or folder")
    if not rest.startswith("/"):
        rest = posixpath.join(cwd if cwd is not None else os.getcwd(), rest)
    return posixpath.normpath("/" + rest.lstrip("/"))  # (normpath keeps a leading "//")


def _served_by(scheme: str) -> str:
    how = _SERVED_BY.get(scheme, "mount that filesystem locally")
    return (f"For {scheme}: {how} and give the mounted local path. The JVM connector "
            f"(format('arrowmm')) does not serve {scheme} either yet; Spark's own file formats "
            f"(parquet) reach it through Hadoop's FileSystem")


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
