"""Body compression (LZ4 frame, Zstandard) of IPC buffers.

A compressed buffer is ``[int64 uncompressed length][compressed bytes]``; a
length of -1 means the bytes that follow are stored uncompressed.  The
declared length never sizes an allocation on trust: it is capped by the most
the codec can expand the bytes really present, and the output must match it.
Up to ``_ONE_SHOT_RATIO`` times the compressed size (ordinary data) is
decoded in one call into an output of the declared size; beyond that, the
output is read in ``_CHUNK``-sized steps, so memory follows what the codec
really produces, not what the buffer (or a zstd frame header) claims.
Both codecs release the GIL, so buffers can decompress in parallel threads.
"""
from __future__ import annotations

import struct

from . import limits
from ._region import BufferView, as_view
from .errors import ArrowInvalid, ArrowNotImplementedError

__all__ = ["CODECS", "decompress_buffer", "compress_buffer"]

CODECS = ("lz4", "zstd")
# Largest expansion each codec can produce from n compressed bytes (plus slack for headers).
_MAX_RATIO = {"lz4": 256, "zstd": 1 << 16}
# Output allocated before any of it is produced: at most this many times the input (plus slack).
_ONE_SHOT_RATIO = 16
_ONE_SHOT_SLACK = 1 << 20
_CHUNK = 1 << 20  # output per step when decoding in steps
_I64 = struct.Struct("<q")


def decompress_buffer(view: BufferView, codec: str, what: str) -> BufferView:
    """The uncompressed bytes of one IPC body buffer, as a view (over new memory if compressed)."""
    if view.size == 0:
        return view
    if view.size < 8:
        raise ArrowInvalid(f"{what}: compressed buffer of {view.size} bytes has no 8-byte length prefix")
    declared = _I64.unpack_from(view, 0)[0]
    payload = view.slice(8, view.size - 8, what)
    if declared == -1:
        return payload
    if declared < 0:
        raise ArrowInvalid(f"{what}: negative uncompressed length {declared}")
    if declared > limits.max_decompressed_size:
        raise limits.exceeded("max_decompressed_size", declared, f"{what}: declared uncompressed length")
    limit = _MAX_RATIO[codec] * payload.size + (1 << 16)
    if declared > limit:
        raise ArrowInvalid(f"{what}: declared uncompressed length {declared} is more than {codec} "
                           f"can produce from {payload.size} bytes")
    one_shot = declared <= _ONE_SHOT_RATIO * payload.size + _ONE_SHOT_SLACK
    try:
        if codec == "lz4":
            out = _lz4_decompress(payload, declared, one_shot, what)
        elif codec == "zstd":
            out = _zstd_decompress(payload, declared, one_shot, what)
        else:
            raise ArrowNotImplementedError(f"{what}: unknown compression codec {codec!r}")
    except (ArrowInvalid, ArrowNotImplementedError):
        raise
    except Exception as exc:  # codec errors come in many classes
        raise ArrowInvalid(f"{what}: {codec} decompression failed: {exc}") from None
    if len(out) != declared:
        raise ArrowInvalid(f"{what}: {codec} produced {len(out)} bytes, the buffer declares {declared}")
    return as_view(out, description=f"decompressed {what}")


def _lz4_decompress(payload, declared: int, one_shot: bool, what: str):
    import lz4.frame
    dec = lz4.frame.LZ4FrameDecompressor()
    if one_shot:
        out = dec.decompress(payload, max_length=declared)
    else:
        pending = [payload]

        def step(n):
            return dec.decompress(pending.pop() if pending else b"", max_length=n)
        out = _read_steps(step, declared)
    if len(out) == declared and not dec.eof:
        # max_length stops the decoder at the declared size: more output, or a cut frame
        raise ArrowInvalid(f"{what}: the lz4 frame does not end after the declared {declared} bytes "
                           f"({'more output follows' if not dec.needs_input else 'frame cut short'})")
    return out


def _zstd_decompress(payload, declared: int, one_shot: bool, what: str):
    import zstandard
    # zstandard sizes its output by the frame header's content size when there is one.
    size = zstandard.get_frame_parameters(payload).content_size
    if size != zstandard.CONTENTSIZE_UNKNOWN and size != declared:
        raise ArrowInvalid(f"{what}: the zstd frame header says {size} bytes, the buffer "
                           f"declares {declared}")
    if one_shot:
        return zstandard.ZstdDecompressor().decompress(payload, max_output_size=declared)
    return _read_steps(zstandard.ZstdDecompressor().stream_reader(memoryview(payload)).read, declared)


def _read_steps(step, declared: int) -> bytes:
    """Output of ``step(n)`` (at most ``n`` bytes a call, empty at the end) up to ``declared + 1``
    bytes: one byte more than declared is enough to know the declaration is wrong."""
    chunks = []
    total = 0
    while total <= declared:
        chunk = step(min(_CHUNK, declared + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def compress_buffer(data, codec: str) -> bytes:
    """``[int64 length][compressed]`` for one buffer (used by the writer)."""
    raw = memoryview(data).cast("B")
    if codec == "lz4":
        import lz4.frame
        body = lz4.frame.compress(raw)
    elif codec == "zstd":
        import zstandard
        body = zstandard.ZstdCompressor().compress(raw)
    else:
        raise ArrowInvalid(f"compression must be None, 'lz4' or 'zstd', got {codec!r}")
    return _I64.pack(len(raw)) + body
