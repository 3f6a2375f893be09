"""The machine's ceilings (issue 34): how fast this machine moves the same bytes with no reader
around them, so that a reader's time can be read as a share of what the hardware allows.

Run from the repository root::

    python benchmarks/bench_machine.py             # this machine's numbers (about 30 s)
    python benchmarks/bench_machine.py --mib 64    # a smaller sample

The functions are what ``bench_paths.py`` puts beside its rows, measured in the same run as
the libraries (each one a callable with no arguments, so the harness interleaves it with
them): reading a file from the page cache with ``readinto`` into a buffer allocated once;
``memcpy`` of as many bytes (a numpy copy between two arrays allocated and touched once);
decompressing exactly the compressed buffers a file holds (``zstandard``'s stream reader and
the ``lz4`` package's ``LZ4F_decompress``, both of which let the GIL go, on one thread and on
a pool of threads, into outputs allocated once, as a reader that reuses its memory does); and
a pipe's raw throughput (``cat f |``
a process that only ``readv``s the bytes, timed inside it, as the readers are).

The command line makes a sample of ``--mib`` MiB (float64 of three decimals and int64 below
1,000: numbers that compress as real columns do), written by pyarrow uncompressed, ZSTD and
LZ4 into a temporary folder that is removed afterwards, and prints each ceiling in GB/s
(bytes of decoded data per second), with the load average: on a shared machine the numbers
follow the share of the cores other jobs leave.
"""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, List, NamedTuple

import numpy as np
import pyarrow as pa
import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
from common import compare_many  # noqa: E402  (benchmarks/common.py, beside this script)


# -- page cache and memory -------------------------------------------------------------------

def file_reader(path: Path) -> Callable[[], int]:
    """Read ``path`` whole into one buffer allocated here (the page cache's speed when the
    file is cached); the callable returns the bytes read."""
    size = Path(path).stat().st_size
    buf = np.ones(max(size, 1), np.uint8)  # (touched: the pages exist before the first read)
    view = memoryview(buf)

    def read() -> int:
        got = 0
        with open(path, "rb", buffering=0) as f:
            while got < size:
                n = f.readinto(view[got:])
                if not n:
                    break
                got += n
        if got != size:
            raise OSError(f"{path}: read {got:,} bytes of {size:,} (the file changed?)")
        return got
    return read


def memcpy(nbytes: int) -> Callable[[], int]:
    """Copy ``nbytes`` between two arrays allocated and touched here; returns ``nbytes``."""
    src = np.ones(max(nbytes, 1), np.uint8)
    dst = np.zeros_like(src)

    def copy() -> int:
        np.copyto(dst, src)
        return nbytes
    return copy


# -- compressed buffers ----------------------------------------------------------------------

class CompressedBuffers(NamedTuple):
    """The compressed buffers of a file's record and dictionary batches, as the writer left
    them: ``payloads[i]`` decodes to ``sizes[i]`` bytes. ``raw`` counts the bytes of buffers
    stored uncompressed (length -1: a reader views them without copying)."""
    codec: str
    payloads: List[memoryview]
    sizes: List[int]
    raw: int
    keep: object  # (the mapping the payloads point into)

    @property
    def decoded(self) -> int:
        """Bytes the buffers decode to."""
        return sum(self.sizes)


_CODECS = {0: "lz4", 1: "zstd"}  # (Arrow's CompressionType: LZ4_FRAME, ZSTD)
_RECORD_BATCH, _DICTIONARY_BATCH = 3, 2  # (MessageHeader union tags)


def _u32(b: bytes, pos: int) -> int:
    return int.from_bytes(b[pos:pos + 4], "little")


def _slot(b: bytes, table: int, slot: int):
    """Position of a flatbuffer table's field ``slot``, or None when absent (its default)."""
    vtable = table - int.from_bytes(b[table:table + 4], "little", signed=True)
    at = 4 + 2 * slot
    if at + 2 > int.from_bytes(b[vtable:vtable + 2], "little"):
        return None
    off = int.from_bytes(b[vtable + at:vtable + at + 2], "little")
    return table + off if off else None


