"""Body compression (LZ4 frame, Zstandard) of IPC buffers.

A compressed buffer is ``[int64 uncompressed length][compressed bytes]``; a
length of -1 means the bytes that follow are stored uncompressed.  The
declared length never sizes an allocation on trust: it is capped by the most
the codec can expand the bytes really present, and the output must match it.
Each buffer is decoded in one call into an output of the declared size: outputs
of at least ``_arena.MIN_SIZE`` bytes are anonymous mappings (fresh or cached)
whose pages cost memory only once written, so memory follows what the codec
really produces, not what the buffer (or a frame header) claims, and a false
declaration costs address space only.  ``limits.max_decompressed_size`` bounds
one buffer, ``limits.max_batch_decompressed_size`` (in the loader) the
buffers of a batch, and a ``DecompressionBudget`` everything one reader
decompresses over its life (``max_decompressed_bytes=``, or a default tied to
the source's size: see ``limits``).

Decoded buffers of at least 64 KiB land in ``_arena`` blocks, whose pages are
re-used once nothing views them (fresh memory costs a page fault per 4 KiB
written: measured, 40% of a full LZ4 read).  LZ4 frames decode through the
``LZ4F_*`` functions the ``lz4`` package's extension exports (called with
ctypes, which releases the GIL) and fall back to its Python API when they are missing; Zstandard through
``zstandard`` readers.  Codec contexts live one per thread and are reused, and
``decompress_many`` / ``compress_many`` spread the buffers of a column or batch
over a small thread pool when there is enough work to pay for it.
"""
from __future__ import annotations

import ctypes
import os
import struct
import threading
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..._core import _arena
from ... import limits
from ..._core._region import BufferView, as_view
from ...arrays.provenance import CopiedMemory
from ...errors import ArrowInvalid, ArrowNotImplementedError

__all__ = ["Codec", "CODEC_TABLE", "CODEC", "CODECS", "CODEC_NAMES", "check_codec", "LEVELS", "CopiedMemory", "check_level", "decompress_buffer",
           "decompress_payload", "decompress_many", "compressed_size", "compress_buffer",
           "compress_many", "parallel_threads", "DecompressionBudget", "check_budget"]


class Codec(NamedTuple):
    """What arrowmm knows of one body compression codec: a row of ``CODEC_TABLE``, the one
    place a codec is described (``tests/ipc/test_codecs.py`` checks every other list against it:
    the format's ``CompressionType``, the command line, the Spark options, the JVM
    connector)."""

    name: str  #: arrowmm's and pyarrow's name (``compression="zstd"``)
    spec_name: str  #: ``CompressionType`` in Message.fbs
    spec_code: int  #: its value on the wire
    levels: Tuple[int, int]  #: accepted ``compression_level`` range
    default_level: int  #: level used when none is given (Arrow C++'s default)
    max_ratio: int  #: largest expansion from n compressed bytes (plus slack for headers)
    aliases: Tuple[str, ...]  #: other names accepted for it (pre-1.0 metadata, Spark options)
    compress: Callable[[memoryview, int], bytes]
    decompress: Callable[[object, int, str], object]  #: (payload, declared length, what)


def _lz4_compress(raw: memoryview, level: int) -> bytes:
    if _LZ4F is not None and _LZ4F.can_compress:
        return _LZ4F.compress(raw, level)
    import lz4.frame
    return lz4.frame.compress(raw, compression_level=level)


def _zstd_compress(raw: memoryview, level: int) -> bytes:
    return _zstd_compressor(level).compress(raw)


#: Every codec, in the order of its wire code (filled in below, once its functions exist).
CODEC_TABLE: Tuple[Codec, ...] = ()
_I64 = struct.Struct("<q")
#: Below this many bytes of work in total, threads cost more than they save: stay serial.
PARALLEL_MIN_BYTES = 1 << 20
#: Outputs smaller than this come back as ``bytes`` from the codec (small heap allocations are
#: cheap, and a reader object per buffer is not).
_SMALL = 1 << 16


# -- threads and per-thread codec contexts ---------------------------------------------------

def _default_threads() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    env = os.environ.get("ARROWMM_CODEC_THREADS")
    if env and env.isdigit():
        n = int(env)
    return max(1, min(n, 8))


_THREADS = _default_threads()
_pool = None
_pool_pid = None
_pool_lock = threading.Lock()


