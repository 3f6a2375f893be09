# cython: language_level=3, boundscheck=False, wraparound=False
"""Hashing kernels behind ``arrowmm.compute.hashing``: the distinct values of a column in
first-seen order, as codes.

Each kernel walks the rows once with the GIL released and returns ``(indices, firsts,
counts)``: ``indices`` (int32, one per row) the code of each row's value, ``firsts`` (int64)
the row where each code's value was first seen (so the distinct values are a ``take`` of the
column at ``firsts``), ``counts`` (int64) how many rows hold each.  Values are keys by their
bytes: fixed-width values by their ``width`` bytes (floats by their bits, as pyarrow's hash
table sees them: ``-0.0`` is not ``0.0``, a NaN matches only a NaN of the same bits),
binary/string values by their bytes, two hashes alike always compared byte by byte.

Null rows (a zero in the ``bitmap`` read from bit ``bit_offset``) are skipped when
``encode_nulls`` is false (their index 0, masked by the caller) or counted as one more
distinct value, first seen at the first null row.  The table is open addressing with linear
probing, at most half full; it holds codes only, the values stay in the column.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy, memset

from arrowmm._core._offsets cimport offset_t

import numpy as np

from arrowmm.errors import ArrowInvalid

__all__ = ["hash_fixed", "hash_binary"]

cdef int64_t _MAX_CODES = 2**31 - 1  # (codes are int32 indices)


cdef inline uint64_t _mix(uint64_t h) noexcept nogil:
    # (murmur3's finalizer: every input bit reaches the low bits the table's mask keeps)
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    h *= 0xc4ceb9fe1a85ec53ULL
    h ^= h >> 33
    return h


cdef inline uint64_t _load4(const uint8_t* p) noexcept nogil:
    cdef uint32_t v
    memcpy(&v, p, 4)
    return v


cdef inline uint64_t _load(const uint8_t* p, int64_t n) noexcept nogil:
    """Up to 8 bytes at ``p`` as a little-endian word, zero past ``n``."""
    cdef uint64_t w = 0
    cdef int64_t i
    if n >= 8:
        memcpy(&w, p, 8)
        return w
    if n >= 4:  # (two 4-byte loads, overlapping on the same bytes: no loop)
        return _load4(p) | (_load4(p + n - 4) << (8 * (n - 4)))
    for i in range(n):
        w |= (<uint64_t>p[i]) << (8 * i)
    return w


cdef inline uint64_t _hash_bytes(const uint8_t* p, int64_t n) noexcept nogil:
    """A hash of ``n`` bytes, eight at a time (the last word overlapping the one before
    when ``n`` is past 8 and not a multiple of it)."""
    cdef uint64_t h = 0x9e3779b97f4a7c15ULL ^ <uint64_t>n, w
    cdef int64_t i = 0
    if n <= 8:
        return _mix(h ^ _load(p, n))
    while i + 8 < n:
        memcpy(&w, p + i, 8)
        h = (h ^ w) * 0x100000001b3ULL
        h ^= h >> 29
        i += 8
    memcpy(&w, p + n - 8, 8)
    h = (h ^ w) * 0x100000001b3ULL
    return _mix(h)


cdef inline bint _equal(const uint8_t* a, const uint8_t* b, int64_t n) noexcept nogil:
    """Whether ``n`` bytes at ``a`` and ``b`` are alike (short ones without a call)."""
    cdef uint64_t x, y
    cdef int64_t i = 0
    if n > 64:
        return memcmp(a, b, n) == 0
    if n < 8:
        return _load(a, n) == _load(b, n)
    while i + 8 < n:
        memcpy(&x, a + i, 8)
        memcpy(&y, b + i, 8)
        if x != y:
            return False
        i += 8
    memcpy(&x, a + n - 8, 8)
    memcpy(&y, b + n - 8, 8)
    return x == y


cdef struct Table:
    int32_t* slots     # code + 1 of each slot, 0 when empty
    uint64_t* hashes   # each code's hash (so growing rehashes no value)
    int64_t* firsts    # each code's first row
    int64_t* counts    # each code's rows
    int64_t size       # slots (a power of two)
    int64_t codes      # codes given
    int64_t room       # codes ``hashes``/``firsts``/``counts`` hold
    int64_t null_code  # the nulls' code (in no slot: never looked up), or -1


cdef int _table_init(Table* tab) noexcept nogil:
    cdef int64_t size = 256  # (grown as codes come: a few distinct values stay in cache)
    tab.size = size
    tab.codes = 0
    tab.room = size // 2
    tab.null_code = -1
    tab.slots = <int32_t*>malloc(size * sizeof(int32_t))
    tab.hashes = <uint64_t*>malloc(tab.room * sizeof(uint64_t))
    tab.firsts = <int64_t*>malloc(tab.room * sizeof(int64_t))
    tab.counts = <int64_t*>malloc(tab.room * sizeof(int64_t))
    if not (tab.slots and tab.hashes and tab.firsts and tab.counts):
        return -1
    memset(tab.slots, 0, size * sizeof(int32_t))
    return 0


cdef void _table_free(Table* tab) noexcept nogil:
    free(tab.slots)
    free(tab.hashes)
    free(tab.firsts)
    free(tab.counts)


cdef int _table_grow(Table* tab) noexcept nogil:
    """Double the slots (and the codes' room), placing every code again by its hash."""
    cdef int64_t size = tab.size * 2, room = size // 2, c, s
    cdef int32_t* slots = <int32_t*>malloc(size * sizeof(int32_t))
    cdef uint64_t* hashes = <uint64_t*>malloc(room * sizeof(uint64_t))
    cdef int64_t* firsts = <int64_t*>malloc(room * sizeof(int64_t))
    cdef int64_t* counts = <int64_t*>malloc(room * sizeof(int64_t))
    if not (slots and hashes and firsts and counts):
        free(slots)
        free(hashes)
        free(firsts)
        free(counts)
        return -1
    memset(slots, 0, size * sizeof(int32_t))
    memcpy(hashes, tab.hashes, tab.codes * sizeof(uint64_t))
    memcpy(firsts, tab.firsts, tab.codes * sizeof(int64_t))
    memcpy(counts, tab.counts, tab.codes * sizeof(int64_t))
    for c in range(tab.codes):
        if c == tab.null_code:
            continue
        s = <int64_t>(hashes[c] & <uint64_t>(size - 1))
        while slots[s]:
            s = (s + 1) & (size - 1)
        slots[s] = <int32_t>(c + 1)
    _table_free(tab)
    tab.slots, tab.hashes, tab.firsts, tab.counts = slots, hashes, firsts, counts
    tab.size, tab.room = size, room
    return 0


cdef inline int64_t _new_code(Table* tab, int64_t s, uint64_t h, int64_t row) noexcept nogil:
    """Give the value first seen at ``row`` (hash ``h``, empty slot ``s``) the next code:
    the code, or -1 (out of memory), -2 (more codes than int32 indices hold)."""
    cdef int64_t c = tab.codes
    if c >= _MAX_CODES:
        return -2
    tab.slots[s] = <int32_t>(c + 1)
    tab.hashes[c] = h
    tab.firsts[c] = row
    tab.counts[c] = 1
    tab.codes = c + 1
    if 2 * tab.codes >= tab.size and _table_grow(tab) < 0:
        return -1
    return c


cdef int64_t _null_code(Table* tab, int64_t row) noexcept nogil:
    """Give the nulls, first seen at ``row``, the next code (in no slot: nulls are never
    looked up): the code, or -1/-2 as ``_new_code``."""
    cdef int64_t c = tab.codes
    if c >= _MAX_CODES:
        return -2
    tab.hashes[c] = 0
    tab.firsts[c] = row
    tab.counts[c] = 0
    tab.codes = c + 1
    tab.null_code = c
    if 2 * tab.codes >= tab.size and _table_grow(tab) < 0:
        return -1
    return c


cdef inline bint _is_valid(const uint8_t* bitmap, int64_t bit) noexcept nogil:
    return bitmap == NULL or (bitmap[bit >> 3] >> (bit & 7)) & 1


cdef inline int64_t _code_null(Table* tab, int64_t i, bint encode_nulls,
                               int32_t* out) noexcept nogil:
    """Null row ``i``'s code into ``out``: 0 when nulls are not encoded, else the null entry's
    (made at its first row, and counted); 0, or -1/-2 (see ``_new_code``)."""
    cdef int64_t c
    if not encode_nulls:
        out[i] = 0
        return 0
    if tab.null_code < 0:
        c = _null_code(tab, i)
        if c < 0:
            return c
    tab.counts[tab.null_code] += 1
    out[i] = <int32_t>tab.null_code
    return 0


cdef int64_t _hash_fixed(const uint8_t* src, int64_t width, int64_t n,
                         const uint8_t* bitmap, int64_t bit_offset, bint encode_nulls,
                         Table* tab, int32_t* out) noexcept nogil:
    """The codes of ``n`` values of ``width`` bytes at ``src`` into ``out``: 0, or -1/-2
    (see ``_new_code``)."""
    cdef int64_t i, s, c
    cdef uint64_t h, key, mask
    cdef int32_t code
    cdef bint small = width <= 8
    for i in range(n):
        if not _is_valid(bitmap, bit_offset + i):
            c = _code_null(tab, i, encode_nulls, out)
            if c < 0:
                return c
            continue
        if small:
            key = 0
            memcpy(&key, src + i * width, width)
            h = _mix(key ^ <uint64_t>width)
        else:
            h = _hash_bytes(src + i * width, width)
        mask = <uint64_t>(tab.size - 1)
        s = <int64_t>(h & mask)
        while True:
            code = tab.slots[s]
            if code == 0:
                c = _new_code(tab, s, h, i)
                if c < 0:
                    return c
                break
            c = code - 1
            # (up to 8 bytes, the hash is ``_mix``, one to one: equal hashes are equal values)
            if tab.hashes[c] == h and (small or memcmp(src + tab.firsts[c] * width,
                                                       src + i * width, width) == 0):
                tab.counts[c] += 1
                break
            s = <int64_t>((s + 1) & mask)
        out[i] = <int32_t>c
    return 0


cdef int64_t _hash_binary(const offset_t* offsets, const uint8_t* data, int64_t n,
                          const uint8_t* bitmap, int64_t bit_offset, bint encode_nulls,
                          Table* tab, int32_t* out) noexcept nogil:
    """As ``_hash_fixed``, of binary/string values (offsets checked by the caller)."""
    cdef int64_t i, s, c, a, b, fa, fb
    cdef uint64_t h, mask
    cdef int32_t code
    for i in range(n):
        if not _is_valid(bitmap, bit_offset + i):
            c = _code_null(tab, i, encode_nulls, out)
            if c < 0:
                return c
            continue
        a = offsets[i]
        b = offsets[i + 1]
        h = _hash_bytes(data + a, b - a)
        mask = <uint64_t>(tab.size - 1)
        s = <int64_t>(h & mask)
        while True:
            code = tab.slots[s]
            if code == 0:
                c = _new_code(tab, s, h, i)
                if c < 0:
                    return c
                break
            c = code - 1
            if tab.hashes[c] == h:
                fa = offsets[tab.firsts[c]]
                fb = offsets[tab.firsts[c] + 1]
                if fb - fa == b - a and _equal(data + fa, data + a, b - a):
                    tab.counts[c] += 1
                    break
            s = <int64_t>((s + 1) & mask)
        out[i] = <int32_t>c
    return 0


cdef _bytes_of(obj):
    """``obj`` (a buffer-protocol object, or None) as a 1-D uint8 array, without copying."""
    if obj is None:
        return np.zeros(0, dtype=np.uint8)
    arr = np.frombuffer(obj, dtype=np.uint8) if not isinstance(obj, np.ndarray) else obj
    return arr.reshape(-1).view(np.uint8)


cdef const uint8_t* _bitmap_of(const uint8_t[::1] bits, int64_t bit_offset, int64_t n,
                               object given) except? NULL:
    if given is None:
        return NULL
    if bit_offset < 0 or bits.shape[0] * 8 - bit_offset < n:
        raise ArrowInvalid(f"hashing: a {bits.shape[0]}-byte validity bitmap holds no {n} "
                           f"bits from bit {bit_offset}")
    return &bits[0] if bits.shape[0] else NULL


cdef _results(Table* tab, int64_t status, indices):
    """``(indices, firsts, counts)`` of a filled table (freed here), or the error of its
    ``status``."""
    try:
        if status == -1:
            raise MemoryError("hashing: no memory for the hash table")
        if status == -2:
            raise ArrowInvalid(f"hashing: more than {_MAX_CODES} distinct values do not fit "
                               f"int32 indices")
        m = tab.codes
        firsts = np.empty(m, dtype=np.int64)
        counts = np.empty(m, dtype=np.int64)
        if m:
            memcpy(<void*><size_t>firsts.ctypes.data, tab.firsts, m * sizeof(int64_t))
            memcpy(<void*><size_t>counts.ctypes.data, tab.counts, m * sizeof(int64_t))
        return indices, firsts, counts
    finally:
        _table_free(tab)


def hash_fixed(src, int64_t start, int64_t width, int64_t n, bitmap, int64_t bit_offset,
               bint encode_nulls):
    """Codes of the ``n`` values of ``width`` bytes in ``src`` from value ``start``
    (``bitmap``: the validity bitmap, or None when no value is null): ``(indices, firsts,
    counts)``, see the module's docstring."""
    cdef const uint8_t[::1] s = _bytes_of(src)
    cdef const uint8_t[::1] bits = _bytes_of(bitmap)
    if width <= 0 or n < 0 or start < 0 or (s.shape[0] // width) - start < n:
        raise ArrowInvalid(f"hashing: a {s.shape[0]}-byte buffer holds no {n} values of "
                           f"{width} bytes from value {start}")
    cdef const uint8_t* bp = _bitmap_of(bits, bit_offset, n, bitmap)
    indices = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] out = indices
    cdef Table tab
    cdef int64_t status = 0
    if _table_init(&tab) < 0:
        status = -1
    elif n:
        with nogil:
            status = _hash_fixed(&s[0] + start * width, width, n, bp, bit_offset,
                                 encode_nulls, &tab, &out[0])
    return _results(&tab, status, indices)


def hash_binary(const offset_t[::1] offsets, data, bitmap, int64_t bit_offset,
                bint encode_nulls):
    """Codes of the binary/string values of ``offsets`` (the ``n + 1`` offsets of the rows,
    32- or 64-bit) into ``data``: ``(indices, firsts, counts)``, as ``hash_fixed``.  Offsets
    of a valid row outside the data buffer, or decreasing, raise ArrowInvalid naming the row."""
    cdef const uint8_t[::1] d = _bytes_of(data)
    cdef const uint8_t[::1] bits = _bytes_of(bitmap)
    cdef int64_t n = offsets.shape[0] - 1, i, size = d.shape[0], bad = -1
    cdef uint8_t zero = 0
    if n < 0:
        raise ArrowInvalid("hashing: binary values need at least one offset")
    cdef const uint8_t* bp = _bitmap_of(bits, bit_offset, n, bitmap)
    with nogil:
        for i in range(n):
            if _is_valid(bp, bit_offset + i) and (
                    offsets[i] < 0 or offsets[i + 1] < offsets[i] or offsets[i + 1] > size):
                bad = i
                break
    if bad >= 0:
        raise ArrowInvalid(f"offsets of row {bad}: [{offsets[bad]}, {offsets[bad + 1]}) is "
                           f"not within the {size}-byte data buffer (or decreases)")
    indices = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] out = indices
    cdef const uint8_t* dp = &d[0] if size else &zero
    cdef Table tab
    cdef int64_t status = 0
    if _table_init(&tab) < 0:
        status = -1
    elif n:
        with nogil:
            status = _hash_binary(&offsets[0], dp, n, bp, bit_offset, encode_nulls, &tab,
                                  &out[0])
    return _results(&tab, status, indices)
