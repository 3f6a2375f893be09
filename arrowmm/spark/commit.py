"""Committing a Spark job's files: rename them in, then publish the ``_SUCCESS`` manifest.

Readers of a directory with a manifest read exactly the files it lists, so a
job becomes visible all at once when the manifest is replaced (an atomic
rename), and files of running, failed or retried tasks are never read.
``overwrite`` lists only the new files and deletes the old ones afterwards;
``append`` lists the old files and the new.  Streaming commits record their
micro-batch id so that a batch Spark replays after a failure is not added twice.
"""
from __future__ import annotations

import json
import os
import uuid
from typing import List, Optional

from .files import MANIFEST, data_files_in, read_manifest

__all__ = ["commit_files", "remove_matching", "write_manifest"]


def commit_files(directory: str, written: List, job: str, *, overwrite: bool,
                 batch_id: Optional[int] = None) -> List[str]:
    """Move the tasks' files (``tmp`` → ``name``) into ``directory`` and publish the manifest.

    Empty files are dropped when the job wrote any rows (one is kept
    otherwise, so the directory still has a schema).  Returns the new list.
    """
    os.makedirs(directory, exist_ok=True)
    manifest = read_manifest(directory)
    if batch_id is not None and manifest and batch_id in manifest.get("batches", []):
        _unlink_all(m.tmp for m in written)  # Spark replayed a committed micro-batch
        return list(manifest["files"])
    keep = [m for m in written if m.rows > 0] or written[:1]
    _unlink_all(m.tmp for m in written if m not in keep)
    previous = _previous_files(directory, manifest)
    for m in keep:
        os.replace(m.tmp, os.path.join(directory, m.name))
    new = [m.name for m in keep]
    files = new if overwrite else previous + [n for n in new if n not in previous]
    batches = list(manifest.get("batches", [])) if manifest and not overwrite else []
    if batch_id is not None:
        batches.append(batch_id)
    write_manifest(directory, {"version": 1, "job": job, "files": files, "batches": batches})
    if overwrite:
        _unlink_all(os.path.join(directory, n) for n in previous if n not in new)
    return files


def _previous_files(directory: str, manifest: Optional[dict]) -> List[str]:
    if manifest is not None:
        return list(manifest["files"])
    return [os.path.basename(p) for p in data_files_in(directory)]


def write_manifest(directory: str, doc: dict) -> None:
    """Replace ``_SUCCESS`` atomically (write a temporary file, then rename it over)."""
    tmp = os.path.join(directory, f"._SUCCESS.{uuid.uuid4().hex[:8]}.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(directory, MANIFEST))


def remove_matching(directory: str, prefix: str) -> None:
    """Remove the files of ``directory`` whose names start with ``prefix``."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return
    _unlink_all(os.path.join(directory, n) for n in names if n.startswith(prefix))


def _unlink_all(paths) -> None:
    for p in paths:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
