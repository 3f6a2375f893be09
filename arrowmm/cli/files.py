"""The commands on files: ``schema``, ``head``, ``stats``, ``cat``, ``convert`` and ``append``.

Each takes an IPC file, an IPC stream, a Feather V1 file or ``-`` (standard input); errors
propagate to ``main()``, which prints them as one line and exits 1.
"""
from __future__ import annotations

import argparse
import base64
import contextlib
import csv
import datetime
import decimal
import json
import math
import os
import sys
import uuid

import arrowmm
from ..errors import ArrowError, ArrowInvalid
from ..format import MetadataVersion
from ..ipc.core.compression import CODECS
from ..ipc.write.footer_statistics import add_statistics
from ..ipc.core.files import MAGIC, derived_path, named
from ..arrays.display import format_stored
from ..arrays.pandas_compat import raise_damage_named
from ..ipc.core.statistics import (MAX_BOUND_BYTES, column_statistics, decode_file_statistics,
                              decode_statistics, supports_statistics, unique_names)
from .progress import bar

__all__ = ["add_parsers", "run", "COMMANDS"]

COMMANDS = ("schema", "head", "stats", "cat", "convert", "append")
_SOURCE_HELP = "IPC file or stream, or Feather V1 file ('-' for standard input)"
_CELL_WIDTH = 40  # head: longer values are cut to this many characters


def source(path: str):
    """What ``arrowmm.open`` reads for the command-line PATH (``-``: standard input)."""
    if path != "-":
        return path
    if sys.stdin is None:  # (started with standard input closed: `arrowmm info - <&-`)
        raise ValueError("'-': standard input is closed")
    return sys.stdin.buffer


def display_name(path: str) -> str:
    """How a message names the command-line PATH (``-``: ``<stdin>``, as the readers do)."""
    return "<stdin>" if path == "-" else path


@contextlib.contextmanager
def reading(path: str):
    """Errors raised while ``path`` is read name it (the CLI prints one line, 'PATH: why'),
    unless their message begins with it already (most errors of the open itself do)."""
    try:
        yield
    except ArrowError as exc:
        if getattr(exc, "_names_its_input", False):  # (an inner input's error, named there)
            raise
        name = display_name(path)
        text = str(exc)
        if not name or not text.startswith(f"{name}: "):
            exc.args = (f"{name or repr(path)}: {text}",)  # (the same error, its type kept)
        exc._names_its_input = True
        raise


def _columns(text):
    """``--columns a,b`` as a list of names (None: all)."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError(f"--columns {text!r}: no column names")
    return names


def _jsonable(value):
    """A value of ``to_pylist`` as JSON can hold it: dates and times in ISO 8601, durations in
    seconds, decimals and UUIDs as strings, binaries base64-encoded, a float NaN or infinity
    (which JSON lacks) as the string ``"nan"``, ``"inf"`` or ``"-inf"``: never ``null``, which
    is a null."""
    if isinstance(value, _Unheld):
        return value.json
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):  # (an arrow.uuid column: the canonical 8-4-4-4-12 form)
        return str(value)
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


class _Unheld(str):
    """A date, time, timestamp or duration that Python's types cannot hold, as text (``json``:
    what JSON output gives for it: the same text, a duration's seconds as for the others)."""


_TEMPORAL = (arrowmm.TimestampType, arrowmm.DateType, arrowmm.TimeType, arrowmm.DurationType)
_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}


def _unheld(dtype, stored: int) -> _Unheld:
    """``stored`` (a value of ``dtype`` as its integer count) as pyarrow prints it (ISO 8601,
    years past 9999 or before 1 too; a time zone's instants in UTC, marked Z), or where
    pyarrow prints ``<value out of range>`` (years past +-32767, a time outside the day)
    the count with its unit."""
    if isinstance(dtype, arrowmm.DurationType):
        out = _Unheld(f"{stored} {dtype.unit}")
        out.json = stored / _PER_SECOND[dtype.unit]
        return out
    shown = format_stored(dtype, stored)
    if shown.startswith("<"):
        unit = "days" if getattr(dtype, "unit", None) == "day" else dtype.unit
        since = "midnight" if isinstance(dtype, arrowmm.TimeType) else "1970-01-01"
        shown = f"{stored} {unit} from {since}"
    elif isinstance(dtype, arrowmm.TimestampType):
        shown = shown.replace(" ", "T", 1)  # (as the column's other values: isoformat)
    out = _Unheld(shown)
    out.json = shown
    return out


