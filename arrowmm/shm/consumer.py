"""The consumers' end of a shared-memory channel (``Channel.attach(name)``).

Why a module of its own: a consumer shares nothing with the producer but the segment's
layout (``ring``); see ``channel`` for how batches, holds and failures work.
"""
from __future__ import annotations

import numbers
import os
import sys
import threading
import time
import weakref
from typing import Iterator, Optional

from .. import types as t
from .._core._region import Region
from .._core._shmsync import (RingCursor, after_fork_in_child, after_fork_in_parent,
                              before_fork, PlainMessage)
from ..arrays.batch import RecordBatch
from ..errors import ArrowInvalid, ArrowNotImplementedError, ProducerDiedError
from ..format import MessageHeader
from ..format.batch_header import record_batch_template
from ..interop._cdata import export_schema, export_stream
from ..ipc.core.byteorder import NATIVE
from ..ipc.core.framing import message_end, read_message_at
from ..ipc.read.file_reader import MessageBatchDecoder
from ..ipc.read.plain_columns import PlainColumns
from . import liveness
from .liveness import process_alive, this_process
from .spin import AdaptiveSpin, crowded
from .ring import (ABORTED, ACTIVE, CLAIMING, CLOSED, DAMAGED, E_CURSOR, E_DROPPED, E_PID,
                   E_START, E_STATE, FREE, LEFT, OFF_ATTACH, OFF_CONS_WAITING, OFF_ENDED_AT,
                   OFF_FREE, OFF_PROD_WAITING, OFF_PUB, OFF_STATE, OFF_WRITE_SEQ, OPEN, S_HOLDS,
                   S_LEN, S_SEQ, SLICE, SLOT, TABLES, U32, Segment, claim_entry, deadline_of,
                   end_reason, has_dictionaries, need_linux, open_segment, parse_header,
                   wait_slice)

__all__ = ["Consumer", "FREE", "CLAIMING", "ACTIVE", "LEFT"]

#: Tests only: called by a consumer between taking its entry and becoming active (to kill it
#: there); None otherwise.
_pause_while_claiming = None

# a forked child keeps the batches it inherits: the slots this process holds become private
# copies for it (see _shmsync.before_fork; a copy of the held bytes per fork, none without)
os.register_at_fork(before=before_fork, after_in_parent=after_fork_in_parent,
                    after_in_child=after_fork_in_child)


