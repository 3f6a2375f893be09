"""The commands on files: ``schema``, ``head``, ``stats``, ``cat``, ``convert`` and ``append``.

Each takes an IPC file, an IPC stream or ``-`` (standard input); errors propagate to
``main()``, which prints them as one line and exits 1.
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

import arrowmm
from ..errors import ArrowError
from ..ipc.compression import CODECS
from ..ipc.statistics import STATISTICS_KEY, decode_statistics
from .progress import bar

__all__ = ["add_parsers", "run", "COMMANDS"]

COMMANDS = ("schema", "head", "stats", "cat", "convert", "append")
_SOURCE_HELP = "IPC file or stream ('-' for standard input)"
_CELL_WIDTH = 40  # head: longer values are cut to this many characters


def source(path: str):
    """What ``arrowmm.open`` reads for the command-line PATH (``-``: standard input)."""
    if path != "-":
        return path
    if sys.stdin is None:  # (started with standard input closed: `arrowmm info - <&-`)
        raise ValueError("'-': standard input is closed")
    return sys.stdin.buffer


@contextlib.contextmanager
def reading(path: str):
    """Errors raised while ``path`` is read name it (the CLI prints one line, 'PATH: why'),
    unless their message begins with it already (most errors of the open itself do)."""
    try:
        yield
    except ArrowError as exc:
        if getattr(exc, "_names_its_input", False):  # (an inner input's error, named there)
            raise
        name = "<stdin>" if path == "-" else path  # (as the readers call it)
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
    seconds, decimals as strings, binaries base64-encoded."""
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _json_line(obj) -> str:
    return json.dumps(_jsonable(obj), ensure_ascii=False)


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
        rows = reader.head(n).to_pylist()
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

def _bound(value, dtype_text: str):
    """A statistics bound as a number where the column is a float ('inf' is stored as text)."""
    if isinstance(value, str) and dtype_text.startswith(("float", "double", "halffloat")):
        return float(value)
    return value


def _merge_bounds(docs, names, types):
    """Per column {"min", "max"} over every batch's statistics, or nothing for a column some
    batch has no bound for (not recorded, or a string maximum too long to keep)."""
    out = {}
    for name, dtype in zip(names, types):
        lows, highs, known = [], [], True
        for doc in docs:
            entry = (doc or {}).get(name) if isinstance(doc, dict) else None
            if not isinstance(entry, dict):
                known = False
                break
            if "min" not in entry and "max" not in entry:
                continue  # every value of that batch is null
            if "min" not in entry or "max" not in entry:
                known = False
                break
            lows.append(_bound(entry["min"], dtype))
            highs.append(_bound(entry["max"], dtype))
        if known and lows:
            try:
                out[name] = {"min": min(lows), "max": max(highs)}
            except TypeError:  # (a damaged document mixing kinds: no bounds rather than wrong ones)
                pass
    return out


def _batch_column_stats(batch):
    doc = decode_statistics((batch.metadata or {}).get(STATISTICS_KEY)) if batch.metadata else None
    return doc.get("columns") if doc else None


def stats(path: str, as_json: bool = False) -> int:
    """Rows, batches, size and per column: type, null count, bytes, min/max when recorded.

    A column's bytes are its buffers' as decoded (uncompressed); ``compression_ratio`` is all
    columns' bytes over the file's size.  Min and max come from the statistics arrowmm's
    writers record (``statistics=True``), as stored: physical values (timestamps as integers
    in their unit, decimals unscaled, binaries in hex).
    """
    src = source(path)
    size = os.path.getsize(path) if src is path and os.path.isfile(path) else None
    with reading(path), arrowmm.open(src) as reader:
        kind = "file" if isinstance(reader, arrowmm.FileReader) else "stream"
        names = reader.schema.names
        types = [str(f.type) for f in reader.schema]
        nulls, nbytes = [0] * len(names), [0] * len(names)
        rows = batches = 0
        per_batch = []
        for batch in reader:
            batches += 1
            rows += batch.num_rows
            for k, column in enumerate(batch.storage_columns):
                nulls[k] += int(column.null_count)
                nbytes[k] += sum(b.size for b in column.buffers() if b is not None)
            if kind == "stream":
                per_batch.append(_batch_column_stats(batch))
        if kind == "file":
            doc = decode_statistics((reader.footer.metadata or {}).get(STATISTICS_KEY))
            if doc and isinstance(doc.get("batches"), list) and len(doc["batches"]) == batches:
                per_batch = [b.get("columns") if isinstance(b, dict) else None
                             for b in doc["batches"]]
            else:
                per_batch = [None] * batches
    bounds = _merge_bounds(per_batch, names, types) if per_batch else {}
    data_bytes = sum(nbytes)
    facts = {
        "path": path, "format": kind, "rows": rows, "batches": batches, "file_bytes": size,
        "data_bytes": data_bytes,
        "compression_ratio": round(data_bytes / size, 3) if size and data_bytes else None,
        "columns": [{"name": name, "type": dtype, "nulls": nulls[k], "bytes": nbytes[k],
                     **bounds.get(name, {})}
                    for k, (name, dtype) in enumerate(zip(names, types))],
    }
    if as_json:
        print(json.dumps(_jsonable(facts), indent=2))
        return 0
    print(f"{path}: Arrow IPC {kind}, {rows:,} row{'s' * (rows != 1)} in {batches:,} "
          f"batch{'es' * (batches != 1)}")
    if size is not None:
        ratio = f" (ratio {facts['compression_ratio']})" if facts["compression_ratio"] else ""
        print(f"{size:,} bytes on disk, {data_bytes:,} bytes of column data{ratio}")
    else:
        print(f"{data_bytes:,} bytes of column data")
    table = [("column", "type", "nulls", "bytes", "min", "max")]
    for c in facts["columns"]:
        table.append((c["name"], c["type"], f"{c['nulls']:,}", f"{c['bytes']:,}",
                      _cell(c["min"]) if "min" in c else "", _cell(c["max"]) if "max" in c else ""))
    widths = [max(len(r[k]) for r in table) for k in range(len(table[0]))]
    for r in table:
        print("  ".join(v.rjust(w) if k in (2, 3) else v.ljust(w)
                        for k, (v, w) in enumerate(zip(r, widths))).rstrip())
    return 0


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
    return reader.num_rows if isinstance(reader, arrowmm.FileReader) else None