def _batch_buffers(meta: bytes):
    """(codec or None, the (offset, length) pairs) of a message's record batch, or None for
    a message that carries none (the schema). A few lines of the FlatBuffers layout of
    Arrow's Message.fbs, so the ceiling does not lean on arrowmm's own parser."""
    root = _u32(meta, 0)
    kind_at, header_at = _slot(meta, root, 1), _slot(meta, root, 2)
    kind = meta[kind_at] if kind_at is not None else 0
    if kind not in (_RECORD_BATCH, _DICTIONARY_BATCH) or header_at is None:
        return None
    batch = header_at + _u32(meta, header_at)
    if kind == _DICTIONARY_BATCH:
        data_at = _slot(meta, batch, 1)
        batch = data_at + _u32(meta, data_at)
    buffers_at, compression_at = _slot(meta, batch, 2), _slot(meta, batch, 3)
    pairs = np.zeros((0, 2), np.int64)
    if buffers_at is not None:
        vec = buffers_at + _u32(meta, buffers_at)
        n = _u32(meta, vec)
        pairs = np.frombuffer(meta, "<i8", 2 * n, vec + 4).reshape(n, 2)
    codec = None
    if compression_at is not None:
        table = compression_at + _u32(meta, compression_at)
        codec_at = _slot(meta, table, 0)
        codec = _CODECS[meta[codec_at] if codec_at is not None else 0]
    return codec, pairs


def compressed_buffers(path: Path) -> CompressedBuffers:
    """Every compressed buffer of the IPC file at ``path`` (framed by pyarrow's message reader
    over a memory map, so the payloads are views of the file's pages)."""
    mapped = pa.memory_map(str(path))
    whole = mapped.read_buffer()
    if whole.size < 8 or whole.slice(0, 6).to_pybytes() != b"ARROW1":
        raise ValueError(f"{path} is not an Arrow IPC file (no ARROW1 magic)")
    messages = pa.ipc.MessageReader.open_stream(pa.BufferReader(whole.slice(8)))
    codec, payloads, sizes, raw = None, [], [], 0
    for message in messages:
        found = _batch_buffers(message.metadata.to_pybytes())
        if found is None or found[0] is None:
            continue
        if codec not in (None, found[0]):
            raise ValueError(f"{path} mixes codecs {codec} and {found[0]}")
        codec = found[0]
        body = memoryview(message.body)
        for offset, length in found[1].tolist():
            if length == 0:
                continue
            if offset < 0 or length < 8 or length > len(body) - offset:
                raise ValueError(f"{path}: buffer ({offset}, {length}) outside a body of "
                                 f"{len(body)} bytes")
            declared = int.from_bytes(body[offset:offset + 8], "little", signed=True)
            if declared == -1:
                raw += length - 8
            else:
                payloads.append(body[offset + 8:offset + length])
                sizes.append(declared)
    if codec is None:
        raise ValueError(f"{path} has no compressed record batch")
    return CompressedBuffers(codec, payloads, sizes, raw, mapped)


_LOCAL = threading.local()


def _zstd_into(src: memoryview, out: np.ndarray) -> int:
    dctx = getattr(_LOCAL, "zstd", None)
    if dctx is None:  # (a decompression context is one thread's)
        dctx = _LOCAL.zstd = zstandard.ZstdDecompressor()
    reader = dctx.stream_reader(src, read_across_frames=False)
    n = 0
    while n < out.size:
        got = reader.readinto(out[n:])
        if not got:
            break
        n += got
    return n if not reader.read(1) else -1  # (-1: the frame holds more than declared)