class Consumer:
    """A consumer's end of a shared-memory channel (``Channel.attach(name)``).

    ``recv`` returns the next batch (zero-copy over the segment); iterating
    yields batches until the producer closes the channel.  A batch's slot is
    reused only once nothing refers to it any more (the batch, its arrays, numpy
    views, exports to pyarrow): hold few at a time, or the producer waits.
    ``dropped`` counts batches this consumer skipped (``on_slow="drop"``), and
    ``sequence`` is the number of the last batch received.  ``close`` (or the end
    of a ``with`` block) leaves the channel.

    Threads may share a consumer: each ``recv`` hands a batch to one of them.  Each batch a
    thread still holds (a loop variable) holds its slot; the producer puts the next batch
    into any other free slot, so it waits only when every slot is held or not yet taken.

    ``spin``: seconds ``recv`` busy-waits for a batch before it sleeps.  A sleeping
    consumer costs nothing, but waking it costs tens of microseconds (the producer's wake
    call, and the scheduler); a spinning one sees a batch within a microsecond, at the price
    of a busy core.  The default (None) adapts (``spin.AdaptiveSpin``): while batches come
    less than a millisecond apart it stays awake up to twice the typical gap after each one,
    otherwise it spins 10 microseconds and sleeps, so an idle consumer sleeps.  A number
    fixes the spin (``spin=0.001``: a batch that comes within a millisecond of the wait's
    start is seen within a few microseconds, whatever the gaps; ``spin=0``: always asleep).
    Busy-waits yield the CPU every few microseconds to any other process waiting for it.
    """

    def __init__(self, name: str, owner: Optional[int] = None, spin: Optional[float] = None):
        need_linux()
        self._adaptive = AdaptiveSpin()
        self.spin = spin
        fd = open_segment(name, os.O_RDWR, owner)
        try:
            size = os.fstat(fd).st_size
            raw = os.pread(fd, TABLES, 0)  # (the header page: its reserved bytes are checked)
            layout, drop, creator = parse_header(raw, size, name)
            schema_bytes = os.pread(fd, layout.schema_length, layout.schema_offset)
            seg = Segment(name, fd, layout, drop, creator, raw)
        finally:
            os.close(fd)
        try:
            msg = read_message_at(Region(schema_bytes, description=f"channel {name!r} schema"),
                                  0, 0)
        except ArrowInvalid as exc:
            raise ArrowInvalid(f"channel {name!r}: its schema message: {exc}") from None
        if msg is None or msg.record.header_type != MessageHeader.Schema:
            raise ArrowInvalid(f"channel {name!r}: its schema message is missing or not a schema")
        self.name = name
        self.schema: t.Schema = msg.header
        self._seg = seg
        self._has_dicts = has_dictionaries(self.schema)
        self._decoder = MessageBatchDecoder(self.schema)
        # the header every plain batch of this schema has (what the producer's one-call
        # write lays out): checked byte for byte, then only its numbers are read
        shape = self._decoder.plain_shape() if sys.byteorder == "little" else None
        if shape is not None and self.schema.endianness == NATIVE:
            tpl = record_batch_template(*shape)
            self._plain = PlainMessage(tpl.header, tpl.fixed, tpl.rows_at, tpl.body_at,
                                       tpl.nodes_at, tpl.buffers_at, tpl.nodes, tpl.buffers)
            # (a few fixed-width columns: the batch made with them built, no loader)
            columns = PlainColumns(self.schema)
            self._columns = columns if columns.usable else None
        else:
            self._plain = self._columns = None
        self._where = f"channel {name!r} batch "  # (+ the batch's number: its regions' names)
        self._lock = threading.Lock()
        self._index = -1
        self._closed = False
        self._closing = False  # close() called from another thread while a recv waits
        self.sequence: Optional[int] = None
        self._claim()
        self._pid = os.getpid()
        self._finalizer = weakref.finalize(self, _leave_from, seg, self._index, self._pid)

    def _claim(self) -> None:
        seg = self._seg
        m, lay = seg.map, seg.layout
        me = this_process()
        for attempt in range(2):
            for i, state, e in seg.consumer_entries():
                if state == LEFT and not any(m.load64(lay.slot(s) + S_HOLDS) >> i & 1
                                              for s in range(lay.slots)):
                    pass  # left, and none of its batches is held any more: reusable
                elif state != FREE:
                    continue
                if not claim_entry(m, e, state):
                    continue
                if _pause_while_claiming is not None:
                    _pause_while_claiming()
                m.store64(e + E_PID, me["pid"])
                m.store64(e + E_START, me["start"])
                m.store64(e + E_DROPPED, 0)
                m.store64(e + E_CURSOR, m.load64(OFF_WRITE_SEQ))
                m.store32(e + E_STATE, ACTIVE)
                m.store64(e + E_CURSOR, m.load64(OFF_WRITE_SEQ))  # (see the module doc)
                seg.wake_producer()
                m.add32(OFF_ATTACH, 1)
                m.wake32(OFF_ATTACH)
                self._index, self._entry, self._bit = i, e, i
                self._cursor = RingCursor(m, e + E_CURSOR, e + E_DROPPED, OFF_WRITE_SEQ,
                                          lay.slot_table, lay.slots, SLOT, S_SEQ, S_LEN, S_HOLDS,
                                          lay.data, lay.slot_size, i, seg.drop, OFF_PROD_WAITING,
                                          OFF_FREE)
                return
            if not attempt:
                seg.reclaim_dead()
        raise ArrowInvalid(f"channel {self.name!r}: all {lay.max_consumers} consumer entries are "
                           f"taken (create it with a larger max_consumers)")

    @property
    def spin(self) -> Optional[float]:
        """Seconds ``recv`` busy-waits for a batch before it sleeps; None: adaptive (see
        the class)."""
        return self._spin

    @spin.setter
    def spin(self, seconds: Optional[float]) -> None:
        if seconds is not None and (isinstance(seconds, bool) or
                                    not isinstance(seconds, numbers.Real) or
                                    not 0 <= seconds <= 3600):
            raise ArrowInvalid(f"spin must be None (adaptive) or a number of seconds from 0 to "
                               f"3600, got {seconds!r}")
        self._spin = None if seconds is None else float(seconds)

    # -- receiving --------------------------------------------------------------------------
    def recv(self, timeout: Optional[float] = None) -> RecordBatch:
        """The next batch.  ``EOFError`` once the producer closed the channel and every batch
        was received; ``ProducerDiedError`` if it died or stopped on an exception instead;
        ``TimeoutError`` after ``timeout`` seconds (None: wait as long as the producer lives)."""
        if self._pid != liveness.PID:
            raise self._forked("receive through")
        deadline = deadline_of(timeout)
        # (another thread receiving holds the lock: the timeout counts the wait for it too)
        if not self._lock.acquire(timeout=-1 if deadline is None else
                                  max(0.0, deadline - time.monotonic())):
            raise TimeoutError(f"channel {self.name!r}: no batch within the timeout (another "
                               f"thread of this consumer was receiving)")
        try:
            return self._recv(deadline)
        finally:
            self._lock.release()

    def _recv(self, deadline: Optional[float]) -> RecordBatch:
        """``recv`` under the consumer's lock."""
        if self._closed:
            raise ArrowInvalid(f"consumer of channel {self.name!r} is closed")
        seg = self._seg
        batch = self._take()  # (a batch waiting already: nothing else to set up)
        if batch is not None:
            self._adaptive.arrived(time.monotonic())
            return batch
        m = seg.map
        checked = time.monotonic()
        # busy until then, then asleep on the futex
        spin_until = (self._adaptive.spin_until(checked) if self._spin is None
                      else checked + self._spin)
        while True:
            batch = self._take()  # (the segment checked first, as every recv does)
            if batch is not None:
                self._adaptive.arrived(time.monotonic())
                return batch
            if self._closing:
                raise EOFError(f"consumer of channel {self.name!r} was closed (by another "
                               f"thread) while it waited")
            cursor = m.load64(self._entry + E_CURSOR)
            published = m.load64(OFF_WRITE_SEQ)
            if published > cursor:
                continue  # (published meanwhile)
            if published < cursor:  # (the count only grows, and no cursor passes it)
                raise ArrowInvalid(f"channel {self.name!r}: its header's published count is "
                                   f"{published}, below this consumer's next batch {cursor}: "
                                   f"the header was damaged")
            if m.load32(OFF_STATE) != OPEN and m.load64(OFF_WRITE_SEQ) == cursor:
                self._ended(cursor)
            if time.monotonic() - checked >= SLICE:
                checked = time.monotonic()
                if process_alive(seg.creator) is False and m.load64(OFF_WRITE_SEQ) == cursor:
                    raise ProducerDiedError(
                        f"channel {self.name!r}: its producer (pid {seg.creator['pid']}) died "
                        f"without closing it; {cursor} batches were published")
            try:
                wait = wait_slice(deadline, "")
            except TimeoutError:
                raise TimeoutError(f"channel {self.name!r}: no batch within the timeout "
                                   f"(next is batch {cursor})") from None
            spin = spin_until - time.monotonic()
            if spin > 0:  # (a slice at a time: the checks above run between slices)
                # the publication counter moves with a batch, the end and damage alike
                seen = m.load32(OFF_PUB)
                if m.load64(OFF_WRITE_SEQ) != published:
                    continue
                adaptive = self._spin is None  # (a fixed spin needs no stolen time)
                word, stolen = m.spin_while32(OFF_PUB, seen, min(spin, wait), adaptive)
                t = time.monotonic()
                if adaptive and self._adaptive.spun(t, stolen, crowded):
                    spin_until = t  # (a busy machine found: asleep from now on)
                if word != seen or t < spin_until:
                    continue
            m.add32(OFF_CONS_WAITING, 1)
            try:
                seen = m.load32(OFF_PUB)
                if m.load64(OFF_WRITE_SEQ) == published and m.load32(OFF_STATE) == OPEN:
                    m.wait32(OFF_PUB, seen, wait)
            finally:
                if seg.intact():
                    m.add32(OFF_CONS_WAITING, U32)
            if self._spin is None:  # (woken as a send began: its batch is microseconds away)
                spin_until = max(spin_until, self._adaptive.woken(time.monotonic()))

    def _forked(self, what: str) -> ArrowInvalid:
        """The error of a forked child's copy of this consumer: its entry (cursor, hold bit)
        is the parent's, and two processes taking from one cursor split the stream."""
        return ArrowInvalid(f"consumer of channel {self.name!r} was attached in process "
                            f"{self._pid}; process {liveness.PID} is a forked child and cannot "
                            f"{what} it: attach its own (Channel.attach({self.name!r}))")

    def _ended(self, cursor: int) -> None:
        """The stream's state is not open and batch ``cursor`` is the next to be published:
        raise what ended it.  ``EOFError`` only for a close whose recorded count is this
        consumer's (the state word alone could be one scribbled word)."""
        m = self._seg.map
        state = m.load32(OFF_STATE)
        ended_at = m.load64(OFF_ENDED_AT)  # (written before the state: see end_stream)
        if state == CLOSED and ended_at == cursor + 1:
            raise EOFError(f"channel {self.name!r} was closed by its producer")
        if state == ABORTED:
            reason = end_reason(self._seg)
            how = ("let go of its channel without close()" if reason == "no close()" else
                   f"stopped on an exception ({reason}) without closing the channel")
            raise ProducerDiedError(f"channel {self.name!r}: its producer (pid "
                                    f"{self._seg.creator['pid']}) {how}; {cursor} batches were "
                                    f"published: the stream is incomplete")
        if state == CLOSED:
            raise ArrowInvalid(f"channel {self.name!r}: its header's stream state says closed, "
                               f"but its producer did not close it at batch {cursor} (the "
                               f"recorded end is {ended_at - 1 if ended_at else 'none'}): the "
                               f"header was damaged")
        self._seg.check()  # (damaged meanwhile: it says how)

    def _take(self) -> Optional[RecordBatch]:
        """The next batch (skipping what was overwritten: see ``RingCursor.take``); None when
        nothing new is published.  The segment is checked first (``Segment.check``, in the same
        call as the take): cut short or its header damaged, ArrowInvalid before it is touched."""
        seg = self._seg
        try:
            lease = False if seg.cut is not None else \
                self._cursor.take_checked(seg.layout.size, seg.header, OFF_STATE)
            if lease is False:  # (cut or damaged: the check says how; it raises)
                seg.check()
                lease = self._cursor.take()  # (changed back meanwhile: as it is now)
        except ArrowInvalid as exc:
            if str(exc).startswith(f"channel {self.name!r}"):
                raise
            raise ArrowInvalid(f"channel {self.name!r}: {exc}") from None
        if lease is None:
            return None
        n = self.sequence = lease.sequence
        return self._decode(lease, n)

    def _decode(self, lease, n: int) -> RecordBatch:
        plain = self._plain
        if plain is not None:
            where = self._where + str(n)
            got = plain.read(lease, where)
            if got is not None:  # (else: read the general way, which says what is wrong)
                rows, nodes, buffers, body = got
                columns = self._columns
                if columns is not None:
                    batch = columns.batch(rows, nodes, buffers, body)
                    if batch is not None:
                        return batch
                # (lazy; also what says what is wrong with a message the columns refused)
                return self._decoder.plain_record_batch(rows, nodes, buffers, body, where)
        try:
            return self._messages(lease, n)
        except ArrowNotImplementedError as exc:  # (an arrowmm producer writes nothing unknown)
            raise ArrowInvalid(f"channel {self.name!r} batch {n} is damaged: {exc}") from None

    def _messages(self, lease, n: int) -> RecordBatch:
        region = Region(lease, description=f"channel {self.name!r} batch {n}")
        decoder = MessageBatchDecoder(self.schema) if self._has_dicts else self._decoder
        pos, index = 0, 0
        while pos < region.size:
            msg = read_message_at(region, pos, index)
            if msg is None:
                break
            where = f"channel {self.name!r} batch {n}, message {index}"
            kind = msg.record.header_type
            end = message_end(msg)
            if kind == MessageHeader.DictionaryBatch:
                decoder.dictionary(msg, where)
            elif kind == MessageHeader.RecordBatch:
                if end != region.size:
                    raise ArrowInvalid(f"{where}: {region.size - end} bytes follow the record "
                                       f"batch in its slot")
                return decoder.record_batch(msg, where)
            else:
                raise ArrowInvalid(f"{where}: a {msg.kind} message in a slot (expected "
                                   f"dictionaries then a record batch)")
            pos, index = end, index + 1
        raise ArrowInvalid(f"channel {self.name!r} batch {n}: its slot holds no record batch")

    def __iter__(self) -> Iterator[RecordBatch]:
        return self

    def __next__(self) -> RecordBatch:
        try:
            return self.recv()
        except EOFError:
            raise StopIteration from None

    @property
    def dropped(self) -> int:
        """Batches this consumer skipped because the producer overwrote them (drop mode); None
        if it closed after its segment was cut short (the count was in the segment)."""
        if self._closed:
            return self._dropped
        self._seg.check()
        return self._seg.map.load64(self._entry + E_DROPPED)

    @property
    def on_slow(self) -> str:
        """The channel's policy for slow consumers: ``"wait"`` or ``"drop"``."""
        return "drop" if self._seg.drop else "wait"

    @property
    def producer_alive(self) -> bool:
        """False once the producer's process is known to be gone."""
        return process_alive(self._seg.creator) is not False

    def close(self) -> None:
        """Leave the channel (idempotent).  Batches received stay valid; their slots are
        released as they are collected.  The last side to leave removes the segment's name.
        A ``recv`` waiting in another thread (an iteration) ends: ``EOFError``."""
        if self._pid != liveness.PID:
            raise self._forked("close")
        self._closing = True
        # a waiting recv holds the lock: woken, it sees _closing (or within a slice anyway)
        if not self._lock.acquire(blocking=False):
            while True:
                if self._seg.intact():
                    self._seg.map.add32(OFF_PUB, 1)  # (to other consumers: a spurious wake)
                    self._seg.map.wake32(OFF_PUB)
                if self._lock.acquire(timeout=SLICE):
                    break
        try:
            if self._closed:
                return
            self._dropped = (self._seg.map.load64(self._entry + E_DROPPED)
                             if self._seg.intact() else None)
            self._closed = True
            self._finalizer.detach()
            _leave(self._seg, self._index)
        finally:
            self._lock.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __arrow_c_schema__(self):
        return export_schema(self.schema)

    def __arrow_c_stream__(self, requested_schema=None):
        """The remaining batches as an Arrow C stream (``pyarrow.RecordBatchReader.from_stream``)."""
        return export_stream(self.schema, iter(self), requested_schema)

    def __repr__(self):
        return (f"<arrowmm.shm.Consumer of {self.name!r} entry {self._index}"
                f"{' closed' if self._closed else ''}>")



def _leave_from(seg: Segment, index: int, pid: int) -> None:
    """A consumer collected without ``close()`` leaves (not in a forked copy of its process)."""
    if os.getpid() == pid:
        _leave(seg, index)


def _leave(seg: Segment, index: int) -> None:
    if not seg.intact():  # cut short: touching it would be SIGBUS; nobody can use it anyway
        seg.unlink_if_ours()
        return
    m = seg.map
    e = seg.layout.entry(index)
    m.store32(e + E_STATE, LEFT)
    seg.wake_producer()
    if ((m.load32(OFF_STATE) in (CLOSED, DAMAGED, ABORTED)
            or process_alive(seg.creator) is False) and seg.live_consumers() == 0):
        seg.unlink_if_ours()

