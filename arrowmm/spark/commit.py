"""Committing jobs' files into a directory: optimistic concurrency on a log of versioned manifests.

The on-disk specification is ``docs/commit-protocol.md``; this module implements it, on any
``storage.Storage`` (a local folder, or S3 through s3fs: ``storage.storage_for``).
In short: a directory's committed files are those the highest-numbered manifest
``_arrowmm_log/<20 digits>.json`` lists.  A job's files are written under hidden temporary
names and renamed to their final (job-unique) names (locally), or written in place under
final names unique to their task attempt (on an object store, where a rename is a copy), and
then published by creating version ``latest + 1`` only if that name is free
(``Storage.create_once``: ``link`` of a complete temporary locally, a conditional PUT on S3):
when another job took that version first, the committer reads the new latest and tries
again.  Appends therefore all land; an overwrite deletes the files it dropped only after its
version is published, and any version made later derives from it, so no manifest ever names a
deleted file.  ``_SUCCESS`` is kept as a copy of the latest list for readers of older arrowmm
versions.

Nothing here imports pyspark: the Spark writer (``source.py``) and the tests drive the same
functions.
"""
from __future__ import annotations

import json
import random
import re
import time
import warnings
from typing import Callable, Iterable, List, Optional, Sequence, Tuple

from ..errors import ArrowError, ArrowInvalid
from .directory import Directory
from .files import FORMAT, LOG_DIR, MANIFEST, check_names
from .storage import Storage, storage_for

__all__ = ["commit_files", "abort_job", "ensure_log", "publish_version", "remove_matching",
           "job_file_pattern", "latest_version", "write_mirror", "prune_log", "KEEP_VERSIONS"]

#: Versions this many below the latest are pruned to tombstones by committers (their dropped
#: files deleted first); the names stay taken (docs/commit-protocol.md §9).
KEEP_VERSIONS = 20
_MAX_ATTEMPTS = 1000


def _crash_point(point: str) -> None:
    """Does nothing: tests replace it to kill the committing process at ``point``
    ("renamed-one", "renamed-all", "published")."""


def job_file_pattern(job: str) -> "re.Pattern":
    """Final names of job ``job``'s data files: ``[batch-<id>-]part-<partition>-<job>.arrow``,
    and ``part-<partition>-<job>-<attempt>.arrow`` written in place (§5.2)."""
    return re.compile(r"^(batch-[0-9]+-)?part-[0-9]+-" + re.escape(job) + r"(-[0-9]+)?\.arrow$")


def _directory(directory: str, storage: Optional[Storage]) -> Directory:
    return Directory(storage if storage is not None else storage_for(directory), directory)


def _encode(doc: dict) -> bytes:
    return json.dumps(doc, indent=1).encode()


# -- the log ---------------------------------------------------------------------------------------
def publish_version(directory: str, version: int, doc: dict,
                    storage: Optional[Storage] = None) -> bool:
    """Create manifest ``version`` holding ``doc``, complete or not at all; False if it exists.

    ``Storage.create_once``: locally the document goes to a hidden temporary file in the log
    (created with ``O_EXCL``, written and fsynced), which is then hard-linked to the version's
    name (``link`` fails rather than replace an existing name); on S3 a conditional PUT
    (``If-None-Match: *``).  Of several writers of one version exactly one succeeds, and
    readers see either no file or the whole document.
    """
    d = _directory(directory, storage)
    return d.storage.create_once(d.version_path(version), _encode(doc))


def ensure_log(directory: str, storage: Optional[Storage] = None, job: Optional[str] = None) -> int:
    """Make sure ``directory`` has a commit log; return its latest version.

    A directory without one gets version 0: the files today's layout shows
    (the ``_SUCCESS`` list, else the visible Arrow files, else none; never files of ``job``,
    written in place), so a new directory reads as empty until a job commits.  Creating the
    directory and version 0 before any task writes means no uncommitted file is ever visible.
    """
    d = _directory(directory, storage)
    d.storage.make_dirs(directory)
    d.storage.make_log_folder(d.log)
    own = job_file_pattern(job) if job else None
    while True:
        versions = d.versions()
        if versions:
            return versions[-1]
        legacy = d.legacy()
        files = (list(legacy["files"]) if legacy is not None
                 else [p.rsplit("/", 1)[-1] for p in d.listed_data_files()])
        files = [n for n in files if own is None or not own.match(n)]
        doc = {"format": FORMAT, "version": 0, "previous": None, "operation": "adopt",
               "job": None, "files": files, "removed": [], "streams": {}}
        if d.storage.create_once(d.version_path(0), _encode(doc)):
            d.storage.sync_dir(directory)
            return 0


