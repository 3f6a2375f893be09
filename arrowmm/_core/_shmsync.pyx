"""Cross-process atomics, futex waits and slot leases over a shared mapping.

Python has no atomic operations on shared memory, and polling a mapping from
Python costs far more than the 50 µs a small batch may take to cross between
processes.  ``SharedMap`` holds a writable ``Py_buffer`` over a mapping of a
shared-memory segment (``mmap.mmap`` of a file under ``/dev/shm``) and offers
sequentially consistent loads, stores and read-modify-writes (GCC/Clang
``__atomic`` builtins) on 8-byte aligned 64-bit words and 4-byte aligned
32-bit words, plus ``futex`` wait and wake *without* ``FUTEX_PRIVATE_FLAG``
(the kernel keys such a futex by the file page, so waiters in other processes
sharing the segment are woken).  Waits release the GIL and take a timeout.

``SlotLease`` exposes a byte range of the mapping read-only through the
buffer protocol and, when the last reference to it goes (its ``Region``, so
every view and exported array over it), clears one bit of a 64-bit hold mask
in the segment and wakes a waiting producer: the memory of a received record
batch goes back to the ring exactly when nothing in the process points into
it any more, with no Python code to run.

Every offset is checked against the mapping (bounds and alignment) before an
address is formed; the numbers come from a segment other processes write.
"""
from cpython.buffer cimport PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.ref cimport PyObject
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t, uintptr_t
from libc.string cimport memcmp, memcpy, memset
from libc.errno cimport errno, EAGAIN, EINTR, ETIMEDOUT
from posix.unistd cimport close, getpid, off_t, pid_t
from posix.fcntl cimport fcntl, F_DUPFD_CLOEXEC
from posix.stat cimport fstat, struct_stat
from arrowmm._core._buffer cimport fill_byte_buffer
from arrowmm._core._region cimport Region
from arrowmm._core._flatbuf cimport StructPairs

from arrowmm.errors import ArrowInvalid

__all__ = ["SharedMap", "SlotLease", "RingCursor", "RingWriter", "WOKEN", "TIMED_OUT",
           "CHANGED", "body_length", "plain_header", "PlainMessage", "before_fork",
           "after_fork_in_parent", "after_fork_in_child"]

cdef enum:
    _ALIGN = 64  # every buffer of a channel's message body starts 64-byte aligned
    _NOGIL_FROM = 65536  # bytes of body from which the copies run with the GIL released

cdef extern from "<time.h>" nogil:
    cdef struct timespec:
        long tv_sec
        long tv_nsec
    int CLOCK_MONOTONIC
    int CLOCK_THREAD_CPUTIME_ID
    int clock_gettime(int clk_id, timespec* tp)

cdef extern from "<sys/syscall.h>" nogil:
    long SYS_futex

cdef extern from "<unistd.h>" nogil:
    long syscall(long number, ...)

cdef extern from "<sched.h>" nogil:
    int sched_yield()

cdef extern from "<sys/mman.h>" nogil:
    void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset)
    void* mremap(void* old, size_t old_size, size_t new_size, int flags, ...)
    int munmap(void* addr, size_t length)
    int mprotect(void* addr, size_t length, int prot)
    int PROT_NONE, PROT_READ, PROT_WRITE, MAP_SHARED, MAP_PRIVATE, MAP_ANONYMOUS, MAP_FIXED
    int MAP_POPULATE
    int MREMAP_MAYMOVE, MREMAP_FIXED
    void* MAP_FAILED

cdef extern from "<unistd.h>" nogil:
    long sysconf(int name)
    int _SC_PAGESIZE

cdef extern from "<linux/futex.h>" nogil:
    int FUTEX_WAIT
    int FUTEX_WAKE

cdef extern from * nogil:
    """
    #define AMM_LOAD64(p) __atomic_load_n((uint64_t*)(p), __ATOMIC_SEQ_CST)
    #define AMM_STORE64(p, v) __atomic_store_n((uint64_t*)(p), (v), __ATOMIC_SEQ_CST)
    #define AMM_ADD64(p, v) __atomic_add_fetch((uint64_t*)(p), (v), __ATOMIC_SEQ_CST)
    #define AMM_OR64(p, v) __atomic_or_fetch((uint64_t*)(p), (v), __ATOMIC_SEQ_CST)
    #define AMM_AND64(p, v) __atomic_and_fetch((uint64_t*)(p), (v), __ATOMIC_SEQ_CST)
    #define AMM_LOAD32(p) __atomic_load_n((uint32_t*)(p), __ATOMIC_SEQ_CST)
    #define AMM_STORE32(p, v) __atomic_store_n((uint32_t*)(p), (v), __ATOMIC_SEQ_CST)
    #define AMM_ADD32(p, v) __atomic_add_fetch((uint32_t*)(p), (v), __ATOMIC_SEQ_CST)
    static inline int amm_cas32(void* p, uint32_t expected, uint32_t desired) {
        return __atomic_compare_exchange_n((uint32_t*)p, &expected, desired, 0,
                                           __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    }
    static inline void amm_pause(void) {
    #if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
    #endif
    }
    """
    uint64_t AMM_LOAD64(void* p)
    void AMM_STORE64(void* p, uint64_t v)
    uint64_t AMM_ADD64(void* p, uint64_t v)
    uint64_t AMM_OR64(void* p, uint64_t v)
    uint64_t AMM_AND64(void* p, uint64_t v)
    uint32_t AMM_LOAD32(void* p)
    void AMM_STORE32(void* p, uint32_t v)
    uint32_t AMM_ADD32(void* p, uint32_t v)
    int amm_cas32(void* p, uint32_t expected, uint32_t desired)
    void amm_pause()

cdef enum:
    _WOKEN = 0
    _TIMED_OUT = 1
    _CHANGED = 2

#: ``wait32`` results: woken (or a spurious return), timed out, the word already differed.
WOKEN = _WOKEN
TIMED_OUT = _TIMED_OUT
CHANGED = _CHANGED


cdef inline int _futex_wait(uint32_t* word, uint32_t expected, double timeout) noexcept nogil:
    cdef timespec ts
    cdef long rc
    if timeout < 0:
        timeout = 0
    ts.tv_sec = <long>timeout
    ts.tv_nsec = <long>((timeout - <double>ts.tv_sec) * 1e9)
    rc = syscall(SYS_futex, word, FUTEX_WAIT, expected, &ts, NULL, 0)
    if rc == 0:
        return _WOKEN
    if errno == ETIMEDOUT:
        return _TIMED_OUT
    if errno == EAGAIN:
        return _CHANGED
    return _WOKEN  # EINTR: the caller re-checks its condition and its deadline


cdef inline void _futex_wake(uint32_t* word) noexcept nogil:
    syscall(SYS_futex, word, FUTEX_WAKE, 0x7FFFFFFF, NULL, NULL, 0)


cdef void _copy_body(uint8_t* dst, Py_buffer* views, int64_t* sizes, Py_ssize_t nb) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t pad
    for i in range(nb):
        if sizes[i] > 0:
            memcpy(dst, views[i].buf, sizes[i])
            pad = -sizes[i] & (_ALIGN - 1)
            if pad:
                memset(dst + sizes[i], 0, pad)
            dst += sizes[i] + pad


