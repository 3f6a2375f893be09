"""Committing jobs' files into a directory: optimistic concurrency on a log of versioned manifests.

The on-disk specification is ``docs/commit-protocol.md``; this module implements it.
In short: a directory's committed files are those the highest-numbered manifest
``_arrowmm_log/<20 digits>.json`` lists.  A job's files are written under hidden
temporary names, renamed to their final (job-unique) names, and then published
by creating version ``latest + 1`` with ``os.link`` from a complete temporary
file: ``link`` never replaces an existing name, so when another job took that
version first, the committer reads the new latest and tries again.  Appends
therefore all land; an overwrite deletes the files it dropped only after its
version is published, and any version made later derives from it, so no
manifest ever names a deleted file.  ``_SUCCESS`` is kept as a copy of the
latest list for readers of older arrowmm versions.

Nothing here imports pyspark: the Spark writer (``source.py``) and the tests
drive the same functions.
"""
from __future__ import annotations

import errno
import json
import os
import random
import re
import time
import uuid
import warnings
from typing import Iterable, List, Optional, Sequence, Tuple

from ..errors import ArrowError, ArrowInvalid
from .files import (FORMAT, LOG_DIR, MANIFEST, check_names, data_files_in, latest_manifest,
                    log_versions, read_manifest, read_version, version_name)

__all__ = ["commit_files", "abort_job", "ensure_log", "publish_version", "remove_matching",
           "job_file_pattern", "KEEP_VERSIONS"]

#: Versions this many below the latest are pruned to tombstones by committers (their dropped
#: files deleted first); the names stay taken (docs/commit-protocol.md §9).
KEEP_VERSIONS = 20
_MAX_ATTEMPTS = 1000


def _crash_point(point: str) -> None:
    """Does nothing: tests replace it to kill the committing process at ``point``
    ("renamed-one", "renamed-all", "published")."""


def job_file_pattern(job: str) -> "re.Pattern":
    """Final names of job ``job``'s data files: ``[batch-<id>-]part-<partition>-<job>.arrow``."""
    return re.compile(r"^(batch-[0-9]+-)?part-[0-9]+-" + re.escape(job) + r"\.arrow$")


# -- the log ---------------------------------------------------------------------------------------
def _log(directory: str) -> str:
    return os.path.join(directory, LOG_DIR)


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish_version(directory: str, version: int, doc: dict) -> bool:
    """Create manifest ``version`` holding ``doc``, complete or not at all; False if it exists.

    The document goes to a hidden temporary file in the log (created with
    ``O_EXCL``, written and fsynced), which is then hard-linked to the version's
    name: ``link`` fails rather than replace an existing name, so of several
    writers of one version exactly one succeeds, and readers see either no
    file or the whole document.
    """
    log = _log(directory)
    tmp = os.path.join(log, f".tmp-{os.getpid()}-{uuid.uuid4().hex}")
    data = json.dumps(doc, indent=1).encode()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, os.path.join(log, version_name(version)))
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                raise ArrowError(f"{log}: cannot publish manifest version {version}: this "
                                 f"filesystem refuses hard links ({exc.strerror}), which the "
                                 f"commit protocol needs to create a version without replacing "
                                 f"one") from exc
            raise
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    _fsync_dir(log)
    return True


def _make_log_folder(directory: str) -> None:
    log = _log(directory)
    try:
        os.mkdir(log)
    except FileExistsError:
        pass
    if not os.path.isdir(log) or os.path.islink(log):
        raise ArrowInvalid(f"{log}: the commit log must be a folder (found something else)")


def ensure_log(directory: str) -> int:
    """Make sure ``directory`` has a commit log; return its latest version.

    A directory without one gets version 0: the files today's layout shows
    (the ``_SUCCESS`` list, else the visible Arrow files, else none), so a new
    directory reads as empty until a job commits.  Creating the directory and
    version 0 before any task writes means no uncommitted file is ever visible.
    """
    os.makedirs(directory, exist_ok=True)
    _make_log_folder(directory)
    while True:
        versions = log_versions(directory)
        if versions:
            return versions[-1]
        legacy = read_manifest(directory)
        files = (list(legacy["files"]) if legacy is not None
                 else [os.path.basename(p) for p in data_files_in(directory)])
        doc = {"format": FORMAT, "version": 0, "previous": None, "operation": "adopt",
               "job": None, "files": files, "removed": [], "streams": {}}
        if publish_version(directory, 0, doc):
            _fsync_dir(directory)
            return 0