#: what Python's datetime, date and timedelta hold, in seconds (days for a date) from
#: 1970-01-01; a day's margin each side for the time zones (a value there is tried alone)
_HELD_SECONDS = (-62_135_596_800, 253_402_300_799)
_HELD_DAYS = (-719_162, 2_932_896)
_HELD_DURATION = (-86_399_999_913_600, 86_399_999_999_999)
_DAY = 86_400


def _held_bounds(dtype):
    """Stored counts of ``dtype`` Python surely holds (inner) and may hold (outer)."""
    if isinstance(dtype, arrowmm.DateType):
        per, (lo, hi), margin = (1 if dtype.unit == "day" else _DAY * 1000), _HELD_DAYS, 0
    elif isinstance(dtype, arrowmm.TimeType):
        per, (lo, hi), margin = _PER_SECOND[dtype.unit], (0, _DAY - 1), 0
    else:
        per = _PER_SECOND[dtype.unit]
        (lo, hi), margin = (_HELD_DURATION if isinstance(dtype, arrowmm.DurationType)
                            else _HELD_SECONDS), _DAY
    return ((lo + margin) * per, (hi - margin) * per + per - 1), \
        ((lo - margin) * per, (hi + margin) * per + per - 1)


def _values(column) -> list:
    """``column.to_pylist()``, each value Python cannot hold (``to_pylist`` raises for the
    whole column) as ``_unheld`` text: the others converted together as nulls stand in
    for those; a value near the edges of Python's range (a time zone may move it past)
    tried alone."""
    if isinstance(column, arrowmm.ChunkedArray):
        return [v for chunk in column.chunks for v in _values(chunk)]
    try:
        return column.to_pylist()
    except ArrowInvalid:
        if not isinstance(column.type, _TEMPORAL):
            raise
        stored = column.to_pylist(temporal="int")  # (damage raises here)
    (lo, hi), (outer_lo, outer_hi) = _held_bounds(column.type)
    far = [v is not None and not lo <= v <= hi for v in stored]
    # (what fails without those is no question of range, a date64 of part of a day say: raised)
    out = arrowmm.array([None if f else v for v, f in zip(stored, far)], column.type).to_pylist()
    texts = {}  # (a sentinel, 2**62 say, repeats: laid out once)
    for i in (i for i, f in enumerate(far) if f):
        v = stored[i]
        if outer_lo <= v <= outer_hi:
            try:
                out[i] = column.slice(i, 1).to_pylist()[0]
                continue
            except ArrowInvalid:
                pass
        text = out[i] = texts.get(v) or _unheld(column.type, v)
        texts[v] = text
    return out


def _rows(data) -> list:
    """``data.to_pylist()`` (a table or batch) for the commands that print values: a date,
    time, timestamp or duration Python cannot hold (before year 1, after 9999) is printed
    as text (``_unheld``) where ``to_pylist`` raised, naming ``temporal='int'``, which a
    command-line user cannot pass.  Any other error is raised as ``to_pylist`` raised it."""
    try:
        return data.to_pylist()
    except ArrowInvalid as exc:
        if not any(isinstance(f.type, _TEMPORAL) for f in data.schema):
            raise
        failure = exc
    try:
        columns = [_values(data.column(k)) for k in range(data.num_columns)]
    except ArrowInvalid:
        raise failure from None
    names = data.schema.names
    return [dict(zip(names, row)) for row in zip(*columns)]


def _json_line(obj) -> str:
    # (default=str: a value of a type this module does not know yet is its text, not a crash)
    return json.dumps(_jsonable(obj), ensure_ascii=False, default=str)