cdef inline int64_t _padded(int64_t n) noexcept nogil:
    return n + (-n & (_ALIGN - 1))


def body_length(buffers):
    """Bytes of the message body that ``SharedMap.write_batch`` lays ``buffers`` out in
    (each buffer padded to 64 bytes; None is an empty buffer)."""
    cdef Py_buffer view
    cdef int64_t total = 0
    for buf in buffers:
        if buf is None:
            continue
        PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE)
        total += _padded(view.len)
        PyBuffer_Release(&view)
    return total


cdef inline void _put64(uint8_t* at, int64_t value) noexcept nogil:
    memcpy(at, &value, 8)  # (little-endian hosts only: the channel checks the byte order)


cdef struct _Batch:
    # a plain record batch about to be laid out in a slot (``SharedMap.write_batch``): its
    # header template and numbers, and its buffers' views (``held`` of them acquired)
    const uint8_t* template
    Py_ssize_t tlen
    int64_t rows_at, body_at, nodes_at, buffers_at, num_rows, body
    Py_ssize_t nn, nb, held
    int64_t* nodes
    Py_buffer* views
    int64_t* sizes


cdef int _batch_take(_Batch* b, bytes template, int64_t rows_at, int64_t body_at,
                     int64_t nodes_at, int64_t buffers_at, int64_t num_rows, nodes,
                     buffers) except -1:
    """Fill ``b``: the template checked against the numbers' places and counts, the nodes
    read as int64s and every buffer's view taken, so that laying it out (``_batch_lay``)
    can fail no more and the caller knows its size (``tlen + body``) before it touches a
    slot.  On an error nothing is held; otherwise ``_batch_release`` lets go."""
    cdef Py_ssize_t tlen = len(template), nn = len(nodes), nb = len(buffers), i
    cdef const uint8_t* tsrc = template
    cdef uint32_t want_nodes = 0, want_buffers = 0
    b.held = 0
    b.nodes = NULL
    b.views = NULL
    b.sizes = NULL
    if (4 <= nodes_at <= tlen - 4 and 4 <= buffers_at <= tlen - 4):
        memcpy(&want_nodes, tsrc + nodes_at - 4, 4)  # (the vectors' lengths, in front)
        memcpy(&want_buffers, tsrc + buffers_at - 4, 4)
    if (rows_at < 0 or rows_at > tlen - 8 or body_at < 0 or body_at > tlen - 8
            or nn != 2 * <Py_ssize_t>want_nodes or nb != <Py_ssize_t>want_buffers
            or nodes_at > tlen - 8 * nn or buffers_at > tlen - 16 * nb):
        raise ArrowInvalid(f"{nn // 2} nodes and {nb} buffers do not fit the "
                           f"{tlen}-byte header template (made for {want_nodes} and "
                           f"{want_buffers})")
    b.template, b.tlen = tsrc, tlen
    b.rows_at, b.body_at, b.nodes_at, b.buffers_at = rows_at, body_at, nodes_at, buffers_at
    b.num_rows, b.body, b.nn, b.nb = num_rows, 0, nn, nb
    b.nodes = <int64_t*>PyMem_Malloc(sizeof(int64_t) * nn + 1)
    b.views = <Py_buffer*>PyMem_Malloc(sizeof(Py_buffer) * nb + 1)
    b.sizes = <int64_t*>PyMem_Malloc(sizeof(int64_t) * nb + 1)
    try:
        if b.nodes == NULL or b.views == NULL or b.sizes == NULL:
            raise MemoryError()
        for i in range(nn):
            b.nodes[i] = nodes[i]
        for i in range(nb):  # (by index: an iterator could yield more than it counted)
            buf = buffers[i]
            if buf is None:
                b.sizes[b.held] = -1
            else:
                PyObject_GetBuffer(buf, &b.views[b.held], PyBUF_SIMPLE)
                b.sizes[b.held] = b.views[b.held].len
                b.body += _padded(b.views[b.held].len)
            b.held += 1
    except BaseException:
        _batch_release(b)
        raise
    return 0


cdef void _batch_release(_Batch* b) noexcept:
    cdef Py_ssize_t i
    for i in range(b.held):
        if b.sizes[i] >= 0:
            PyBuffer_Release(&b.views[i])
    b.held = 0
    PyMem_Free(b.nodes)
    PyMem_Free(b.views)
    PyMem_Free(b.sizes)
    b.nodes = NULL
    b.views = NULL
    b.sizes = NULL


cdef void _batch_lay(_Batch* b, uint8_t* dst) noexcept:
    """The message of ``b`` at ``dst`` (``tlen + body`` bytes, checked by the caller): the
    template with its numbers patched in, then the body (the GIL released if it is big)."""
    cdef Py_ssize_t i
    cdef int64_t pos = 0
    memcpy(dst, b.template, b.tlen)
    _put64(dst + b.rows_at, b.num_rows)
    _put64(dst + b.body_at, b.body)
    for i in range(b.nn):
        _put64(dst + b.nodes_at + 8 * i, b.nodes[i])
    for i in range(b.nb):
        _put64(dst + b.buffers_at + 16 * i, pos)
        _put64(dst + b.buffers_at + 16 * i + 8, b.sizes[i] if b.sizes[i] > 0 else 0)
        if b.sizes[i] > 0:
            pos += _padded(b.sizes[i])
    if b.body >= _NOGIL_FROM:
        with nogil:
            _copy_body(dst + b.tlen, b.views, b.sizes, b.nb)
    else:
        _copy_body(dst + b.tlen, b.views, b.sizes, b.nb)



cdef inline double _monotonic() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <double>ts.tv_sec + <double>ts.tv_nsec * 1e-9


cdef inline double _thread_cpu() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return <double>ts.tv_sec + <double>ts.tv_nsec * 1e-9


cdef inline bint _spin_round(unsigned int i, double end) noexcept nogil:
    """One round of a busy-wait (round ``i``, counted from 1): a pause; every 32nd round the
    clock (~1 us), True once ``end`` has passed; every 256th round a ``sched_yield``, so that a
    process waiting for this CPU (on a busy machine: maybe the very producer spun for) runs
    first, at the cost of a system call every ~10 us when nothing else waits."""
    amm_pause()
    if not i & 255:
        sched_yield()
    return not i & 31 and _monotonic() >= end


