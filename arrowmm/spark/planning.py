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
from ..interop import array
from ..ipc.read.indexed import select_entries
from .files import DataFile
from .storage import MMAP_DEFAULT, storage_for

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


def read_piece(piece: Piece, log: Optional[str] = None, storage_options: Optional[dict] = None,
               mmap: bool = MMAP_DEFAULT) -> Iterator[object]:
    """The arrowmm record batches of one piece, read from the local file (by ``pread``, or
    mapped with ``mmap``; on an object store configured by ``storage_options``, by byte ranges).  A local file replaced under its
    path since planning raises ``ArrowInvalid``: the plan's batch indices and the batches its
    statistics skipped were the old file's (read in the new one, they gave rows of neither);
    so does an object overwritten since (another ETag)."""
    path, fmt, batches, entries, planned = piece
    try:
        reader = storage_for(path, storage_options, mmap).open_reader(path, fmt, entries)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: gone since this read was planned (an overwrite of its "
                                f"directory published a new version and removed the old files; "
                                f"load the directory again to read the new version)") from None
    with reader:
        if planned is not None and not _still_planned(fmt, planned, reader.file_identity()):
            raise ArrowInvalid(f"{path}: replaced since this read was planned (another file "
                               f"now has its name); the plan's batches were the old file's: "
                               f"load the path again to read the new one")
        for i in batches:
            batch = reader.get_batch(i)
            if log:
                _log_read(log, path, i, batch.num_rows)
            yield batch