def parallel_threads(n: Optional[int] = None) -> int:
    """The number of threads codecs use (``ARROWMM_CODEC_THREADS``, else the CPUs, at most 8);
    with ``n``, set it (1: always serial)."""
    global _THREADS, _pool
    if n is not None:
        if int(n) < 1:
            raise ArrowInvalid(f"codec threads must be >= 1, got {n}")
        with _pool_lock:
            _THREADS = int(n)
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = None
    return _THREADS


def _executor():
    """The shared pool (re-created after a fork: the parent's threads do not exist there)."""
    global _pool, _pool_pid
    pid = os.getpid()
    with _pool_lock:
        if _pool is None or _pool_pid != pid:
            from concurrent.futures import ThreadPoolExecutor
            _pool = ThreadPoolExecutor(max_workers=_THREADS, thread_name_prefix="arrowmm-codec")
            _pool_pid = pid
        return _pool


def _run(fn, items: Sequence, sizes: Sequence[int], groups: Optional[Sequence] = None,
         then: Optional[Callable[[object, list], None]] = None) -> list:
    """``[fn(item) ...]``, in threads when the work is big enough and spread over several items.

    Exceptions are returned in place of results (the caller knows where each item belongs).
    With ``groups`` (a key per item) and ``then``, ``then(key, [results of its items])`` runs
    as soon as the last item of a group is done, on the thread that did it, and before
    ``_run`` returns (what it raises is raised once every item is done).
    """
    def call(item):
        try:
            return fn(item)
        except Exception as exc:  # noqa: BLE001 (handed back to the caller, which re-raises)
            return exc

    total = sum(sizes)
    serial = _THREADS < 2 or len(items) < 2 or total < PARALLEL_MIN_BYTES or \
        max(sizes) > total - _SMALL
    if then is None:
        if serial:
            return [call(it) for it in items]
        return _spread(call, items, sizes, None)
    members: Dict[object, List[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    left = {g: len(m) for g, m in members.items()}
    count = threading.Lock()
    raised: list = []

    def done(i, out):
        g = groups[i]
        with count:
            left[g] -= 1
            if left[g]:
                return
        try:
            then(g, [out[j] for j in members[g]])
        except Exception as exc:  # noqa: BLE001 (raised by the caller once the items are done)
            raised.append(exc)

    if serial:
        out = [None] * len(items)
        for i, it in enumerate(items):
            out[i] = call(it)
            done(i, out)
    else:
        out = _spread(call, items, sizes, done)
    if raised:
        raise raised[0]
    return out


def _spread(call, items: Sequence, sizes: Sequence[int], done) -> list:
    """``_run``'s threads: ``[call(item) ...]``, then ``done(i, results)`` after each item."""
    order = sorted(range(len(items)), key=lambda i: -sizes[i])  # biggest first: better balance
    out = [None] * len(items)
    # The caller decodes too, taking items in turn with pool helpers, and then waits only for
    # items a helper has started.  Why: handing every item to the pool and waiting idle cost
    # a thread wake-up per item and per batch, which on a loaded machine (a long run queue)
    # took longer than LZ4 decoding itself (measured: the export of an LZ4 file 1.7-2.2x
    # pyarrow's time under load, ~1.0 unloaded); a helper that never gets a CPU holds nothing
    # up, and a caller that is itself a pool thread cannot deadlock waiting for its own pool.
    state = [0, 0]  # next item to take, items being decoded by a helper or the caller
    turns = threading.Condition(threading.Lock())

    def work():
        while True:
            with turns:
                j = state[0]
                if j >= len(order):
                    return
                state[0] = j + 1
                state[1] += 1
            try:
                i = order[j]
                out[i] = call(items[i])
                if done is not None:
                    done(i, out)
            finally:
                with turns:
                    state[1] -= 1
                    if not state[1]:
                        turns.notify_all()

    pool = _executor()
    for _ in range(min(_THREADS, len(items)) - 1):
        pool.submit(work)
    work()
    with turns:
        while state[1]:
            turns.wait()
    return out


class _Contexts(threading.local):
    """One set of codec contexts per thread (they are not thread-safe, and cost to create)."""

    def __init__(self):
        self.zstd_d = None
        self.zstd_c = {}
        self.lz4_dctx = None


_ctx = _Contexts()


def _zstd_decompressor():
    d = _ctx.zstd_d
    if d is None:
        import zstandard
        d = _ctx.zstd_d = zstandard.ZstdDecompressor()
    return d


class _Lz4F:
    """The LZ4 frame decoder of the ``lz4`` package's extension, reached through ctypes."""

    def __init__(self):
        import lz4.frame._frame as ext
        lib = ctypes.CDLL(ext.__file__)
        P, S = ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)
        lib.LZ4F_createDecompressionContext.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
        lib.LZ4F_createDecompressionContext.restype = ctypes.c_size_t
        lib.LZ4F_freeDecompressionContext.argtypes = [P]
        lib.LZ4F_freeDecompressionContext.restype = ctypes.c_size_t
        lib.LZ4F_resetDecompressionContext.argtypes = [P]
        lib.LZ4F_resetDecompressionContext.restype = None
        lib.LZ4F_decompress.argtypes = [P, P, S, P, S, P]
        lib.LZ4F_decompress.restype = ctypes.c_size_t
        lib.LZ4F_isError.argtypes = [ctypes.c_size_t]
        lib.LZ4F_isError.restype = ctypes.c_uint
        lib.LZ4F_getErrorName.argtypes = [ctypes.c_size_t]
        lib.LZ4F_getErrorName.restype = ctypes.c_char_p
        lib.LZ4F_compressFrameBound.argtypes = [ctypes.c_size_t, ctypes.c_void_p]
        lib.LZ4F_compressFrameBound.restype = ctypes.c_size_t
        lib.LZ4F_compressFrame.argtypes = [P, ctypes.c_size_t, P, ctypes.c_size_t, ctypes.c_void_p]
        lib.LZ4F_compressFrame.restype = ctypes.c_size_t
        self.lib = lib
        self.can_compress = self._self_test()

    def _self_test(self) -> bool:
        """Whether frames made through the ctypes structs are what the lz4 package reads back
        (the preferences struct layout is lz4's ABI, stable since 1.8; checked, not assumed)."""
        try:
            import lz4.frame
            raw = bytes(range(256)) * 300
            frame = self.compress(memoryview(raw), 0)
            info = lz4.frame.get_frame_info(frame.tobytes())
            return lz4.frame.decompress(frame.tobytes()) == raw and info["content_size"] == len(raw)
        except Exception:  # noqa: BLE001 (any failure: use the package's own API)
            return False

    def compress(self, raw: memoryview, level: int) -> np.ndarray:
        """One LZ4 frame (content size stored, 64 KiB independent blocks: measured 15% faster
        to compress than linked ones, and no bigger) written into an ``_arena`` block."""
        prefs = _Lz4Prefs()
        prefs.frameInfo.contentSize = raw.nbytes
        prefs.frameInfo.blockMode = 1  # LZ4F_blockIndependent
        prefs.compressionLevel = level
        bound = self.lib.LZ4F_compressFrameBound(raw.nbytes, ctypes.byref(prefs))
        out = _arena.empty(bound)
        src = np.frombuffer(raw, dtype=np.uint8)
        n = self.lib.LZ4F_compressFrame(out.ctypes.data, bound, src.ctypes.data, raw.nbytes,
                                        ctypes.byref(prefs))
        if self.lib.LZ4F_isError(n):
            raise ArrowInvalid(f"lz4 compression failed: {self.lib.LZ4F_getErrorName(n).decode()}")
        return out[:n]

    def context(self):
        ctx = _ctx.lz4_dctx
        if ctx is None:
            handle = ctypes.c_void_p()
            code = self.lib.LZ4F_createDecompressionContext(ctypes.byref(handle), 100)  # LZ4F_VERSION
            if self.lib.LZ4F_isError(code):
                raise MemoryError("LZ4F_createDecompressionContext failed")
            ctx = _ctx.lz4_dctx = _Lz4Context(handle, self.lib)
        return ctx


class _Lz4FrameInfo(ctypes.Structure):
    _fields_ = [("blockSizeID", ctypes.c_int), ("blockMode", ctypes.c_int),
                ("contentChecksumFlag", ctypes.c_int), ("frameType", ctypes.c_int),
                ("contentSize", ctypes.c_ulonglong), ("dictID", ctypes.c_uint),
                ("blockChecksumFlag", ctypes.c_int)]


class _Lz4Prefs(ctypes.Structure):  # LZ4F_preferences_t; zeroes are lz4's defaults
    _fields_ = [("frameInfo", _Lz4FrameInfo), ("compressionLevel", ctypes.c_int),
                ("autoFlush", ctypes.c_uint), ("favorDecSpeed", ctypes.c_uint),
                ("reserved", ctypes.c_uint * 3)]


class _Lz4Context:
    __slots__ = ("handle", "lib")

    def __init__(self, handle, lib):
        self.handle = handle
        self.lib = lib

    def __del__(self):
        try:
            self.lib.LZ4F_freeDecompressionContext(self.handle)
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass


def _load_lz4f() -> Optional[_Lz4F]:
    try:
        return _Lz4F()
    except (ImportError, OSError, AttributeError):
        return None


_LZ4F = _load_lz4f()


# -- decompression ---------------------------------------------------------------------------

def decompress_payload(view: BufferView, codec: str, what: str):
    """The uncompressed bytes of one IPC body buffer: ``view`` itself when empty, the payload
    view when stored uncompressed (length -1), else new memory (a numpy array or bytes)."""
    if view.size == 0:
        return view
    if view.size < 8:
        raise ArrowInvalid(f"{what}: compressed buffer of {view.size} bytes has no 8-byte length prefix")
    declared = _I64.unpack_from(view, 0)[0]
    payload = view.slice(8, view.size - 8, what)
    if declared == -1:
        return payload
    if declared == 0:  # Arrow Java writes an empty buffer as the bare prefix, no codec frame
        return payload.slice(0, 0, what)
    if declared < 0:
        raise ArrowInvalid(f"{what}: negative uncompressed length {declared}")
    if declared > limits.max_decompressed_size:
        raise limits.exceeded("max_decompressed_size", declared, f"{what}: declared uncompressed length")
    spec = CODEC.get(codec)
    if spec is None:
        raise ArrowNotImplementedError(f"{what}: unknown compression codec {codec!r}")
    limit = spec.max_ratio * payload.size + (1 << 16)
    if declared > limit:
        raise ArrowInvalid(f"{what}: declared uncompressed length {declared} is more than {codec} "
                           f"can produce from {payload.size} bytes")
    try:
        out = spec.decompress(payload, declared, what)
    except (ArrowInvalid, ArrowNotImplementedError):
        raise
    except Exception as exc:  # noqa: BLE001  (codec errors come in many classes)
        raise ArrowInvalid(f"{what}: {codec} decompression failed: {exc}") from None
    if len(out) != declared:
        raise ArrowInvalid(f"{what}: {codec} produced {len(out)} bytes, the buffer declares {declared}")
    return out


def decompress_buffer(view: BufferView, codec: str, what: str) -> BufferView:
    """The uncompressed bytes of one IPC body buffer, as a view (over new memory if compressed)."""
    out = decompress_payload(view, codec, what)
    return out if isinstance(out, BufferView) else as_view(out, description=f"decompressed {what}")


def compressed_size(view: BufferView) -> int:
    """The uncompressed length a body buffer declares: -1 stored raw, 0 empty (no prefix)."""
    if view.size < 8:
        return 0 if view.size == 0 else -1
    return _I64.unpack_from(view, 0)[0]


def decompress_many(views: Sequence[BufferView], codec: str, what: str = "buffer",
                    groups: Optional[Sequence] = None,
                    then: Optional[Callable[[object, list], None]] = None) -> list:
    """``decompress_payload`` of each view, in threads when it pays; an exception in place of
    the result of a buffer that failed.  ``groups`` and ``then``: see ``_run`` (a column's
    buffers, checked by ``then`` while they are still in the cache)."""
    # the work is the output: a buffer of high ratio is small on disk but long to write
    return _run(lambda v: decompress_payload(v, codec, what), views,
                [max(v.size, compressed_size(v)) for v in views], groups, then)


def _lz4_decompress(payload, declared: int, what: str):
    if _LZ4F is not None:
        return _lz4f_into(payload, declared, what)
    import lz4.frame
    dec = lz4.frame.LZ4FrameDecompressor()
    out = dec.decompress(payload, max_length=declared)
    if len(out) == declared and not dec.eof:
        # max_length stops the decoder at the declared size: more output, or a cut frame
        raise ArrowInvalid(f"{what}: the lz4 frame does not end after the declared {declared} bytes "
                           f"({'more output follows' if not dec.needs_input else 'frame cut short'})")
    return out


def _lz4f_into(payload: BufferView, declared: int, what: str) -> np.ndarray:
    """One LZ4 frame decoded straight into a numpy array of ``declared`` bytes."""
    ctx = _LZ4F.context()
    lib = ctx.lib
    out = _arena.empty(declared)
    dst_size = ctypes.c_size_t(declared)
    src_size = ctypes.c_size_t(payload.size)
    code = lib.LZ4F_decompress(ctx.handle, out.ctypes.data, ctypes.byref(dst_size),
                               payload.address, ctypes.byref(src_size), None)
    if lib.LZ4F_isError(code):
        lib.LZ4F_resetDecompressionContext(ctx.handle)
        raise ArrowInvalid(f"{what}: lz4 decompression failed: "
                           f"{lib.LZ4F_getErrorName(code).decode('ascii', 'replace')}")
    if code != 0:  # the frame is not finished: it wants more input or more output room
        lib.LZ4F_resetDecompressionContext(ctx.handle)
        if dst_size.value < declared:
            raise ArrowInvalid(f"{what}: lz4 frame cut short after {dst_size.value} of the "
                               f"declared {declared} bytes")
        raise ArrowInvalid(f"{what}: the lz4 frame does not end after the declared {declared} "
                           f"bytes (more output follows)")
    return out[:dst_size.value]


def _zstd_decompress(payload, declared: int, what: str):
    import zstandard
    # zstandard sizes its output by the frame header's content size when there is one.
    size = zstandard.get_frame_parameters(payload).content_size
    if size != zstandard.CONTENTSIZE_UNKNOWN and size != declared:
        raise ArrowInvalid(f"{what}: the zstd frame header says {size} bytes, the buffer "
                           f"declares {declared}")
    dctx = _zstd_decompressor()
    if declared < _SMALL:
        return dctx.decompress(payload, max_output_size=max(declared, 1))
    reader = dctx.stream_reader(payload, read_across_frames=False)
    out = _arena.empty(declared)
    n = 0
    while n < declared:
        got = reader.readinto(out[n:declared])
        if not got:
            break
        n += got
    if n == declared and reader.read(1):
        raise ArrowInvalid(f"{what}: the zstd frame holds more than the declared {declared} bytes")
    return out[:n]


# -- the reader's budget ----------------------------------------------------------------------

def check_budget(value) -> Optional[int]:
    """``max_decompressed_bytes`` as given to ``open_file`` / ``open_stream`` / ``open``: None
    (the default budget) or a positive int."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < 1:
        raise ArrowInvalid(f"max_decompressed_bytes must be a positive integer or None (the "
                           f"default budget), got {value!r}")
    return int(value)


class DecompressionBudget:
    """What one reader may decompress over its life: the uncompressed lengths its compressed
    buffers declare, added up before each is decoded.

    ``limit``: the reader's ``max_decompressed_bytes``, or None for the default,
    ``max(limits.min_reader_decompression_budget, limits.max_reader_decompression_ratio *
    source_bytes())`` (``source_bytes``: the source's size, or for a stream read from a file
    object the bytes read so far; None when it knows none: then there is no default budget).

    A buffer counts once per message however often it is decoded (``FileReader.get_batch``
    makes a new batch each call; a dropped batch decoded again costs nothing more): messages
    are told apart by ``key`` (a file's message offset; None for a stream's messages, which
    are read once and so need no record).  Thread-safe."""

    __slots__ = ("limit", "used", "_source_bytes", "_charged", "_lock")

    def __init__(self, limit: Optional[int], source_bytes: Callable[[], Optional[int]]):
        self.limit = limit
        self.used = 0
        self._source_bytes = source_bytes
        self._charged: Dict[object, int] = {}  # key -> bit mask of the buffer indices counted
        self._lock = threading.Lock()

    def allowance(self) -> Optional[int]:
        """The budget now (None: none)."""
        if self.limit is not None:
            return self.limit
        n = self._source_bytes()
        if n is None:
            return None
        return max(limits.min_reader_decompression_budget,
                   limits.max_reader_decompression_ratio * n)

    def charge(self, key, charges: Dict[int, int], quiet: bool = False) -> bool:
        """Count ``charges`` (buffer index -> declared bytes) of message ``key``, or raise (or,
        ``quiet``, return False) when the total would go beyond the budget: nothing is counted
        then."""
        with self._lock:
            mask = self._charged.get(key, 0) if key is not None else 0
            add = 0
            for i, n in charges.items():
                if not mask >> i & 1:
                    add += n
                    mask |= 1 << i
            total = self.used + add
            allowed = self.allowance() if add else None
            if allowed is not None and total > allowed:
                if quiet:
                    return False
                raise ArrowInvalid(self._refusal(total, allowed))
            self.used = total
            if key is not None:
                self._charged[key] = mask
        return True

    def _refusal(self, total: int, allowed: int) -> str:
        what = f"decompressed bytes of the reader, this buffer included: {total:,}"
        if self.limit is not None:
            return (f"{what} is beyond its budget max_decompressed_bytes={allowed:,} (open the "
                    f"source with a larger max_decompressed_bytes=...)")
        return (f"{what} is beyond its default budget of {allowed:,} bytes, "
                f"max(limits.min_reader_decompression_budget="
                f"{limits.min_reader_decompression_budget:,}, "
                f"limits.max_reader_decompression_ratio={limits.max_reader_decompression_ratio:,}"
                f" x the {self._source_bytes():,} bytes of the source) (open the source with "
                f"max_decompressed_bytes=..., or raise the ratio with arrowmm.set_limits("
                f"max_reader_decompression_ratio=...))")


# -- compression (the writer's side) ----------------------------------------------------------

def check_level(codec: Optional[str], level) -> Optional[int]:
    """``level`` checked for ``codec`` (None: the codec's default)."""
    if level is None:
        return None
    if codec is None:
        raise ArrowInvalid(f"compression_level needs compression= one of {', '.join(CODECS)}")
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)):
        raise ArrowInvalid(f"compression_level must be an int, got {type(level).__name__}")
    lo, hi = LEVELS[codec]
    if not lo <= int(level) <= hi:
        raise ArrowInvalid(f"compression_level {level} is outside {codec}'s range {lo}..{hi}")
    return int(level)