cdef class SharedMap:
    """Atomic access to a writable shared mapping (``mmap.mmap`` of a shared segment).

    Parameters
    ----------
    mapping : writable buffer-protocol object
        The mapping; it stays exported (so cannot be closed or resized) while this
        object or any ``SlotLease`` made from it lives.
    """
    cdef Py_buffer _view
    cdef bint _has_view
    cdef uint8_t* ptr
    cdef readonly Py_ssize_t size
    cdef readonly object mapping
    cdef int _fd  # a descriptor of the mapped file (a copy of ``fd``), -1 without one
    # pages of a slot made private for a fork could not be mapped shared again: a later
    # batch in that slot would read the old bytes, so no batch is taken any more
    cdef bint _unshared
    cdef object __weakref__

    def __cinit__(self, mapping, int fd=-1):
        self._has_view = False
        self._fd = -1
        PyObject_GetBuffer(mapping, &self._view, PyBUF_WRITABLE)
        self._has_view = True
        self.ptr = <uint8_t*>self._view.buf
        self.size = self._view.len
        self.mapping = mapping
        if fd >= 0:
            self._fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)
            if self._fd < 0:
                raise OSError(errno, f"cannot duplicate descriptor {fd} of the shared mapping")

    def __dealloc__(self):
        if self._has_view:
            PyBuffer_Release(&self._view)
            self._has_view = False
        if self._fd >= 0:
            close(self._fd)
            self._fd = -1

    cdef inline uint8_t* _at(self, int64_t offset, int64_t width) except NULL:
        if offset < 0 or offset > self.size - width or offset % width:
            raise ArrowInvalid(f"shared word at byte {offset} (width {width}) lies outside the "
                               f"{self.size}-byte mapping or is misaligned")
        return self.ptr + offset

    @property
    def address(self):
        """Address of the first byte (for zero-copy checks)."""
        return <uintptr_t>self.ptr

    def load64(self, int64_t offset):
        return AMM_LOAD64(self._at(offset, 8))

    def store64(self, int64_t offset, uint64_t value):
        AMM_STORE64(self._at(offset, 8), value)

    def add64(self, int64_t offset, uint64_t value):
        """Add (modulo 2**64) and return the new value."""
        return AMM_ADD64(self._at(offset, 8), value)

    def or64(self, int64_t offset, uint64_t bits):
        """Set ``bits``; returns the new value."""
        return AMM_OR64(self._at(offset, 8), bits)

    def and64(self, int64_t offset, uint64_t bits):
        """Keep only ``bits``; returns the new value."""
        return AMM_AND64(self._at(offset, 8), bits)

    def load32(self, int64_t offset):
        return AMM_LOAD32(self._at(offset, 4))

    def store32(self, int64_t offset, uint32_t value):
        AMM_STORE32(self._at(offset, 4), value)

    def add32(self, int64_t offset, uint32_t value):
        return AMM_ADD32(self._at(offset, 4), value)

    def cas32(self, int64_t offset, uint32_t expected, uint32_t desired):
        """Compare-and-swap; True when the word held ``expected`` and now holds ``desired``."""
        return bool(amm_cas32(self._at(offset, 4), expected, desired))

    def wait32(self, int64_t offset, uint32_t expected, double timeout):
        """Sleep (GIL released) while the 32-bit word still holds ``expected``, at most
        ``timeout`` seconds: ``WOKEN`` (re-check: wakes may be spurious), ``TIMED_OUT``, or
        ``CHANGED`` (it held something else already)."""
        cdef uint32_t* word = <uint32_t*>self._at(offset, 4)
        cdef int rc
        with nogil:
            rc = _futex_wait(word, expected, timeout)
        return rc

    def spin_until_changed64(self, int64_t offset, uint64_t value, double seconds):
        """Busy-wait (GIL released) up to ``seconds`` for the 64-bit word to differ from
        ``value``; returns the word (cheaper than a sleep when the other side is about to
        publish: a futex wake-up costs both sides tens of microseconds on a virtual machine;
        the caller sleeps on a futex if it did not change).  Yields the CPU now and then
        (``_spin_round``), so a busy machine's other work is not kept waiting."""
        cdef uint8_t* p = self._at(offset, 8)
        cdef uint64_t now = AMM_LOAD64(p)
        cdef double end
        cdef unsigned int i = 0
        if now != value or not seconds > 0:
            return now
        with nogil:
            end = _monotonic() + seconds
            while now == value:
                i += 1
                if _spin_round(i, end):
                    break
                now = AMM_LOAD64(p)
        return now

    def spin_while32(self, int64_t offset, uint32_t value, double seconds, bint measure=True):
        """Busy-wait (GIL released) up to ``seconds`` while the 32-bit word holds ``value`` (a
        futex word: the consumer spins on the publication counter, which a new batch, the end
        of the stream and damage all bump).  Returns ``(word, stolen)``: the word, and the
        seconds of the wait this thread did not run (the wall time less its CPU time: the
        scheduler gave its CPU to others).  Time stolen says the machine is busy, where
        spinning backfires: a process that used up its turn spinning waits behind the others
        when the batch comes, while one woken from a sleep runs first.  ``measure=False``:
        stolen is not measured (0.0): the thread's CPU clock is a system call at each end of
        the wait, and the one at the end delays the batch seen (a fixed spin needs neither)."""
        cdef uint8_t* p = self._at(offset, 4)
        cdef uint32_t now = AMM_LOAD32(p)
        cdef double start, end, cpu = 0.0
        cdef unsigned int i = 0
        if now != value or not seconds > 0:
            return now, 0.0
        with nogil:
            start = _monotonic()
            if measure:
                cpu = _thread_cpu()
            end = start + seconds
            while now == value:
                i += 1
                if _spin_round(i, end):
                    break
                now = AMM_LOAD32(p)
            if measure:
                cpu = _thread_cpu() - cpu
                start = _monotonic() - start
        if not measure:
            return now, 0.0
        return now, max(0.0, start - cpu)

    def header_state(self, bytes header, int64_t state_at):
        """The 32-bit word at ``state_at`` (a channel's stream state) if the mapping still
        begins with ``header``, else -1: a segment's per-call check in one call, without a
        copy of its header."""
        return self._header_state(header, state_at)

    cdef int64_t _header_state(self, bytes header, int64_t state_at) except -3:
        cdef Py_ssize_t n = len(header)
        cdef uint8_t* state = self._at(state_at, 4)
        if n > self.size or memcmp(self.ptr, <const char*>header, n) != 0:
            return -1
        return AMM_LOAD32(state)

    def segment_state(self, int64_t need, bytes header, int64_t state_at):
        """A channel's per-call check in one call, without a Python object or a GIL release
        on the way: -2 if the mapped file (the ``fd`` given when this map was made) is
        shorter than ``need`` bytes now (cut by another process: touching the words could be
        SIGBUS), else ``header_state(header, state_at)``.  ``fstat`` here costs a system call;
        ``mmap.size()`` cost that, a stat record and a GIL release and reacquisition."""
        return self._segment_state(need, header, state_at)

    cdef int64_t _segment_state(self, int64_t need, bytes header, int64_t state_at) except -3:
        if self._mapped_size("segment_state") < need:
            return -2
        return self._header_state(header, state_at)

    cdef int64_t _mapped_size(self, str what) except -1:
        """``fstat`` of the descriptor given when this map was made, the GIL held."""
        cdef struct_stat st
        if self._fd < 0:
            raise ArrowInvalid(f"{what} needs the descriptor of the mapped file "
                               f"(SharedMap(mapping, fd))")
        if fstat(self._fd, &st) != 0:
            raise OSError(errno, "fstat of the shared mapping's file failed")
        return st.st_size

    def file_size(self):
        """The size of the mapped file now (``fstat`` of the descriptor given when this map
        was made, without the GIL released: a system call's cost)."""
        return self._mapped_size("file_size")

    def claim_slot(self, int64_t seq_at, int64_t holds_at, uint64_t writing):
        """Mark a ring slot as being rewritten (its sequence word at ``seq_at`` set to
        ``writing``), then tell whether nobody holds it (its hold mask at ``holds_at`` is
        zero): the producer writes it now, else waits for the holds to clear (the mark
        stays).  The mark comes first: a consumer taking the slot meanwhile either sees it
        and passes over the slot, or set its hold bit before, which is seen here."""
        cdef uint8_t* seq = self._at(seq_at, 8)
        cdef uint8_t* holds = self._at(holds_at, 8)
        AMM_STORE64(seq, writing)
        return AMM_LOAD64(holds) == 0

    def publish_slot(self, int64_t seq_at, int64_t len_at, int64_t nbytes, uint64_t n,
                     int64_t write_seq_at, int64_t pub_at, int64_t waiting_at):
        """Batch ``n``, its ``nbytes`` written in a slot, becomes visible, in this order: the
        slot's length (``len_at``) and sequence (``seq_at``), the ring's write sequence,
        the publication counter (``pub_at``), then a futex wake of the sleepers on that
        counter when the waiting count (``waiting_at``) says there are any.  One call: a
        sleeping consumer waits for every instruction the producer runs before its wake."""
        cdef uint8_t* seq = self._at(seq_at, 8)
        cdef uint8_t* length = self._at(len_at, 8)
        cdef uint8_t* write_seq = self._at(write_seq_at, 8)
        cdef uint8_t* pub = self._at(pub_at, 4)
        cdef uint8_t* waiting = self._at(waiting_at, 4)
        AMM_STORE64(length, <uint64_t>nbytes)
        AMM_STORE64(seq, n)
        AMM_STORE64(write_seq, n + 1)
        AMM_ADD32(pub, 1)
        if AMM_LOAD32(waiting):
            _futex_wake(<uint32_t*>pub)

    def min_where32(self, int64_t table, int64_t stride, int64_t count, int64_t state_at,
                    uint32_t state, int64_t value_at):
        """The least 64-bit word at ``value_at`` of the ``count`` records of ``stride`` bytes
        from ``table`` whose 32-bit word at ``state_at`` is ``state`` (-1: none is): the
        slowest consumer's cursor in one call."""
        cdef int64_t i
        cdef uint64_t best = 0xFFFFFFFFFFFFFFFF, v
        cdef bint found = False
        if count < 0 or stride < 8 or table < 0:
            raise ArrowInvalid(f"bad table: {count} records of {stride} bytes at {table}")
        if count:  # (the last record's words bound-check every earlier one's)
            self._at(table + (count - 1) * stride + state_at, 4)
            self._at(table + (count - 1) * stride + value_at, 8)
            self._at(table + state_at, 4)
            self._at(table + value_at, 8)
        for i in range(count):
            if AMM_LOAD32(self.ptr + table + i * stride + state_at) == state:
                v = AMM_LOAD64(self.ptr + table + i * stride + value_at)
                found = True
                if v < best:
                    best = v
        return best if found else -1

    def claim_free_slot(self, int64_t table, int64_t slots, int64_t stride, int64_t seq_at,
                        int64_t holds_at, int64_t first, uint64_t below, uint64_t writing):
        """The first slot from ``first`` on, round the ring of ``slots`` records of ``stride``
        bytes from ``table``, that nobody holds (its hold mask at ``holds_at`` is zero) and
        whose batch (its sequence word at ``seq_at``) is below ``below`` or is ``writing``,
        marked as being rewritten as ``claim_slot`` marks it; -1 if there is none.

        Why: a producer may put a batch into any slot whose batch every consumer has taken
        and let go (``below``: the slowest consumer's cursor; with ``on_slow="drop"``,
        ``writing``: any slot nobody holds), not only into slot ``n % slots``: a consumer's
        thread that keeps one old batch then holds up nothing while other slots are free.
        A slot marked ``writing`` holds no batch anyone reads (never written, or claimed and
        then found held)."""
        cdef int64_t k, s
        cdef uint64_t seq
        cdef uint8_t* rec
        if slots < 1 or stride < 8 or table < 0 or first < 0:
            raise ArrowInvalid(f"bad slot table: {slots} records of {stride} bytes at {table}, "
                               f"first {first}")
        self._at(table + seq_at, 8)
        self._at(table + holds_at, 8)
        self._at(table + (slots - 1) * stride + seq_at, 8)
        self._at(table + (slots - 1) * stride + holds_at, 8)
        for k in range(slots):
            s = (first + k) % slots
            rec = self.ptr + table + s * stride
            if AMM_LOAD64(rec + holds_at) != 0:
                continue
            seq = AMM_LOAD64(rec + seq_at)
            if seq != writing and seq >= below:
                continue
            AMM_STORE64(rec + seq_at, writing)  # (marked, then read: see claim_slot)
            if AMM_LOAD64(rec + holds_at) == 0:
                return s
        return -1

    def wake32(self, int64_t offset):
        """Wake every process waiting on the 32-bit word."""
        cdef uint32_t* word = <uint32_t*>self._at(offset, 4)
        _futex_wake(word)

    def copy_in(self, int64_t offset, parts):
        """Copy the buffers ``parts`` one after another to byte ``offset`` (GIL released
        during each copy); returns the bytes written.  ArrowInvalid if they do not fit."""
        cdef Py_buffer src
        cdef int64_t pos = offset
        cdef uint8_t* dst
        if offset < 0 or offset > self.size:
            raise ArrowInvalid(f"copy to byte {offset} of a {self.size}-byte mapping")
        for part in parts:
            PyObject_GetBuffer(part, &src, 0)
            try:
                if src.len > self.size - pos:
                    raise ArrowInvalid(f"copy of {src.len} bytes to byte {pos} overruns the "
                                       f"{self.size}-byte mapping")
                dst = self.ptr + pos
                with nogil:
                    memcpy(dst, src.buf, src.len)
                pos += src.len
            finally:
                PyBuffer_Release(&src)
        return pos - offset

    def write_batch(self, int64_t offset, int64_t capacity, bytes template, int64_t rows_at,
                    int64_t body_at, int64_t nodes_at, int64_t buffers_at, int64_t num_rows,
                    nodes, buffers):
        """Lay a record batch message out at byte ``offset`` in one call: a copy of
        ``template`` (its framed header with the numbers zeroed, from
        ``arrowmm.format.batch_header.record_batch_template``) with the row count patched in
        at ``rows_at``, the body length at ``body_at``, ``nodes`` (flat (length, null count)
        ints) from ``nodes_at`` and each buffer's (offset, length) from ``buffers_at``, then
        the body: each of ``buffers`` (None: empty) copied once, 64-byte aligned, zero
        padded (with the GIL released for big bodies).

        Returns the bytes written; when they would exceed ``capacity``, nothing is written
        and minus the bytes needed is returned.  ArrowInvalid if the numbers do not fit the
        template or the bytes the mapping.

        Why: encoding in Python (the header built field by field, then a copy of each part)
        cost tens of microseconds a batch, most of a small batch's trip between processes.
        """
        cdef _Batch b
        cdef int64_t total
        if offset < 0 or capacity < 0 or offset > self.size - capacity:
            raise ArrowInvalid(f"slot [{offset}, +{capacity}) lies outside the "
                               f"{self.size}-byte mapping")
        _batch_take(&b, template, rows_at, body_at, nodes_at, buffers_at, num_rows, nodes,
                    buffers)
        try:
            total = b.tlen + b.body
            if total > capacity:
                return -total
            _batch_lay(&b, self.ptr + offset)
            return total
        finally:
            _batch_release(&b)

    def lease(self, int64_t offset, int64_t length, int64_t hold_offset, int bit,
              int64_t waiting_offset, int64_t wake_offset):
        """A ``SlotLease`` of ``length`` bytes at ``offset``: when it is collected it clears
        ``bit`` of the 64-bit hold mask at ``hold_offset``, and, if the 32-bit word at
        ``waiting_offset`` is non-zero (a producer sleeps), bumps and wakes the 32-bit futex
        at ``wake_offset``."""
        if offset < 0 or length < 0 or offset > self.size - length:
            raise ArrowInvalid(f"slot bytes [{offset}, {offset}+{length}) lie outside the "
                               f"{self.size}-byte mapping")
        if bit < 0 or bit > 63:
            raise ArrowInvalid(f"hold bit {bit} is not in 0..63")
        cdef SlotLease out = SlotLease.__new__(SlotLease)
        out.hold = <uint64_t*>self._at(hold_offset, 8)
        out.waiting = <uint32_t*>self._at(waiting_offset, 4)
        out.wake = <uint32_t*>self._at(wake_offset, 4)
        out.ptr = self.ptr + offset
        out.size = length
        out.mask = ~((<uint64_t>1) << bit)
        out.owner = self
        out.pid = getpid()
        out.held = True
        _list_lease(out)
        return out