def _still_planned(fmt: str, planned: tuple, now: Optional[tuple]) -> bool:
    """Whether the file a piece reads is the one it was planned from: the same identity, or
    for a stream the same local file grown since (a stream is written as data arrives, its
    planned messages lie below the planned size, and the reads check each one's framing)."""
    if now == planned:
        return True
    return (fmt == "stream" and now is not None and len(now) == len(planned) == 5
            and now[:2] == planned[:2] and now[2] > planned[2])


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
    hold (an int64 past an int32's range, seconds past int64 microseconds, a day past date32's)
    is an error, never wrapped.  The one loss the source means to make is a finer time unit
    cut to Spark's (nanoseconds to microseconds, a date64's or a timestamp's time of day), at
    any depth, whatever else the cast changes (a large_string beside it, a dictionary
    decoded)."""
    import pyarrow as pa
    lists = _views_as_lists(column.type)
    if lists is not None:  # (pyarrow 26's list_view -> list cast loses rows: arrowmm's keeps them)
        column = pa.array(array(column).cast(lists))  # (the export checked the views)
        if column.type.equals(field.type):
            return column
    try:
        if pa.types.is_date32(field.type) and (pa.types.is_date64(column.type) or
                                               pa.types.is_timestamp(column.type)):
            _check_days(column, field)
            return column.cast(field.type, safe=False)  # (the days checked: a cut, no wrap)
        try:
            return column.cast(field.type, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            cut = _time_cut(column.type, field.type)
            if cut is None:
                raise
            return column.cast(cut, safe=False).cast(field.type, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ArrowInvalid(f"column {field.name!r}: its {column.type} values do not all fit "
                           f"the requested {field.type} ({exc})") from None


def _views_as_lists(dtype):
    """``dtype`` with each list view, at any depth, the list of the same offset width (the
    fields' names, nullability and metadata kept), or None when it holds no list view."""
    import pyarrow as pa
    if pa.types.is_list_view(dtype) or pa.types.is_large_list_view(dtype):
        item = dtype.value_field
        item = item.with_type(_views_as_lists(item.type) or item.type)
        return pa.list_(item) if pa.types.is_list_view(dtype) else pa.large_list(item)
    if pa.types.is_dictionary(dtype):
        values = _views_as_lists(dtype.value_type)
        return None if values is None else pa.dictionary(dtype.index_type, values, dtype.ordered)
    if pa.types.is_map(dtype):
        key, item = _views_as_lists(dtype.key_type), _views_as_lists(dtype.item_type)
        if key is None and item is None:
            return None
        return pa.map_(dtype.key_field.with_type(key or dtype.key_type),
                       dtype.item_field.with_type(item or dtype.item_type), dtype.keys_sorted)
    fields = [dtype.field(i) for i in range(dtype.num_fields)]
    inner = [_views_as_lists(f.type) for f in fields]
    if all(t is None for t in inner):
        return None
    fields = [f.with_type(t or f.type) for f, t in zip(fields, inner)]
    if pa.types.is_struct(dtype):
        return pa.struct(fields)
    if pa.types.is_large_list(dtype):
        return pa.large_list(fields[0])
    if pa.types.is_fixed_size_list(dtype):
        return pa.list_(fields[0], dtype.list_size)
    if pa.types.is_list(dtype):
        return pa.list_(fields[0])
    if pa.types.is_union(dtype):
        return pa.union(fields, dtype.mode, dtype.type_codes)
    return None


_UNIT_ORDER = {"s": 0, "ms": 1, "us": 2, "ns": 3}
_PER_DAY = {"s": 86_400, "ms": 86_400_000, "us": 86_400_000_000, "ns": 86_400_000_000_000}


def _check_days(column, field) -> None:
    """``ArrowInvalid`` unless every value of a date64 or timestamp ``column`` falls on a day
    date32 (and Spark's DateType) can hold: pyarrow's cast wraps the others, safe or not."""
    import numpy as np
    import pyarrow as pa
    per_day = 86_400_000 if pa.types.is_date64(column.type) else _PER_DAY[column.type.unit]
    values = column.cast(pa.int64()).drop_null().to_numpy()
    if not len(values):
        return
    days = np.floor_divide(values, per_day)
    bad = np.flatnonzero((days < -2**31) | (days > 2**31 - 1))
    if len(bad):
        raise ArrowInvalid(f"column {field.name!r}: value {int(values[bad[0]])} of its "
                           f"{column.type} values falls on day {int(days[bad[0]])}, past what "
                           f"the requested {field.type} holds")


def _time_cut(src, dst):
    """The type ``src`` has with each time leaf (timestamp, duration) cut to the coarser unit
    ``dst`` gives it, containers and other leaves as they are (a dictionary decoded when
    ``dst`` decodes it), or None when ``dst`` cuts no time leaf: casting to it, unsafe, can
    only divide times (never wrap); the rest of the cast then goes through the safe cast."""
    import pyarrow as pa
    ts, dur = pa.types.is_timestamp, pa.types.is_duration
    if (ts(src) and ts(dst)) or (dur(src) and dur(dst)):
        if _UNIT_ORDER[src.unit] <= _UNIT_ORDER[dst.unit]:
            return None
        return pa.timestamp(dst.unit, src.tz) if ts(src) else pa.duration(dst.unit)
    if pa.types.is_dictionary(src):
        if pa.types.is_dictionary(dst):
            return None
        return _time_cut(src.value_type, dst) or None
    if pa.types.is_struct(src) and pa.types.is_struct(dst) and src.num_fields == dst.num_fields:
        cuts = [_time_cut(src.field(i).type, dst.field(i).type) for i in range(src.num_fields)]
        if not any(c is not None for c in cuts):
            return None
        return pa.struct([src.field(i).with_type(c) if c is not None else src.field(i)
                          for i, c in enumerate(cuts)])
    if src.num_fields == 1 and dst.num_fields == 1 and not pa.types.is_struct(src):
        cut = _time_cut(src.field(0).type, dst.field(0).type)
        if cut is None:
            return None
        item = src.field(0).with_type(cut)
        if pa.types.is_large_list(src):
            return pa.large_list(item)
        if pa.types.is_fixed_size_list(src):
            return pa.list_(item, src.list_size)
        if pa.types.is_list(src):
            return pa.list_(item)
        if pa.types.is_list_view(src):
            return pa.list_view(item)
        if pa.types.is_large_list_view(src):
            return pa.large_list_view(item)
    if pa.types.is_map(src) and pa.types.is_map(dst):
        key = _time_cut(src.key_type, dst.key_type)
        item = _time_cut(src.item_type, dst.item_type)
        if key is None and item is None:
            return None
        return pa.map_(src.key_field.with_type(key) if key is not None else src.key_field,
                       src.item_field.with_type(item) if item is not None else src.item_field)
    return None
