"""Read-ahead of compressed columns and batches: decode what a caller walking in order wants next.

Why: a compressed column decodes on first touch, on the caller's thread, and one column's
buffers are usually one big buffer, which one thread decodes.  A caller that walks the
columns of a batch, or one column across batches, leaves the other cores idle; pyarrow
decodes a whole batch on its pool as soon as it reads it.  Here a batch whose columns are
compressed tells ``ReadAhead`` which column it is asked for, and ``ReadAhead`` decodes the
ones the walk will want next on one background thread, while the caller decodes or uses this
one; the walk is

* along a batch (the next columns of the same batch), once the caller has asked for two
  neighbouring columns in order (a single column, the lazy path, never triggers it); when the
  walk shows it takes the whole batch (its columns 0 then 1, or column 0 of the batch after
  one it walked to the last column), the rest of the batch is decoded together on the codec
  pool (``RecordBatch._decode_free``), as pyarrow decodes a batch at ``get_batch``; and once
  the walk has taken a whole batch, the next batch is made and decoded whole beside the
  current one, on a second read-ahead thread (``LANES``), and ``get_batch`` hands it out:
  a batch decoded alone left a core idle while its last buffer decoded, and between
  batches (issue 34); at most one batch beyond the walk's is read ahead, held until its
  caller asks for it and let go when the caller drops the batch before it; or else
* down a column (the same column of the next batches read from the same reader: a caller
  that holds several batches and reads column ``k`` across them; past the file's last batch,
  the next column from the batch the walk began at).

The read-ahead is bounded: it decodes at most ``AHEAD`` columns beyond the one the caller asked
for last (it goes on as the caller does), or the rest of the batch of a walk that takes whole
batches (stopped once a walk leaves a batch before its end: a caller that reads the first
columns of each batch gets the ``AHEAD`` read-ahead only), at most ``MAX_PENDING`` starts wait
or run at any time
(a hint beyond that is dropped, never queued), and a batch is held weakly, so read-ahead never
keeps a batch alive that its caller dropped.  Decoding goes through ``RecordBatch._decode``,
under the column's own lock: a column is still decoded once, by whichever thread gets there
first; a caller that finds its column being decoded decodes the walk's next one itself before
it waits, so both threads decode all the time.

``ReadAhead.whole`` does the same for the C stream export of a file (every batch in order,
two decoding at once).  ``decoded_in_order(batches)`` is the same idea for any other consumer
that takes every column of every batch (a stream's export, ``to_pandas``): each batch's columns are
decoded together on the codec pool, and the next batch is read and decoded in the background
while the consumer uses the current one, on a thread of that consumer's own: reading a pipe or
socket can block for as long as its producer is quiet, so it must neither hold up other
readers nor keep a consumer that stops from leaving (see ``OneAhead``).
"""
from __future__ import annotations

import os
import queue
import threading
import weakref
from typing import Iterable, Iterator

from ..errors import ArrowInvalid

__all__ = ["ReadAhead", "OneAhead", "DETACHED", "decoded_in_order", "drain", "MAX_PENDING",
           "MISSING", "DECODED", "IN_FLIGHT"]

#: The most background decodes waiting or running at once (each holds at most one decoded
#: column or batch the caller has not asked for yet).
MAX_PENDING = 2

#: How far (in columns of the walk going on) ``ReadAhead`` decodes ahead of its caller.
AHEAD = 2

#: What ``ReadAhead.hint`` is told of the column asked for.
MISSING, DECODED, IN_FLIGHT = range(3)

#: Threads the read-ahead decodes on ("lanes", each one thread running its jobs in order): the
#: whole-batch decodes of batch ``i`` go to lane ``i % LANES``, so the next batch of a walk in
#: batch order decodes beside the current one rather than queued behind it.
LANES = 2

_executors = [None] * LANES
_executor_pid = None
_executor_lock = threading.Lock()
_read_aheads = weakref.WeakSet()  # every ReadAhead, for _forked