cdef class SlotLease:
    """Read-only bytes of a ring slot, held (one bit of the slot's hold mask) while this
    object lives; see the module doc."""
    cdef uint64_t* hold
    cdef uint32_t* waiting
    cdef uint32_t* wake
    cdef const uint8_t* ptr
    cdef readonly Py_ssize_t size
    cdef uint64_t mask
    cdef bint held
    #: The number of the batch in the slot when it was taken (``RingCursor.take``), else 0.
    cdef readonly uint64_t sequence
    cdef pid_t pid  # the process whose hold this is: a forked child's copy releases nothing
    cdef readonly SharedMap owner
    # the live leases of this process, linked without references (see before_fork)
    cdef PyObject* _prev
    cdef PyObject* _next
    cdef bint _listed
    cdef bint _private  # between before_fork and after_fork_*: its pages are private copies
    cdef bint _forking  # the same: a hold of this process that the child inherits
    cdef Py_ssize_t _shape[1]
    cdef Py_ssize_t _strides[1]

    @property
    def address(self):
        return <uintptr_t>self.ptr

    def __len__(self):
        return self.size

    def __getbuffer__(self, Py_buffer* buffer, int flags):
        if flags & PyBUF_WRITABLE:
            raise BufferError("a channel slot is read-only")
        fill_byte_buffer(buffer, self, <void*>self.ptr, self.size, 1, flags, self._shape,
                         self._strides)

    def __releasebuffer__(self, Py_buffer* buffer):
        pass

    cdef void _release(self) noexcept:
        # A child made by fork() inherits this object and the shared mapping, but the hold is
        # the parent's: were the child to clear it, the producer could overwrite the slot
        # under the parent's batch.
        if self.held and self.pid == getpid():
            self.held = False
            AMM_AND64(self.hold, self.mask)
            if AMM_LOAD32(self.waiting):
                AMM_ADD32(self.wake, 1)
                _futex_wake(self.wake)

    def __dealloc__(self):
        if self._listed:
            _unlist_lease(self)
        if self.owner is not None:  # (the mapping is still exported: the words are valid)
            self._release()