# -- committing ------------------------------------------------------------------------------------
def commit_files(directory: str, written: Sequence, job: str, *, overwrite: bool,
                 stream: Optional[Tuple[str, int]] = None,
                 storage: Optional[Storage] = None,
                 check_append: Optional[Callable[[str], None]] = None) -> dict:
    """Commit job ``job``: move its tasks' files (``tmp`` -> ``name``) in and publish a version.

    ``written``: objects with ``tmp`` (a hidden temporary path in ``directory``, or None for
    a file written in place under its final name), ``name`` (the final file name, unique to
    the job) and ``rows``.  Empty files are dropped when the job wrote any rows (one is kept
    otherwise, so the directory still has a schema).  ``overwrite``: the new version lists
    only this job's files, and the files it dropped are deleted after it is published.
    ``stream``: ``(query id, batch id)`` of a streaming micro-batch; one that a version
    already records is not added again (Spark replays a micro-batch after a failure).
    ``storage``: where ``directory`` is (default: ``storage.storage_for(directory)``).
    ``check_append``: for an append, given the path of a file of the version it would publish
    on, raises ``ArrowInvalid`` when the job's rows may not join those files (an overwrite of
    another schema committed since the job planned); the job's files are then deleted
    (docs/commit-protocol.md §5.3 step 4.3).
    Returns the published manifest (or, for a replay, the latest one).
    """
    d = _directory(directory, storage)
    ensure_log(directory, d.storage, job)

    def written_path(m):
        return m.tmp if m.tmp is not None else d.file(m.name)

    if stream is not None:
        base = d.latest()
        if _already(base, stream):
            _delete_all(d.storage, (written_path(m) for m in written))
            return base
    keep = [m for m in written if m.rows > 0] or list(written[:1])
    _delete_all(d.storage, (written_path(m) for m in written if m not in keep))
    new = [m.name for m in keep]
    check_names(new)
    moved = [m for m in keep if m.tmp is not None]
    for i, m in enumerate(moved):
        try:
            d.storage.rename_new(m.tmp, d.file(m.name))
        except ArrowInvalid:
            raise ArrowInvalid(f"{d.file(m.name)}: a file of job {job} already exists; job ids "
                               f"must be unique and committed once") from None
        if i == 0:
            _crash_point("renamed-one")
    if moved:
        d.storage.sync_dir(directory)
    _crash_point("renamed-all")
    for attempt in range(_MAX_ATTEMPTS):
        version = latest_version(directory, d.storage)
        try:
            base = d.version(version)
        except FileNotFoundError:  # pruned meanwhile: many newer versions exist
            continue
        if stream is not None and _already(base, stream):  # another run of the query won
            _delete_all(d.storage, (d.file(n) for n in new))
            return base
        if check_append is not None and not overwrite and base["files"]:
            try:
                check_append(d.file(base["files"][0]))
            except ArrowInvalid:
                _delete_all(d.storage, (d.file(n) for n in new))
                raise
        files = list(new) if overwrite else base["files"] + [n for n in new if n not in base["files"]]
        streams = dict(base.get("streams", {}))
        if stream is not None:
            streams[stream[0]] = max(stream[1], streams.get(stream[0], -1))
        doc = {"format": FORMAT, "version": version + 1, "previous": version,
               "operation": "overwrite" if overwrite else "append", "job": job, "files": files,
               "removed": [n for n in base["files"] if n not in files], "streams": streams}
        if d.storage.create_once(d.version_path(version + 1), _encode(doc)):
            break
        time.sleep(random.uniform(0, min(0.05, 0.001 * (attempt + 1))))  # another job won: retry
    else:
        raise ArrowError(f"{directory}: could not publish job {job} after {_MAX_ATTEMPTS} attempts "
                         f"(other jobs kept committing first); nothing of it was published")
    _crash_point("published")
    # The job is committed: what follows tidies up, and a failure there must not make the
    # caller believe the job failed (a retry would add its rows twice).
    try:
        write_mirror(directory, d.storage)
        _delete_all(d.storage, (d.file(n) for n in doc["removed"] if n not in doc["files"]))
        prune_log(directory, doc["version"], d.storage)
    except (OSError, ArrowError) as exc:
        warnings.warn(f"{directory}: job {job} is committed (version {doc['version']}), but "
                      f"tidying up after it failed: {exc}", RuntimeWarning)
    return doc