def _forked() -> None:
    """In a forked child, the locks a thread of the parent may have held at the fork are made
    anew (held for ever here, the next read-ahead hung on them), and the decodes the parent's
    thread had in flight stop counting (they do not run here: counted, they refused every
    read-ahead of the child)."""
    global _executor_lock
    _executor_lock = threading.Lock()
    for ahead in list(_read_aheads):
        ahead._lock = threading.Condition()  # (what __init__ makes: close waits on it)
        ahead._pending = 0
        ahead._rest = None
        ahead._next = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def _submit(fn, *args, lane: int = 0):
    """``fn(*args)`` on read-ahead thread ``lane`` (re-created after a fork).  They are not the
    codec pool: a read-ahead decode itself spreads buffers over that pool, and a pool thread
    waiting on its own pool could deadlock."""
    global _executor_pid
    pid = os.getpid()
    with _executor_lock:
        if _executor_pid != pid:
            _executors[:] = [None] * LANES
            _executor_pid = pid
        executor = _executors[lane]
        if executor is None:
            from concurrent.futures import ThreadPoolExecutor
            executor = _executors[lane] = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"arrowmm-decode-ahead-{lane}")
        return executor.submit(fn, *args)


def drain() -> None:
    """Wait until the read-ahead decodes started so far have finished (they run in order on
    each lane's thread): what a test calls before looking at which columns are decoded."""
    for lane in range(LANES):
        _submit(lambda: None, lane=lane).result()


