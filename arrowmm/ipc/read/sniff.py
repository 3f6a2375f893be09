"""What a source that is not Arrow IPC looks like, for error messages a newcomer can act on.

The readers call ``not_arrow`` with the first bytes of a source when they cannot read it as
the IPC format asked for: Parquet, Feather V1, compressed or archived data, CSV and other text,
and empty input are recognised by their first bytes, and the message says what to do instead.
``ipc_kind`` is the other half: which IPC format first bytes announce (the one test the
dataset's file discovery, local or on an fsspec filesystem, and the Spark source share).
"""
from __future__ import annotations

from typing import Optional

from ..core.files import MAGIC

__all__ = ["HEAD_SIZE", "KIND_HEAD", "STREAM_CONTINUATION", "describe", "ipc_kind", "not_arrow"]

#: Bytes of a source's start that ``describe`` looks at.
HEAD_SIZE = 256
#: Bytes of a source's start that ``ipc_kind`` looks at.
KIND_HEAD = 8
#: The marker each message of a stream (since Arrow 0.15) starts with.
STREAM_CONTINUATION = b"\xff\xff\xff\xff"


def ipc_kind(head: bytes, strict: bool = False) -> Optional[str]:
    r"""``"file"``, ``"stream"`` or None: the IPC format that ``head``, a source's first
    ``KIND_HEAD`` bytes, announces.

    A file starts with ``ARROW1``, a stream with the continuation marker.  A pre-0.15 stream
    starts with a bare metadata length, which any binary file might: ``strict`` (a file found
    in a folder, not named for Arrow) rules that form out, so that stray files are not read.

    Examples
    --------
    >>> ipc_kind(b"ARROW1\x00\x00"), ipc_kind(b"\xff\xff\xff\xff\x10\x00\x00\x00")
    ('file', 'stream')
    >>> ipc_kind(b"PAR1\x15\x00\x15\x00", strict=True) is None
    True
    """
    if head[:6] == MAGIC:
        return "file"
    if head[:4] == STREAM_CONTINUATION:
        return "stream"
    if not strict and len(head) >= 4 and head[:4] != b"\x00\x00\x00\x00":
        return "stream"
    return None

_SIGNATURES = (
    (b"PAR1", "a Parquet file (it starts with 'PAR1'): read it with a Parquet reader "
              "(pyarrow.parquet.read_table, polars.read_parquet)"),
    (b"FEA1", "a Feather V1 file (it starts with 'FEA1'), the format before Feather V2 = Arrow "
              "IPC: arrowmm.open_file and arrowmm.open read it (as pyarrow.feather.read_table "
              "does), and 'arrowmm convert' or arrowmm.write_file write it again as an Arrow "
              "IPC file"),
    (b"\x1f\x8b", "gzip-compressed data: decompress it first (gzip.open(path, 'rb') is a file "
                  "object that open_stream reads; gzip.decompress(data) gives bytes for open)"),
    (b"\x28\xb5\x2f\xfd", "a Zstandard-compressed file (not Arrow's per-buffer compression): "
                          "decompress it first"),
    (b"\x04\x22\x4d\x18", "an LZ4-framed file (not Arrow's per-buffer compression): "
                          "decompress it first"),
    (b"BZh", "bzip2-compressed data: decompress it first (bz2.open(path, 'rb'))"),
    (b"\xfd7zXZ\x00", "xz-compressed data: decompress it first (lzma.open(path, 'rb'))"),
    (b"PK\x03\x04", "a ZIP archive: extract the Arrow file from it first"),
    (b"ORC", "an ORC file: read it with an ORC reader (pyarrow.orc.read_table)"),
    (b"\x93NUMPY", "a NumPy .npy file: read it with numpy.load"),
)


def _text(head: bytes) -> Optional[str]:
    """``head`` as text when it is printable UTF-8 (a character cut at the end allowed)."""
    if not head or b"\x00" in head:
        return None
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:
            return None
        text = head[:exc.start].decode("utf-8")
    if not text.strip() or any(not (c.isprintable() or c in "\r\n\t") for c in text):
        return None
    return text


def describe(head: bytes, size: Optional[int] = None) -> Optional[str]:
    """What ``head``, the first bytes of a source of ``size`` bytes (None: unknown), looks like
    when it is recognisably something other than Arrow IPC; None when it is not recognised."""
    if size == 0 or (size is None and not head):
        return "it is empty (0 bytes)"
    for signature, what in _SIGNATURES:
        if head.startswith(signature):
            return f"it looks like {what}"
    text = _text(head[:HEAD_SIZE])
    if text is None:
        return None
    stripped = text.lstrip()
    first = stripped.splitlines()[0] if stripped else ""
    shown = first if len(first) <= 60 else first[:57] + "..."
    if stripped[:1] in "{[":
        return (f"it looks like JSON text (it starts with {shown!r}); an Arrow integration JSON "
                f"file is not IPC either")
    if any(sep in first for sep in (",", "\t", ";", "|")):
        return (f"it looks like CSV or other delimited text (first line {shown!r}): read it with "
                f"a CSV reader (pyarrow.csv.read_csv, polars.read_csv) and write it with "
                f"arrowmm.new_file")
    return f"it looks like text (it starts with {shown!r})"


def not_arrow(name: str, head: bytes, size: Optional[int], expected: str) -> Optional[str]:
    """The message for source ``name`` that should be an Arrow IPC ``expected`` ("file" or
    "stream") and whose first bytes are ``head``; None when ``head`` is not recognised."""
    what = describe(head, size)
    if what is None:
        return None
    return f"{name}: not an Arrow IPC {expected}: {what}"
