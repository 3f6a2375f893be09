"""A dataset directory on a storage: its commit log, its ``_SUCCESS`` and its data files.

The rules are ``arrowmm.dataset.discovery``'s (docs/commit-protocol.md §4: the latest version
of ``_arrowmm_log`` lists the files; without a version, ``_SUCCESS``; without either, the
visible files named or framed as Arrow), read through a ``storage.Storage``, so that the
reader and the committer find the same files on a local folder and on an object store.
"""
from __future__ import annotations

from typing import List, Optional

from ..dataset.discovery import (LOG_DIR, MANIFEST, check_reachable, named_arrow,
                                 parse_manifest, parse_version, version_name, version_of)
from ..errors import ArrowInvalid
from ..ipc.read.sniff import KIND_HEAD, ipc_kind
from .storage import LocalStorage, Storage

__all__ = ["Directory"]


class Directory:
    """``path`` on ``storage``, as the commit protocol reads and writes it."""

    def __init__(self, storage: Storage, path: str):
        self.storage = storage
        self.path = path
        self.log = storage.join(path, LOG_DIR)

    def file(self, name: str) -> str:
        """The path of ``name`` in the directory."""
        return self.storage.join(self.path, name)

    def version_path(self, version: int) -> str:
        """The path of manifest ``version`` in the log."""
        return self.storage.join(self.log, version_name(version))

    def names(self) -> List[str]:
        """The names in the directory ([] when it does not exist)."""
        try:
            return self.storage.names(self.path)
        except FileNotFoundError:
            return []

    def versions(self) -> List[int]:
        """The manifest versions present in the log, ascending ([] without a log)."""
        try:
            names = self.storage.names(self.log)
        except FileNotFoundError:
            return []
        return sorted(v for v in map(version_of, names) if v is not None)

    def version(self, version: int) -> dict:
        """Manifest ``version`` (FileNotFoundError when missing or pruned to a tombstone)."""
        path = self.version_path(version)
        return parse_version(self.storage.read(path), path, version)

    def latest(self) -> Optional[dict]:
        """The latest version of the log, or None when the log has none."""
        for _ in range(100):
            versions = self.versions()
            if not versions:
                return None
            try:
                return self.version(versions[-1])
            except FileNotFoundError:  # pruned meanwhile: list again
                continue
        raise ArrowInvalid(f"{self.log}: the latest manifest keeps disappearing while read")

    def legacy(self) -> Optional[dict]:
        """The ``_SUCCESS`` manifest (the older layout), None when there is none."""
        path = self.file(MANIFEST)
        try:
            text = self.storage.read(path)
        except (FileNotFoundError, IsADirectoryError):
            return None
        return parse_manifest(text, path)

    def manifest(self) -> Optional[dict]:
        """The latest version, else the ``_SUCCESS`` manifest, else None."""
        found = self.latest()
        return found if found is not None else self.legacy()

    def listed_data_files(self) -> List[str]:
        """The visible files of the folder named or framed as Arrow (no manifest read)."""
        out = []
        for name in sorted(self.names()):
            if name.startswith(("_", ".")):
                continue
            path = self.file(name)
            if not self.storage.is_file(path):
                if isinstance(self.storage, LocalStorage) and not self.storage.is_dir(path):
                    check_reachable(path, name)  # (a dangling link named as Arrow: its rows)
                continue
            if named_arrow(name) or ipc_kind(self.storage.head(path, KIND_HEAD) or b"",
                                             True) is not None:
                out.append(path)
        return out

    def data_files(self) -> List[str]:
        """The directory's data files: its manifest's list, else its Arrow files."""
        manifest = self.manifest()
        if manifest is not None:
            return [self.file(n) for n in manifest["files"]]
        return self.listed_data_files()
