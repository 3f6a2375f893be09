"""Reading a dataset's files ahead on a small thread pool, in order, bounded in memory.

A scan is a sequence of files, each a sequence of batches.  ``ordered_readahead`` runs up to
``fragment_readahead`` files' scans at once on worker threads, each worker holding at most
``2 * batch_readahead`` finished batches the caller has not taken yet (a list of them handed
over, one being filled: it waits when both are full), and yields the batches in the sequential order: the first file's in order, then the
second's.  What a worker does ahead is what the scan does per batch (open the file, read its
footer, batch headers and statistics, filter rows) and, through ``prepare``, decoding the
output columns (for a file read by byte ranges that is where its bytes are fetched).

Memory: at most ``fragment_readahead * 2 * batch_readahead`` batches are held beyond the one
the caller has.  Errors: an exception of a file's scan is raised to the caller when the scan
reaches that file, naming it (``ArrowError``s as the same class with ``"path: "`` in front,
others with a note).  Early close: closing the iterator (or leaving a ``for`` loop early, or
dropping it) stops the workers and waits for them: no thread outlives the scan.
"""
from __future__ import annotations

import collections
import os
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, Iterator, Optional, Sequence, Tuple

from ..errors import ArrowError, ArrowInvalid

__all__ = ["ordered_readahead", "FRAGMENT_READAHEAD", "BATCH_READAHEAD", "THREAD_PREFIX"]

#: Files scanned at once (pyarrow.dataset's ``fragment_readahead`` default is 4).
FRAGMENT_READAHEAD = 4
#: Finished batches a file's worker may hold before it waits (pyarrow's default is 16).
BATCH_READAHEAD = 16
#: The name of every worker thread starts with this (tests look for leftovers by it).
THREAD_PREFIX = "arrowmm-scan"

_DONE = object()
_POLL = 0.05  # seconds a blocked worker waits before looking whether the scan was closed


class _Failed:
    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


def named_error(exc: BaseException, label: str) -> BaseException:
    """``exc`` saying which file it is about: an ``ArrowError`` whose message lacks ``label``
    comes back as the same class with ``"label: "`` in front; another exception gets a note."""
    text = str(exc)
    if label in text:
        return exc
    if isinstance(exc, ArrowError):
        try:
            out = type(exc)(f"{label}: {text}")
        except Exception:  # (a subclass with another signature)
            out = None
        if out is not None:
            out.__cause__ = exc
            return out
    if hasattr(exc, "add_note"):
        exc.add_note(f"(while scanning {label})")
    return exc


def _work(label: str, make: Callable[[], Iterable], prepare: Optional[Callable], out: queue.Queue,
          stop: threading.Event, most: int) -> None:
    """One part's scan on a worker: its items into ``out`` in lists (waiting while it is full),
    then ``_DONE``, or a ``_Failed``; returns early once ``stop`` is set.

    The lists grow from one item (the caller gets the first batch at once) to ``most`` (a
    hand-off between threads costs the caller up to the interpreter's switch interval, so a
    scan of many small batches hands them over in fewer, larger lists)."""
    def put(item) -> bool:
        while not stop.is_set():
            try:
                out.put(item, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    try:
        it = iter(make())
        try:
            size, chunk = 1, []
            for item in it:
                if stop.is_set():
                    return
                if prepare is not None:
                    prepare(item)
                chunk.append(item)
                if len(chunk) >= size:
                    # (a full queue does not stop the worker until its list holds ``most``:
                    # waiting at once left a part's worker idle after 3 batches while the
                    # caller took an earlier part's, and the scan's end ran one part at a time)
                    try:
                        out.put_nowait(chunk)
                    except queue.Full:
                        if len(chunk) < most:
                            continue
                        if not put(chunk):
                            return
                    size, chunk = min(most, 2 * size), []
            if chunk and not put(chunk):
                return
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()
    except BaseException as exc:  # (handed to the caller, who raises it in order)
        put(_Failed(exc))
        return
    put(_DONE)


def ordered_readahead(parts: Sequence[Tuple[str, Callable[[], Iterable]]], *,
                      fragment_readahead: int = FRAGMENT_READAHEAD,
                      batch_readahead: int = BATCH_READAHEAD,
                      prepare: Optional[Callable] = None) -> Iterator:
    """The items of every part, in order: ``parts`` are ``(label, make)`` where ``make()``
    gives the part's items (a file's batches) and ``label`` names it in errors; ``prepare``
    is called on each item in the worker before it is handed over.

    Nothing starts before the first ``next()``; closing the iterator stops and joins the
    workers.  ``fragment_readahead`` < 1 reads in the calling thread, one part after the other.
    """
    if fragment_readahead < 1:
        return _sequential(parts, prepare)
    return _pooled(parts, int(fragment_readahead), max(1, int(batch_readahead)), prepare)


def _sequential(parts, prepare) -> Iterator:
    for label, make in parts:
        try:
            for item in make():
                if prepare is not None:
                    prepare(item)
                yield item
        except GeneratorExit:
            raise
        except BaseException as exc:
            named = named_error(exc, label)
            if named is exc:
                raise
            raise named from exc


def _forked_scan(pid: int, items: queue.Queue) -> None:
    """Raise, in a process forked during a scan, unless the next items are there already:
    waiting for the parent's workers (threads this process does not have) hung for ever."""
    if not items.empty():
        return
    raise ArrowInvalid(f"this scan began in process {pid}, which forked this one: its "
                       f"read-ahead threads are not here; start the scan again in this process")


def _pooled(parts, ahead: int, per_part: int, prepare) -> Iterator:
    parts = list(parts)
    if not parts:
        return
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=min(ahead, len(parts)), thread_name_prefix=THREAD_PREFIX)
    pending = collections.deque()  # (label, queue) of the parts submitted, in order
    nxt = 0
    pid = os.getpid()
    try:
        while nxt < len(parts) or pending:
            # (as many parts running as there are workers: each has a thread of its own, so the
            # first part, which the caller waits on, is never queued behind a blocked one)
            while nxt < len(parts) and len(pending) < ahead:
                label, make = parts[nxt]
                q = queue.Queue(maxsize=1)  # (a list of up to per_part items)
                pool.submit(_work, label, make, prepare, q, stop, per_part)
                pending.append((label, q))
                nxt += 1
            label, q = pending[0]
            while True:
                if os.getpid() != pid:  # (a forked child: the workers were the parent's)
                    _forked_scan(pid, q)
                item = q.get()
                if item is _DONE:
                    break
                if isinstance(item, _Failed):
                    exc = item.error
                    named = named_error(exc, label)
                    if named is exc:
                        raise exc
                    raise named from exc
                yield from item
            pending.popleft()
    finally:
        stop.set()
        pool.shutdown(wait=True)
