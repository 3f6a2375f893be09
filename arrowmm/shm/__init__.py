"""Shared memory: record batches in named segments, read zero-copy by other processes.

``share`` writes batches into a segment and ``open_shared`` maps one by name;
``segments`` lists what arrowmm made and ``cleanup`` removes what dead producers left.
``Channel`` streams record batches live from one producer to many consumer processes
through a ring in one segment.
Arrays, batches and readers over a segment pickle by name (``segment`` fills the pickling
hooks of ``arrowmm.hooks``, so the data model imports nothing from this package).
"""
from .channel import Channel, Consumer, SlotBatch
from .segment import (CREATOR_KEY, SHM_DIR, SegmentInfo, SharedFile, cleanup, open_shared,
                      remove, segments, share, unlink)

__all__ = ["share", "open_shared", "unlink", "SharedFile", "SHM_DIR", "segments", "cleanup", "remove",
           "SegmentInfo", "CREATOR_KEY", "Channel", "Consumer", "SlotBatch"]