def _text(value) -> str:
    """A value as one cell of text (head, csv): empty for null, JSON for nested values."""
    if value is None:
        return ""
    if isinstance(value, (dict, list, tuple)):
        return _json_line(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    return str(value)


# -- schema -----------------------------------------------------------------------------------

def _field_json(field) -> dict:
    return {"name": field.name, "type": str(field.type), "nullable": field.nullable,
            "metadata": dict(field.metadata) if field.metadata else None}


def schema(path: str, as_json: bool = False) -> int:
    """The schema, as pyarrow prints it or (``as_json``) as JSON."""
    with reading(path), arrowmm.open(source(path)) as reader:
        s = reader.schema
        if as_json:
            print(json.dumps({"fields": [_field_json(f) for f in s],
                              "metadata": dict(s.metadata) if s.metadata else None}, indent=2))
        else:
            print(s)
    return 0


# -- head -------------------------------------------------------------------------------------

def _cell(value) -> str:
    text = " ".join(_text(value).split()) if value is not None else "null"
    return text if len(text) <= _CELL_WIDTH else text[:_CELL_WIDTH - 1] + "…"


def head(path: str, n: int = 10, columns=None, as_json: bool = False) -> int:
    """The first ``n`` rows as a readable table, or (``as_json``) as JSON lines."""
    if n < 0:
        raise ValueError(f"-n {n}: the number of rows must be >= 0")
    with reading(path), arrowmm.open(source(path), columns=_columns(columns)) as reader:
        names = reader.schema.names
        rows = _rows(reader.head(n))
    if as_json:
        for row in rows:
            print(_json_line(row))
        return 0
    cells = [[_cell(row[name]) for name in names] for row in rows]
    widths = [max([len(name)] + [len(r[k]) for r in cells]) for k, name in enumerate(names)]
    print(" | ".join(name.ljust(w) for name, w in zip(names, widths)).rstrip())
    print("-+-".join("-" * w for w in widths))
    for r in cells:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    print(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return 0


# -- stats ------------------------------------------------------------------------------------

def kind_of(reader) -> str:
    """What ``arrowmm.open`` opened: ``"file"``, ``"stream"`` or ``"feather_v1"``."""
    if isinstance(reader, arrowmm.FeatherV1Reader):
        return "feather_v1"
    return "file" if isinstance(reader, arrowmm.FileReader) else "stream"


#: how each kind of input is named in the commands' one-line summaries
KIND_NAMES = {"file": "Arrow IPC file", "stream": "Arrow IPC stream",
              "feather_v1": "Feather V1 file"}


class _ColumnFacts:
    """One column's facts gathered batch by batch: null count, decoded bytes, bounds (as
    stored) and where each batch's statistics came from (``sources``); ``known`` turns False
    at the first batch whose statistics neither the file nor a computation gave."""

    def __init__(self, name: str, dtype, type_name: str):
        self.name, self.dtype, self.type_name = name, dtype, type_name
        self.nulls, self.nbytes = 0, 0
        self.lows, self.highs = [], []
        self.nan = False
        self.sources = []
        self.known = self.bounded = True

    def add(self, entry: dict, source: str, bounds: bool = True) -> None:
        """Add one batch's statistics; ``bounds``: whether they give its min and max (or say
        there are none: every value null or NaN)."""
        self.nulls += int(entry["nulls"])
        if source not in self.sources:
            self.sources.append(source)
        if not bounds:
            self.bounded = False
            return
        self.nan = self.nan or bool(entry.get("nan"))
        if "min" in entry and "max" in entry:
            self.lows.append(_bound(entry["min"], self.dtype))
            self.highs.append(_bound(entry["max"], self.dtype))

    def facts(self, compute: bool) -> dict:
        out = {"name": self.name, "type": self.type_name,
               "nulls": self.nulls if self.known else None,
               "bytes": self.nbytes if compute else None,
               "from": "+".join(self.sources) if self.known and self.sources else None}
        if self.known and self.bounded:
            try:
                if self.lows:
                    out["min"] = _shown(min(self.lows), self.dtype)
                    out["max"] = _shown(max(self.highs), self.dtype)
                elif self.nan:  # (every value NaN or null: pyarrow's min_max gives NaN)
                    out["min"] = out["max"] = math.nan
            except TypeError:  # (a damaged document mixing kinds: no bounds rather than wrong ones)
                pass
        return out


def _storage(dtype):
    return dtype.storage_type if isinstance(dtype, arrowmm.ExtensionType) else dtype


def _bound(value, dtype):
    """A recorded bound as a value that compares as the column's values do ('inf' is stored
    as text)."""
    if isinstance(value, str) and isinstance(dtype, arrowmm.FloatType):
        return float(value)
    return value


def _shown(value, dtype):
    """A bound as the command shows it: temporal values as pyarrow prints them, booleans as
    booleans, decimals scaled; numbers, strings and (hex) binaries as they are."""
    if isinstance(dtype, (arrowmm.TimestampType, arrowmm.DateType, arrowmm.TimeType,
                          arrowmm.DurationType)):
        return format_stored(dtype, value)
    if isinstance(dtype, arrowmm.BoolType):
        return bool(value)
    if isinstance(dtype, arrowmm.DecimalType):
        return _scaled_decimal(int(value), dtype.scale)
    return value


def _scaled_decimal(unscaled: int, scale: int) -> decimal.Decimal:
    """``unscaled`` * 10**-``scale`` exactly, every digit kept (``Decimal.scaleb`` rounds to the
    context's 28 digits: a decimal128(38, s) bound would show as another number)."""
    digits = tuple(int(c) for c in str(abs(unscaled)))
    return decimal.Decimal((int(unscaled < 0), digits, -scale))


def _recorded(entry, rows: int):
    """A batch's recorded statistics of one column when they hold a null count that fits the
    batch (None when not: absent, or a damaged document)."""
    if not isinstance(entry, dict) or isinstance(entry.get("nulls"), bool) or \
            not isinstance(entry.get("nulls"), int) or not 0 <= entry["nulls"] <= rows:
        return None
    return entry


def _has_bounds(entry: dict, rows: int, dtype) -> bool:
    """Whether recorded statistics give the batch's exact min and max, or say it has none
    (every value null or NaN).  Not so: a string maximum too long to keep (left out), or a
    minimum cut to ``MAX_BOUND_BYTES`` (a bound, not the value)."""
    if "min" not in entry and "max" not in entry:
        return entry["nulls"] == rows or bool(entry.get("nan"))
    if "min" not in entry or "max" not in entry or not (
            _fits(entry["min"], dtype) and _fits(entry["max"], dtype)):
        return False
    if isinstance(dtype, (arrowmm.BinaryType, arrowmm.BinaryViewType, arrowmm.FixedSizeBinaryType)):
        utf8 = isinstance(dtype, (arrowmm.BinaryType, arrowmm.BinaryViewType)) and dtype.utf8
        # (a cut UTF-8 minimum ends on a character boundary: up to 3 bytes short)
        stored = len(entry["min"].encode()) + 3 if utf8 else len(entry["min"]) // 2
        return stored < MAX_BOUND_BYTES
    return True


def _fits(value, dtype) -> bool:
    """Whether a recorded bound has the form ``arrowmm.ipc.core.statistics`` stores for ``dtype``
    (a damaged document's bounds are not shown)."""
    if isinstance(dtype, (arrowmm.BinaryType, arrowmm.BinaryViewType, arrowmm.FixedSizeBinaryType)):
        return isinstance(value, str)
    if isinstance(dtype, arrowmm.FloatType):
        return value in ("inf", "-inf") or (isinstance(value, (int, float))
                                            and not isinstance(value, bool))
    return isinstance(value, int) and not isinstance(value, bool)


def _file_recorded(reader, batches: int):
    """Per batch, the column statistics a file's footer records (None: it records none)."""
    doc = decode_file_statistics(reader.footer.metadata, lambda: reader.batch_metadata(0)
                                 if batches else None, reader.footer.record_batches,
                                 reader.schema)
    if doc and isinstance(doc.get("batches"), list) and len(doc["batches"]) == batches:
        return [b.get("columns") if isinstance(b, dict) else None for b in doc["batches"]]
    return None


def recorded_statistics(reader, kind: str):
    """``entry(i, batch)``: the statistics recorded for a reader's batch ``i`` (its file's
    footer entry, or a stream batch's own document; None when there are none that bind)."""
    if kind == "file":
        n = reader.num_record_batches
        doc = decode_file_statistics(reader.footer.metadata, lambda: reader.batch_metadata(0)
                                     if n else None, reader.footer.record_batches,
                                     reader.schema)
        entries = doc.get("batches") if doc else None
        if not isinstance(entries, list) or len(entries) != n:
            return lambda i, batch: None
        return lambda i, batch: entries[i]
    return lambda i, batch: decode_statistics(batch.metadata, batch.schema)


def _batch_column_stats(batch):
    doc = decode_statistics(batch.metadata, batch.schema)
    return doc.get("columns") if doc else None


def stats(path: str, as_json: bool = False, compute: bool = True) -> int:
    """Rows, batches, size and per column: type, null count, decoded bytes, min and max, and
    where they came from.

    Null counts, minima and maxima come from the statistics the file records (an IPC file's
    footer, a stream's batch messages: ``from`` says ``footer`` / ``messages``) and, for
    every batch and column they do not cover, are computed from the values (``computed``),
    one batch at a time, a column at a time: as pyarrow.compute's ``min_max`` and
    ``null_count`` (NaN left out of float bounds).  ``compute=False`` decodes nothing and
    shows only what is recorded.  A column's bytes are its buffers' as decoded (uncompressed);
    ``compression_ratio`` is all columns' bytes over the file's size.  Temporal bounds are
    shown as pyarrow prints them, decimals scaled, binaries in hex; nested and dictionary
    columns have a null count only.
    """
    src = source(path)
    size = os.path.getsize(path) if src is path and os.path.isfile(path) else None
    with reading(path), arrowmm.open(src) as reader:
        kind = kind_of(reader)
        fields = list(reader.schema)
        columns = [_ColumnFacts(f.name, _storage(f.type), str(f.type)) for f in fields]
        described = [supports_statistics(c.dtype) for c in columns]
        # (statistics are keyed by name: those recorded for a name two columns share are
        # not theirs to show, an older writer having stored one column's under both)
        own = unique_names([c.name for c in columns])
        total = reader.num_record_batches if kind != "stream" else None
        recorded = _file_recorded(reader, total) if kind == "file" else None
        where = "footer" if kind == "file" else "messages"
        rows = batches = 0
        with bar(total, unit="batches", desc="stats") as progress:
            for i, batch in enumerate(reader):
                doc = recorded[i] if recorded is not None else \
                    _batch_column_stats(batch) if kind == "stream" else None
                for k, facts in enumerate(columns):
                    entry = _recorded(doc.get(facts.name), batch.num_rows) \
                        if described[k] and facts.name in own and isinstance(doc, dict) \
                        else None
                    bounds = entry is not None and _has_bounds(entry, batch.num_rows, facts.dtype)
                    if not compute:
                        if entry is None:
                            facts.known = False
                        else:
                            facts.add(entry, where, bounds)
                        continue
                    column = batch.storage_column(k)
                    facts.nbytes += sum(b.size for b in column.buffers() if b is not None)
                    if bounds:
                        facts.add(entry, where)
                    else:
                        try:
                            computed = column_statistics(column, max_bound_bytes=None)
                        except ArrowInvalid as exc:
                            raise ArrowInvalid(f"record batch {i}, column {facts.name!r}: "
                                               f"{exc}") from None
                        facts.add(computed or {"nulls": int(column.null_count)}, "computed",
                                  bounds=described[k])
                    del column
                batches += 1
                rows += batch.num_rows
                del batch  # (its decoded columns go with it: one batch in memory at a time)
                progress.update(1)
    cols = [c.facts(compute) for c in columns]
    data_bytes = sum(c["bytes"] for c in cols) if compute else None
    facts = {
        "path": path, "format": kind, "rows": rows, "batches": batches, "file_bytes": size,
        "data_bytes": data_bytes,
        "compression_ratio": round(data_bytes / size, 3) if size and data_bytes else None,
        "columns": cols,
    }
    if as_json:
        print(json.dumps(_jsonable(facts), indent=2))
        return 0
    print(f"{path}: {KIND_NAMES[kind]}, {rows:,} row{'s' * (rows != 1)} in {batches:,} "
          f"batch{'es' * (batches != 1)}")
    if data_bytes is None:
        print(f"{size:,} bytes on disk (--no-compute: only what the file records)"
              if size is not None else "(--no-compute: only what the file records)")
    elif size is not None:
        ratio = f" (ratio {facts['compression_ratio']})" if facts["compression_ratio"] else ""
        print(f"{size:,} bytes on disk, {data_bytes:,} bytes of column data{ratio}")
    else:
        print(f"{data_bytes:,} bytes of column data")
    table = [("column", "type", "nulls", "bytes", "from", "min", "max")]
    for c in cols:
        table.append((c["name"], c["type"], _count(c["nulls"]), _count(c["bytes"]),
                      c["from"] or "", _bound_cell(c, "min"), _bound_cell(c, "max")))
    widths = [max(len(r[k]) for r in table) for k in range(len(table[0]))]
    for r in table:
        print("  ".join(v.rjust(w) if k in (2, 3) else v.ljust(w)
                        for k, (v, w) in enumerate(zip(r, widths))).rstrip())
    return 0


def _count(n) -> str:
    return "" if n is None else f"{n:,}"


def _bound_cell(column: dict, key: str) -> str:
    if key not in column:
        return ""
    value = column[key]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return _cell(value)


# -- cat and convert --------------------------------------------------------------------------

def _rebatched(batches, batch_rows):
    """``batches``, each cut into slices of at most ``batch_rows`` rows (None: as they are)."""
    for batch in batches:
        if batch_rows is None or batch.num_rows <= batch_rows:
            yield batch
            continue
        for start in range(0, batch.num_rows, batch_rows):
            yield batch.slice(start, batch_rows)


def _total_rows(reader):
    """The rows a reader will give, when known without reading (a file), else None."""
    return reader.num_rows if kind_of(reader) != "stream" else None


def _with_progress(reader, desc):
    """The batches of ``reader``, counted on a progress bar (on a terminal only)."""
    with bar(_total_rows(reader), desc=desc) as progress:
        for batch in reader:
            yield batch
            progress.update(batch.num_rows)


def _write_ipc(reader, sink, fmt: str, compression=None, batch_rows=None,
               statistics: bool = False, deltas: bool = False, unify: bool = False) -> int:
    """Write every batch of ``reader`` to ``sink``; the rows written (counted here: a FIFO or
    /dev/null cannot be read back to count them).  ``unify``: the batches are held, then
    written with one dictionary per id (``write_table``)."""
    new = arrowmm.new_file if fmt == "file" else arrowmm.new_stream
    rows = 0
    with new(sink, reader.schema, compression=compression, statistics=statistics,
             emit_dictionary_deltas=deltas, unify_dictionaries=unify) as writer:
        batches = _rebatched(_with_progress(reader, "writing"), batch_rows)
        if unify:
            batches = list(batches)
            writer.write_table(batches)
            return sum(batch.num_rows for batch in batches)
        for batch in batches:
            writer.write(batch)
            rows += batch.num_rows
    return rows


def _convert_dictionary_advice(exc: ArrowInvalid, fmt: str) -> ArrowInvalid:
    """The file writer's refusal of a dictionary that changes between batches, with what to do
    in ``convert``'s options (the writer's advice names Python keyword arguments)."""
    what, sep, advice = str(exc).partition(": the IPC file format holds one dictionary per id; ")
    if fmt != "file" or not sep:
        return exc
    stream = "--format stream keeps them as they are"
    if "not unified" in advice:  # (below the top level, or holding dictionaries)
        todo = f"such dictionaries are not merged: {stream}"
    else:
        todo = (f"--unify-dictionaries merges the batches' dictionaries into one (every batch "
                f"held until the end), or {stream}")
        if what.endswith(" grew"):
            todo = (f"--deltas writes a dictionary that only grew as deltas (pyarrow reads "
                    f"them, polars not), {todo}")
    return ArrowInvalid(f"{what}: an IPC file holds one dictionary per id; {todo}")


def cat(path: str, to: str, columns=None) -> int:
    """Every row to standard output as CSV, JSON lines, an IPC file or an IPC stream."""
    out = sys.stdout
    with reading(path), arrowmm.open(source(path), columns=_columns(columns)) as reader:
        if to in ("arrow", "arrows"):
            out.flush()
            _write_ipc(reader, out.buffer, "file" if to == "arrow" else "stream")
            out.buffer.flush()
            return 0
        names = reader.schema.names
        writer = csv.writer(out, lineterminator="\n") if to == "csv" else None
        if writer is not None:
            writer.writerow(names)
        for i, batch in enumerate(_with_progress(reader, "cat")):
            try:
                rows = _rows(batch)
            except ArrowInvalid as exc:  # (a lone batch calls itself batch 0: name it as head does)
                raise_damage_named(exc, [batch], range(batch.num_columns), i)
                raise
            for row in rows:
                if writer is not None:
                    writer.writerow([_text(row[name]) for name in names])
                else:
                    out.write(_json_line(row) + "\n")
    return 0


def _output_format(dst: str, fmt) -> str:
    if fmt:
        return fmt
    return "stream" if dst.endswith((".arrows", ".stream")) else "file"


def convert(src: str, dst: str, compression=None, columns=None, fmt=None, batch_rows=None,
            statistics: bool = False, deltas: bool = False, unify: bool = False) -> int:
    """Re-write ``src`` as an IPC file or stream with another compression, columns or batching.

    ``statistics``: record per-batch statistics (``arrowmm.ipc.core.statistics``).  Asked for
    alone, from an IPC file to an IPC file, the batches are not re-written at all: every
    message is copied byte for byte under a footer with the statistics added
    (``add_statistics``); with other changes, or from a stream or a Feather V1 file, the
    writer records them as it writes.  ``dst`` may be ``src``: replaced atomically.

    ``deltas`` / ``unify``: a dictionary that changes between batches (a stream may replace it
    or send deltas; a file holds one per id) is written as deltas where it only grew / merged
    with the others into one dictionary (the batches held until the end).
    """
    if batch_rows is not None and batch_rows <= 0:
        raise ValueError(f"--batch-rows {batch_rows}: must be > 0")
    codec = None if compression in (None, "none") else compression
    fmt = _output_format(dst, fmt)
    if statistics and not (deltas or unify) and \
            _keeps_messages(src, dst, compression, columns, fmt, batch_rows):
        with reading(src):
            with arrowmm.open_file(src) as counted:  # (its footer only: the bar's total)
                n, batches = counted.num_rows, counted.num_record_batches
            with bar(batches, unit="batches", desc="statistics") as progress:
                add_statistics(src, dst, in_place=_same_file(src, dst),
                               progress=lambda done: progress.update(done - progress.n))
        print(f"wrote {dst}: Arrow IPC file, {n:,} rows in {batches:,} batch"
              f"{'es' * (batches != 1)}, statistics added (the batches copied as they are)",
              file=sys.stderr)
        return 0
    with reading(src), arrowmm.open(source(src), columns=_columns(columns)) as reader:
        try:
            if dst == "-":
                sys.stdout.flush()
                try:
                    _write_ipc(reader, sys.stdout.buffer, fmt, codec, batch_rows, statistics,
                               deltas, unify)
                    sys.stdout.buffer.flush()
                except OSError as exc:  # (a full disk behind '>': say it was the standard output)
                    raise named(exc, "<stdout>")
                return 0
            n = _write_ipc(reader, derived_path(dst, src), fmt, codec, batch_rows, statistics,
                           deltas, unify)
        except ArrowInvalid as exc:
            advised = _convert_dictionary_advice(exc, fmt)
            if advised is exc:
                raise
            raise advised from exc
    print(f"wrote {dst}: Arrow IPC {fmt}, {n:,} rows"
          f"{f', {codec}-compressed' if codec else ''}"
          f"{', with statistics' if statistics else ''}", file=sys.stderr)
    return 0


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _keeps_messages(src: str, dst: str, compression, columns, fmt: str, batch_rows) -> bool:
    """Whether ``convert --statistics`` can copy ``src``'s messages as they are: nothing else
    asked for, an IPC file (by its magic) of metadata V5 (a V4 file is written anew as V5:
    its readers refuse the stamp statistics need) written to an IPC file path."""
    if compression is not None or columns is not None or batch_rows is not None or \
            fmt != "file" or "-" in (src, dst) or not os.path.isfile(src):
        return False
    with open(src, "rb") as f:
        if f.read(6) != MAGIC:
            return False
    try:
        with arrowmm.open_file(src) as reader:
            return reader.version >= MetadataVersion.V5
    except ArrowError:
        return True  # (add_statistics says what is wrong with it)


# -- append -----------------------------------------------------------------------------------

def append(dst: str, sources, compression=None, deltas: bool = False, lock_timeout=None,
           as_json: bool = False) -> int:
    """Add every batch of each source (IPC file, stream, ``-``) to the IPC file ``dst``, all in
    one append: a failure (a source with another schema, unreadable) leaves ``dst`` as it was."""
    codec = None if compression in (None, "none") else compression
    if sources.count("-") > 1:
        raise ValueError("'-' (standard input) can be given once")
    added = rows_added = 0
    with reading(dst), arrowmm.append_file(dst, compression=codec, emit_dictionary_deltas=deltas,
                                           lock_timeout=lock_timeout) as writer:
        cut = writer.unfinished_bytes
        for src in sources:
            with reading(src), arrowmm.open(source(src)) as reader:
                name = "stdin" if src == "-" else os.path.basename(src)
                for batch in _with_progress(reader, f"append {name}"):
                    writer.write(batch)
                    added += 1
                    rows_added += batch.num_rows
        existing = writer.existing_batches
    with reading(dst), arrowmm.open_file(dst) as check:
        facts = {"path": dst, "sources": list(sources), "batches_added": added,
                 "rows_added": rows_added, "batches": check.num_record_batches,
                 "rows": check.num_rows, "batches_before": existing,
                 "unfinished_bytes_cut": cut, "compression": codec}
    if as_json:
        print(json.dumps(facts, indent=2))
    else:
        print(f"appended {added:,} batch{'es' * (added != 1)} ({rows_added:,} rows) to {dst}: "
              f"now {facts['batches']:,} batches, {facts['rows']:,} rows"
              + (f" (cut {cut:,} bytes an interrupted append left)" if cut else ""))
    return 0


# -- the parsers ------------------------------------------------------------------------------

def _parser(sub, name: str, help: str, example: str):
    return sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                          epilog=f"example: {example}",
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def add_parsers(sub) -> None:
    """Add the commands' subparsers to the ``arrowmm`` parser's ``sub``."""
    p = _parser(sub, "schema", "print the schema (as pyarrow prints it, or --json)",
                "arrowmm schema data.arrow --json")
    p.add_argument("path", help=_SOURCE_HELP)
    p.add_argument("--json", action="store_true", help="fields (name, type, nullable, metadata) as JSON")

    p = _parser(sub, "head", "print the first rows as a table (or --json: JSON lines)",
                "arrowmm head data.arrow -n 5 --columns id,name")
    p.add_argument("path", help=_SOURCE_HELP)
    p.add_argument("-n", type=int, default=10, metavar="N", help="rows to print (default 10)")
    p.add_argument("--columns", metavar="A,B", help="only these columns, in this order")
    p.add_argument("--json", action="store_true", help="one JSON object per row")

    p = _parser(sub, "stats", "rows, batches, size and per column: type, nulls, bytes, "
                              "min/max (recorded in the file, else computed) and where they "
                              "came from",
                "arrowmm stats data.arrow --json")
    p.add_argument("path", help=_SOURCE_HELP)
    p.add_argument("--json", action="store_true", help="the same facts as JSON")
    p.add_argument("--no-compute", action="store_true",
                   help="decode nothing: only the statistics the file records (null counts, "
                        "min and max; blank where it records none)")

    p = _parser(sub, "cat", "write every row to standard output as CSV, JSON lines, "
                            "an IPC file or an IPC stream",
                "arrowmm cat data.arrow --to csv > data.csv")
    p.add_argument("path", help=_SOURCE_HELP)
    p.add_argument("--to", required=True, choices=("csv", "jsonl", "arrow", "arrows"),
                   help="output format (arrow: IPC file, arrows: IPC stream)")
    p.add_argument("--columns", metavar="A,B", help="only these columns, in this order")

    p = _parser(sub, "convert", "re-write an IPC file, IPC stream or Feather V1 file with "
                                "another compression, format, columns or batch size, or add "
                                "statistics",
                "arrowmm convert big.arrow small.arrow --compression zstd\n"
                "         arrowmm convert pyarrow.arrow indexed.arrow --statistics")
    p.add_argument("src", help=_SOURCE_HELP)
    p.add_argument("dst", help="output path ('-' for standard output); written through a "
                               "temporary renamed into place, so it may be SRC itself")
    p.add_argument("--compression", choices=(*CODECS, "none"), default=None,
                   help="buffer compression of the output (default none; with --statistics "
                        "alone, the input's batches are kept as they are)")
    p.add_argument("--columns", metavar="A,B", help="only these columns, in this order")
    p.add_argument("--format", choices=("file", "stream"), default=None,
                   help="output format (default: stream for .arrows/.stream, else file)")
    p.add_argument("--batch-rows", type=int, default=None, metavar="N",
                   help="cut larger batches into batches of at most N rows")
    p.add_argument("--statistics", action="store_true",
                   help="record per-batch min/max/null counts, which dataset filters use to "
                        "skip batches; alone, from an IPC file to an IPC file, every batch is "
                        "copied byte for byte and only the footer is new")
    p.add_argument("--deltas", action="store_true",
                   help="write a dictionary that grew between batches as a delta, as a stream "
                        "may send it (pyarrow reads it, polars not); a file holds one "
                        "dictionary per id")
    p.add_argument("--unify-dictionaries", action="store_true",
                   help="give each dictionary column one dictionary merging those of all its "
                        "batches (for a file of a stream that replaces them; every batch is "
                        "held until the end)")


    p = _parser(sub, "append", "add the record batches of IPC files or streams to an IPC "
                               "file, in place and crash-safely (its old bytes are not touched)",
                "arrowmm append log.arrow today.arrows more.arrow --compression zstd")
    p.add_argument("dst", help="existing IPC file to add to")
    p.add_argument("sources", nargs="+", metavar="SRC",
                   help="IPC files or streams with DST's schema ('-' for standard input)")
    p.add_argument("--compression", choices=(*CODECS, "none"), default="none",
                   help="buffer compression of the added batches (default none)")
    p.add_argument("--deltas", action="store_true",
                   help="write a dictionary that grew as a delta (pyarrow reads it, polars not)")
    p.add_argument("--lock-timeout", type=float, default=None, metavar="SECONDS",
                   help="give up when another append holds the file this long (default: wait)")
    p.add_argument("--json", action="store_true", help="what was added, as JSON")


def run(args) -> int:
    """Run one of ``COMMANDS`` from parsed arguments."""
    if args.command == "schema":
        return schema(args.path, args.json)
    if args.command == "head":
        return head(args.path, args.n, args.columns, args.json)
    if args.command == "stats":
        return stats(args.path, args.json, compute=not args.no_compute)
    if args.command == "cat":
        return cat(args.path, args.to, args.columns)
    if args.command == "append":
        return append(args.dst, args.sources, args.compression, args.deltas, args.lock_timeout,
                      args.json)
    return convert(args.src, args.dst, args.compression, args.columns, args.format,
                   args.batch_rows, args.statistics, args.deltas, args.unify_dictionaries)