def _zstd_compressor(level: int):
    c = _ctx.zstd_c.get(level)
    if c is None:
        import zstandard
        c = _ctx.zstd_c[level] = zstandard.ZstdCompressor(level=level)
    return c


def _compress(raw: memoryview, codec: str, level: Optional[int]) -> bytes:
    spec = CODEC.get(codec)
    if spec is None:
        check_codec(codec)
    return spec.compress(raw, spec.default_level if level is None else level)


CODEC_TABLE = (
    # lz4: python-lz4's levels 0-16 (3+ is LZ4 HC), LZ4 fast mode by default; one frame a buffer
    Codec("lz4", "LZ4_FRAME", 0, (0, 16), 0, 256, ("lz4_frame",), _lz4_compress, _lz4_decompress),
    # zstd: the library's fast negative levels up to 22, level 1 by default
    Codec("zstd", "ZSTD", 1, (-(1 << 17), 22), 1, 1 << 16, (), _zstd_compress, _zstd_decompress),
)
#: name -> Codec
CODEC = {c.name: c for c in CODEC_TABLE}
#: the codecs' names, in wire-code order
CODECS = tuple(CODEC)
#: name or alias -> name
CODEC_NAMES = {**{a: c.name for c in CODEC_TABLE for a in c.aliases}, **{c.name: c.name for c in CODEC_TABLE}}
LEVELS = {c.name: c.levels for c in CODEC_TABLE}
DEFAULT_LEVEL = {c.name: c.default_level for c in CODEC_TABLE}


