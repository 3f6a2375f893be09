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
published, then gets ``ProducerDiedError``; a clean ``close`` is the end of
the stream (``EOFError`` from ``recv``, the end of iteration).  The last side
to leave unlinks the segment; ``arrowmm.shm.cleanup()`` removes a channel whose
producer and consumers are all gone.

Dictionaries: a batch with dictionary-encoded columns carries its dictionaries
in its slot (as replacement dictionaries), so a consumer that attaches late or
skips batches decodes every batch it receives.

Nothing in the segment is trusted by a consumer: the layout is checked against
the file's size on attach, every slot length against the slot size, and the
messages in a slot are read by the checked IPC reader (``ArrowInvalid``).
"""
from __future__ import annotations

import mmap
import os
import secrets
import stat
import struct
import threading
import time
import weakref
from typing import Iterator, List, Optional

from .. import types as t
from .._core._region import Region
from .._core._shmsync import SharedMap
from ..arrays.batch import RecordBatch
from ..errors import ArrowInvalid, ArrowNotImplementedError, ProducerDiedError
from ..interop._cdata import export_schema, export_stream
from ..ipc.dictionaries import dictionary_value_fields
from ..ipc.message import message_end, read_message_at
from ..ipc.reader import MessageBatchDecoder
from ..format import MessageHeader
from ..format.batch_header import record_batch_message
from ..interop.build import record_batch
from ..ipc.byteorder import NATIVE
from ..ipc.encoder import FlatBatch, flatten
from ..ipc.writer import StreamWriter
from .liveness import process_alive, temporary_name, this_process

__all__ = ["Channel", "Consumer", "CHANNEL_MAGIC", "channel_record"]

#: The first 8 bytes of a channel segment (not Arrow's ``ARROW1``: no IPC reader takes it).
CHANNEL_MAGIC = b"AMMCHAN\x01"
_DIR = "/dev/shm"
_VERSION = 1
_MAX_CONSUMERS = 64  # one bit each in a slot's 64-bit hold mask
_WRITING = (1 << 64) - 1  # a slot's sequence while the producer rewrites it
_SLICE = 0.05  # seconds between liveness checks while waiting
_SPINS = 200  # busy rounds (~10 us) before sleeping on a futex: a batch often comes within them
_REWRITER = 4096  # batches per stream writer (its bookkeeping grows per batch)

# header (fixed part, written once before the segment is published)
_FIXED = struct.Struct("<8sII Q II QQQQ QQQ 48s")
_OFF_WRITE_SEQ, _OFF_PUB, _OFF_CONS_WAITING, _OFF_STATE = 192, 200, 204, 208
_OFF_FREE, _OFF_PROD_WAITING, _OFF_ATTACH = 256, 260, 264
_TABLES = 320
_ENTRY = 64  # consumer entry: state u32, pad, pid, start, cursor, dropped
_E_STATE, _E_PID, _E_START, _E_CURSOR, _E_DROPPED = 0, 8, 16, 24, 32
_SLOT = 64   # slot entry: seq, length, holds
_S_SEQ, _S_LEN, _S_HOLDS = 0, 8, 16
_FREE, _CLAIMING, _ACTIVE, _LEFT = 0, 1, 2, 3
_OPEN, _CLOSED = 0, 1
_U32 = 0xFFFFFFFF


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


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


class _Layout:
    """Where everything lies in a channel segment (checked against its size when read)."""

    def __init__(self, slots: int, max_consumers: int, slot_size: int, schema_length: int):
        self.slots = slots
        self.max_consumers = max_consumers
        self.slot_size = slot_size
        self.consumers = _TABLES
        self.slot_table = self.consumers + _ENTRY * max_consumers
        self.schema_offset = self.slot_table + _SLOT * slots
        self.schema_length = schema_length
        self.data = _round_up(self.schema_offset + schema_length, mmap.PAGESIZE)
        self.size = self.data + slots * slot_size

    def entry(self, i: int) -> int:
        return self.consumers + _ENTRY * i

    def slot(self, s: int) -> int:
        return self.slot_table + _SLOT * s

    def data_at(self, s: int) -> int:
        return self.data + self.slot_size * s


def _parse_header(raw: bytes, size: int, name: str):
    """(layout, drop mode, creator record) from the first bytes of a segment; ArrowInvalid."""
    if len(raw) < _FIXED.size or raw[:8] != CHANNEL_MAGIC:
        raise ArrowInvalid(f"shared-memory segment {name!r} is not an arrowmm channel (no "
                           f"{CHANNEL_MAGIC!r} magic)")
    (_, version, flags, total, slots, max_consumers, slot_size, data, schema_offset,
     schema_length, pid, start, pidns, boot) = _FIXED.unpack_from(raw)
    where = f"channel {name!r}"
    if version != _VERSION:
        raise ArrowInvalid(f"{where}: layout version {version}, this arrowmm reads {_VERSION}")
    if not 1 <= slots <= 1 << 20:
        raise ArrowInvalid(f"{where}: {slots} slots (must be 1 to {1 << 20})")
    if not 1 <= max_consumers <= _MAX_CONSUMERS:
        raise ArrowInvalid(f"{where}: room for {max_consumers} consumers (must be 1 to "
                           f"{_MAX_CONSUMERS})")
    if slot_size <= 0 or slot_size % 64 or slot_size > size:
        raise ArrowInvalid(f"{where}: slot size {slot_size} (a positive multiple of 64, at most "
                           f"the segment's {size} bytes)")
    layout = _Layout(slots, max_consumers, slot_size, schema_length)
    if (schema_offset != layout.schema_offset or data != layout.data or total != layout.size
            or total != size or schema_length > size):
        raise ArrowInvalid(f"{where}: its header describes {total} bytes (data at {data}, schema "
                           f"[{schema_offset}, +{schema_length})), the segment has {size} and "
                           f"its layout needs {layout.size} (data at {layout.data}): refused")
    creator = {"pid": pid, "start": start, "pidns": pidns,
               "boot": boot.rstrip(b"\0").decode("ascii", "replace")}
    return layout, bool(flags & 1), creator


def _open_segment(name: str, flags: int, owner_uid: Optional[int]) -> int:
    """A descriptor of channel ``name``: a regular file of this user, never through a link."""
    if not isinstance(name, str) or not name or "/" in name or "\0" in name or name.startswith("."):
        raise ArrowInvalid(f"invalid channel name {name!r}: 1 to 255 bytes, no '/' or NUL, not "
                           f"starting with '.'")
    path = os.path.join(_DIR, name)
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ArrowInvalid(f"no shared-memory channel named {name!r} ({path})") from None
    except OSError as exc:
        raise ArrowInvalid(f"cannot open channel {name!r} ({path}): {exc.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != (os.geteuid() if owner_uid is None
                                                       else owner_uid):
        os.close(fd)
        raise ArrowInvalid(f"channel {name!r} ({path}) is not a regular file owned by uid "
                           f"{os.geteuid() if owner_uid is None else owner_uid}: refused")
    return fd


def _need_linux() -> None:
    if not os.path.isdir(_DIR) or not hasattr(os, "O_NOFOLLOW"):
        raise ArrowNotImplementedError("arrowmm.shm.Channel needs Linux (/dev/shm and futexes)")


def _deadline(timeout: Optional[float]) -> Optional[float]:
    if timeout is None:
        return None
    if timeout < 0:
        raise ArrowInvalid(f"timeout must be >= 0 or None, got {timeout}")
    return time.monotonic() + timeout


def _slice(deadline: Optional[float], what: str) -> float:
    """Seconds to sleep next (at most one slice); TimeoutError when the deadline passed."""
    if deadline is None:
        return _SLICE
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError(what)
    return min(_SLICE, left)


class _Segment:
    """The mapping of one channel segment, its layout and the atomic words in it."""

    def __init__(self, name: str, fd: int, layout: _Layout, drop: bool, creator: dict):
        self.name = name
        self.layout = layout
        self.drop = drop
        self.creator = creator
        st = os.fstat(fd)
        self.identity = (st.st_dev, st.st_ino)
        self.map = SharedMap(mmap.mmap(fd, layout.size))

    def consumer_entries(self):
        """(index, state, pid record) of every consumer entry."""
        m, lay = self.map, self.layout
        for i in range(lay.max_consumers):
            e = lay.entry(i)
            yield i, m.load32(e + _E_STATE), e

    def entry_record(self, e: int) -> dict:
        m = self.map
        return {"pid": m.load64(e + _E_PID), "start": m.load64(e + _E_START),
                "pidns": self.creator.get("pidns"), "boot": self.creator.get("boot")}

    def wake_producer(self) -> None:
        m = self.map
        if m.load32(_OFF_PROD_WAITING):
            m.add32(_OFF_FREE, 1)
            m.wake32(_OFF_FREE)

    def reclaim_dead(self) -> int:
        """Free the entries and hold bits of consumers whose process is gone; how many."""
        m, lay = self.map, self.layout
        n = 0
        for i, state, e in self.consumer_entries():
            if state not in (_ACTIVE, _LEFT) or process_alive(self.entry_record(e)) is not False:
                continue
            if not m.cas32(e + _E_STATE, state, _CLAIMING):
                continue  # (someone else reclaims it)
            keep = ((1 << 64) - 1) ^ (1 << i)
            for s in range(lay.slots):
                m.and64(lay.slot(s) + _S_HOLDS, keep)
            m.store32(e + _E_STATE, _FREE)
            n += 1
        if n:
            self.wake_producer()
        return n

    def active_consumers(self) -> int:
        return sum(1 for _, state, _ in self.consumer_entries() if state == _ACTIVE)

    def live_consumers(self) -> int:
        return sum(1 for _, state, e in self.consumer_entries()
                   if state == _ACTIVE and process_alive(self.entry_record(e)) is not False)

    def unlink_if_ours(self) -> bool:
        """Remove the name if it still refers to this segment."""
        path = os.path.join(_DIR, self.name)
        try:
            st = os.stat(path, follow_symlinks=False)
            if (st.st_dev, st.st_ino) == self.identity:
                os.unlink(path)
                return True
        except FileNotFoundError:
            pass
        return False


class Channel:
    """The producer's end of a shared-memory channel of record batches.

    Made by ``Channel.create``; consumers join with ``Channel.attach(name)``
    (any process of this user, at any time: they receive the batches sent
    after they attach).  ``send`` encodes a batch into the next slot of the
    ring; ``close`` (or the end of a ``with`` block) ends the stream, and the
    segment goes when the last side leaves.  See the module doc for how memory
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
        _need_linux()
        if on_slow not in ("wait", "drop"):
            raise ArrowInvalid(f"on_slow must be 'wait' or 'drop', got {on_slow!r}")
        for what, value, low, high in (("slots", slots, 1, 1 << 20),
                                       ("max_consumers", max_consumers, 1, _MAX_CONSUMERS)):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ArrowInvalid(f"{what} must be an int from {low} to {high}, got {value!r}")
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
            raise ArrowInvalid(f"capacity must be a positive int (bytes), got {capacity!r}")
        slot_size = _round_up(max(capacity // slots, 1), mmap.PAGESIZE)
        if name is None:
            name = f"arrowmm-chan-{secrets.token_hex(8)}"
        parts = _Parts()
        writer = StreamWriter(parts, schema)
        schema_bytes = b"".join(bytes(p) for p in parts.take())
        layout = _Layout(slots, max_consumers, slot_size, len(schema_bytes))
        me = this_process()
        header = _FIXED.pack(CHANNEL_MAGIC, _VERSION, 1 if on_slow == "drop" else 0,
                             layout.size, slots, max_consumers, slot_size, layout.data,
                             layout.schema_offset, len(schema_bytes), me["pid"], me["start"],
                             me["pidns"], me["boot"].encode("ascii", "replace")[:48])
        final = os.path.join(_DIR, _check_new_name(name))
        tmp = os.path.join(_DIR, temporary_name())
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        try:
            # the ring's memory is taken now: a full /dev/shm is an OSError here, not a SIGBUS
            # when a page is first written later (tmpfs allocates on write otherwise)
            try:
                os.posix_fallocate(fd, 0, layout.size)
            except OSError as exc:
                raise OSError(exc.errno, f"cannot allocate the {layout.size}-byte ring of channel "
                                         f"{name!r} in {_DIR}: {exc.strerror}") from None
            os.pwrite(fd, header, 0)
            os.pwrite(fd, schema_bytes, layout.schema_offset)
            seg = _Segment(name, fd, layout, on_slow == "drop", me)
            for s in range(slots):
                seg.map.store64(layout.slot(s) + _S_SEQ, _WRITING)
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

    def _init(self, seg: _Segment, writer: StreamWriter, parts: _Parts) -> None:
        self._seg = seg
        self.name = seg.name
        self._parts = parts
        self._writer = writer
        self.schema = writer.schema  # (with the dictionary ids the messages use)
        self._has_dicts = _has_dictionaries(self.schema)
        # batches the hand-laid header covers: no dictionaries, this machine's byte order
        self._plain = not self._has_dicts and self.schema.endianness == NATIVE
        self._matched = None
        self._lock = threading.Lock()
        self._next = 0
        self._closed = False
        self._finalizer = weakref.finalize(self, _abandon, seg, os.getpid())

    @staticmethod
    def attach(name: str, *, owner: Optional[int] = None) -> "Consumer":
        """Join channel ``name`` as a consumer; it receives the batches sent from now on.

        ``owner``: the uid the segment must belong to (default: this user's).  A missing
        name, a file that is no channel or a damaged header raises ``ArrowInvalid``; a
        channel whose every consumer entry is taken raises ``ArrowInvalid`` saying so.
        """
        return Consumer(name, owner)

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
        with self._lock:
            if self._closed:
                raise ArrowInvalid(f"channel {self.name!r} is closed")
            parts = self._encode(batch, metadata)
            nbytes = sum(memoryview(p).nbytes for p in parts)
            seg = self._seg
            lay = seg.layout
            if nbytes > lay.slot_size:
                raise ArrowInvalid(f"channel {self.name!r}: the batch encodes to {nbytes} bytes, "
                                   f"a slot holds {lay.slot_size} (capacity / slots): create the "
                                   f"channel with a larger capacity or fewer slots")
            n = self._next
            s = n % lay.slots
            deadline = _deadline(timeout)
            if not seg.drop and n >= lay.slots:
                self._wait(lambda: self._slowest() > n - lay.slots, deadline,
                           lambda: f"a consumer has not taken batch {n - lay.slots} "
                                   f"({self._behind(n - lay.slots + 1)})")
            m = seg.map
            if seg.drop:  # any slot nobody holds will do (a held one is passed over)
                found = []
                self._wait(lambda: found.append(self._free_slot(s)) or found[-1] is not None,
                           deadline, lambda: f"every slot is held: {self._holders(None)}")
                s = found[-1]
            else:
                slot = lay.slot(s)
                m.store64(slot + _S_SEQ, _WRITING)  # (before the holds are read: see _take)
                self._wait(lambda: m.load64(slot + _S_HOLDS) == 0, deadline,
                           lambda: f"a consumer still holds batch {n - lay.slots} (slot {s}): "
                                   f"{self._holders(s)}")
            slot = lay.slot(s)
            m.copy_in(lay.data_at(s), parts)
            m.store64(slot + _S_LEN, nbytes)
            m.store64(slot + _S_SEQ, n)
            m.store64(_OFF_WRITE_SEQ, n + 1)
            m.add32(_OFF_PUB, 1)
            if m.load32(_OFF_CONS_WAITING):
                m.wake32(_OFF_PUB)
            self._next = n + 1
            return n

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

    def _encode(self, batch, metadata) -> List:
        """The messages of ``batch`` (dictionaries first) as buffers, nothing copied yet."""
        batch = self._coerce(batch)
        if self._plain and metadata is None and not batch.metadata:
            flat = FlatBatch()
            for col in batch.storage_columns:
                flat = flatten(col, flat)
            if not flat.variadic:
                return _plain_message(batch.num_rows, flat)
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
        """Drop mode: a slot, trying ``first`` first, that no consumer holds, marked as being
        rewritten (its batch is gone for whoever had not taken it); None if all are held."""
        seg = self._seg
        m, lay = seg.map, seg.layout
        for k in range(lay.slots):
            s = (first + k) % lay.slots
            slot = lay.slot(s)
            if m.load64(slot + _S_HOLDS):
                continue
            m.store64(slot + _S_SEQ, _WRITING)
            if m.load64(slot + _S_HOLDS) == 0:  # (a consumer that took it just before keeps it)
                return s
        return None

    def _slowest(self) -> int:
        """The cursor of the slowest attached consumer (-1 if none is attached)."""
        lay = self._seg.layout
        low = self._seg.map.min_where32(lay.consumers, _ENTRY, lay.max_consumers, _E_STATE,
                                        _ACTIVE, _E_CURSOR)
        return (1 << 64) if low == -1 else low

    def _behind(self, need: int) -> Optional[str]:
        """Who (pid) has not taken batch ``need - 1`` yet, or None."""
        seg = self._seg
        m = seg.map
        for _, state, e in seg.consumer_entries():
            if state == _ACTIVE and m.load64(e + _E_CURSOR) < need:
                return f"consumer pid {m.load64(e + _E_PID)} is at batch {m.load64(e + _E_CURSOR)}"
        return None

    def _holders(self, s: Optional[int]) -> str:
        seg = self._seg
        slots = range(seg.layout.slots) if s is None else [s]
        holds = 0
        for k in slots:
            holds |= seg.map.load64(seg.layout.slot(k) + _S_HOLDS)
        pids = [seg.map.load64(e + _E_PID) for i, _, e in seg.consumer_entries() if holds >> i & 1]
        return f"consumer pids {pids} (a batch, an array or a view of it is still referenced)"

    def _wait(self, ready, deadline, why) -> None:
        m = self._seg.map
        if ready():
            return
        checked = time.monotonic()
        while True:
            if time.monotonic() - checked >= _SLICE:
                self._seg.reclaim_dead()
                checked = time.monotonic()
                if ready():
                    return
            try:
                wait = _slice(deadline, "")
            except TimeoutError:
                raise TimeoutError(f"channel {self.name!r}: send timed out: {why()}") from None
            m.add32(_OFF_PROD_WAITING, 1)
            try:
                seen = m.load32(_OFF_FREE)
                if ready():
                    return
                m.wait32(_OFF_FREE, seen, wait)
            finally:
                m.add32(_OFF_PROD_WAITING, _U32)
            if ready():
                return

    def wait_for_consumers(self, n: int = 1, *, timeout: Optional[float] = None) -> int:
        """Block until at least ``n`` consumers are attached (a producer that must not send
        before its workers listen); returns how many are.  ``TimeoutError`` after ``timeout``."""
        deadline = _deadline(timeout)
        seg = self._seg
        while True:
            seen = seg.map.load32(_OFF_ATTACH)
            have = seg.active_consumers()
            if have >= n:
                return have
            seg.reclaim_dead()
            try:
                wait = _slice(deadline, "")
            except TimeoutError:
                raise TimeoutError(f"channel {self.name!r}: {have} of {n} consumers attached "
                                   f"within the timeout") from None
            seg.map.wait32(_OFF_ATTACH, seen, wait)

    @property
    def consumers(self) -> int:
        """How many consumers are attached now."""
        return self._seg.active_consumers()

    @property
    def sent(self) -> int:
        """How many batches were sent."""
        return self._next

    @property
    def capacity(self) -> int:
        return self._seg.layout.slot_size * self._seg.layout.slots

    @property
    def slot_size(self) -> int:
        """The largest encoded batch (with its dictionaries) one slot takes."""
        return self._seg.layout.slot_size

    @property
    def on_slow(self) -> str:
        return "drop" if self._seg.drop else "wait"

    def close(self) -> None:
        """End the stream: consumers receive what was sent, then the end (idempotent).

        The segment's name goes now if no consumer is attached, else when the last leaves."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._writer.abort()
            self._finalizer.detach()
            _end(self._seg)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._closed else f"{self.consumers} consumers"
        return (f"<arrowmm.shm.Channel {self.name!r} {self._seg.layout.slots} slots of "
                f"{self._seg.layout.slot_size} bytes, on_slow={self.on_slow!r}, sent "
                f"{self._next}, {state}>")


def _plain_message(num_rows: int, flat: FlatBatch) -> list:
    """[framed header, body buffers and padding...] of a batch the writer would encode the same
    way (64-byte aligned buffers), its header laid out by ``record_batch_message``."""
    parts: list = [None]
    layout: List[int] = []
    pos = 0
    for buf in flat.buffers:
        size = 0 if buf is None else memoryview(buf).nbytes
        layout += (pos, size)
        if size:
            parts.append(buf)
            pad = -size % 64
            if pad:
                parts.append(_PAD[:pad])
            pos += size + pad
    parts[0] = record_batch_message(num_rows, flat.nodes, layout, pos)
    return parts


_PAD = bytes(64)


def _end(seg: _Segment) -> None:
    m = seg.map
    m.store32(_OFF_STATE, _CLOSED)
    m.add32(_OFF_PUB, 1)
    m.wake32(_OFF_PUB)
    if seg.live_consumers() == 0:
        seg.unlink_if_ours()


def _abandon(seg: _Segment, pid: int) -> None:
    """A producer collected without ``close()``: its consumers see the end of the stream
    (not when a forked copy of the producer's process lets go of it)."""
    if os.getpid() != pid:
        return
    try:
        _end(seg)
    except Exception:  # pragma: no cover (interpreter shutdown)
        pass


def _check_new_name(name) -> str:
    if not isinstance(name, str):
        raise ArrowInvalid(f"a channel name must be a str, got {type(name).__name__}")
    raw = os.fsencode(name)
    if not raw or b"/" in raw or b"\0" in raw or raw.startswith(b".") or len(raw) > 255:
        raise ArrowInvalid(f"invalid channel name {name!r}: 1 to 255 bytes, no '/' or NUL, "
                           f"not starting with '.'")
    return name


def _has_dictionaries(schema: t.Schema) -> bool:
    return bool(dictionary_value_fields(schema))


class Consumer:
    """A consumer's end of a shared-memory channel (``Channel.attach(name)``).

    ``recv`` returns the next batch (zero-copy over the segment); iterating
    yields batches until the producer closes the channel.  A batch's slot is
    reused only once nothing refers to it any more (the batch, its arrays, numpy
    views, exports to pyarrow): hold few at a time, or the producer waits.
    ``dropped`` counts batches this consumer skipped (``on_slow="drop"``), and
    ``sequence`` is the number of the last batch received.  ``close`` (or the end
    of a ``with`` block) leaves the channel.
    """

    def __init__(self, name: str, owner: Optional[int] = None):
        _need_linux()
        fd = _open_segment(name, os.O_RDWR, owner)
        try:
            size = os.fstat(fd).st_size
            layout, drop, creator = _parse_header(os.pread(fd, _FIXED.size, 0), size, name)
            schema_bytes = os.pread(fd, layout.schema_length, layout.schema_offset)
            seg = _Segment(name, fd, layout, drop, creator)
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
        self._has_dicts = _has_dictionaries(self.schema)
        self._decoder = MessageBatchDecoder(self.schema)
        self._lock = threading.Lock()
        self._index = -1
        self._closed = False
        self.sequence: Optional[int] = None
        self._claim()
        self._finalizer = weakref.finalize(self, _leave_from, seg, self._index, os.getpid())

    def _claim(self) -> None:
        seg = self._seg
        m, lay = seg.map, seg.layout
        me = this_process()
        for attempt in range(2):
            for i, state, e in seg.consumer_entries():
                if state == _LEFT and not any(m.load64(lay.slot(s) + _S_HOLDS) >> i & 1
                                              for s in range(lay.slots)):
                    pass  # left, and none of its batches is held any more: reusable
                elif state != _FREE:
                    continue
                if not m.cas32(e + _E_STATE, state, _CLAIMING):
                    continue
                m.store64(e + _E_PID, me["pid"])
                m.store64(e + _E_START, me["start"])
                m.store64(e + _E_DROPPED, 0)
                m.store64(e + _E_CURSOR, m.load64(_OFF_WRITE_SEQ))
                m.store32(e + _E_STATE, _ACTIVE)
                m.store64(e + _E_CURSOR, m.load64(_OFF_WRITE_SEQ))  # (see the module doc)
                seg.wake_producer()
                m.add32(_OFF_ATTACH, 1)
                m.wake32(_OFF_ATTACH)
                self._index, self._entry, self._bit = i, e, i
                return
            if not attempt:
                seg.reclaim_dead()
        raise ArrowInvalid(f"channel {self.name!r}: all {lay.max_consumers} consumer entries are "
                           f"taken (create it with a larger max_consumers)")

    # -- receiving --------------------------------------------------------------------------
    def recv(self, timeout: Optional[float] = None) -> RecordBatch:
        """The next batch.  ``EOFError`` once the producer closed the channel and every batch
        was received; ``ProducerDiedError`` if it died instead; ``TimeoutError`` after
        ``timeout`` seconds (None: wait as long as the producer lives)."""
        with self._lock:
            if self._closed:
                raise ArrowInvalid(f"consumer of channel {self.name!r} is closed")
            deadline = _deadline(timeout)
            seg = self._seg
            m = seg.map
            checked = time.monotonic()
            while True:
                cursor = m.load64(self._entry + _E_CURSOR)
                published = m.load64(_OFF_WRITE_SEQ)
                if published > cursor:
                    batch = self._take(cursor, published)
                    if batch is not None:
                        return batch
                    continue
                if m.load32(_OFF_STATE) == _CLOSED and m.load64(_OFF_WRITE_SEQ) == cursor:
                    raise EOFError(f"channel {self.name!r} was closed by its producer")
                if time.monotonic() - checked >= _SLICE:
                    checked = time.monotonic()
                    if process_alive(seg.creator) is False and m.load64(_OFF_WRITE_SEQ) == cursor:
                        raise ProducerDiedError(
                            f"channel {self.name!r}: its producer (pid {seg.creator['pid']}) died "
                            f"without closing it; {cursor} batches were published")
                if m.spin_until_changed64(_OFF_WRITE_SEQ, published, _SPINS) != published:
                    continue
                try:
                    wait = _slice(deadline, "")
                except TimeoutError:
                    raise TimeoutError(f"channel {self.name!r}: no batch within the timeout "
                                       f"(next is batch {cursor})") from None
                m.add32(_OFF_CONS_WAITING, 1)
                try:
                    seen = m.load32(_OFF_PUB)
                    if m.load64(_OFF_WRITE_SEQ) == published and m.load32(_OFF_STATE) != _CLOSED:
                        m.wait32(_OFF_PUB, seen, wait)
                finally:
                    m.add32(_OFF_CONS_WAITING, _U32)

    def _take(self, cursor: int, published: int) -> Optional[RecordBatch]:
        """Batch ``cursor`` (skipping what was overwritten); None if it was skipped."""
        seg = self._seg
        m, lay, e = seg.map, seg.layout, self._entry
        if published - cursor > lay.slots:  # lapped (drop mode): the oldest that may be there
            skip = published - lay.slots - cursor
            m.add64(e + _E_DROPPED, skip)
            cursor += skip
            m.store64(e + _E_CURSOR, cursor)
        s = cursor % lay.slots
        if seg.drop and m.load64(lay.slot(s) + _S_SEQ) != cursor:  # passed over a held slot?
            s = next((k for k in range(lay.slots) if m.load64(lay.slot(k) + _S_SEQ) == cursor), s)
        slot = lay.slot(s)
        bit = 1 << self._bit
        if m.load64(slot + _S_HOLDS) & bit:
            held = True  # an older batch of ours is there: batch ``cursor`` cannot be
        else:
            m.or64(slot + _S_HOLDS, bit)
            held = m.load64(slot + _S_SEQ) != cursor
            if held:  # overwritten meanwhile: let go
                m.and64(slot + _S_HOLDS, ((1 << 64) - 1) ^ bit)
                seg.wake_producer()
        if held:  # batch ``cursor`` is gone: skip it
            m.add64(e + _E_DROPPED, 1)
            m.store64(e + _E_CURSOR, cursor + 1)
            return None
        length = m.load64(slot + _S_LEN)
        m.store64(e + _E_CURSOR, cursor + 1)
        if length > lay.slot_size:
            m.and64(slot + _S_HOLDS, ((1 << 64) - 1) ^ bit)
            seg.wake_producer()
            raise ArrowInvalid(f"channel {self.name!r}: batch {cursor} claims {length} bytes, a "
                               f"slot holds {lay.slot_size}")
        # the lease owns the hold bit from here: cleared when nothing refers to the batch
        lease = m.lease(lay.data_at(s), length, slot + _S_HOLDS, self._bit, _OFF_PROD_WAITING,
                        _OFF_FREE)
        seg.wake_producer()
        self.sequence = cursor
        return self._decode(lease, cursor)

    def _decode(self, lease, n: int) -> RecordBatch:
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
        """Batches this consumer skipped because the producer overwrote them (drop mode)."""
        if self._closed:
            return self._dropped
        return self._seg.map.load64(self._entry + _E_DROPPED)

    @property
    def on_slow(self) -> str:
        return "drop" if self._seg.drop else "wait"

    @property
    def producer_alive(self) -> bool:
        """False once the producer's process is known to be gone."""
        return process_alive(self._seg.creator) is not False

    def close(self) -> None:
        """Leave the channel (idempotent).  Batches received stay valid; their slots are
        released as they are collected.  The last side to leave removes the segment's name."""
        with self._lock:
            if self._closed:
                return
            self._dropped = self._seg.map.load64(self._entry + _E_DROPPED)
            self._closed = True
            self._finalizer.detach()
            _leave(self._seg, self._index)

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


def _leave_from(seg: _Segment, index: int, pid: int) -> None:
    """A consumer collected without ``close()`` leaves (not in a forked copy of its process)."""
    if os.getpid() == pid:
        _leave(seg, index)


def _leave(seg: _Segment, index: int) -> None:
    m = seg.map
    e = seg.layout.entry(index)
    m.store32(e + _E_STATE, _LEFT)
    seg.wake_producer()
    if ((m.load32(_OFF_STATE) == _CLOSED or process_alive(seg.creator) is False)
            and seg.live_consumers() == 0):
        seg.unlink_if_ours()


# -- for segments() and cleanup() -----------------------------------------------------------
def channel_record(fd: int, name: str) -> Optional[dict]:
    """The producer's record of the channel open as ``fd`` (read-only is enough) with
    ``alive``: whether the producer or any attached consumer still runs; None if ``fd`` is no
    channel (or a damaged one)."""
    size = os.fstat(fd).st_size
    try:
        layout, _, creator = _parse_header(os.pread(fd, _FIXED.size, 0), size, name)
    except ArrowInvalid:
        return None
    table = os.pread(fd, _ENTRY * layout.max_consumers, layout.consumers)
    state = struct.unpack_from("<I", os.pread(fd, 4, _OFF_STATE))[0]
    alive = state != _CLOSED and process_alive(creator) is not False
    for i in range(layout.max_consumers):
        st, _, pid, start = struct.unpack_from("<IIQQ", table, _ENTRY * i)
        if st in (_ACTIVE, _LEFT, _CLAIMING) and process_alive(
                {**creator, "pid": pid, "start": start}) is not False:
            alive = True
    return {**creator, "alive": alive}
