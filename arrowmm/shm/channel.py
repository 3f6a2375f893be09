"""A live shared-memory channel: one producer, any number of consumer processes.

Why this module exists: ``share`` hands over data that already exists; a
producer that makes batches continuously (a reader feeding training workers, a
pipeline stage) otherwise pickles them or writes an IPC stream to a pipe, and
every consumer copies every byte out of the kernel.  A ``Channel`` is a ring of
slots in one shared-memory segment (``/dev/shm/<name>``): the producer copies
each record batch once, into a free slot, and every consumer reads it
in place, zero-copy, as an arrowmm ``RecordBatch`` (which exports to pyarrow,
polars or duckdb through the capsule interface without a copy either).

The segment holds, in order: a header (layout, the producer's process record,
the published count ``write_seq``, futex words), a table of consumers (state,
pid and start time, read cursor, batches dropped), a table of slots (the
sequence number a slot holds, its length, and a 64-bit *hold mask*: bit ``i``
set while consumer ``i`` has anything pointing into the slot), the schema
message, and the slots.  Batch ``n`` goes to slot ``n % slots`` (with ``on_slow="drop"``,
to the next slot nobody holds if that one is held; consumers then look it up by number).

Ordering and memory reuse.  The producer writes batch ``n`` only when no hold
bit of its slot is set: a consumer sets its bit before it checks which batch
the slot holds, and the bit is cleared when the last Python object viewing the
slot is collected (``SlotLease`` in ``arrowmm._core._shmsync``: the ``Region``
of the received batch owns it; every array, numpy view and exported pyarrow
array holds that Region).  With ``on_slow="wait"`` the producer also waits
until every consumer has *taken* the batch the slot held (backpressure: it
blocks while the slowest consumer is a full ring behind, at most ``timeout``);
with ``on_slow="drop"`` it overwrites what a slow consumer has not taken yet
(never what one holds: it passes over a held slot, and waits only if all are),
and that consumer skips ahead (``Consumer.dropped`` counts what it missed,
``Consumer.sequence`` numbers each batch).  Loads and stores of the shared
words are sequentially consistent atomics; sleeping is a futex (not private:
shared between processes), woken only when somebody sleeps.

Failure.  Every wait is cut into short slices; between slices a consumer checks
that the producer still runs (pid, start time, pid namespace, boot: a reused
pid is not mistaken for it) and a producer reclaims the entries and hold bits
of consumers that died.  A consumer whose producer died reads what was
published, then gets ``ProducerDiedError``, as it does when the producer stops on an
exception (a ``with`` block left by one, a ``Channel`` collected without ``close``); only
``close`` (or the end of a ``with`` block without an exception) is the end of the stream
(``EOFError`` from ``recv``, the end of iteration).  The last side
to leave unlinks the segment; ``arrowmm.shm.cleanup()`` removes a channel whose
producer and consumers are all gone.

Encoding.  A batch without dictionaries, variadic buffers or custom metadata (the usual
case) is laid out in its slot by one Cython call (``RingWriter.send_batch`` when its slot is
ready, which also sizes and publishes it; else ``SharedMap.write_batch``): the framed
RecordBatch header of the schema's shape is a template made once per channel
(``format.batch_header.record_batch_template``) with the row count, body length, nodes and
buffer offsets patched in, then each buffer is copied once, 64-byte aligned, with the GIL
released for big bodies.  Other batches go through the stream writer and are copied in.
A consumer checks a slot's header byte for byte against the same template and reads only its
numbers, vectors and body in one call (``_shmsync.PlainMessage``); a header of any other
shape is read by the general IPC reader.  ``reserve`` builds a batch in its slot instead (the
producer writes its data into numpy arrays over the slot's buffers, ``slot_builder``): no copy.

Dictionaries: a batch with dictionary-encoded columns carries its dictionaries
in its slot (as replacement dictionaries), so a consumer that attaches late or
skips batches decodes every batch it receives.

The segment's layout is in ``ring``; the consumers' end in ``consumer``.

Nothing in the segment is trusted by a consumer: the layout is checked against
the file's size on attach, every slot length against the slot size, and the
messages in a slot are read by the checked IPC reader (``ArrowInvalid``).
"""
from __future__ import annotations

