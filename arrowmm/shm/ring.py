"""The layout of a channel segment and the shared state both ends read and write.

Why a module of its own: the producer (``channel``) and the consumers (``consumer``) agree on
every offset, state and rule here, and ``segment`` lists and cleans up channels with it
without importing either end.

The segment holds, in order: a header (layout, the producer's process record,
the published count ``write_seq``, futex words), a table of consumers (state,
pid and start time, read cursor, batches dropped), a table of slots (the
sequence number a slot holds, its length, and a 64-bit *hold mask*: bit ``i``
set while consumer ``i`` has anything pointing into the slot), the schema
message, and the slots.  Batch ``n`` goes to slot ``n % slots``, or, if that one is held
(or, with ``on_slow="wait"``, holds a batch put there out of turn that a consumer has not
taken), to the next slot that is free; consumers then look it up by number.

A consumer entry is free, claimed (``CLAIMING | pid`` of the process claiming or
reclaiming it: the one compare-and-swap that takes the entry names who took it, so an entry
whose claimer was killed there is reclaimed like a dead consumer's), active, or left.
"""
from __future__ import annotations

import mmap
import os
import re
import stat
import struct
import time
import weakref
from typing import Optional

from .. import types as t
from .._core._shmsync import SharedMap
from ..errors import ArrowInvalid, ArrowNotImplementedError
from ..ipc.core.dictionaries import dictionary_value_fields
from .liveness import hold_lock, pid_namespace, process_alive
from .names import check_name

#: The first 8 bytes of a channel segment (not Arrow's ``ARROW1``: no IPC reader takes it).
CHANNEL_MAGIC = b"AMMCHAN\x01"
CHANNEL_DIR = "/dev/shm"
VERSION = 6  # (2: a claimed entry's state names its claimer; 3: the end is recorded;
#               4: an entry records its process's pid namespace; 5: every process that maps
#               the segment holds its liveness lock, liveness.hold_lock; 6: a wait-mode
#               producer passes over a held slot too, and consumers look batches up by number)
MAX_CONSUMERS = 64  # one bit each in a slot's 64-bit hold mask
WRITING = (1 << 64) - 1  # a slot's sequence while the producer rewrites it
SLICE = 0.05  # seconds between liveness checks while waiting

# header (fixed part, written once before the segment is published)
HEADER = struct.Struct("<8sII Q II QQQQ QQQ 48s")
OFF_WRITE_SEQ, OFF_PUB, OFF_CONS_WAITING, OFF_STATE = 192, 200, 204, 208
OFF_FREE, OFF_PROD_WAITING, OFF_ATTACH = 256, 260, 264
# written by the producer as it ends the stream, before the state: the published count + 1
# (0: not ended; a state word that says "closed" without it was not written by the producer),
# and, when it stopped on an exception, that exception's type name (ASCII, NUL-padded)
OFF_ENDED_AT, OFF_REASON, REASON_SIZE = 216, 224, 32
TABLES = 320
ENTRY = 64  # consumer entry: state u32, pad, pid, start, cursor, dropped, pid namespace
E_STATE, E_PID, E_START, E_CURSOR, E_DROPPED, E_PIDNS = 0, 8, 16, 24, 32, 40
SLOT = 64   # slot entry: seq, length, holds
S_SEQ, S_LEN, S_HOLDS = 0, 8, 16
FREE, ACTIVE, LEFT = 0, 2, 3
# An entry being claimed (by a consumer attaching) or reclaimed (by anyone, from a dead
# consumer) holds CLAIMING | the pid of the process doing it: were that process killed in
# between, the entry would otherwise stay claimed for ever; with the pid in the state word
# itself (written by the one compare-and-swap that takes the entry) anybody can tell.
# The claimer's pid means something only in its pid namespace (a container's consumer may be
# pid 1): the claimer writes its namespace in the entry, then sets NS_KNOWN in the state; an
# entry claimed without it yet is never judged dead (its claimer is one store away).
CLAIMING = 1 << 31
NS_KNOWN = 1 << 30
PID_MASK = NS_KNOWN - 1
# stream states (DAMAGED: its producer found the header so; ABORTED: it stopped on an
# exception, or was collected without close(): its consumers must not take that for the end)
OPEN, CLOSED, DAMAGED, ABORTED = 0, 1, 2, 3
U32 = 0xFFFFFFFF
#: The fields of ``HEADER``, as errors name them.
HEADER_FIELDS = ("magic", "layout version", "flags", "segment size", "slots", "max_consumers",
                 "slot size", "data offset", "schema offset", "schema length", "producer pid",
                 "producer start time", "producer pid namespace", "producer boot id")