# Memory of held batches across fork.  A forked child inherits the batches (and numpy views,
# pyarrow exports) of its parent, over MAP_SHARED slot pages, but not the hold: once the parent
# lets go, the producer rewrites the slot and the child would read another batch's bytes.  So
# before a fork every slot range this process holds becomes private anonymous pages with the
# same bytes at the same address (one copy, ``mremap`` over it: no moment without them), the
# child keeps those, and the parent maps the shared pages back (unchanged: it still holds
# them).  The cost is one copy of the held bytes per fork (none without held batches).
cdef PyObject* _live = NULL  # the newest live SlotLease of this process


cdef inline void _list_lease(SlotLease lease) noexcept:
    global _live
    lease._prev = NULL
    lease._next = _live
    if _live != NULL:
        (<SlotLease>_live)._prev = <PyObject*>lease
    _live = <PyObject*>lease
    lease._listed = True


cdef inline void _unlist_lease(SlotLease lease) noexcept:
    global _live
    if lease._prev != NULL:
        (<SlotLease>lease._prev)._next = lease._next
    else:
        _live = lease._next
    if lease._next != NULL:
        (<SlotLease>lease._next)._prev = lease._prev
    lease._listed = False


cdef inline size_t _page() noexcept nogil:
    return <size_t>sysconf(_SC_PAGESIZE)


cdef bint _make_private(uint8_t* start, size_t length) noexcept nogil:
    """Replace ``[start, +length)`` (whole pages) with private pages holding its bytes."""
    cdef void* fresh = mmap(NULL, length, PROT_READ | PROT_WRITE,  # (populated: no page
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)  # faults)
    if fresh == MAP_FAILED:
        return False
    memcpy(fresh, start, length)
    if mremap(fresh, length, length, MREMAP_MAYMOVE | MREMAP_FIXED, start) == MAP_FAILED:
        munmap(fresh, length)
        return False
    return True


cdef inline void _lease_pages(SlotLease lease, uint8_t** start, size_t* length) noexcept nogil:
    cdef size_t page = _page()
    cdef uintptr_t low = <uintptr_t>lease.ptr & ~(page - 1)
    cdef uintptr_t high = (<uintptr_t>lease.ptr + <uintptr_t>lease.size + page - 1) & ~(page - 1)
    start[0] = <uint8_t*>low
    length[0] = high - low


def before_fork():
    """``os.register_at_fork(before=...)``: the slots this process holds become private
    copies (see above), for the child to keep."""
    cdef PyObject* p = _live
    cdef SlotLease lease
    cdef uint8_t* start
    cdef size_t length
    cdef pid_t me = getpid()
    while p != NULL:
        lease = <SlotLease>p
        p = lease._next
        lease._private = lease._forking = False
        if not lease.held or lease.pid != me or lease.owner is None or lease.size == 0:
            continue  # (not ours: a copy inherited from a parent is private already)
        lease._forking = True
        _lease_pages(lease, &start, &length)
        if lease.owner._fd >= 0 and not lease.owner._unshared:
            lease._private = _make_private(start, length)


def after_fork_in_parent():
    """``os.register_at_fork(after_in_parent=...)``: the shared pages mapped back over the
    private copies (the same bytes: the slots are still held)."""
    cdef PyObject* p = _live
    cdef SlotLease lease
    cdef uint8_t* start
    cdef size_t length
    while p != NULL:
        lease = <SlotLease>p
        p = lease._next
        if lease._private:
            _lease_pages(lease, &start, &length)
            if mmap(start, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                    lease.owner._fd, <off_t>(start - lease.owner.ptr)) == MAP_FAILED:
                lease.owner._unshared = True
        lease._private = lease._forking = False


