"""Shared memory: record batches in named segments, read zero-copy by other processes.

``share`` writes batches into a segment and ``open_shared`` maps one by name; arrays,
batches and readers over a segment pickle by name (registered with ``copyreg`` here,
so the data model imports nothing from this package).
"""
from .segments import SHM_DIR, SharedFile, open_shared, register_pickling, share, unlink

register_pickling()

__all__ = ["share", "open_shared", "unlink", "SharedFile", "SHM_DIR"]