def _with_progress(reader, desc):
    """The batches of ``reader``, counted on a progress bar (on a terminal only)."""
    with bar(_total_rows(reader), desc=desc) as progress:
        for batch in reader:
            yield batch
            progress.update(batch.num_rows)


def _write_ipc(reader, sink, fmt: str, compression=None, batch_rows=None) -> None:
    new = arrowmm.new_file if fmt == "file" else arrowmm.new_stream
    with new(sink, reader.schema, compression=compression) as writer:
        for batch in _rebatched(_with_progress(reader, "writing"), batch_rows):
            writer.write(batch)


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
        for batch in _with_progress(reader, "cat"):
            for row in batch.to_pylist():
                if writer is not None:
                    writer.writerow([_text(row[name]) for name in names])
                else:
                    out.write(_json_line(row) + "\n")
    return 0


def _output_format(dst: str, fmt) -> str:
    if fmt:
        return fmt
    return "stream" if dst.endswith((".arrows", ".stream")) else "file"


def convert(src: str, dst: str, compression=None, columns=None, fmt=None, batch_rows=None) -> int:
    """Re-write ``src`` as an IPC file or stream with another compression, columns or batching."""
    if batch_rows is not None and batch_rows <= 0:
        raise ValueError(f"--batch-rows {batch_rows}: must be > 0")
    codec = None if compression in (None, "none") else compression
    fmt = _output_format(dst, fmt)
    with reading(src), arrowmm.open(source(src), columns=_columns(columns)) as reader:
        if dst == "-":
            sys.stdout.flush()
            _write_ipc(reader, sys.stdout.buffer, fmt, codec, batch_rows)
            sys.stdout.buffer.flush()
            return 0
        _write_ipc(reader, dst, fmt, codec, batch_rows)
        with reading(dst), arrowmm.open(dst) as check:
            n = check.num_rows if fmt == "file" else sum(b.num_rows for b in check)
    print(f"wrote {dst}: Arrow IPC {fmt}, {n:,} rows"
          f"{f', {codec}-compressed' if codec else ''}", file=sys.stderr)
    return 0


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
                              "min/max (when the writer recorded statistics)",
                "arrowmm stats data.arrow --json")
    p.add_argument("path", help=_SOURCE_HELP)
    p.add_argument("--json", action="store_true", help="the same facts as JSON")

    p = _parser(sub, "cat", "write every row to standard output as CSV, JSON lines, "
                            "an IPC file or an IPC stream",
                "arrowmm cat data.arrow --to csv > data.csv")
    p.add_argument("path", help=_SOURCE_HELP)
    p.add_argument("--to", required=True, choices=("csv", "jsonl", "arrow", "arrows"),
                   help="output format (arrow: IPC file, arrows: IPC stream)")
    p.add_argument("--columns", metavar="A,B", help="only these columns, in this order")

    p = _parser(sub, "convert", "re-write an IPC file or stream with another compression, "
                                "format, columns or batch size",
                "arrowmm convert big.arrow small.arrow --compression zstd")
    p.add_argument("src", help=_SOURCE_HELP)
    p.add_argument("dst", help="output path ('-' for standard output); written through a "
                               "temporary renamed into place")
    p.add_argument("--compression", choices=(*CODECS, "none"), default="none",
                   help="buffer compression of the output (default none)")
    p.add_argument("--columns", metavar="A,B", help="only these columns, in this order")
    p.add_argument("--format", choices=("file", "stream"), default=None,
                   help="output format (default: stream for .arrows/.stream, else file)")
    p.add_argument("--batch-rows", type=int, default=None, metavar="N",
                   help="cut larger batches into batches of at most N rows")


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
        return stats(args.path, args.json)
    if args.command == "cat":
        return cat(args.path, args.to, args.columns)
    if args.command == "append":
        return append(args.dst, args.sources, args.compression, args.deltas, args.lock_timeout,
                      args.json)
    return convert(args.src, args.dst, args.compression, args.columns, args.format,
                   args.batch_rows)