def after_fork_in_child():
    """``os.register_at_fork(after_in_child=...)``: an inherited batch whose pages could not
    be made private is made unreadable, so that it faults rather than read another batch."""
    cdef PyObject* p = _live
    cdef SlotLease lease
    cdef uint8_t* start
    cdef size_t length
    while p != NULL:
        lease = <SlotLease>p
        p = lease._next
        if lease._forking and not lease._private:
            _lease_pages(lease, &start, &length)
            mprotect(start, length, PROT_NONE)
        lease._private = lease._forking = False


cdef class RingCursor:
    """One consumer's reading position in a ring of slots: takes the next batch's slot in
    one call (the rules of ``arrowmm.shm.consumer``, whose ``_take`` this was in Python).

    Every number is an offset in ``mapping`` (a ``SharedMap``), checked here once: the
    consumer's cursor and dropped-count words, the published count, the slot table (``slots``
    records of ``slot_stride`` bytes: sequence at ``seq_at``, length at ``len_at``, hold mask
    at ``holds_at``), the data (``slots`` slots of ``slot_size`` bytes from ``data``), the
    consumer's hold ``bit``, and the producer's waiting and wake words.  ``drop``: the
    producer may overwrite a batch this consumer has not taken (it is then counted as
    dropped).  In either mode the producer passes over a held slot, so batch ``n`` is looked
    for in every slot when slot ``n % slots`` does not hold it.

    Why: a small batch's trip between processes is mostly Python; this is about fifteen
    atomic operations a batch that no longer each cost a Python call.
    """
    cdef SharedMap map
    cdef uint64_t* cursor
    cdef uint64_t* dropped
    cdef uint64_t* published
    cdef uint8_t* table
    cdef int64_t slots, stride, seq_at, len_at, holds_at, data, slot_size
    cdef int bit
    cdef uint64_t bitmask
    cdef bint drop
    cdef uint32_t* waiting
    cdef uint32_t* wake
    cdef int64_t waiting_offset, wake_offset, table_offset

    def __cinit__(self, SharedMap mapping, int64_t cursor_offset, int64_t dropped_offset,
                  int64_t published_offset, int64_t table, int64_t slots, int64_t slot_stride,
                  int64_t seq_at, int64_t len_at, int64_t holds_at, int64_t data,
                  int64_t slot_size, int bit, bint drop, int64_t waiting_offset,
                  int64_t wake_offset):
        if slots < 1 or slot_stride < 24 or slot_size < 0 or not 0 <= bit <= 63:
            raise ArrowInvalid(f"bad ring: {slots} slots, stride {slot_stride}, slot size "
                               f"{slot_size}, bit {bit}")
        for at in (seq_at, len_at, holds_at):
            if at < 0 or at > slot_stride - 8 or at % 8:
                raise ArrowInvalid(f"slot word at {at} lies outside its {slot_stride}-byte record")
        self.map = mapping
        self.cursor = <uint64_t*>mapping._at(cursor_offset, 8)
        self.dropped = <uint64_t*>mapping._at(dropped_offset, 8)
        self.published = <uint64_t*>mapping._at(published_offset, 8)
        mapping._at(table, 8)
        mapping._at(table + (slots - 1) * slot_stride + slot_stride - 8, 8)  # (the last word)
        if data < 0 or slot_size > 0 and (slots > (mapping.size - data) // slot_size):
            raise ArrowInvalid(f"{slots} slots of {slot_size} bytes from byte {data} overrun "
                               f"the {mapping.size}-byte mapping")
        self.waiting = <uint32_t*>mapping._at(waiting_offset, 4)
        self.wake = <uint32_t*>mapping._at(wake_offset, 4)
        self.table = mapping.ptr + table
        self.table_offset = table
        self.slots, self.stride = slots, slot_stride
        self.seq_at, self.len_at, self.holds_at = seq_at, len_at, holds_at
        self.data, self.slot_size = data, slot_size
        self.bit = bit
        self.bitmask = (<uint64_t>1) << bit
        self.drop = drop
        self.waiting_offset, self.wake_offset = waiting_offset, wake_offset

    cdef inline void _wake_producer(self) noexcept nogil:
        if AMM_LOAD32(self.waiting):
            AMM_ADD32(self.wake, 1)
            _futex_wake(self.wake)

    def take(self):
        """The next batch's slot as a ``SlotLease`` (its ``sequence`` says which batch: later
        than the cursor if the producer overwrote some, which count as dropped), or None when
        nothing new is published.  ArrowInvalid if the slot claims more bytes than it has
        (the cursor moves past that batch)."""
        return self._take()

    def take_checked(self, int64_t need, bytes header, int64_t state_at):
        """``take`` after ``SharedMap.segment_state(need, header, state_at)`` found the
        segment whole, its header as made and the stream open or closed; False, touching
        nothing, otherwise (the caller's own check says what is wrong).  A consumer's
        ``recv`` in one call where a batch is waiting."""
        cdef int64_t state = self.map._segment_state(need, header, state_at)
        if state != 0 and state != 1:  # (0 open, 1 closed)
            return False
        return self._take()

    cdef object _take(self):
        cdef uint64_t cursor, published, skip, length, seq
        cdef int64_t s, k
        cdef uint8_t* slot
        cdef bint held
        if self.map._unshared:
            raise ArrowInvalid("a slot's pages made private for a fork could not be mapped "
                               "shared again: this consumer would read old bytes; attach anew")
        while True:
            cursor = AMM_LOAD64(self.cursor)
            published = AMM_LOAD64(self.published)
            if published <= cursor:
                return None
            if published - cursor > <uint64_t>self.slots:  # lapped (drop mode)
                if not self.drop:  # (a wait-mode producer never laps a consumer)
                    raise ArrowInvalid(
                        f"{published} batches were published and this consumer's next is "
                        f"batch {cursor}, more than the {self.slots} slots behind: on a "
                        f"wait-mode ring the slot table or the cursor was damaged, or this "
                        f"consumer's entry was reclaimed")
                skip = published - <uint64_t>self.slots - cursor
                AMM_ADD64(self.dropped, skip)
                cursor += skip
                AMM_STORE64(self.cursor, cursor)
            s = <int64_t>(cursor % <uint64_t>self.slots)
            if AMM_LOAD64(self.table + s * self.stride + self.seq_at) != cursor:
                for k in range(self.slots):  # (put elsewhere, its slot held: look it up)
                    if AMM_LOAD64(self.table + k * self.stride + self.seq_at) == cursor:
                        s = k
                        break
            slot = self.table + s * self.stride
            if AMM_LOAD64(slot + self.holds_at) & self.bitmask:
                held = True  # an older batch of ours is there: batch ``cursor`` cannot be
                seq = cursor
            else:
                AMM_OR64(slot + self.holds_at, self.bitmask)
                seq = AMM_LOAD64(slot + self.seq_at)
                held = seq != cursor
                if held:  # overwritten meanwhile: let go
                    AMM_AND64(slot + self.holds_at, ~self.bitmask)
                    self._wake_producer()
            if held and not self.drop:  # (a wait-mode slot keeps its batch until taken)
                what = ("this consumer holds an older batch there" if seq == cursor else
                        "it holds a batch being written" if seq == 0xFFFFFFFFFFFFFFFF else
                        f"it holds batch {seq}")
                raise ArrowInvalid(
                    f"batch {cursor} is not in slot {s} ({what}) on a wait-mode ring, where a "
                    f"slot keeps its batch until every consumer took it: the slot table was "
                    f"damaged or this consumer's entry was reclaimed")
            if held:  # batch ``cursor`` is gone: skip it
                AMM_ADD64(self.dropped, 1)
                AMM_STORE64(self.cursor, cursor + 1)
                continue
            length = AMM_LOAD64(slot + self.len_at)
            AMM_STORE64(self.cursor, cursor + 1)
            if length > <uint64_t>self.slot_size:
                AMM_AND64(slot + self.holds_at, ~self.bitmask)
                self._wake_producer()
                raise ArrowInvalid(f"batch {cursor} claims {length} bytes, a slot holds "
                                   f"{self.slot_size}")
            # the lease owns the hold bit from here: cleared when nothing refers to the batch
            lease = self.map.lease(self.data + self.slot_size * s, length,
                                   self.table_offset + s * self.stride + self.holds_at,
                                   self.bit, self.waiting_offset, self.wake_offset)
            (<SlotLease>lease).sequence = cursor
            self._wake_producer()
            return lease


def plain_header(SlotLease lease, bytes template, bytes fixed, int64_t rows_at,
                 int64_t body_at):
    """``(num_rows, body_length)`` of the plain RecordBatch message that fills ``lease``
    exactly, when its header is ``template`` (``SharedMap.write_batch``'s: its numbers
    zeroed) with only the numbers changed; None otherwise (a message of another shape, with
    metadata or dictionaries: the caller reads it the general way, which explains what is
    wrong with it).  ``fixed``: one byte per template byte, non-zero where the byte must
    equal the template's (zero over the numbers: the row count at ``rows_at``, the body length
    at ``body_at``, the nodes and buffers).

    Why: parsing the FlatBuffers header of every small batch in Python cost a consumer more
    than the rest of its trip; a channel's batches share one shape, so the header is checked
    byte for byte against it and only its numbers are read (the nodes and buffers are then
    read in place, and checked against the body, as any message's, when a column is loaded).
    """
    cdef int64_t rows, body
    if not _plain_header(lease, template, fixed, rows_at, body_at, &rows, &body):
        return None
    return rows, body


cdef int _plain_header(SlotLease lease, bytes template, bytes fixed, int64_t rows_at,
                       int64_t body_at, int64_t* rows, int64_t* body) except -1:
    """``plain_header`` with C numbers: 1 (``rows`` and ``body`` set) or 0 (not the shape)."""
    cdef Py_ssize_t tlen = len(template), i
    cdef const uint8_t* t = template
    cdef const uint8_t* f = fixed
    cdef const uint8_t* p = lease.ptr
    if len(fixed) != tlen or rows_at < 0 or rows_at > tlen - 8 or body_at < 0 \
            or body_at > tlen - 8:
        raise ArrowInvalid(f"plain_header: a {tlen}-byte template, a {len(fixed)}-byte mask, "
                           f"numbers at {rows_at} and {body_at}")
    if lease.size < tlen:
        return 0
    for i in range(tlen):
        if f[i] and p[i] != t[i]:
            return 0
    memcpy(rows, p + rows_at, 8)
    memcpy(body, p + body_at, 8)
    if rows[0] < 0 or body[0] < 0 or body[0] != lease.size - tlen:
        return 0
    return 1


cdef StructPairs _slot_pairs(SlotLease lease, Py_ssize_t start, Py_ssize_t count):
    """``struct_pairs(lease, start, count)`` without a buffer export of the lease."""
    cdef StructPairs v
    if start < 0 or count < 0 or start > lease.size or count > (lease.size - start) // 16:
        raise ArrowInvalid(f"vector of {count} 16-byte records at byte {start} overruns "
                           f"{lease.size} bytes")
    v = StructPairs.__new__(StructPairs)
    v.owner = lease
    v.ptr = lease.ptr + start
    v.start = start
    v.count = count
    return v


cdef class PlainMessage:
    """What a consumer reads of a plain RecordBatch message in a slot, for one template:
    ``read(lease, where)`` is ``plain_header``'s check of ``lease`` against ``template``
    (``fixed``: its mask; the row count at ``rows_at``, the body length at ``body_at``)
    and, when it passes, ``(num_rows, nodes, buffers, body)``: the vectors as
    ``StructPairs`` of ``nodes`` and ``buffers`` records at ``nodes_at`` and ``buffers_at``,
    the body a ``BufferView`` of a ``Region`` of the lease named ``where``; None when the
    header is not the template's (the caller reads the general way).  Nothing in the
    numbers is trusted: the vectors are bounds-checked against the lease, and each buffer
    against the body when a column is built from it, as for any message.

    Why: these were four Python calls and a 9-tuple unpacked in every ``recv`` of a plain
    batch; the template's numbers are converted once here, not at every call."""
    cdef bytes template, fixed
    cdef int64_t rows_at, body_at, nodes_at, buffers_at
    cdef Py_ssize_t nodes, buffers

    def __cinit__(self, bytes template not None, bytes fixed not None, int64_t rows_at,
                  int64_t body_at, int64_t nodes_at, int64_t buffers_at, Py_ssize_t nodes,
                  Py_ssize_t buffers):
        cdef Py_ssize_t tlen = len(template)
        if len(fixed) != tlen or not (0 <= rows_at <= tlen - 8 and 0 <= body_at <= tlen - 8
                                      and 0 <= nodes_at <= tlen and 0 <= buffers_at <= tlen
                                      and 0 <= nodes <= (tlen - nodes_at) // 16
                                      and 0 <= buffers <= (tlen - buffers_at) // 16):
            raise ArrowInvalid(f"PlainMessage: a {tlen}-byte template, a {len(fixed)}-byte "
                               f"mask, numbers at {rows_at} and {body_at}, {nodes} nodes at "
                               f"{nodes_at}, {buffers} buffers at {buffers_at}")
        self.template, self.fixed = template, fixed
        self.rows_at, self.body_at, self.nodes_at, self.buffers_at = (rows_at, body_at,
                                                                      nodes_at, buffers_at)
        self.nodes, self.buffers = nodes, buffers

    def read(self, SlotLease lease not None, str where):
        cdef int64_t rows, body
        cdef Region region
        if not _plain_header(lease, self.template, self.fixed, self.rows_at, self.body_at,
                             &rows, &body):
            return None
        region = Region(lease, description=where)
        return (rows, _slot_pairs(lease, self.nodes_at, self.nodes),
                _slot_pairs(lease, self.buffers_at, self.buffers),
                region.view(len(self.template), body))

cdef class RingWriter:
    """The producer's end of a ring of slots: a send's checks and its common case in one call
    each (the rules of ``arrowmm.shm.channel``, whose ``Channel.send`` keeps every wait, every
    error message and every other case in Python).

    Every number is an offset in ``mapping`` (a ``SharedMap`` made with the segment's
    descriptor), checked here once: the fixed ``header`` and the stream state word
    (``state_at``) that ``segment_state`` checks in a segment of ``need`` bytes, the published
    count, the consumers' waiting count and the publication counter; the consumer table
    (``consumers`` records of ``entry`` bytes from ``entries``: state at ``state_at_entry``,
    cursor at ``cursor_at``; ``active``: the state of an attached consumer); the slot table
    (``slots`` records of ``slot_stride`` bytes from ``table``: sequence at ``seq_at``, length
    at ``len_at``, hold mask at ``holds_at``), the data (``slots`` slots of ``slot_size``
    bytes from ``data``); ``drop``: the ring's policy; ``writing``: a slot's sequence while it
    is rewritten.

    Why: a one-row batch's send was a dozen Python calls around three Cython ones; the
    microseconds of a small batch's trip between processes are mostly such calls.
    """
    cdef SharedMap map
    cdef bytes header
    cdef int64_t need, state_at, write_seq_at, cons_waiting_at, pub_at
    cdef int64_t entries, entry, consumers, entry_state_at, cursor_at
    cdef uint32_t active
    cdef int64_t table, slots, stride, seq_at, len_at, holds_at, data, slot_size
    cdef bint drop
    cdef uint64_t writing

    def __cinit__(self, SharedMap mapping, int64_t need, bytes header, int64_t state_at,
                  int64_t write_seq_at, int64_t cons_waiting_at, int64_t pub_at,
                  int64_t entries, int64_t entry, int64_t consumers, int64_t entry_state_at,
                  int64_t cursor_at, uint32_t active, int64_t table, int64_t slots,
                  int64_t slot_stride, int64_t seq_at, int64_t len_at, int64_t holds_at,
                  int64_t data, int64_t slot_size, bint drop, uint64_t writing):
        if slots < 1 or consumers < 1 or slot_size < 0 or data < 0:
            raise ArrowInvalid(f"bad ring: {slots} slots of {slot_size} bytes at {data}, "
                               f"{consumers} consumers")
        for at, stride, width in ((seq_at, slot_stride, 8), (len_at, slot_stride, 8),
                                  (holds_at, slot_stride, 8), (entry_state_at, entry, 4),
                                  (cursor_at, entry, 8)):
            if at < 0 or at > stride - width or at % width:
                raise ArrowInvalid(f"word at {at} lies outside its {stride}-byte record")
        mapping._at(state_at, 4)
        mapping._at(write_seq_at, 8)
        mapping._at(cons_waiting_at, 4)
        mapping._at(pub_at, 4)
        mapping._at(entries, 8)
        mapping._at(entries + (consumers - 1) * entry + entry - 8, 8)  # (the last word)
        mapping._at(table, 8)
        mapping._at(table + (slots - 1) * slot_stride + slot_stride - 8, 8)
        if slot_size > 0 and slots > (mapping.size - data) // slot_size:
            raise ArrowInvalid(f"{slots} slots of {slot_size} bytes from byte {data} overrun "
                               f"the {mapping.size}-byte mapping")
        self.map = mapping
        self.need, self.header, self.state_at = need, header, state_at
        self.write_seq_at, self.cons_waiting_at, self.pub_at = (write_seq_at, cons_waiting_at,
                                                                pub_at)
        self.entries, self.entry, self.consumers = entries, entry, consumers
        self.entry_state_at, self.cursor_at, self.active = entry_state_at, cursor_at, active
        self.table, self.slots, self.stride = table, slots, slot_stride
        self.seq_at, self.len_at, self.holds_at = seq_at, len_at, holds_at
        self.data, self.slot_size = data, slot_size
        self.drop, self.writing = drop, writing

    def begin(self, uint64_t sent):
        """A send begins: True when the segment is whole, its header as made, the stream
        open and its published count ``sent`` (what this producer published), and then the
        consumers asleep on the publication counter are woken (their wake-up overlaps the
        send's work: see ``Channel._wake_sleepers``); False, touching nothing, otherwise (the
        caller's ``Channel._check`` says what is wrong)."""
        cdef SharedMap m = self.map
        cdef uint8_t* pub
        if m._segment_state(self.need, self.header, self.state_at) != 0:  # (0: open)
            return False
        if AMM_LOAD64(m.ptr + self.write_seq_at) != sent:
            return False
        if AMM_LOAD32(m.ptr + self.cons_waiting_at):
            pub = m.ptr + self.pub_at
            AMM_ADD32(pub, 1)
            _futex_wake(<uint32_t*>pub)
        return True

    def send_batch(self, uint64_t n, template, int64_t num_rows, nodes, buffers):
        """Batch ``n``, laid out as ``SharedMap.write_batch`` lays it out from ``template``
        (a ``RecordBatchTemplate``) and the flattened ``nodes`` and ``buffers``, written into
        its slot and published, when it fits a slot and the slot is ready now: with
        ``drop=False``, every attached consumer has taken the batch the slot held; nobody
        holds it.  Returns the bytes published (> 0); 0 when the slot is not ready (nothing
        written: the caller waits for it, or passes over it, the long way; a slot held is
        left as it was, one taken between the mark and the check of its holds stays marked
        as being rewritten, as ``SharedMap.claim_slot`` leaves it); minus the bytes the
        batch needs when a slot is too small for them (the slot untouched).

        Why one call: the size, the slot's readiness, the layout and the publication were
        five Python calls a send, most of a one-row batch's cost on the producer's side."""
        cdef SharedMap m = self.map
        cdef int64_t s = <int64_t>(n % <uint64_t>self.slots), i, total
        cdef uint64_t slowest = 0xFFFFFFFFFFFFFFFF, v
        cdef uint8_t* slot = m.ptr + self.table + s * self.stride
        cdef uint8_t* e
        cdef uint8_t* pub
        cdef _Batch b
        if len(template) < 5:
            raise ArrowInvalid(f"send_batch: a template of {len(template)} fields (a "
                               f"RecordBatchTemplate has 7)")
        _batch_take(&b, template[0], template[1], template[2], template[3], template[4],
                    num_rows, nodes, buffers)
        try:
            total = b.tlen + b.body
            if total > self.slot_size:
                return -total
            if not self.drop and n >= <uint64_t>self.slots:
                for i in range(self.consumers):
                    e = m.ptr + self.entries + i * self.entry
                    if AMM_LOAD32(e + self.entry_state_at) == self.active:
                        v = AMM_LOAD64(e + self.cursor_at)
                        if v < slowest:
                            slowest = v
                if slowest != 0xFFFFFFFFFFFFFFFF and slowest <= n - <uint64_t>self.slots:
                    return 0
            if AMM_LOAD64(slot + self.holds_at) != 0:  # (held: left as it is, and the caller
                return 0                                 # passes over it or waits)
            if not self.drop:  # (a batch put here out of turn that a consumer has not taken)
                v = AMM_LOAD64(slot + self.seq_at)
                if v != self.writing and v >= slowest:
                    return 0
            AMM_STORE64(slot + self.seq_at, self.writing)  # (marked, then read: claim_slot's)
            if AMM_LOAD64(slot + self.holds_at) != 0:
                return 0
            _batch_lay(&b, m.ptr + self.data + self.slot_size * s)
        finally:
            _batch_release(&b)
        AMM_STORE64(slot + self.len_at, <uint64_t>total)
        AMM_STORE64(slot + self.seq_at, n)
        AMM_STORE64(m.ptr + self.write_seq_at, n + 1)
        pub = m.ptr + self.pub_at
        AMM_ADD32(pub, 1)
        if AMM_LOAD32(m.ptr + self.cons_waiting_at):
            _futex_wake(<uint32_t*>pub)
        return total