def latest_version(directory: str, storage: Optional[Storage] = None) -> int:
    """The latest version of ``directory``'s log (ArrowInvalid when it has none)."""
    d = _directory(directory, storage)
    versions = d.versions()
    if not versions:
        raise ArrowInvalid(f"{d.log}: the commit log has no version")
    return versions[-1]


def _already(doc: Optional[dict], stream: Tuple[str, int]) -> bool:
    if doc is None:
        return False
    done = doc.get("streams", {}).get(stream[0])
    return done is not None and stream[1] <= done


def write_mirror(directory: str, storage: Optional[Storage] = None) -> None:
    """Copy the latest version's list to ``_SUCCESS`` (the layout older readers read).

    Each writer checks after replacing it that no newer version appeared, and
    writes again if one did, so the copy ends at the latest version.
    """
    d = _directory(directory, storage)
    while True:
        doc = d.latest()
        d.storage.put(d.file(MANIFEST), json.dumps(
            {"format": FORMAT, "version": doc["version"], "job": doc["job"],
             "files": doc["files"], "log": LOG_DIR}, indent=1).encode())
        if latest_version(directory, d.storage) == doc["version"]:
            return


def prune_log(directory: str, latest: int, storage: Optional[Storage] = None) -> None:
    """Shrink versions more than ``KEEP_VERSIONS`` below ``latest`` to tombstones, after
    deleting the files they dropped (an overwrite whose deletion a crash interrupted).

    A version's name is never freed: a committer that read an old version and
    is slow to publish the next one must find that name taken (``create_once`` fails)
    rather than re-create a version far below the latest, which no reader would
    read.  Tombstones are small, so the log grows by a few hundred bytes a commit.
    """
    d = _directory(directory, storage)
    current = set(d.latest()["files"])
    for version in range(max(0, latest - 2 * KEEP_VERSIONS), latest - KEEP_VERSIONS + 1):
        try:
            doc = d.version(version)
        except FileNotFoundError:
            continue  # a tombstone already, or never made (a crash before version 0)
        _delete_all(d.storage, (d.file(n) for n in doc.get("removed", []) if n not in current))
        d.storage.put(d.version_path(version), json.dumps(
            {"format": FORMAT, "version": version, "pruned": True, "files": []}).encode())


# -- aborting --------------------------------------------------------------------------------------
def abort_job(directory: str, job: str, storage: Optional[Storage] = None) -> List[str]:
    """Remove job ``job``'s files that no published version kept: its temporaries (of every
    task attempt) and its final-named files that the latest manifest does not list.

    Safe after a commit that crashed at any point: files a published version
    lists are kept (the job did commit).  Returns the names removed.
    """
    d = _directory(directory, storage)
    names = d.names()
    if not names:
        return []
    latest = d.manifest()
    listed = set(latest["files"]) if latest is not None else set()
    final = job_file_pattern(job)
    tag = f"arrowmm-{job}-"
    gone = [n for n in names if (n.startswith(".") and tag in n)
            or (final.match(n) and n not in listed)]
    _delete_all(d.storage, (d.file(n) for n in gone))
    return gone


def remove_matching(directory: str, prefix: str, storage: Optional[Storage] = None) -> None:
    """Remove the files of ``directory`` whose names start with ``prefix``."""
    d = _directory(directory, storage)
    _delete_all(d.storage, (d.file(n) for n in d.names() if n.startswith(prefix)))


def _delete_all(storage: Storage, paths: Iterable[str]) -> None:
    for p in paths:
        storage.delete(p)