FLAGS = 1  # every flag this version knows: bit 0, drop mode
#: Bytes of the header page that nothing writes (zero in every channel this version makes).
RESERVED = ((HEADER.size, OFF_WRITE_SEQ), (OFF_STATE + 4, OFF_ENDED_AT), (OFF_ATTACH + 4, TABLES))
PID_LIMIT = 1 << 22  # PID_MAX_LIMIT on 64-bit Linux: no pid is larger
_BOOT_ID = re.compile(rb"[0-9a-f-]*\0*")  # a boot id (/proc/sys/kernel/random/boot_id), or none


def claiming_state() -> int:
    """The state word of an entry this process claims or reclaims: ``CLAIMING | pid``."""
    return CLAIMING | (os.getpid() & PID_MASK)


def claim_entry(m: SharedMap, e: int, state: int) -> bool:
    """Take the entry at ``e`` from ``state`` (one compare-and-swap), then record this
    process's pid namespace in it and say so in its state; whether it was taken."""
    mine = claiming_state()
    if not m.cas32(e + E_STATE, state, mine):
        return False
    m.store64(e + E_PIDNS, pid_namespace())
    m.cas32(e + E_STATE, mine, mine | NS_KNOWN)  # (nobody else changes a claimed entry)
    return True


def round_up(n: int, to: int) -> int:
    return -(-n // to) * to



class Layout:
    """Where everything lies in a channel segment (checked against its size when read)."""

    def __init__(self, slots: int, max_consumers: int, slot_size: int, schema_length: int):
        self.slots = slots
        self.max_consumers = max_consumers
        self.slot_size = slot_size
        self.consumers = TABLES
        self.slot_table = self.consumers + ENTRY * max_consumers
        self.schema_offset = self.slot_table + SLOT * slots
        self.schema_length = schema_length
        self.data = round_up(self.schema_offset + schema_length, mmap.PAGESIZE)
        self.size = self.data + slots * slot_size

    def entry(self, i: int) -> int:
        return self.consumers + ENTRY * i

    def slot(self, s: int) -> int:
        return self.slot_table + SLOT * s

    def data_at(self, s: int) -> int:
        return self.data + self.slot_size * s


def parse_header(raw: bytes, size: int, name: str):
    """(layout, drop mode, creator record) from the first bytes of a segment (``HEADER.size``
    of them, or ``TABLES`` to check the reserved bytes and the state word too); ArrowInvalid
    naming the segment and the field that is wrong."""
    if len(raw) < HEADER.size or raw[:8] != CHANNEL_MAGIC:
        raise ArrowInvalid(f"shared-memory segment {name!r} is not an arrowmm channel (no "
                           f"{CHANNEL_MAGIC!r} magic)")
    (_, version, flags, total, slots, max_consumers, slot_size, data, schema_offset,
     schema_length, pid, start, pidns, boot) = HEADER.unpack_from(raw)
    where = f"channel {name!r}"
    if version != VERSION:
        raise ArrowInvalid(f"{where}: layout version {version}, this arrowmm reads {VERSION}")
    if flags & ~FLAGS:
        raise ArrowInvalid(f"{where}: header flags {flags:#x} (this version knows {FLAGS:#x}: "
                           f"drop mode): damaged header refused")
    if not 1 <= pid < PID_LIMIT:
        raise ArrowInvalid(f"{where}: producer pid {pid} (must be 1 to {PID_LIMIT - 1}): "
                           f"damaged header refused")
    if not _BOOT_ID.fullmatch(boot):
        raise ArrowInvalid(f"{where}: producer boot id {boot!r} is not a boot id: damaged "
                           f"header refused")
    if len(raw) >= TABLES:  # (the whole header page: nothing writes the reserved bytes)
        for low, high in RESERVED:
            if any(raw[low:high]):
                at = low + next(i for i, b in enumerate(raw[low:high]) if b)
                raise ArrowInvalid(f"{where}: reserved header byte {at} is {raw[at]:#04x}, not "
                                   f"0: damaged header refused")
        state = struct.unpack_from("<I", raw, OFF_STATE)[0]
        if state == DAMAGED:
            raise ArrowInvalid(f"{where}: its producer found its header damaged: refused")
        if state not in (OPEN, CLOSED, ABORTED):
            raise ArrowInvalid(f"{where}: stream state {state} (0 open, 1 closed, 3 aborted): "
                               f"damaged header refused")
    if not 1 <= slots <= 1 << 20:
        raise ArrowInvalid(f"{where}: {slots} slots (must be 1 to {1 << 20})")
    if not 1 <= max_consumers <= MAX_CONSUMERS:
        raise ArrowInvalid(f"{where}: room for {max_consumers} consumers (must be 1 to "
                           f"{MAX_CONSUMERS})")
    if slot_size <= 0 or slot_size % 64 or slot_size > size:
        raise ArrowInvalid(f"{where}: slot size {slot_size} (a positive multiple of 64, at most "
                           f"the segment's {size} bytes)")
    layout = Layout(slots, max_consumers, slot_size, schema_length)
    if (schema_offset != layout.schema_offset or data != layout.data or total != layout.size
            or total != size or schema_length > size):
        raise ArrowInvalid(f"{where}: its header describes {total} bytes (data at {data}, schema "
                           f"[{schema_offset}, +{schema_length})), the segment has {size} and "
                           f"its layout needs {layout.size} (data at {layout.data}): refused")
    creator = {"pid": pid, "start": start, "pidns": pidns,
               "boot": boot.rstrip(b"\0").decode("ascii", "replace")}
    return layout, bool(flags & 1), creator


def open_segment(name: str, flags: int, owner_uid: Optional[int]) -> int:
    """A descriptor of channel ``name``: a regular file of this user, never through a link."""
    check_name(name, "channel")
    path = os.path.join(CHANNEL_DIR, name)
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


def need_linux() -> None:
    if not os.path.isdir(CHANNEL_DIR) or not hasattr(os, "O_NOFOLLOW"):
        raise ArrowNotImplementedError("arrowmm.shm.Channel needs Linux (/dev/shm and futexes)")


def deadline_of(timeout: Optional[float]) -> Optional[float]:
    if timeout is None:
        return None
    if timeout < 0:
        raise ArrowInvalid(f"timeout must be >= 0 or None, got {timeout}")
    return time.monotonic() + timeout


def wait_slice(deadline: Optional[float], what: str) -> float:
    """Seconds to sleep next (at most one slice); TimeoutError when the deadline passed."""
    if deadline is None:
        return SLICE
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError(what)
    return min(SLICE, left)


class Segment:
    """The mapping of one channel segment, its layout and the atomic words in it."""

    def __init__(self, name: str, fd: int, layout: Layout, drop: bool, creator: dict,
                 header: bytes):
        self.name = name
        self.layout = layout
        self.drop = drop
        st = os.fstat(fd)
        self.identity = (st.st_dev, st.st_ino)
        self.map = SharedMap(mmap.mmap(fd, layout.size), fd)  # (its own copy of fd: for check)
        # held before this process's record is in the segment (its entry, or the header when
        # the producer publishes it), and for as long as its mapping lives: a batch still held
        # keeps it too, so no peer judges this process gone while a hold bit is its
        self.lock = hold_lock(fd, f"channel {name!r}")
        weakref.finalize(self.map, self.lock.release).atexit = False
        self.creator = {**creator, "lock": self.lock}
        self.header = bytes(header[:HEADER.size])  # (as parsed: nobody writes it afterwards)
        self.cut: Optional[int] = None  # the segment's size once found cut short
        self.check()  # (cut or changed between the header's read and the mapping)

    def check(self) -> int:
        """The stream state (open, closed or aborted); ArrowInvalid if the segment was cut short (by
        ``ftruncate`` from another process: a load or store past its end would kill this
        process with SIGBUS, so nothing in it is touched once it was), if its fixed header
        differs from the one parsed when it was opened, or if its stream state is neither
        open nor closed.  One Cython call (an ``fstat`` and a 136-byte compare,
        ``SharedMap.segment_state``): every ``send`` and ``recv`` begins with it, and every
        wait slice ends with it."""
        if self.cut is None:
            state = self.map.segment_state(self.layout.size, self.header, OFF_STATE)
            if state == OPEN or state == CLOSED or state == ABORTED:
                return state
            where = f"channel {self.name!r}"
            if state == -2:  # (cut: its size, for the message)
                self._found_cut(self.map.file_size())
            elif state == -1:
                now = self.map.mapping[:HEADER.size]
                raise ArrowInvalid(f"{where}: its header was damaged while in use "
                                   f"({_header_change(self.header, now)})")
            elif state == DAMAGED:
                raise ArrowInvalid(f"{where}: its producer found its header damaged (and "
                                   f"stopped sending)")
            else:
                raise ArrowInvalid(f"{where}: stream state {state} in its header (0 open, "
                                   f"1 closed, 3 aborted): the header was damaged while in use")
        raise ArrowInvalid(f"channel {self.name!r}: its segment ({CHANNEL_DIR}/{self.name}) "
                           f"was cut to {self.cut} bytes by another process (ftruncate); its "
                           f"layout needs {self.layout.size}: the channel is unusable, and "
                           f"nothing in it is touched any more")

    def intact(self) -> bool:
        """Whether the shared words may be touched (the segment was not cut short)."""
        if self.cut is None:
            size = self.map.file_size()
            if size < self.layout.size:
                self._found_cut(size)
        return self.cut is None

    def _found_cut(self, size: int) -> None:
        """The segment is ``size`` bytes now: from here on nothing of it is touched, and this
        process's view of the tables' pages past the cut becomes private zero pages, so that
        letting go of a batch received earlier (its hold bit is cleared in the slot table, in
        Cython) does not fault.  The slots' pages are left as they are: a batch whose bytes
        were cut off cannot be read (SIGBUS, as for any mapped file cut under its reader)."""
        self.cut = size
        start, end = round_up(size, mmap.PAGESIZE), self.layout.data
        if start < end:
            _private_zero_pages(self.map.address + start, end - start)

    def consumer_entries(self):
        """(index, state, pid record) of every consumer entry (none once the segment was cut
        short: see ``check``)."""
        if not self.intact():
            return
        m, lay = self.map, self.layout
        for i in range(lay.max_consumers):
            e = lay.entry(i)
            yield i, m.load32(e + E_STATE), e

    def entry_record(self, e: int) -> dict:
        """The record of an active or left consumer (its pid namespace its own: the judge's
        own ``/proc`` says nothing about another namespace's pids)."""
        m = self.map
        return {"pid": m.load64(e + E_PID), "start": m.load64(e + E_START),
                "pidns": m.load64(e + E_PIDNS), "boot": self.creator.get("boot"),
                "lock": self.lock}

    def claimer_record(self, state: int, e: int) -> Optional[dict]:
        """The record of the process claiming an entry (state ``CLAIMING | pid``): its pid
        and namespace only, as its start time may not be written yet (the entry's may be its
        last owner's); None while its namespace is not written (see ``claim_entry``)."""
        if not state & NS_KNOWN:
            return None
        return {"pid": state & PID_MASK, "start": 0, "pidns": self.map.load64(e + E_PIDNS),
                "boot": self.creator.get("boot")}

    def wake_producer(self) -> None:
        m = self.map
        if m.load32(OFF_PROD_WAITING):
            m.add32(OFF_FREE, 1)
            m.wake32(OFF_FREE)

    def reclaim_dead(self) -> int:
        """Free the entries and hold bits of consumers whose process is gone; how many."""
        m, lay = self.map, self.layout
        n = 0
        for i, state, e in self.consumer_entries():
            if state in (ACTIVE, LEFT):
                record = self.entry_record(e)
            elif state & CLAIMING:  # killed while claiming: only its pid is known for sure
                record = self.claimer_record(state, e)  # (a reused pid keeps it: never wrong)
            else:
                continue
            if record is None or process_alive(record) is not False:
                continue
            if not claim_entry(m, e, state):
                continue  # (someone else reclaims it)
            keep = ((1 << 64) - 1) ^ (1 << i)
            for s in range(lay.slots):
                m.and64(lay.slot(s) + S_HOLDS, keep)
            m.store32(e + E_STATE, FREE)
            n += 1
        if n:
            self.wake_producer()
        return n

    def live_consumers(self) -> int:
        """How many consumers are attached and not known to be gone (a killed one's entry
        stays ACTIVE until ``reclaim_dead`` frees it)."""
        return sum(1 for _, state, e in self.consumer_entries()
                   if state == ACTIVE and process_alive(self.entry_record(e)) is not False)

    def unlink_if_ours(self) -> bool:
        """Remove the name if it still refers to this segment."""
        path = os.path.join(CHANNEL_DIR, self.name)
        try:
            st = os.stat(path, follow_symlinks=False)
            if (st.st_dev, st.st_ino) == self.identity:
                os.unlink(path)
                return True
        except FileNotFoundError:
            pass
        return False



def _private_zero_pages(address: int, length: int) -> bool:
    """Map private zero pages over ``[address, +length)`` of a mapping of this process
    (``MAP_FIXED``); whether that worked."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long]
        got = libc.mmap(address, length, mmap.PROT_READ | mmap.PROT_WRITE,
                        mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_FIXED, -1, 0)
    except (OSError, AttributeError):  # pragma: no cover (no libc mmap: left as it is)
        return False
    return got == address


_MAP_FIXED = 0x10  # (Linux: the mmap module does not export it)


def _header_change(old: bytes, new: bytes) -> str:
    """Which field of a channel header changed from ``old`` to ``new``, and how."""
    before, after = HEADER.unpack(old), HEADER.unpack(new)
    for field, a, b in zip(HEADER_FIELDS, before, after):
        if a != b:
            return f"{field} {a!r} became {b!r}"
    return "its bytes changed, and changed back"  # (undone between the check and the read)


def end_stream(seg: Segment, failure: Optional[str] = None) -> None:
    """The producer closes (``failure`` None) or stops on ``failure`` (the exception's type
    name): consumers take what was published, then see the end, or ``ProducerDiedError``
    naming the failure.  The published count is recorded before the state, so a consumer
    can tell a state word scribbled to "closed" from a close.  A segment cut short is only
    unlinked (touching it would be SIGBUS)."""
    if not seg.intact():
        seg.unlink_if_ours()
        return
    m = seg.map
    m.store64(OFF_ENDED_AT, m.load64(OFF_WRITE_SEQ) + 1)
    if failure is not None:
        m.mapping[OFF_REASON:OFF_REASON + REASON_SIZE] = \
            failure.encode("ascii", "replace")[:REASON_SIZE].ljust(REASON_SIZE, b"\0")
    # (DAMAGED stays: consumers are told why it ended)
    m.cas32(OFF_STATE, OPEN, CLOSED if failure is None else ABORTED)
    m.add32(OFF_PUB, 1)
    m.wake32(OFF_PUB)
    if seg.live_consumers() == 0:
        seg.unlink_if_ours()



def end_reason(seg: Segment) -> str:
    """What an aborted stream's producer recorded: an exception's type name, or "no close()"
    (bytes from the segment: only the characters of those are kept)."""
    raw = bytes(seg.map.mapping[OFF_REASON:OFF_REASON + REASON_SIZE])
    return re.sub(r"[^A-Za-z0-9_.() ]", "", raw.decode("ascii", "replace")) or "unknown"


def check_new_name(name) -> str:
    return check_name(name, "channel")



def has_dictionaries(schema: t.Schema) -> bool:
    return bool(dictionary_value_fields(schema))



# -- for segments() and cleanup() -----------------------------------------------------------
def channel_record(fd: int, name: str) -> Optional[dict]:
    """The producer's record of the channel open as ``fd`` (read-only is enough) with
    ``alive``: whether the producer or any attached consumer still runs; None if ``fd`` is no
    channel (or a damaged one)."""
    size = os.fstat(fd).st_size
    try:
        layout, _, creator = parse_header(os.pread(fd, HEADER.size, 0), size, name)
    except ArrowInvalid:
        return None
    table = os.pread(fd, ENTRY * layout.max_consumers, layout.consumers)
    state = struct.unpack_from("<I", os.pread(fd, 4, OFF_STATE))[0]
    # (their liveness locks probed through fd, which holds none: an exec'd process is gone)
    alive = (state not in (CLOSED, ABORTED)
             and process_alive({**creator, "lock": fd}) is not False)
    for i in range(layout.max_consumers):
        st, _, pid, start, _, _, pidns = struct.unpack_from("<IIQQQQQ", table, ENTRY * i)
        if st in (ACTIVE, LEFT):
            record = {**creator, "pid": pid, "start": start, "pidns": pidns, "lock": fd}
        elif st & CLAIMING:
            record = {**creator, "pid": st & PID_MASK, "start": 0, "pidns": pidns}
            if not st & NS_KNOWN:
                alive = True  # (its claimer is one store away from saying where it runs)
                continue
        else:
            continue
        if process_alive(record) is not False:
            alive = True
    return {**creator, "alive": alive}