import mmap
import os
import secrets
import sys
import threading
import time
import weakref
from typing import List, NamedTuple, Optional, Union

from ..arrays.batch import RecordBatch
from ..errors import ArrowInvalid
from .._core._shmsync import RingWriter, body_length
from ..format.batch_header import RecordBatchTemplate, record_batch_template
from ..interop.build import record_batch
from ..ipc.core.byteorder import NATIVE
from ..ipc.write.encoder import FlatBatch, flatten_columns
from ..ipc.write.writer import StreamWriter
from .consumer import Consumer
from . import liveness
from .liveness import temporary_name, this_process
from .slot_builder import SlotBatch, slot_plan
from .ring import (ABORTED, ACTIVE, CHANNEL_DIR, CHANNEL_MAGIC, CLOSED, DAMAGED, E_CURSOR,
                   E_PID, E_STATE, ENTRY, HEADER, MAX_CONSUMERS, OFF_ATTACH, OFF_CONS_WAITING,
                   OFF_FREE, OFF_PROD_WAITING, OFF_PUB, OFF_STATE, OFF_WRITE_SEQ, S_HOLDS, S_LEN,
                   S_SEQ, SLICE, SLOT, U32, VERSION, WRITING, Layout, Segment, channel_record,
                   check_new_name, deadline_of, end_stream, has_dictionaries, need_linux,
                   round_up, wait_slice)

__all__ = ["Channel", "Consumer", "SlotBatch", "CHANNEL_MAGIC", "channel_record"]

_REWRITER = 4096  # batches per stream writer (its bookkeeping grows per batch)


class _Parts:
    """A write-only file object that keeps references to what is written (no copy)."""

    def __init__(self):
        self.parts: List[memoryview] = []

    def write(self, data) -> int:
        mv = memoryview(data).cast("B")
        self.parts.append(mv)
        return mv.nbytes

    def take(self) -> List[memoryview]:
        out, self.parts = self.parts, []
        return out