def _quietly(fn, *args) -> bool:
    """Run a read-ahead step; False if it raised: the error is left for the caller's own
    decode to raise (where it names the column), never raised on the background thread."""
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 (the caller's decode of the same column raises it)
        return False
    return True


class ReadAhead:
    """The read-ahead of one reader: the batches it handed out (weakly, by index), the walk
    going on and the decodes in flight.  Thread-safe; ``hint`` is cheap when there is nothing
    to do."""

    __slots__ = ("_batches", "_count", "_pending", "_lock", "_walk", "_failed", "_width",
                 "_partial", "_rest", "_next", "_make", "_closed", "__weakref__")

    def __init__(self, count=None, make=None):
        self._batches = weakref.WeakValueDictionary()  # batch index -> RecordBatch
        self._count = count  # the reader's record batches, when it knows (a file does)
        # (a weak reference to the reader's ``make(i)``, which makes its batch ``i`` for the
        # read-ahead of the next batch; None: this reader's batches are not read ahead)
        self._make = weakref.WeakMethod(make) if make is not None else None
        self._next = None  # (the _Rest of the batch read ahead of a walk in batch order)
        self._pending = 0
        # (guards _pending and _closed; notified as a decode in flight ends, for close)
        self._lock = threading.Condition()
        self._closed = False  # (its reader closed: nothing more is started)
        # (batch index, column) whose read-ahead decode raised: never tried again here (the
        # same bytes fail the same way; the caller's own decode raises the error by name)
        self._failed = set()
        _read_aheads.add(self)
        # The walk going on: (batch index, column) asked for last, whether the walk goes along
        # a batch (else down a column, across batches), the batch a walk down began at, and
        # whether the walk takes whole batches (along from column 0).  One tuple, replaced
        # whole: threads walking at once interleave it; that only picks a less useful
        # read-ahead, never a value.
        self._walk = None
        self._width = 0  # the batches' columns
        # (a walk that took a batch from column 0 left it before its end: whole-batch decodes
        # stop until a walk along reaches a batch's last column)
        self._partial = False
        self._rest = None  # the last decode of the rest of a batch started (a _Rest)

    def track(self, index: int, batch) -> None:
        """Remember ``batch`` as the reader's batch ``index`` (weakly)."""
        self._batches[index] = batch
        self._width = len(batch._columns)

    def hint(self, index: int, k: int, state: int) -> None:
        """Batch ``index`` is asked for column ``k``, whose ``state`` is ``MISSING``
        (the caller decodes it now), ``DECODED`` or ``IN_FLIGHT`` (another thread, usually this
        read-ahead's, is decoding it).

        The walk going on is along a batch if the column before was asked for last (or this
        is column 0 and the batch before was walked along to its last column), else down
        a column (the same column of the next batches, and past the file's last batch, the
        next column from the batch the walk began at: a caller reading every column one at a
        time across its batches); the read-ahead follows that walk only: following both
        kept the thread busy with what the walk wanted much later (a walk down a column had
        the next column of every batch decoded first), and the caller waited.

        The first column of the walk's next ``AHEAD`` not decoded yet is started on the
        read-ahead thread when the caller is about to work (decode a missing column, or use a
        decoded one), which then goes on along the walk as long as it stays within ``AHEAD``
        of the caller; or, when the caller would only wait for a decode in flight, decoded
        here, on the caller's thread, before it waits.  So the thread and the caller both
        decode all the time, the caller's use of each column overlapping the thread's next
        decodes, and at most ``AHEAD`` columns the caller has not asked for are decoded.

        A walk along that takes whole batches (columns 0 then 1 of a batch, or column 0 of
        the batch after one walked to its last column) has instead the rest of its batch
        decoded together on the thread, its buffers spread over the codec pool: what the
        caller will ask for next is then one decode on every core, not one column at a time
        (so decoded, a walk in batch order took 1.2-1.3x the time of pyarrow, which decodes
        the whole batch on its pool at ``get_batch``: issue 34).  A caller that asks for one
        of those columns before the thread has begun them decodes them itself, together,
        rather than wait for the thread to be scheduled.  A walk that leaves such a batch
        before its last column ends that until a walk along reaches a batch's end again."""
        walk = self._walk
        last = self._width - 1
        took = False  # (whether the walk has now taken a whole batch, the next one to come)
        if walk is not None and walk[0] == index and walk[1] == k - 1:
            whole = walk[4] or (k == 1 and not self._partial)
            if k == last:
                self._partial = False
                took = whole
            self._walk = (index, k, True, index, whole)
        elif walk is not None and not walk[2] and walk[0] == index - 1 and walk[1] == k:
            self._walk = (index, k, False, walk[3], False)  # (down the column, from its start)
        elif walk is not None and k == 0 and walk[2] and walk[0] == index - 1 and \
                walk[1] == last and not self._partial:
            self._walk = (index, 0, True, index, True)  # (batch after batch, every column)
            took = True
        else:
            if walk is not None and walk[4] and walk[1] < last:
                self._partial = True  # (a batch taken from column 0, left before its end)
            self._walk = (index, k, False, index, False)
        if took:
            self._read_next(index)
        if state == IN_FLIGHT:
            for rest in (self._rest, self._next):
                if rest is not None and rest.index == index and k in rest.columns and \
                        self._finish(rest):
                    return  # (the thread had not begun it: done here, on the caller's thread)
            rest = self._next
            if rest is not None and rest.index == index + 1 and self._finish(rest):
                return  # (the next batch, decoded here while a thread decodes this one)
        nxt = self._next_undecoded()
        if nxt is None:
            return
        if state == IN_FLIGHT:
            self._decode(*nxt)
        elif self._walk[4]:
            self._start_rest(*nxt)
        else:
            self._start(*nxt)

    def _read_next(self, index: int) -> None:
        """Batch ``index + 1`` read ahead of a walk that has taken whole batches (it will take
        the next): made now, unless the caller has it already (then held here until the
        caller asks for it, ``take``, and let go when the caller drops batch ``index``
        first: the walk stopped), its columns claimed (a caller asking for one waits for
        it) and decoded together on lane ``(index + 1) % LANES``, beside the decode of batch
        ``index`` on the other.  Why: a batch decoded alone on the pool leaves a core idle
        while its last buffer decodes, and between batches (issue 34: a walk in batch order
        kept both cores busy 79% of the time); at most one batch beyond the walk's."""
        j = index + 1
        nxt = self._next
        if nxt is not None and nxt.index == j or self._count is None or j >= self._count:
            return
        with self._lock:
            if self._closed or self._pending >= MAX_PENDING:
                return
            self._pending += 1
        try:
            batch, held = self._batches.get(j), None
            if batch is None:
                make = self._make() if self._make is not None else None
                batch = held = make(j) if make is not None else None
            failed = self._failed
            claimed = [] if batch is None else \
                batch._claim([c for c in range(len(batch._columns)) if (j, c) not in failed])
        except Exception:  # noqa: BLE001 (the caller's get_batch or decode raises it, by name)
            claimed = []
        if not claimed:
            with self._lock:
                self._pending -= 1
                self._lock.notify_all()
            return
        rest = _Rest(j, weakref.ref(batch), claimed)
        if held is not None:
            rest.held = held
            prev = self._batches.get(index)
            if prev is not None:  # (the walk stops when its caller drops batch index first)
                rest.watch = weakref.ref(prev, rest.let_go)
        del batch, held
        if nxt is not None and nxt.index == index:
            self._rest = nxt  # (this batch's, read ahead: still found by its columns)
        self._next = rest
        try:
            _submit(self._run_rest, rest, lane=j % LANES)
        except RuntimeError:  # (interpreter shutting down: no new threads)
            self._finish(rest)
            with self._lock:
                self._pending -= 1
                self._lock.notify_all()

    def whole(self, index: int, batch) -> None:
        """Batch ``index`` (``batch``) taken whole by a consumer of every batch in order (the C
        stream export of a file): the next batch is read ahead (``_read_next``) and this one's
        columns decoded now, together.  A read-ahead of this batch that no thread has begun
        is done here; one a thread has begun leaves this thread the next batch's (when no
        thread has begun that either) before it waits: so two batches decode at once, and
        the cores are not left idle at the end of each (``decoded_in_order`` decodes one
        batch at a time: a core waits while the last buffer of each decodes)."""
        if self._batches.get(index) is not batch:  # (not this reader's batch index, or dropped)
            batch.decode_columns()
            return
        self._walk = (index, self._width - 1, True, index, True)
        self._partial = False
        self._read_next(index)
        for rest in (self._rest, self._next):
            if rest is not None and rest.index == index and self._finish(rest):
                break
        else:
            rest = self._next
            if rest is not None and rest.index == index + 1 and \
                    any(batch._decoding(k) for k in range(len(batch._columns))):
                self._finish(rest)
        batch.decode_columns()

    def take(self, index: int):
        """Batch ``index`` if it is the one read ahead (and not taken yet): the reader's
        ``get_batch(index)`` hands it out, its decode done or under way; else None."""
        rest = self._next
        if rest is None or rest.index != index or rest.held is None:
            return None
        with self._lock:
            batch, rest.held = rest.held, None
        return batch

    def let_go(self) -> None:
        """Drop the batch read ahead and not taken (its reader is closing)."""
        rest = self._next
        if rest is not None:
            rest.held = None

    def close(self) -> None:
        """Its reader is closing: nothing more is read ahead, the decode of a batch's columns
        claimed and not begun is given back (their locks let go: a caller decodes them), and
        this waits for the decodes under way.  Why: once ``close`` returns, the reader's user
        may cut or rewrite the file; a read-ahead still reading the mapping then dies of
        SIGBUS, with the process (a CI run did, a test rewriting a file it had read)."""
        with self._lock:
            self._closed = True
        self.let_go()
        for rest in (self._rest, self._next):
            if rest is not None and rest.begun.acquire(False):
                claimed, rest.claimed = rest.claimed, ()
                for _, lock in claimed:
                    lock.release()
        if threading.current_thread().name.startswith("arrowmm-decode-ahead"):
            return  # (closed by a read-ahead thread itself: it would wait for its own job)
        with self._lock:
            self._lock.wait_for(lambda: self._pending == 0)

    def _next_undecoded(self):
        """``(index, batch, column)`` of the first of the walk's next ``AHEAD`` columns after
        the one the caller asked for last that is neither decoded nor being decoded; or None."""
        walk = self._walk
        if walk is None:
            return None
        index, k, along, first, _ = walk
        batches = self._batches
        batch = batches.get(index)
        for _ in range(AHEAD):
            if batch is None:
                return None
            if along:
                k += 1
            else:
                nxt = batches.get(index + 1)
                if nxt is not None:
                    index, batch = index + 1, nxt
                elif walk[0] > first and self._count is not None and index + 1 >= self._count:
                    # (past the file's last batch, in a walk that went down: the next column,
                    # from the batch the walk began at)
                    index, batch, k = first, batches.get(first), k + 1
                    if batch is None:
                        return None
                else:
                    return None
            if k >= len(batch._columns):
                return None
            if batch._columns[k] is None and not batch._decoding(k) and \
                    (index, k) not in self._failed:
                return index, batch, k
        return None

    def _decode(self, index: int, batch, k: int) -> bool:
        """Decode column ``k`` of batch ``index`` without waiting (skipped if a thread is on
        it); False if that raised, and the column is then left to the caller for good."""
        if _quietly(batch._decode, k, None, False):
            return True
        self._failed.add((index, k))
        return False

    def _start(self, index: int, batch, k: int) -> None:
        with self._lock:
            if self._closed or self._pending >= MAX_PENDING:
                return
            self._pending += 1
        try:
            _submit(self._run, index, weakref.ref(batch), k)
        except RuntimeError:  # (interpreter shutting down: no new threads)
            with self._lock:
                self._pending -= 1
                self._lock.notify_all()

    def _start_rest(self, index: int, batch, k: int) -> None:
        """Columns ``k`` to the last of batch ``index``, those no thread has decoded or is
        decoding, claimed now (``RecordBatch._claim``: a caller asking for one waits for it,
        never decompresses it again) and decoded together on the thread, their buffers spread
        over the codec pool (``_finish``)."""
        with self._lock:
            if self._closed or self._pending >= MAX_PENDING:
                return
            self._pending += 1
        failed = self._failed
        claimed = batch._claim([j for j in range(k, len(batch._columns))
                                if (index, j) not in failed])
        if not claimed:
            with self._lock:
                self._pending -= 1
                self._lock.notify_all()
            return
        rest = self._rest = _Rest(index, weakref.ref(batch), claimed)
        try:
            _submit(self._run_rest, rest)
        except RuntimeError:  # (interpreter shutting down: no new threads)
            self._finish(rest)
            with self._lock:
                self._pending -= 1
                self._lock.notify_all()

    def _finish(self, rest: "_Rest") -> bool:
        """Decode ``rest`` here, unless a thread has begun it (then False): the read-ahead
        thread, or a caller that asks for one of its columns before the thread (late on a
        loaded machine) is there, which then decodes them rather than wait idle."""
        if not rest.begun.acquire(False):
            return False
        claimed, rest.claimed = rest.claimed, ()
        batch = rest.batch()
        if batch is None:  # (dropped by its caller: so are the locks)
            return True
        for j in batch._decode_claimed(claimed):
            self._failed.add((rest.index, j))
        return True

    def _run_rest(self, rest: "_Rest") -> None:
        try:
            self._finish(rest)
        except Exception:  # noqa: BLE001 (the caller's own decode raises it, naming the column)
            pass
        finally:
            with self._lock:
                self._pending -= 1
                self._lock.notify_all()

    def _run(self, index: int, ref, k: int) -> None:
        """Decode column ``k`` of batch ``index``, then the walk's next ones while they are
        within ``AHEAD`` of the caller (a walk the caller left, a batch it dropped, or a
        decode that fails ends this)."""
        try:
            while True:
                batch = ref()
                if batch is None:
                    return
                if batch._columns[k] is None and not self._decode(index, batch, k):
                    return
                del batch
                if self._closed:
                    return
                nxt = self._next_undecoded()
                if nxt is None:
                    return
                index, k, ref = nxt[0], nxt[2], weakref.ref(nxt[1])
                del nxt  # (held here, a batch the caller dropped would live on one more decode)
        finally:
            with self._lock:
                self._pending -= 1
                self._lock.notify_all()


class _Rest:
    """The rest of a batch claimed for one decode together: begun once, by the read-ahead
    thread or by a caller that would otherwise wait for it."""

    __slots__ = ("index", "batch", "columns", "claimed", "begun", "held", "watch")

    def __init__(self, index: int, batch, claimed: list):
        self.index = index
        self.batch = batch  # (weakly: a batch its caller dropped is not decoded)
        self.columns = frozenset(k for k, _ in claimed)
        self.claimed = claimed
        self.begun = threading.Lock()  # (taken by whoever decodes it, never let go)
        self.held = None  # (a batch read ahead, held until its caller takes it)
        self.watch = None  # (the batch before it, weakly: let_go once the caller drops it)

    def let_go(self, _dead=None) -> None:
        """Stop holding the batch read ahead (the walk stopped before it)."""
        self.held = None


#: What ``OneAhead.take`` returns once ``stop(wake=True)`` detached it from its consumer.
DETACHED = object()


class OneAhead:
    """One batch read (and decoded) ahead of a consumer, on this generator's own daemon thread.

    Why its own thread: reading the next batch of a pipe or socket blocks until the producer
    writes, and nothing can cancel that read.  On a thread shared by the process, one quiet
    producer would hold up every other reader's export and ``to_pandas``; and a consumer that
    stops would have to wait for the producer before it could leave.  Here the consumer asks
    for one step at a time (``ask``), takes its result (``take``), and ``stop`` returns at once:
    a step in flight finishes on its own, its result is dropped (nobody takes it), and the
    thread ends.  The iterator is still stepped by one thread at a time (this one), so a
    reader's one-consumer rule holds: while a dropped step is still reading, the reader's own
    ``read_next_batch`` raises that another thread is reading.

    ``pending()`` and ``late(batch, error)``, when given, let the batches' owner keep a batch
    read ahead and never taken (a reader hands it out next rather than skip it), or the error
    such a read raised (the reader raises it at its next read rather than go on past the bad
    message): at ``stop``, ``pending()`` is called when a step is still in flight, and ``late``
    once that step, or one that finished untaken, has its result (``None, None`` for the end,
    or for a step asked for and never started).

    With ``inline``, ``take`` runs a step the thread has not started yet itself, on the
    consumer's thread, instead of waiting for the thread to be scheduled.  Why: a consumer
    that does no work between batches (``pyarrow.table(reader)``) gains nothing from the
    thread and pays its wake-up per batch, which on a loaded machine (a long run queue)
    measured longer than decoding an LZ4 batch.  A step the thread has started is waited for
    as before; the thread skips a step the consumer took over.  Only for steps that cannot
    block on a producer (a mapped file's batches), and never with ``late`` (whose owner
    counts on the thread having the step)."""

    __slots__ = ("_step", "_asks", "_results", "_stopped", "_thread", "_handoff", "_owed",
                 "_late", "_owes_late", "_unstarted", "_inline", "_pid")

    def __init__(self, step, pending=None, late=None, inline=False):
        self._step = step
        self._asks = threading.Semaphore(0)
        self._results = queue.SimpleQueue()
        self._stopped = False
        self._handoff = threading.Lock()  # (a result is either taken or handed to late)
        self._owed = 0  # steps asked for and not yet taken
        self._unstarted = 0  # steps asked for that neither the thread nor take has begun
        self._inline = bool(inline) and late is None
        self._late = (pending, late) if late is not None else None
        self._owes_late = False  # (stop told pending(): late is owed exactly one call)
        self._pid = os.getpid()  # (a forked child has no thread: see _take_forked)
        self._thread = threading.Thread(target=self._run, name="arrowmm-read-ahead",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        step = self._step
        while True:
            self._asks.acquire()
            if self._stopped:  # (a step asked for and never started is owed to late too)
                if self._owes_late:
                    self._late[1](None, None)
                break
            with self._handoff:
                if not self._unstarted:  # (take ran this step itself)
                    continue
                self._unstarted -= 1
            try:
                result = (step(), None)
            except BaseException as exc:  # noqa: BLE001 (raised on the consumer's side)
                result = (None, exc)
            with self._handoff:
                dropped = self._stopped
                if not dropped:
                    self._results.put(result)
            if dropped:  # (the consumer has gone: the owner keeps the batch, or the error)
                if self._owes_late:
                    self._late[1](*result)
                break
            if result[0] is None:
                break  # (the end, or an error: nothing more to read)
        self._step = None  # (let go of the iterator and its reader)

    def ask(self) -> None:
        """Start the next step in the background."""
        with self._handoff:
            self._owed += 1
            self._unstarted += 1
        self._asks.release()

    def take(self):
        """The result of the step asked for last: a batch, or None at the end; its error is
        raised here."""
        if self._pid != os.getpid():
            return self._take_forked()
        if self._inline:
            with self._handoff:
                mine = self._unstarted > 0 and not self._stopped and self._results.empty()
                if mine:
                    self._unstarted -= 1
                    self._owed -= 1
            if mine:  # (the thread has not begun it: run it here, without a hand-off)
                return self._step()
        batch, exc = self._results.get()
        with self._handoff:
            self._owed -= 1
        if exc is not None:
            raise exc
        return batch

    def _take_forked(self):
        """``take`` in a process forked from the one that made this, where the thread does not
        exist (waiting for it hung for ever): a result it left is taken, a step it had not
        begun runs here; one it was running at the fork is lost with it (where its source
        stands is unknown), which ``ArrowInvalid`` says."""
        if not self._results.empty():  # (no lock: no other thread of this object is here)
            batch, exc = self._results.get()
            self._owed -= 1
            if exc is not None:
                raise exc
            return batch
        if self._unstarted > 0 and not self._stopped:
            self._unstarted -= 1
            self._owed -= 1
            return self._step()
        raise ArrowInvalid(f"this iteration began in process {self._pid}, which forked this one "
                           f"while its read-ahead thread was reading the next batch: that read "
                           f"is lost here; open the source again in this process")

    def stop(self, wake: bool = False) -> None:
        """The consumer has gone: end the thread without waiting for a step in flight.

        With ``wake``, the consumer is still there but another reader of the same source
        takes over (a direct read, an export, ``close``): its ``take``, waiting now or
        later, returns ``DETACHED`` instead of a step's result (those go to ``late``)."""
        untaken = []
        with self._handoff:
            if self._stopped:  # (a second stop, e.g. a generator closed after a take-over)
                return
            self._stopped = True
            while not self._results.empty():
                result = self._results.get()
                if result[0] is not DETACHED:
                    untaken.append(result)
                    self._owed -= 1
            in_flight = self._owed > 0
            if in_flight and self._late is not None:
                self._owes_late = True
                self._late[0]()
        self._asks.release()  # (wakes the thread if it waits for an ask)
        if self._late is not None:
            for batch, exc in untaken:
                self._late[1](batch, exc)
        if wake:  # (after the untaken results went to late: never taken after this)
            self._results.put((DETACHED, None))


def decoded_in_order(batches: Iterable, pending=None, late=None) -> Iterator:
    """``batches``, a compressed one with every column decoded (``RecordBatch.decode_columns``:
    together, on the codec pool) before it is yielded, the next one read (and decoded) in the
    background while the consumer uses the current one (one batch ahead: at most two batches
    the consumer has not finished with).  Uncompressed batches stay lazy.  An error reading or
    decoding a batch is raised when the consumer reaches that batch.

    The reading runs on a thread of this generator's own (``OneAhead``), so a reader that
    blocks (a pipe whose producer is quiet) holds up no other reader, and closing the
    generator never waits for a read in flight: that read finishes on its own and its batch
    is dropped, or handed to ``late`` (see ``OneAhead``)."""
    it = iter(batches)

    def read_next():
        try:
            b = next(it)
        except StopIteration:
            return None
        if b.compression is not None:
            b.decode_columns()
        return b

    ahead = OneAhead(read_next, pending, late, inline=late is None)
    try:
        ahead.ask()
        while True:
            batch = ahead.take()
            if batch is None:
                return
            ahead.ask()
            yield batch
    finally:
        ahead.stop()