class _Lz4F:
    """LZ4_FRAME decoding into a given buffer: ``LZ4F_decompress`` of the lz4 package's own
    extension, through ctypes (which lets the GIL go during the call). The package's
    ``lz4.frame.decompress`` cannot be the ceiling: it allocates its output, and with no
    content size in the frame (pyarrow writes none) it grows it as it goes."""

    def __init__(self):
        import lz4.frame._frame as ext
        lib = ctypes.CDLL(ext.__file__)
        lib.LZ4F_createDecompressionContext.argtypes = [ctypes.POINTER(ctypes.c_void_p),
                                                        ctypes.c_uint]
        lib.LZ4F_createDecompressionContext.restype = ctypes.c_size_t
        size_p = ctypes.POINTER(ctypes.c_size_t)
        lib.LZ4F_decompress.argtypes = [ctypes.c_void_p, ctypes.c_void_p, size_p,
                                        ctypes.c_void_p, size_p, ctypes.c_void_p]
        lib.LZ4F_decompress.restype = ctypes.c_size_t
        lib.LZ4F_isError.argtypes = [ctypes.c_size_t]
        lib.LZ4F_isError.restype = ctypes.c_uint
        self.lib = lib

    def context(self) -> ctypes.c_void_p:
        ctx = getattr(_LOCAL, "lz4", None)
        if ctx is None:  # (one per thread, kept for the thread's life: a benchmark's)
            ctx = ctypes.c_void_p()
            if self.lib.LZ4F_isError(self.lib.LZ4F_createDecompressionContext(ctypes.byref(ctx),
                                                                             100)):
                raise MemoryError("LZ4F_createDecompressionContext failed")
            _LOCAL.lz4 = ctx
        return ctx

    def into(self, src: memoryview, out: np.ndarray) -> int:
        """Decode one whole frame; the bytes written (short or an error: less than ``out``)."""
        src_arr = np.frombuffer(src, np.uint8)
        dst_size, src_size = ctypes.c_size_t(out.size), ctypes.c_size_t(src_arr.size)
        code = self.lib.LZ4F_decompress(self.context(), out.ctypes.data, ctypes.byref(dst_size),
                                        src_arr.ctypes.data, ctypes.byref(src_size), None)
        if self.lib.LZ4F_isError(code) or code != 0:  # (error, or the frame did not end)
            _LOCAL.lz4 = None  # (a context left mid-frame is not reused)
            return -1
        return dst_size.value


_LZ4F: list = []


def _lz4_into(src: memoryview, out: np.ndarray) -> int:
    if not _LZ4F:
        _LZ4F.append(_Lz4F())
    return _LZ4F[0].into(src, out)


_DECOMPRESS_INTO = {"zstd": _zstd_into, "lz4": _lz4_into}
_POOLS: dict = {}


def _pool(threads: int) -> ThreadPoolExecutor:
    if threads not in _POOLS:
        _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix="ceiling")
    return _POOLS[threads]


class Decompressor:
    """Decompress every buffer of a ``CompressedBuffers`` into ``outputs`` (one array per
    buffer, allocated and touched once: the codec's speed, not the allocator's), on the
    calling thread (``threads=1``) or spread over a pool of ``threads``, a buffer per task so
    the pool balances uneven buffers. A call returns the bytes decoded; the first one, made
    here, is checked against the declared sizes (a ceiling that skipped work would be
    silently wrong)."""

    def __init__(self, buffers: CompressedBuffers, threads: int = 1):
        self.codec, self.threads = buffers.codec, threads
        self.payloads = buffers.payloads
        self.outputs = [np.ones(size, np.uint8) for size in buffers.sizes]
        got = self()
        if got != buffers.decoded:
            raise ValueError(f"{buffers.codec} buffers decoded to {got:,} bytes, "
                             f"declared {buffers.decoded:,}")

    def __call__(self) -> int:
        one = _DECOMPRESS_INTO[self.codec]
        if self.threads == 1:
            done = map(one, self.payloads, self.outputs)
        else:
            done = _pool(self.threads).map(one, self.payloads, self.outputs)
        return sum(n if n >= 0 else -(1 << 62) for n in done)


def decompressor(buffers: CompressedBuffers, threads: int = 1) -> Decompressor:
    """A ``Decompressor`` of ``buffers`` on ``threads`` threads (checked once)."""
    return Decompressor(buffers, threads)