class Channel:
    """The producer's end of a shared-memory channel of record batches.

    Made by ``Channel.create``; consumers join with ``Channel.attach(name)``
    (any process of this user, at any time: they receive the batches sent
    after they attach).  ``send`` encodes a batch into the next slot of the
    ring; ``close`` (or the end of a ``with`` block) ends the stream, and the
    segment goes when the last side leaves.  A ``with`` block left by an exception, or a
    channel collected without ``close``, aborts the stream instead: consumers get what was
    sent, then ``ProducerDiedError`` naming the exception, never a clean end.  See the module doc for how memory
    is reused and failures are detected.

    Examples
    --------
    >>> import arrowmm
    >>> from arrowmm.shm import Channel
    >>> with Channel.create(None, arrowmm.schema([("x", arrowmm.int64())])) as ch:
    ...     consumer = Channel.attach(ch.name)
    ...     n = ch.send({"x": [1, 2, 3]})  # its sequence number, 0
    ...     ch.close()
    ...     [b.column("x").to_pylist() for b in consumer]
    [[1, 2, 3]]
    """

    def __init__(self, *args, **kwargs):
        raise TypeError("make a channel with Channel.create(name, schema, ...) or join one with "
                        "Channel.attach(name)")

    # -- making one ------------------------------------------------------------------------
    @classmethod
    def create(cls, name: Optional[str], schema, *, capacity: int = 64 << 20, slots: int = 16,
               on_slow: str = "wait", max_consumers: int = 16) -> "Channel":
        """A new channel named ``name`` (None: ``arrowmm-chan-<random>``) for batches of
        ``schema`` (an arrowmm ``Schema``, or anything with ``__arrow_c_schema__``).

        ``capacity``: bytes of the ring, split into ``slots`` equal slots; a batch (with its
        dictionaries) larger than a slot is refused with ``ArrowInvalid`` saying both sizes.
        ``on_slow``: ``"wait"`` (the producer blocks while the slowest consumer is a full ring
        behind) or ``"drop"`` (slow consumers skip what was overwritten).  ``max_consumers``:
        how many consumers may be attached at once (1 to 64).  An existing name raises
        ``ArrowInvalid``.  The segment is written under a hidden temporary name and published
        with ``os.link``: a consumer never sees half a header.
        """
        need_linux()
        if on_slow not in ("wait", "drop"):
            raise ArrowInvalid(f"on_slow must be 'wait' or 'drop', got {on_slow!r}")
        for what, value, low, high in (("slots", slots, 1, 1 << 20),
                                       ("max_consumers", max_consumers, 1, MAX_CONSUMERS)):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ArrowInvalid(f"{what} must be an int from {low} to {high}, got {value!r}")
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
            raise ArrowInvalid(f"capacity must be a positive int (bytes), got {capacity!r}")
        slot_size = round_up(max(capacity // slots, 1), mmap.PAGESIZE)
        if name is None:
            name = f"arrowmm-chan-{secrets.token_hex(8)}"
        parts = _Parts()
        writer = StreamWriter(parts, schema)
        schema_bytes = b"".join(bytes(p) for p in parts.take())
        layout = Layout(slots, max_consumers, slot_size, len(schema_bytes))
        me = this_process()
        header = HEADER.pack(CHANNEL_MAGIC, VERSION, 1 if on_slow == "drop" else 0,
                             layout.size, slots, max_consumers, slot_size, layout.data,
                             layout.schema_offset, len(schema_bytes), me["pid"], me["start"],
                             me["pidns"], me["boot"].encode("ascii", "replace")[:48])
        final = os.path.join(CHANNEL_DIR, check_new_name(name))
        tmp = os.path.join(CHANNEL_DIR, temporary_name())
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        try:
            # the ring's memory is taken now: a full /dev/shm is an OSError here, not a SIGBUS
            # when a page is first written later (tmpfs allocates on write otherwise)
            try:
                os.posix_fallocate(fd, 0, layout.size)
            except OSError as exc:
                raise OSError(exc.errno, f"cannot allocate the {layout.size}-byte ring of channel "
                                         f"{name!r} in {CHANNEL_DIR}: {exc.strerror}") from None
            os.pwrite(fd, header, 0)
            os.pwrite(fd, schema_bytes, layout.schema_offset)
            seg = Segment(name, fd, layout, on_slow == "drop", me, header)
            for s in range(slots):
                seg.map.store64(layout.slot(s) + S_SEQ, WRITING)
            try:
                os.link(tmp, final)
            except FileExistsError:
                raise ArrowInvalid(f"a shared-memory segment named {name!r} already exists") from None
        finally:
            os.close(fd)
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        self = object.__new__(cls)
        self._init(seg, writer, parts)
        return self

    def _init(self, seg: Segment, writer: StreamWriter, parts: _Parts) -> None:
        self._seg = seg
        self.name = seg.name
        self._parts = parts
        self._writer = writer
        self.schema = writer.schema  # (with the dictionary ids the messages use)
        self._has_dicts = has_dictionaries(self.schema)
        # batches the hand-laid header covers: no dictionaries, this machine's byte order
        # (the hand-laid header's numbers are little-endian, as written by this machine)
        self._plain = (not self._has_dicts and self.schema.endianness == NATIVE
                       and sys.byteorder == "little")
        self._templates = {}  # (nodes, buffers) -> RecordBatchTemplate: one per schema, in practice
        lay = seg.layout
        # (a send's checks and its common case, a slot ready at once, in one call each)
        self._ring = RingWriter(seg.map, lay.size, seg.header, OFF_STATE, OFF_WRITE_SEQ,
                                OFF_CONS_WAITING, OFF_PUB, lay.consumers, ENTRY,
                                lay.max_consumers, E_STATE, E_CURSOR, ACTIVE, lay.slot_table,
                                lay.slots, SLOT, S_SEQ, S_LEN, S_HOLDS, lay.data, lay.slot_size,
                                seg.drop, WRITING)
        self._matched = None
        self._lock = threading.Lock()
        self._next = 0
        self._closed = False
        self._pid = os.getpid()
        self._finalizer = weakref.finalize(self, _abandon, seg, self._pid)

    @staticmethod
    def attach(name: str, *, owner: Optional[int] = None, spin: Optional[float] = None
               ) -> "Consumer":
        """Join channel ``name`` as a consumer; it receives the batches sent from now on.

        ``owner``: the uid the segment must belong to (default: this user's).  ``spin``:
        seconds ``recv`` busy-waits for a batch before sleeping (default None: adaptive,
        awake while batches come less than a millisecond apart, asleep when idle or when
        the machine is busy; a number fixes it: see ``Consumer``).  A
        missing name, a file that is no channel or a damaged header raises
        ``ArrowInvalid``; a channel whose every consumer entry is taken raises
        ``ArrowInvalid`` saying so.
        """
        return Consumer(name, owner, spin)

    # -- sending ----------------------------------------------------------------------------
    def send(self, batch, *, timeout: Optional[float] = None, metadata: Optional[dict] = None
             ) -> int:
        """Encode ``batch`` (an arrowmm ``RecordBatch``, a pyarrow batch, ``{name: values}``)
        into the ring and publish it; returns its sequence number (0, 1, ...).

        Blocks while the slot it needs is held (a consumer still has the batch that was there)
        or, with ``on_slow="wait"``, while a consumer has not taken it yet; ``timeout``
        (seconds, None: no limit) raises ``TimeoutError`` naming who is behind.  Consumers that
        died meanwhile are reclaimed, and do not hold the producer up.
        """
        if self._pid != liveness.PID:
            raise self._forked("send")
        if self._building == threading.get_ident():
            raise ArrowInvalid(f"channel {self.name!r}: a reserved batch is open in this "
                               f"thread: commit or abort it first")
        with self._lock:
            if self._closed:
                raise ArrowInvalid(f"channel {self.name!r} is closed")
            # checked before the segment is touched (cut short or damaged: _check raises),
            # and sleeping consumers woken (see _wake_sleepers), in one call
            if not self._ring.begin(self._next):
                self._check()
                self._wake_sleepers()
            parts = self._encode(batch, metadata)
            n = self._next
            plain = isinstance(parts, _Plain)
            if plain and (timeout is None or timeout >= 0):
                # sized, written and published in one call when its slot is ready now
                nbytes = self._ring.send_batch(n, parts.template, parts.num_rows,
                                               parts.flat.nodes, parts.flat.buffers)
                if nbytes > 0:
                    self._next = n + 1
                    return n
                # (0: its slot is not ready, so the long way below; negative: too big, refused)
                nbytes = -nbytes or len(parts.template.header) + body_length(parts.flat.buffers)
            elif plain:
                nbytes = len(parts.template.header) + body_length(parts.flat.buffers)
            else:
                nbytes = sum(memoryview(p).nbytes for p in parts)
            seg = self._seg
            lay = seg.layout
            if nbytes > lay.slot_size:
                raise ArrowInvalid(f"channel {self.name!r}: the batch encodes to {nbytes} bytes, "
                                   f"a slot holds {lay.slot_size} (capacity / slots): create the "
                                   f"channel with a larger capacity or fewer slots")
            n, s = self._claim_slot(timeout, checked=True)
            m = seg.map
            if isinstance(parts, _Plain):
                tpl, flat = parts.template, parts.flat
                written = m.write_batch(lay.data_at(s), lay.slot_size, tpl.header, tpl.rows_at,
                                        tpl.body_at, tpl.nodes_at, tpl.buffers_at,
                                        parts.num_rows, flat.nodes, flat.buffers)
                if written != nbytes:  # (the buffers are immutable: this is a bug if it happens)
                    raise ArrowInvalid(f"channel {self.name!r}: batch {n} took {written} bytes, "
                                       f"{nbytes} expected")
            else:
                m.copy_in(lay.data_at(s), parts)
            self._publish(n, s, nbytes)
            return n

    def reserve(self, num_rows: int, data_sizes: Optional[dict] = None, *,
                timeout: Optional[float] = None) -> SlotBatch:
        """A batch of ``num_rows`` rows built in place in the next slot: no copy at all.

        ``data_sizes``: ``{column: bytes}`` for each string or binary column (its data).
        Returns a ``SlotBatch`` whose ``values``/``validity``/``offsets``/``data`` are numpy
        arrays over the slot; fill them, then ``commit()`` (or end a ``with`` block): the
        batch is published, as ``send`` would have laid it out.  An exception in the block,
        or ``abort()``, publishes nothing.  Waits for the slot as ``send`` does (``timeout``);
        until the batch is committed or aborted, this channel sends nothing else (``send``
        and ``reserve`` from another thread wait; from this one they raise).
        Fixed-width, boolean, string and binary columns only (``send`` takes any batch).

        Examples
        --------
        >>> import arrowmm
        >>> from arrowmm.shm import Channel
        >>> schema = arrowmm.schema([("x", arrowmm.float64()), ("s", arrowmm.string())])
        >>> with Channel.create(None, schema) as ch:
        ...     consumer = Channel.attach(ch.name)
        ...     with ch.reserve(3, {"s": 6}) as b:
        ...         b["x"][:] = [0.5, 1.5, 2.5]
        ...         b.offsets("s")[:] = [0, 2, 2, 6]
        ...         b.data("s")[:] = list(b"hiabcd")
        ...         b.validity("s")[0] = 0b101   # row 1 is null
        ...     consumer.recv().to_pydict()
        {'x': [0.5, 1.5, 2.5], 's': ['hi', None, 'abcd']}
        """
        where = f"channel {self.name!r}"
        if self._pid != liveness.PID:
            raise self._forked("reserve")
        if self._building == threading.get_ident():
            raise ArrowInvalid(f"{where}: a reserved batch is open in this thread: commit or "
                               f"abort it first")
        self._lock.acquire()
        try:
            if self._closed:
                raise ArrowInvalid(f"{where} is closed")
            if not self._plain:
                raise ArrowInvalid(f"{where}: reserve builds batches without dictionaries in this "
                                   f"machine's byte order; send takes this schema's batches")
            plan = slot_plan(self.schema, num_rows, data_sizes, where)
            shape = (len(plan), sum(len(sizes) for _, _, sizes in plan))
            tpl = self._templates.get(shape)
            if tpl is None:
                tpl = self._templates[shape] = record_batch_template(*shape)
            nbytes = len(tpl.header) + sum(-(-size // 64) * 64 for _, _, sizes in plan
                                            for size in sizes)
            lay = self._seg.layout
            if nbytes > lay.slot_size:
                raise ArrowInvalid(f"{where}: {num_rows} rows take {nbytes} bytes, a slot holds "
                                   f"{lay.slot_size} (capacity / slots)")
            n, s = self._claim_slot(timeout)
            start = lay.data_at(s)
            m = self._seg.map
            self._building = threading.get_ident()

            def finish(publish: bool, size: int, nulls) -> Optional[int]:
                try:
                    if publish:
                        for k, count in enumerate(nulls):
                            m.store64(start + tpl.nodes_at + 16 * k + 8, count)
                        self._publish(n, s, size)
                        return n
                    return None
                finally:
                    self._building = None
                    self._lock.release()

            try:
                pending = SlotBatch(self, plan, tpl, num_rows, m.mapping, start, n, s, finish)
            except BaseException:
                self._building = None
                raise
            self._reserved = weakref.ref(pending)
            return pending
        except BaseException:
            if self._building is None:
                self._lock.release()
            raise

    _building = None  # the thread that has a reserved batch open
    _reserved = None  # a weak reference to that batch (aborted if the stream is)

    def _forked(self, what: str) -> ArrowInvalid:
        """The error of a forked child's copy of this channel: a second writer of the ring
        would tear its batches and its published count."""
        return ArrowInvalid(f"channel {self.name!r} belongs to process {self._pid}, its "
                            f"creator; process {liveness.PID} is a forked child and cannot "
                            f"{what} on it (a child creates a channel of its own)")

    def _claim_slot(self, timeout: Optional[float], checked: bool = False):
        """``(n, s)``: the next batch's number and the slot it goes to, marked as being
        written (consumers pass over it): slot ``n % slots`` when it is ready, else the next
        one that is (``_free_slot``), waiting for one; with ``on_slow="wait"``, only once
        every consumer has taken batch ``n - slots``.  Under ``self._lock``; ``checked``: the
        caller ran ``_check`` just before (``send``: once a send)."""
        seg = self._seg
        lay = seg.layout
        n = self._next
        deadline = deadline_of(timeout)
        if not checked:
            self._check()
        if not seg.drop and n >= lay.slots and not self._slowest() > n - lay.slots:
            self._wait(lambda: self._slowest() > n - lay.slots, deadline,
                       lambda: f"a consumer has not taken batch {n - lay.slots} "
                               f"({self._behind(n - lay.slots + 1)})")
        found = [self._free_slot(n % lay.slots)]
        if found[-1] is None:
            self._wait(lambda: found.append(self._free_slot(n % lay.slots)) or
                       found[-1] is not None, deadline,
                       lambda: f"every slot is held or holds a batch a consumer has not taken: "
                               f"{self._holders(None)}")
        return n, found[-1]

    def _check(self) -> None:
        """ArrowInvalid, before the segment is touched, if it was cut short or its header
        damaged (``Segment.check``), or if the header's stream state or published count is
        not what this producer (their only writer) left there."""
        seg = self._seg
        m = seg.map
        try:
            if seg.check() in (CLOSED, ABORTED):
                raise ArrowInvalid(f"channel {self.name!r}: its header says the stream was "
                                   f"closed, and its producer did not close it: the header was "
                                   f"damaged")
            published = m.load64(OFF_WRITE_SEQ)
            if published != self._next:
                raise ArrowInvalid(f"channel {self.name!r}: its header's published count is "
                                   f"{published}, its producer published {self._next} "
                                   f"batches: the header was damaged")
        except ArrowInvalid:
            if seg.intact():  # tell the consumers (they would wait for batches that never come)
                m.store32(OFF_STATE, DAMAGED)
                m.add32(OFF_PUB, 1)
                m.wake32(OFF_PUB)
            raise

    def _wake_sleepers(self) -> None:
        """Wake the consumers asleep on the publication counter now, as a send begins: their
        wake-up (tens of microseconds: the scheduler, on a virtual machine an idle CPU woken)
        overlaps the encoding and copying, and woken, they busy-wait for the batch
        (``spin.AdaptiveSpin.woken``); a wake that finds no batch is a spurious one to them.
        Right after ``_check`` (the segment is not cut short)."""
        m = self._seg.map
        if m.load32(OFF_CONS_WAITING):
            m.add32(OFF_PUB, 1)
            m.wake32(OFF_PUB)

    def _publish(self, n: int, s: int, nbytes: int) -> None:
        """Batch ``n``, its ``nbytes`` written in slot ``s``, becomes visible to consumers."""
        slot = self._seg.layout.slot(s)
        self._seg.map.publish_slot(slot + S_SEQ, slot + S_LEN, nbytes, n, OFF_WRITE_SEQ, OFF_PUB,
                                   OFF_CONS_WAITING)
        self._next = n + 1

    def _coerce(self, batch) -> RecordBatch:
        if not isinstance(batch, RecordBatch):
            if hasattr(batch, "__arrow_c_array__") or hasattr(batch, "__arrow_c_stream__"):
                batch = record_batch(batch)  # (zero-copy import; its schema is checked below)
            else:  # columns ({name: values}, [values]) take the channel's types
                batch = record_batch(batch, schema=self.schema)
        theirs, ours = batch.schema, self.schema
        if theirs is self._matched:
            return batch
        if len(theirs) != len(ours) or not all(
                a.name == b.name and a.type == b.type and a.nullable == b.nullable
                for a, b in zip(theirs, ours)):
            raise ArrowInvalid(f"channel {self.name!r}: batch schema does not match the "
                               f"channel's schema:\nbatch:\n{theirs}\nchannel:\n{ours}")
        self._matched = theirs  # (schemas are immutable: the next batch of it needs no check)
        return batch

    def _encode(self, batch, metadata) -> Union["_Plain", List]:
        """``batch`` ready to go in a slot, nothing copied yet: a ``_Plain`` (the fast path:
        one Cython call lays it out) or its messages (dictionaries first) as buffers."""
        if type(batch) is not RecordBatch or batch.schema is not self._matched:
            batch = self._coerce(batch)
        if self._plain and metadata is None and not batch.metadata:
            flat = flatten_columns(batch.storage_columns)
            if not flat.variadic:
                shape = (len(flat.nodes) // 2, len(flat.buffers))
                tpl = self._templates.get(shape)
                if tpl is None:
                    tpl = self._templates[shape] = record_batch_template(*shape)
                return _Plain(tpl, flat, batch.num_rows)
        if self._has_dicts:  # a fresh writer: every dictionary goes with every batch
            writer = StreamWriter(self._parts, self.schema)
            self._parts.take()  # (its schema message)
            try:
                writer.write(batch, metadata)
                return self._parts.take()
            finally:
                writer.abort()
                self._parts.take()
        if self._writer.num_record_batches >= _REWRITER:
            self._writer.abort()
            self._writer = StreamWriter(self._parts, self.schema)
            self._parts.take()
        try:
            self._writer.write(batch, metadata)
        except BaseException:
            self._parts.take()  # (a refused batch wrote nothing to the ring)
            raise
        return self._parts.take()

    def _free_slot(self, first: int) -> Optional[int]:
        """A slot, trying ``first`` first, that no consumer holds, marked as being rewritten;
        None if there is none.  With ``on_slow="wait"``, only a slot whose batch every
        consumer has taken; with ``"drop"``, any (its batch is gone for whoever had not taken
        it: a consumer that took it just before keeps it)."""
        seg = self._seg
        lay = seg.layout
        below = WRITING if seg.drop else min(self._slowest(), WRITING)
        s = seg.map.claim_free_slot(lay.slot(0), lay.slots, SLOT, S_SEQ, S_HOLDS, first, below,
                                    WRITING)
        return None if s < 0 else s

    def _slowest(self) -> int:
        """The cursor of the slowest attached consumer (-1 if none is attached)."""
        lay = self._seg.layout
        low = self._seg.map.min_where32(lay.consumers, ENTRY, lay.max_consumers, E_STATE,
                                        ACTIVE, E_CURSOR)
        return (1 << 64) if low == -1 else low

    def _behind(self, need: int) -> Optional[str]:
        """Who (pid) has not taken batch ``need - 1`` yet, or None."""
        seg = self._seg
        m = seg.map
        for _, state, e in seg.consumer_entries():
            if state == ACTIVE and m.load64(e + E_CURSOR) < need:
                return f"consumer pid {m.load64(e + E_PID)} is at batch {m.load64(e + E_CURSOR)}"
        return None

    def _holders(self, s: Optional[int]) -> str:
        seg = self._seg
        slots = range(seg.layout.slots) if s is None else [s]
        holds = 0
        for k in slots:
            holds |= seg.map.load64(seg.layout.slot(k) + S_HOLDS)
        pids = [seg.map.load64(e + E_PID) for i, _, e in seg.consumer_entries() if holds >> i & 1]
        return f"consumer pids {pids} (a batch, an array or a view of it is still referenced)"

    def _wait(self, ready, deadline, why) -> None:
        m = self._seg.map
        if ready():
            return
        checked = time.monotonic()
        while True:
            self._check()  # (cut short or damaged while it waited: raise, touch nothing)
            if time.monotonic() - checked >= SLICE:
                self._seg.reclaim_dead()
                checked = time.monotonic()
                if ready():
                    return
            try:
                wait = wait_slice(deadline, "")
            except TimeoutError:
                raise TimeoutError(f"channel {self.name!r}: send timed out: {why()}") from None
            m.add32(OFF_PROD_WAITING, 1)
            try:
                seen = m.load32(OFF_FREE)
                if ready():
                    return
                m.wait32(OFF_FREE, seen, wait)
            finally:
                if self._seg.intact():
                    m.add32(OFF_PROD_WAITING, U32)
            self._check()
            if ready():
                return

    def wait_for_consumers(self, n: int = 1, *, timeout: Optional[float] = None) -> int:
        """Block until at least ``n`` consumers are attached and running (a producer that must
        not send before its workers listen); returns how many are.  ``TimeoutError`` after
        ``timeout``."""
        deadline = deadline_of(timeout)
        seg = self._seg
        while True:
            seg.check()
            seen = seg.map.load32(OFF_ATTACH)
            have = seg.live_consumers()  # (a killed consumer's entry stays until reclaimed)
            if have >= n:
                return have
            seg.reclaim_dead()
            try:
                wait = wait_slice(deadline, "")
            except TimeoutError:
                raise TimeoutError(f"channel {self.name!r}: {have} of {n} consumers attached "
                                   f"within the timeout") from None
            seg.map.wait32(OFF_ATTACH, seen, wait)

    @property
    def consumers(self) -> int:
        """How many consumers are attached now (one whose process is gone is not counted)."""
        return self._seg.live_consumers()

    @property
    def sent(self) -> int:
        """How many batches were sent."""
        return self._next

    @property
    def capacity(self) -> int:
        """The ring's size in bytes: the slot size times the number of slots."""
        return self._seg.layout.slot_size * self._seg.layout.slots

    @property
    def slot_size(self) -> int:
        """The largest encoded batch (with its dictionaries) one slot takes."""
        return self._seg.layout.slot_size

    @property
    def on_slow(self) -> str:
        """``"wait"`` or ``"drop"``: what a send does when a consumer is a whole ring behind."""
        return "drop" if self._seg.drop else "wait"

    def close(self) -> None:
        """End the stream: consumers receive what was sent, then the end (idempotent).

        The segment's name goes now if no consumer is attached, else when the last leaves."""
        self._end(None)

    def _end(self, failure: Optional[str]) -> None:
        """Close (``failure`` None) or abort the stream on ``failure``, an exception's type
        name (see ``end_stream``)."""
        if self._pid != liveness.PID:
            raise self._forked("close")
        if self._building == threading.get_ident():
            if failure is None:
                raise ArrowInvalid(f"channel {self.name!r}: a reserved batch is open in this "
                                   f"thread: commit or abort it before closing")
            # (stopping on an exception: the half-built batch goes, the stream is aborted, and
            # the exception, not an error about the reservation, reaches the caller)
            pending = self._reserved()
            if pending is not None:
                pending.abort()  # (releases self._lock)
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._writer.abort()
            self._finalizer.detach()
            end_stream(self._seg, failure)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        # (an exception is no end of the stream: consumers must not take a part for the whole)
        self._end(None if exc_type is None else _type_name(exc_type))

    def __repr__(self):
        state = "closed" if self._closed else f"{self.consumers} consumers"
        return (f"<arrowmm.shm.Channel {self.name!r} {self._seg.layout.slots} slots of "
                f"{self._seg.layout.slot_size} bytes, on_slow={self.on_slow!r}, sent "
                f"{self._next}, {state}>")



class _Plain(NamedTuple):
    """A batch without dictionaries, variadic buffers or metadata: the header template of
    its shape and its flattened nodes and buffers, laid out straight into a slot by
    ``SharedMap.write_batch`` (the header patched, each buffer copied once)."""
    template: RecordBatchTemplate
    flat: FlatBatch
    num_rows: int



def _type_name(exc_type) -> str:
    return f"{exc_type.__module__}.{exc_type.__qualname__}".removeprefix("builtins.")


def _abandon(seg: Segment, pid: int) -> None:
    """A producer collected without ``close()`` (dropped, or left at exit, maybe by an
    unhandled exception): nothing says its stream was complete, so consumers get
    ``ProducerDiedError`` after what was published (not when a forked copy of the producer's
    process lets go of it)."""
    if os.getpid() != pid:
        return
    unhandled = getattr(sys, "last_type", None)  # (set by an unhandled exception, at exit)
    try:
        end_stream(seg, "no close()" if unhandled is None else _type_name(unhandled))
    except Exception:  # noqa: BLE001  # pragma: no cover (interpreter shutdown)
        pass

