"""Body compression (LZ4 frame, Zstandard) of IPC buffers.

A compressed buffer is ``[int64 uncompressed length][compressed bytes]``; a
length of -1 means the bytes that follow are stored uncompressed.  The
declared length never sizes an allocation on trust: it is capped by the most
the codec can expand the bytes really present, and the output must match it.
Both codecs release the GIL, so buffers can decompress in parallel threads.
"""
from __future__ import annotations

import struct

from ._region import BufferView, as_view
from .errors import ArrowInvalid, ArrowNotImplementedError

__all__ = ["CODECS", "decompress_buffer", "compress_buffer"]

CODECS = ("lz4", "zstd")
# Largest expansion each codec can produce from n compressed bytes (plus slack for headers).
_MAX_RATIO = {"lz4": 256, "zstd": 1 << 16}
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
    limit = _MAX_RATIO[codec] * payload.size + (1 << 16)
    if declared > limit:
        raise ArrowInvalid(f"{what}: declared uncompressed length {declared} is more than {codec} "
                           f"can produce from {payload.size} bytes")
    try:
        if codec == "lz4":
            import lz4.frame
            out = lz4.frame.LZ4FrameDecompressor().decompress(payload, max_length=declared)
        elif codec == "zstd":
            import zstandard
            out = zstandard.ZstdDecompressor().decompress(payload, max_output_size=declared)
        else:
            raise ArrowNotImplementedError(f"{what}: unknown compression codec {codec!r}")
    except (ArrowInvalid, ArrowNotImplementedError):
        raise
    except Exception as exc:  # codec errors come in many classes
        raise ArrowInvalid(f"{what}: {codec} decompression failed: {exc}") from None
    if len(out) != declared:
        raise ArrowInvalid(f"{what}: {codec} produced {len(out)} bytes, the buffer declares {declared}")
    return as_view(out, description=f"decompressed {what}")


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