def check_codec(compression) -> Optional[str]:
    """``compression`` as a writer takes it: None or a codec's name (``ArrowInvalid`` naming the
    choices otherwise)."""
    if compression is None or compression in CODEC:
        return compression
    choices = ", ".join(repr(c) for c in CODECS)
    raise ArrowInvalid(f"compression must be None or one of {choices}, got {compression!r}")


_RAW = _I64.pack(-1)


def compress_buffer(data, codec: str, level: Optional[int] = None) -> tuple:
    """The parts of one compressed body buffer: ``(prefix, payload)``, where the 8-byte prefix
    is the uncompressed length, or -1 with ``data`` itself as the payload when compressing
    does not make it smaller (stored raw: no copy, and zero-copy for readers)."""
    raw = memoryview(data).cast("B")
    body = _compress(raw, codec, level)
    if memoryview(body).nbytes >= raw.nbytes:
        return _RAW, raw
    return _I64.pack(raw.nbytes), body


def compress_many(buffers: Sequence, codec: str, level: Optional[int] = None) -> List[tuple]:
    """``compress_buffer`` of each (non-empty) buffer, in threads when it pays."""
    sizes = [memoryview(b).nbytes for b in buffers]
    out = _run(lambda b: compress_buffer(b, codec, level), buffers, sizes)
    for r in out:
        if isinstance(r, BaseException):
            raise r
    return out
