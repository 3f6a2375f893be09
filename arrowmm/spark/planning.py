"""Turning data files into Spark partitions, and a partition back into Spark-ready batches.

A partition is a list of pieces ``(path, format, batch indices, stream
entries)``, planned from footers only: consecutive batches fill a partition
up to ``max_bytes`` (a big file spreads over many tasks), and small files
share one (each file also counts ``open_cost`` bytes, as in Spark's file
sources).  Tasks open their files through their ``storage.Storage`` (a local
file mapped, an object read by byte ranges: a batch's header, then its
buffers) and hand each batch to pyarrow through the PyCapsule interface (no
copy), casting only the columns Spark's type rules require.
"""
from __future__ import annotations

import os
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

from ..errors import ArrowInvalid
from ..ipc.read.indexed import select_entries
from .files import DataFile
from .storage import storage_for

__all__ = ["Piece", "plan_pieces", "read_piece", "to_spark_batch"]

# (path, "file" | "stream", batch indices, stream entries or None)
#: (path, "file" or "stream", batch indices, a stream's entries, the planned file's identity)
Piece = Tuple[str, str, List[int], Optional[List[Tuple[int, int]]], Optional[tuple]]


def plan_pieces(files: Sequence[DataFile], keep: Callable[[int, int], bool],
                max_bytes: int, open_cost: int) -> List[List[Piece]]:
    """Partitions (lists of pieces) covering the batches ``keep(file, batch)`` accepts."""
    partitions: List[List[Piece]] = []
    current: List[Piece] = []
    size = 0

    def close():
        nonlocal current, size
        if current:
            partitions.append([_finish(p, files) for p in current])
        current, size = [], 0

    for fi, info in enumerate(files):
        piece = None
        for bi, batch in enumerate(info.batches):
            if not keep(fi, bi):
                continue
            if piece is None:
                piece = (fi, [])
                current.append(piece)
                size += open_cost
            piece[1].append(bi)
            size += batch.nbytes
            if size >= max_bytes:
                close()
                piece = None
    close()
    return partitions


def _finish(piece, files: Sequence[DataFile]) -> Piece:
    fi, batches = piece
    info = files[fi]
    if info.format == "stream":
        return (info.path, "stream", list(range(len(batches))), select_entries(info.entries, batches),
                info.identity)
    return (info.path, "file", batches, None, info.identity)


def read_piece(piece: Piece, log: Optional[str] = None,
               storage_options: Optional[dict] = None) -> Iterator[object]:
    """The arrowmm record batches of one piece, read from the mapped file (or, on an object
    store configured by ``storage_options``, by byte ranges).  A local file replaced under its
    path since planning raises ``ArrowInvalid``: the plan's batch indices and the batches its
    statistics skipped were the old file's (read in the new one, they gave rows of neither);
    so does an object overwritten since (another ETag)."""
    path, fmt, batches, entries, planned = piece
    try:
        reader = storage_for(path, storage_options).open_reader(path, fmt, entries)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: gone since this read was planned (an overwrite of its "
                                f"directory published a new version and removed the old files; "
                                f"load the directory again to read the new version)") from None
    with reader:
        if planned is not None and reader.file_identity() != planned:
            raise ArrowInvalid(f"{path}: replaced since this read was planned (another file "
                               f"now has its name); the plan's batches were the old file's: "
                               f"load the path again to read the new one")
        for i in batches:
            batch = reader.get_batch(i)
            if log:
                _log_read(log, path, i, batch.num_rows)
            yield batch


def _log_read(log: str, path: str, which: int, rows: int) -> None:
    """Append one line per batch read (the ``batchLog`` option: lets tests count reads)."""
    line = f"{os.path.basename(path)}\t{which}\t{rows}\n"
    with open(log, "a") as f:
        f.write(line)


def to_spark_batch(batch, target):
    """``batch`` as the ``pyarrow.RecordBatch`` Spark expects (``target``: its Arrow schema).

    Zero-copy through ``__arrow_c_array__`` when the types already match;
    otherwise only the mismatched columns are cast.
    """
    import pyarrow as pa
    pb = pa.record_batch(batch)
    if pb.schema.equals(target):
        return pb
    if pb.schema.names != target.names:  # a user-given schema: columns by name
        missing = [n for n in target.names if n not in pb.schema.names]
        if missing:
            raise ArrowInvalid(f"columns {missing} of the requested schema are not in the file "
                               f"(it has {pb.schema.names})")
        pb = pa.RecordBatch.from_arrays([pb.column(n) for n in target.names], names=target.names)
    columns = []
    for column, field in zip(pb.columns, target):
        if not column.type.equals(field.type):
            column = _cast(column, field)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=target)


def _cast(column, field):
    """``column`` cast to ``field``'s type as pyarrow's safe cast does: a value the type cannot
    hold (an int64 past an int32's range, seconds past int64 microseconds) is an error, never
    wrapped.  The one loss the source means to make is a finer time unit cut to Spark's
    microseconds (nanosecond timestamps and durations, date64 to days)."""
    import pyarrow as pa
    try:
        return column.cast(field.type, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        if _coarser_time_only(column.type, field.type):
            return column.cast(field.type, safe=False)
        raise ArrowInvalid(f"column {field.name!r}: its {column.type} values do not all fit "
                           f"the requested {field.type} ({exc})") from None


def _coarser_time_only(src, dst) -> bool:
    """Whether casting ``src`` to ``dst`` can only cut time values to a coarser unit (which
    never overflows) and changes nothing else, nested types included."""
    import pyarrow as pa
    ts, dur = pa.types.is_timestamp, pa.types.is_duration
    finer = {"s": 0, "ms": 1, "us": 2, "ns": 3}
    if (ts(src) and ts(dst)) or (dur(src) and dur(dst)):
        return finer[src.unit] >= finer[dst.unit]
    if pa.types.is_date64(src) and pa.types.is_date32(dst):
        return True
    if src.num_fields and src.num_fields == dst.num_fields and type(src) is type(dst):
        return all(src.field(i).type.equals(dst.field(i).type)
                   or _coarser_time_only(src.field(i).type, dst.field(i).type)
                   for i in range(src.num_fields))
    return False