# -- pipes -----------------------------------------------------------------------------------

_RAW_PIPE_CHILD = r"""
import fcntl, os, time
t0 = time.perf_counter()
try:  # (the 1 MiB pipe buffer the readers ask for: the pipe at its best)
    fcntl.fcntl(0, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
except OSError:
    pass
view = memoryview(bytearray(1 << 22))
n = 0
while True:  # (straight from the descriptor, no file object between)
    got = os.readv(0, [view])
    if not got:
        break
    n += got
print(time.perf_counter() - t0, n)
"""


def run_piped(path: Path, code: str, *args: str):
    """``cat path | python -c code args``: the child's stdout split in words (its first is
    the seconds the child timed itself)."""
    cat = subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE)
    try:
        proc = subprocess.run([sys.executable, "-c", code, *args], stdin=cat.stdout,
                              capture_output=True, text=True, check=False)
    finally:
        cat.stdout.close()
        cat.wait()
    if proc.returncode:
        raise RuntimeError(f"piped reader {args} failed:\n{proc.stderr[-2000:]}")
    return proc.stdout.split()


def raw_pipe(path: Path) -> float:
    """Seconds a process takes to read (``os.readv``) the whole of ``path`` from a pipe fed by
    ``cat`` (timed inside the reading process, interpreter start-up excluded)."""
    seconds, n = run_piped(path, _RAW_PIPE_CHILD)
    size = Path(path).stat().st_size
    if int(n) != size:
        raise OSError(f"the pipe gave {n} bytes of {path}'s {size:,}")
    return float(seconds)


# -- command line ----------------------------------------------------------------------------

def _sample(folder: Path, mib: int) -> dict:
    rows = (mib << 20) // 16
    rng = np.random.default_rng(34)
    batch = pa.record_batch({"f64": np.round(rng.random(rows) * 1000, 3),
                             "i64": rng.integers(0, 1000, rows)})
    paths = {}
    for name in ("plain", "zstd", "lz4"):
        paths[name] = folder / f"machine_{mib}.{name}.arrow"
        opts = pa.ipc.IpcWriteOptions(compression=None if name == "plain" else name)
        with pa.OSFile(str(paths[name]), "wb") as sink, \
                pa.ipc.new_file(sink, batch.schema, options=opts) as w:
            for part in range(8):  # (8 batches: buffers for a pool to share)
                w.write_batch(batch.slice(part * rows // 8, rows // 8))
    return paths


def main(argv=None) -> int:
    """Print this machine's ceilings for a sample of ``--mib`` MiB."""
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=256, help="sample size in MiB (default 256)")
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats (median reported)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_machine_") as tmp:
        paths = _sample(Path(tmp), args.mib)
        size = paths["plain"].stat().st_size
        steps = {"page-cache read": file_reader(paths["plain"]), "memcpy": memcpy(size)}
        decoded = {}
        for codec in ("zstd", "lz4"):
            bufs = compressed_buffers(paths[codec])
            decoded[codec] = bufs.decoded
            for threads in (1, 2):
                steps[f"{codec} decompression, {threads} thread{'s' * (threads > 1)}"] = \
                    decompressor(bufs, threads)
        load = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
        times = compare_many(steps, args.repeats, 1)
        # (the pipe's time is the one its reading process measures, not this process's)
        times["raw pipe (cat | readv)"] = float(np.median(
            [raw_pipe(paths["plain"]) for _ in range(args.repeats)]))
        print(f"machine ceilings, {size / 2**20:,.0f} MiB sample, median of {args.repeats} "
              f"(load average {load} before, "
              "{:.2f} {:.2f} {:.2f} after)".format(*os.getloadavg()))
        for name, seconds in times.items():
            nbytes = decoded[name.split()[0]] if "decompression" in name else size
            print(f"- {name}: {nbytes / seconds / 1e9:.2f} GB/s ({seconds * 1e3:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