# -- committing ------------------------------------------------------------------------------------
def commit_files(directory: str, written: Sequence, job: str, *, overwrite: bool,
                 stream: Optional[Tuple[str, int]] = None) -> dict:
    """Commit job ``job``: move its tasks' files (``tmp`` -> ``name``) in and publish a version.

    ``written``: objects with ``tmp`` (a hidden temporary path in
    ``directory``), ``name`` (the final file name, unique to the job) and
    ``rows``.  Empty files are dropped when the job wrote any rows (one is kept
    otherwise, so the directory still has a schema).  ``overwrite``: the new
    version lists only this job's files, and the files it dropped are deleted
    after it is published.  ``stream``: ``(query id, batch id)`` of a
    streaming micro-batch; one that a version already records is not added
    again (Spark replays a micro-batch after a failure).  Returns the published
    manifest (or, for a replay, the latest one).
    """
    ensure_log(directory)
    if stream is not None:
        base = latest_manifest(directory)
        if _already(base, stream):
            _unlink_all(m.tmp for m in written)
            return base
    keep = [m for m in written if m.rows > 0] or list(written[:1])
    _unlink_all(m.tmp for m in written if m not in keep)
    new = [m.name for m in keep]
    check_names(new)
    for i, m in enumerate(keep):
        final = os.path.join(directory, m.name)
        if os.path.lexists(final):
            raise ArrowInvalid(f"{final}: a file of job {job} already exists; job ids must be "
                               f"unique and committed once")
        os.rename(m.tmp, final)
        if i == 0:
            _crash_point("renamed-one")
    _fsync_dir(directory)
    _crash_point("renamed-all")
    for attempt in range(_MAX_ATTEMPTS):
        version = latest_version(directory)
        try:
            base = read_version(directory, version)
        except FileNotFoundError:  # pruned meanwhile: many newer versions exist
            continue
        if stream is not None and _already(base, stream):  # another run of the query won
            _unlink_all(os.path.join(directory, n) for n in new)
            return base
        files = list(new) if overwrite else base["files"] + [n for n in new if n not in base["files"]]
        streams = dict(base.get("streams", {}))
        if stream is not None:
            streams[stream[0]] = max(stream[1], streams.get(stream[0], -1))
        doc = {"format": FORMAT, "version": version + 1, "previous": version,
               "operation": "overwrite" if overwrite else "append", "job": job, "files": files,
               "removed": [n for n in base["files"] if n not in files], "streams": streams}
        if publish_version(directory, version + 1, doc):
            break
        time.sleep(random.uniform(0, min(0.05, 0.001 * (attempt + 1))))  # another job won: retry
    else:
        raise ArrowError(f"{directory}: could not publish job {job} after {_MAX_ATTEMPTS} attempts "
                         f"(other jobs kept committing first); nothing of it was published")
    _crash_point("published")
    # The job is committed: what follows tidies up, and a failure there must not make the
    # caller believe the job failed (a retry would add its rows twice).
    try:
        write_mirror(directory)
        _unlink_all(os.path.join(directory, n) for n in doc["removed"] if n not in doc["files"])
        prune_log(directory, doc["version"])
    except (OSError, ArrowError) as exc:
        warnings.warn(f"{directory}: job {job} is committed (version {doc['version']}), but "
                      f"tidying up after it failed: {exc}", RuntimeWarning)
    return doc


def latest_version(directory: str) -> int:
    versions = log_versions(directory)
    if not versions:
        raise ArrowInvalid(f"{_log(directory)}: the commit log has no version")
    return versions[-1]


def _already(doc: Optional[dict], stream: Tuple[str, int]) -> bool:
    if doc is None:
        return False
    done = doc.get("streams", {}).get(stream[0])
    return done is not None and stream[1] <= done


def write_mirror(directory: str) -> None:
    """Copy the latest version's list to ``_SUCCESS`` (the layout older readers read).

    Each writer checks after replacing it that no newer version appeared, and
    writes again if one did, so the copy ends at the latest version.
    """
    while True:
        doc = latest_manifest(directory)
        tmp = os.path.join(directory, f"._SUCCESS.{uuid.uuid4().hex[:12]}.tmp")
        with open(tmp, "w") as f:
            json.dump({"format": FORMAT, "version": doc["version"], "job": doc["job"],
                       "files": doc["files"], "log": LOG_DIR}, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(directory, MANIFEST))
        if latest_version(directory) == doc["version"]:
            return


def prune_log(directory: str, latest: int) -> None:
    """Shrink versions more than ``KEEP_VERSIONS`` below ``latest`` to tombstones, after
    deleting the files they dropped (an overwrite whose deletion a crash interrupted).

    A version's name is never freed: a committer that read an old version and
    is slow to publish the next one must find that name taken (``link`` fails)
    rather than re-create a version far below the latest, which no reader would
    read.  Tombstones are small, so the log grows by a few hundred bytes a commit.
    """
    current = set(latest_manifest(directory)["files"])
    for version in range(max(0, latest - 2 * KEEP_VERSIONS), latest - KEEP_VERSIONS + 1):
        path = os.path.join(_log(directory), version_name(version))
        try:
            doc = read_version(directory, version)
        except FileNotFoundError:
            continue  # a tombstone already, or never made (a crash before version 0)
        _unlink_all(os.path.join(directory, n) for n in doc.get("removed", []) if n not in current)
        tmp = os.path.join(_log(directory), f".tmp-{os.getpid()}-{uuid.uuid4().hex}")
        with open(tmp, "w") as f:
            json.dump({"format": FORMAT, "version": version, "pruned": True, "files": []}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # the name stays taken


# -- aborting --------------------------------------------------------------------------------------
def abort_job(directory: str, job: str) -> List[str]:
    """Remove job ``job``'s files that no published version kept: its temporaries (of every
    task attempt) and its final-named files that the latest manifest does not list.

    Safe after a commit that crashed at any point: files a published version
    lists are kept (the job did commit).  Returns the names removed.
    """
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    latest = latest_manifest(directory)
    if latest is None:
        latest = read_manifest(directory)
    listed = set(latest["files"]) if latest is not None else set()
    final = job_file_pattern(job)
    tag = f"arrowmm-{job}-"
    gone = [n for n in names if (n.startswith(".") and tag in n)
            or (final.match(n) and n not in listed)]
    _unlink_all(os.path.join(directory, n) for n in gone)
    return gone


def remove_matching(directory: str, prefix: str) -> None:
    """Remove the files of ``directory`` whose names start with ``prefix``."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return
    _unlink_all(os.path.join(directory, n) for n in names if n.startswith(prefix))


def _unlink_all(paths: Iterable[str]) -> None:
    for p in paths:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
