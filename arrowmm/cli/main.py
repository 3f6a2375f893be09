"""The ``arrowmm`` command: ``demo`` (the Spark pipeline; ``--local`` without Spark),
``info PATH``, ``validate PATH``, ``repair SRC DST``, ``schema PATH``, ``head PATH``,
``stats PATH``, ``cat PATH --to FORMAT``, ``convert IN OUT``, ``append DST SRC...`` (see
``arrowmm.cli.files``), ``shm ls`` / ``shm rm NAME`` / ``shm rm --stale`` (shared-memory
segments).  ``--json`` on every command that prints facts; progress bars on standard error
when it is a terminal (``arrowmm.cli.progress``); ``arrowmm COMMAND --help`` shows an example.

Exit codes: 0 success; 1 the input is missing, unreadable or not valid Arrow IPC (one line
on stderr says which file and why); 2 wrong usage (argparse); 3 something the command needs
is not installed (pyspark, Java); 130, 143, 129 stopped by SIGINT, SIGTERM, SIGHUP (an
unfinished output removed).  ``-`` as PATH reads standard input.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import mmap
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from .. import shm
from . import files
from .progress import bar
from .. import __version__
from .._startup import command_started
from ..errors import ArrowError, ArrowInvalid
from ..ipc.core.files import named
from ..ipc.core.statistics import statistics_mismatch

__all__ = ["main", "EXIT_OK", "EXIT_INVALID", "EXIT_USAGE", "EXIT_MISSING"]

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_MISSING = 0, 1, 2, 3

JAVA_HELP = ("install a Java 17 or 21 runtime and put 'java' on PATH or set JAVA_HOME "
             "(Debian/Ubuntu: apt-get install openjdk-17-jre-headless; macOS: brew install "
             "openjdk@17; others: https://adoptium.net)")


def _problem(exc: BaseException) -> str:
    """One line for an error: 'path: reason' for OSErrors, the message for arrowmm's."""
    if isinstance(exc, OSError) and exc.strerror:
        where = exc.filename
        if where is None:
            return exc.strerror
        return f"{where if where not in ('', b'') else repr(where)}: {exc.strerror}"
    return " ".join(str(exc).split()) or type(exc).__name__


def _java_problem() -> str:
    """Why Spark cannot start here ('' when a Java 17+ runtime is found)."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        return ("no Java runtime found" + (f" (JAVA_HOME={home} has no bin/java)" if home else
                                           " (no 'java' on PATH, JAVA_HOME unset)"))
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{java} -version failed: {exc}"
    import re
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if match:
        major = int(match.group(1)) if match.group(1) != "1" else int(match.group(2) or 0)
        if major < 17:
            return f"{java} is Java {major}; Spark 4 needs Java 17 or later"
    return ""


class _Workspace:
    """The demo's output folder: created if needed; afterwards what the demo wrote is removed
    (and the folder, when the demo made it) unless ``keep``."""

    def __init__(self, folder, keep: bool):
        self.made = folder is None or not os.path.isdir(folder)
        self.folder = os.path.abspath(folder) if folder else tempfile.mkdtemp(prefix="arrowmm-demo-")
        os.makedirs(self.folder, exist_ok=True)
        self.before = set(os.listdir(self.folder))
        self.keep = keep

    def close(self) -> str:
        if self.keep:
            return f"the files are kept in {self.folder}"
        if self.made:
            shutil.rmtree(self.folder, ignore_errors=True)
        else:
            for name in set(os.listdir(self.folder)) - self.before:
                path = os.path.join(self.folder, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
        return f"removed what the demo wrote in {self.folder} (--keep keeps it)"


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} GB"


def _fmt_time(s: float) -> str:
    return f"{s * 1e6:,.0f} µs" if s < 1e-3 else f"{s * 1e3:,.1f} ms" if s < 1 else f"{s:,.2f} s"


def _sample_batch(rng, rows: int, start: int):
    import arrowmm
    names = np.array(["alpha", "beta", "gamma", "delta", "epsilon"])
    return arrowmm.record_batch({
        "id": np.arange(start, start + rows, dtype=np.int64),
        "x": rng.standard_normal(rows),
        "y": rng.random(rows).astype(np.float32),
        "when": (np.datetime64("2026-01-01T00:00:00", "us")
                 + rng.integers(0, 86_400_000_000, rows).astype("timedelta64[us]")),
        "label": names[rng.integers(0, len(names), rows)].tolist(),
    })


def demo(batches: int = 200, rows: int = 50_000, folder=None) -> int:
    """Write a sample file with arrowmm, then open it lazily and read it zero-copy."""
    import arrowmm
    out = print
    rng = np.random.default_rng(42)
    folder = folder or tempfile.mkdtemp(prefix="arrowmm-demo-")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "demo.arrow")
    out("arrowmm demo: Arrow IPC read straight out of a memory map\n")

    t0 = time.perf_counter()
    first = _sample_batch(rng, rows, 0)
    with arrowmm.new_file(path, first.schema) as writer:
        writer.write(first)
        for i in range(1, batches):
            writer.write(_sample_batch(rng, rows, i * rows))
    t_write = time.perf_counter() - t0
    size = os.path.getsize(path)
    out(f"1. wrote {path}")
    out(f"   {batches} batches x {rows:,} rows, {first.num_columns} columns, {_fmt_bytes(size)} "
        f"in {_fmt_time(t_write)} (arrowmm's writer; temp file + rename, so never half-written)")

    t0 = time.perf_counter()
    reader = arrowmm.open_file(path)
    t_open = time.perf_counter() - t0
    out(f"2. opened in {_fmt_time(t_open)}: read the footer and schema only "
        f"({reader.num_record_batches} batches, nothing else touched)")
    for f in reader.schema:
        out(f"     {f.name}: {f.type}")

    i = int(rng.integers(0, reader.num_record_batches))
    t0 = time.perf_counter()
    batch = reader.get_batch(i)
    x = batch.column("x").to_numpy()
    t_rand = time.perf_counter() - t0
    region = reader._region
    inside = region.address <= x.ctypes.data < region.address + region.size
    loaded = sum(batch.is_loaded(k) for k in range(batch.num_columns))
    out(f"3. get_batch({i}).column('x').to_numpy() in {_fmt_time(t_rand)}")
    out(f"   a read-only numpy view {'inside' if inside else 'OUTSIDE'} the mapping "
        f"(zero copies); columns decoded: {loaded} of {batch.num_columns}")
    out(f"   batch {i} rows 0-2: {batch.slice(0, 3).to_pylist()}")

    t0 = time.perf_counter()
    total = sum(float(b.column("x").to_numpy().sum()) for b in reader)
    t_scan = time.perf_counter() - t0
    out(f"4. full scan: sum(x) over {batches * rows:,} rows = {total:,.3f} in {_fmt_time(t_scan)}")

    t0 = time.perf_counter()
    reader.get_batch(0).validate(full=True)
    out(f"5. validate(full=True) of batch 0 (every offset, UTF-8 byte, index): ok "
        f"in {_fmt_time(time.perf_counter() - t0)}")

    stream_path = os.path.join(folder, "demo.arrows")
    with arrowmm.new_stream(stream_path, reader.schema) as writer:
        for b in reader:
            writer.write(b)  # buffers go from the mapping to the OS: no copy in Python
    with arrowmm.open_stream(stream_path) as stream:
        n = sum(b.num_rows for b in stream)
    out(f"6. re-wrote it as a stream ({_fmt_bytes(os.path.getsize(stream_path))}) straight from "
        f"the mapping and read back {n:,} rows with open_stream")

    reader.close()
    del reader, batch
    out(f"7. reader closed; the numpy view still reads the mapping: x[:3] = {x[:3].round(4).tolist()}")
    return 0


def _fields(schema) -> list:
    return [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema]


def info(path: str, as_json: bool = False) -> int:
    """Schema, batches and rows of an IPC file or stream (``-``: standard input)."""
    import arrowmm
    with files.reading(path), arrowmm.open(files.source(path)) as reader:
        kind = files.kind_of(reader)
        if kind != "stream":
            batches, rows = reader.num_record_batches, reader.num_rows
        else:
            batches = rows = 0
            for b in reader:
                batches += 1
                rows += b.num_rows
        if as_json:
            print(json.dumps({"path": path, "format": kind, "fields": _fields(reader.schema),
                              "batches": batches, "rows": rows}, indent=2))
            return 0
        print(f"{files.display_name(path)}: {files.KIND_NAMES[kind]}")
        print(reader.schema)
        if kind != "stream":
            print(f"{batches} record batches, {rows:,} rows")
        else:
            print(f"{rows:,} rows")
    return 0


def validate(path: str, full: bool = False, as_json: bool = False) -> int:
    """Check every batch of an IPC file or stream; 0 if valid, 1 (and why, on stderr) if not.

    Every batch's header is parsed and every column built, which checks the buffers
    against their body and the structure (lengths, counts, nesting); ``full`` also
    checks every value (offsets, UTF-8, union ids, dictionary indices, run ends, ...) and
    the statistics arrowmm recorded for each batch against its values (filters trust them).
    ``path`` ``-`` reads standard input.  ``as_json``: the verdict as JSON on standard
    output (``valid``, ``error``), with the same exit code.
    """
    import arrowmm
    count = rows = 0
    kind = None
    level = "full" if full else "structural"
    name = files.display_name(path)

    unfinished = 0

    def verdict(error):
        print(json.dumps({"path": path, "valid": error is None, "format": kind,
                          "batches": count, "rows": rows, "validation": level,
                          "unfinished_bytes": unfinished, "error": error}, indent=2))

    try:
        with arrowmm.open(files.source(path)) as reader:
            kind = files.kind_of(reader)
            total = reader.num_record_batches if kind != "stream" else None
            recorded = files.recorded_statistics(reader, kind) if full else None
            with bar(total, unit="batches", desc="validate") as progress:
                for batch in reader:
                    batch.validate(full=full)
                    for k in range(batch.num_columns):
                        batch.column(k).validate(full=full)
                    if recorded is not None:
                        _check_statistics(recorded(count, batch), batch, count)
                    count += 1
                    rows += batch.num_rows
                    progress.update(1)
            unfinished = getattr(reader, "unfinished_bytes", 0)
    except OSError as exc:
        if as_json:
            verdict(_problem(exc))
        print(f"arrowmm validate: {_problem(exc)}", file=sys.stderr)
        return EXIT_INVALID
    except arrowmm.ArrowError as exc:
        if as_json:
            verdict(" ".join(str(exc).split()))
        before = f" ({count} batch(es) before it were valid)" if count else ""
        why = " ".join(str(exc).split())
        why = why[len(name) + 2:] if why.startswith(f"{name}: ") else why  # (named once)
        print(f"{name}: INVALID: {why}{before}", file=sys.stderr)
        return EXIT_INVALID
    if unfinished:  # the committed content is valid, the file as a whole is not
        error = (f"an append was interrupted (or is still running): {unfinished:,} byte(s) after "
                 f"the committed content ({count} batches, {rows:,} rows, valid), which other "
                 f"readers refuse; 'arrowmm repair {path} {path}' keeps the committed content")
        if as_json:
            verdict(error)
        print(f"{name}: UNFINISHED: {error}", file=sys.stderr)
        return EXIT_INVALID
    if as_json:
        verdict(None)
        return 0
    print(f"{name}: valid {files.KIND_NAMES[kind]} ({count} batches, {rows:,} rows, "
          f"{level} validation)")
    return 0


def _check_statistics(entry, batch, i: int) -> None:
    problem = statistics_mismatch(entry, batch)
    if problem:
        raise ArrowInvalid(f"record batch {i}: statistics that do not describe its values, "
                           f"which filters would trust: {problem}; 'arrowmm convert SRC DST "
                           f"--statistics' (arrowmm.add_statistics) records them anew")


def repair(src: str, dst: str, validate: bool = True, as_json: bool = False,
           unfinished: bool = False) -> int:
    """Salvage ``src`` into a valid IPC file ``dst``; 0 if anything (even just the schema) was
    kept, 1 (and why, on stderr) if not even the schema could be read.  ``unfinished``: also
    keep the complete batches of an interrupted append (by default, the committed content).
    ``-`` is standard input (spooled to an unlinked temporary file: salvage reads it out of
    order) or standard output (the repaired file is written to a temporary folder, then copied
    out; the report goes to stderr so it never mixes with the file's bytes)."""
    import arrowmm
    report_to = sys.stderr if dst == "-" else sys.stdout
    try:
        with _repair_source(src) as source, tempfile.TemporaryDirectory(
                prefix="arrowmm-repair-") as folder:
            target = os.path.join(folder, "repaired.arrow") if dst == "-" else dst
            size = os.path.getsize(src) if src != "-" and os.path.isfile(src) else None
            with bar(size, unit="B", desc="repair") as progress:
                report = arrowmm.repair(source, target, validate=validate,
                                        unfinished=unfinished,
                                        progress=lambda done: progress.update(done - progress.n))
            if dst == "-":
                _copy_to_stdout(target)
    except BrokenPipeError:  # (`arrowmm repair x - | head`: quiet, as main() makes the others)
        raise
    except (arrowmm.ArrowError, OSError) as exc:
        problem = _problem(exc)
        name = "<stdin>" if src == "-" else src  # (as the other commands name it)
        if src == "-":  # (the names of stdin's stand-ins, first or after a clause, say nothing)
            for stand_in in ("mmap", "bytes", "buffer"):
                problem = problem.replace(f": {stand_in}: ", ": ")
            names = ("mmap: ", "bytes: ", "buffer: ")
        else:
            names = (f"{src}: ",)
        for prefix in names + ("cannot repair, ",):  # (said once, before the reason)
            if problem.startswith(prefix):
                problem = problem[len(prefix):]
        print(f"{name}: cannot repair: {problem}", file=sys.stderr)
        return EXIT_INVALID
    report.src = "<stdin>" if src == "-" else report.src
    report.dst = "<stdout>" if dst == "-" else report.dst
    if as_json:
        print(json.dumps({"src": report.src, "dst": report.dst, "format": report.source_format,
                          "complete": report.complete, "batches": report.batches,
                          "rows": report.rows, "dictionary_batches": report.dictionary_batches,
                          "dropped_bytes": report.dropped_bytes, "reason": report.reason},
                         indent=2), file=report_to)
        return 0
    print(report, file=report_to)
    return 0


@contextlib.contextmanager
def _repair_source(src: str):
    """What ``arrowmm.repair`` reads for the command-line SRC: the path, or standard input
    spooled to an unlinked temporary file and mapped (the salvage walks it out of order)."""
    if src != "-":
        yield src
        return
    stdin = files.source(src)
    with tempfile.TemporaryFile(prefix="arrowmm-repair-") as spool:
        shutil.copyfileobj(stdin, spool, 1 << 20)
        spool.flush()
        if spool.tell() == 0:
            yield b""
            return
        mapped = mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            yield mapped
        finally:
            try:
                mapped.close()
            except BufferError:  # (an error's traceback still views it: unmapped when freed)
                pass


def _copy_to_stdout(path: str) -> None:
    """The repaired file's bytes to standard output; a failure (a full disk behind '>', a
    closed pipe) names the standard output."""
    sys.stdout.flush()
    try:
        with open(path, "rb") as f:
            shutil.copyfileobj(f, sys.stdout.buffer, 1 << 20)
        sys.stdout.buffer.flush()
    except OSError as exc:
        raise named(exc, "<stdout>")


def shm_ls(as_json: bool = False) -> int:
    """List this user's arrowmm segments and unfinished temporaries, with their creators."""
    try:
        found = shm.segments()
    except ArrowError as exc:
        print(f"arrowmm shm ls: {exc}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps([{"name": i.name, "kind": i.kind, "size": i.size,
                           "pid": i.creator.get("pid") if i.creator else None,
                           "alive": i.alive, "keep": bool(i.keep), "stale": bool(i.stale)}
                          for i in found], indent=2))
        return 0
    if not found:
        print(f"no arrowmm shared-memory segments of this user in {shm.SHM_DIR}")
        return 0
    print(f"{'NAME':<40} {'KIND':<9} {'SIZE':>12} {'PID':>8}  STATE")
    for info in found:
        pid = info.creator.get("pid", "?") if info.creator else "?"
        state = {True: "running", False: "dead", None: "unknown"}[info.alive]
        if info.keep:
            state += ", kept"
        elif info.stale:
            state += ", stale (shm rm --stale removes it)"
        print(f"{info.name:<40} {info.kind:<9} {_fmt_bytes(info.size):>12} {pid!s:>8}  {state}")
    return 0


def shm_rm(names, stale: bool = False, dry_run: bool = False) -> int:
    """Remove segments by name, or (``stale``) those whose creator is gone."""
    status = 0
    if stale:
        try:
            gone = shm.cleanup(dry_run=dry_run)
        except ArrowError as exc:
            print(f"arrowmm shm rm: {exc}", file=sys.stderr)
            return 1
        verb = "would remove" if dry_run else "removed"
        for name in gone:
            print(f"{verb} {name}")
        if not gone:
            print("nothing stale")
    for name in names:
        if dry_run:
            print(f"would remove {name}")
            continue
        try:
            shm.remove(name)
            print(f"removed {name}")
        except (ArrowError, OSError) as exc:
            print(f"arrowmm shm rm: {name}: {exc}", file=sys.stderr)
            status = 1
    return status


class _Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the program is so that its ``with`` blocks unwind as
    for Ctrl-C (a writer removes its temporary); main() exits 128 + the signal's number."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum, frame):
    raise _Terminated(signum)


@contextlib.contextmanager
def _unwinding_on_termination():
    """SIGTERM and SIGHUP raise ``_Terminated`` while the command runs (those left at their
    default: a SIGHUP ignored under nohup stays ignored); the old handlers come back after."""
    old = {}
    if threading.current_thread() is threading.main_thread():  # (signal.signal's rule)
        for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if signum is not None and signal.getsignal(signum) == signal.SIG_DFL:
                old[signum] = signal.signal(signum, _raise_terminated)
    try:
        yield
    finally:
        for signum, handler in old.items():
            signal.signal(signum, handler)


def _positive(text: str) -> int:
    """An argparse type: an integer > 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value}: must be > 0")
    return value


def _command(sub, name: str, help: str, example: str):
    """A subcommand whose --help ends with an example."""
    return sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                          epilog=f"example: {example}",
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="arrowmm", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"arrowmm {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = _command(sub, "demo", "the main job: a local Spark pipeline writing and reading "
                                   ".arrow through arrowmm (--local: arrowmm alone)",
                      "arrowmm demo --local --batches 20")
    p_demo.add_argument("--local", action="store_true",
                        help="without Spark: write a sample file, then read it lazily and zero-copy")
    p_demo.add_argument("--batches", type=_positive, default=200, help="--local: record batches")
    p_demo.add_argument("--rows", type=_positive, default=None,
                        help="rows (Spark: in all, default 4,000,000; --local: per batch, 50,000)")
    p_demo.add_argument("--folder", default=None,
                        help="where to write (created if missing; default a new temporary folder)")
    p_demo.add_argument("--keep", action="store_true",
                        help="keep what the demo wrote (by default it is removed at the end)")
    p_info = _command(sub, "info", "schema and size of an IPC file or stream",
                      "arrowmm info data.arrow --json")
    p_info.add_argument("path", help="IPC file or stream ('-' for standard input)")
    p_info.add_argument("--json", action="store_true", help="format, fields, batches, rows as JSON")
    p_validate = _command(sub, "validate", "check every batch; exit code 0 if valid, 1 if not",
                          "arrowmm validate data.arrow --full --json")
    p_validate.add_argument("path", help="IPC file or stream ('-' for standard input)")
    p_validate.add_argument("--full", action="store_true",
                            help="check every value too (offsets, UTF-8, indices, ...) and the "
                                 "recorded statistics against the values, not just structure")
    p_validate.add_argument("--json", action="store_true",
                            help="the verdict as JSON on standard output (same exit code)")
    p_repair = _command(sub, "repair", "rebuild a valid IPC file from a truncated or "
                                       "footer-less one (or a stream), or cut what an "
                                       "interrupted append left: exit code 0 if anything was "
                                       "salvaged, 1 if not",
                        "arrowmm repair crashed.arrow crashed.arrow")
    p_repair.add_argument("src", help="damaged IPC file or stream ('-' for standard input)")
    p_repair.add_argument("dst", help="repaired IPC file (may be SRC: replaced atomically; "
                                      "'-' for standard output)")
    p_repair.add_argument("--no-validate", action="store_true",
                          help="keep batches without checking their structure")
    p_repair.add_argument("--unfinished", action="store_true",
                          help="also keep the complete batches of an interrupted append (by "
                               "default the repaired file holds what was committed)")
    p_repair.add_argument("--json", action="store_true", help="the repair report as JSON")
    files.add_parsers(sub)
    p_shm = _command(sub, "shm", "shared-memory segments made by arrowmm.shm.share",
                     "arrowmm shm ls --json")
    shm_sub = p_shm.add_subparsers(dest="shm_command", required=True)
    p_ls = _command(shm_sub, "ls", "list this user's segments and unfinished temporaries, "
                                   "with their creator pid and whether it still runs",
                    "arrowmm shm ls --json")
    p_ls.add_argument("--json", action="store_true", help="the segments as a JSON list")
    p_rm = _command(shm_sub, "rm", "remove segments by name (mappings stay valid), or "
                                   "--stale: those whose creator died",
                    "arrowmm shm rm --stale --dry-run")
    p_rm.add_argument("names", nargs="*", metavar="NAME")
    p_rm.add_argument("--stale", action="store_true",
                      help="remove segments and temporaries whose creator process is gone "
                           "(not those shared with keep=True)")
    p_rm.add_argument("--dry-run", action="store_true", help="say what would be removed")
    args = parser.parse_args(argv)
    if args.command == "shm" and args.shm_command == "rm" and not args.names and not args.stale:
        parser.error("shm rm: give NAME(s) or --stale")
    command_started()  # (Ctrl-C from here is KeyboardInterrupt: 130, output unwound)
    try:
        with _unwinding_on_termination():
            return _run(args)
    except (OSError, ValueError, NotImplementedError) as exc:  # arrowmm's errors are ValueError /
        # NotImplementedError too: bad input gets one line, not a traceback
        if isinstance(exc, BrokenPipeError):  # `arrowmm info x | head`
            sys.stderr.close()
            return EXIT_OK
        print(f"arrowmm {args.command}: {_problem(exc)}", file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        return 130
    except _Terminated as exc:
        return 128 + exc.signum
    except Exception as exc:  # noqa: BLE001  (a defect of arrowmm: one line, not a traceback)
        reason = " ".join(str(exc).split())
        print(f"arrowmm {args.command}: internal error: {type(exc).__name__}"
              f"{': ' + reason if reason else ''}", file=sys.stderr)
        return EXIT_INVALID


def _run(args) -> int:
    if args.command == "shm":
        if args.shm_command == "ls":
            return shm_ls(args.json)
        return shm_rm(args.names, args.stale, args.dry_run)
    if args.command == "demo":
        if not args.local:
            try:
                from ..spark import demo as spark_demo
                import pyspark  # noqa: F401
            except ImportError:
                print("arrowmm demo: the Spark pipeline needs pyspark and pyarrow: "
                      "pip install 'arrowmm[spark]' (or run 'arrowmm demo --local')", file=sys.stderr)
                return EXIT_MISSING
            problem = _java_problem()
            if problem:
                print(f"arrowmm demo: Spark needs Java: {problem}; {JAVA_HELP} "
                      f"(or run 'arrowmm demo --local', which needs no Java)", file=sys.stderr)
                return EXIT_MISSING
        work = _Workspace(args.folder, args.keep)
        try:
            if args.local:
                code = demo(args.batches, args.rows or 50_000, work.folder)
            else:
                code = spark_demo.run(args.rows or 4_000_000, folder=work.folder)
        finally:
            print(f"\n{work.close()}")
        return code
    if args.command in files.COMMANDS:
        return files.run(args)
    if args.command == "info":
        return info(args.path, args.json)
    if args.command == "repair":
        return repair(args.src, args.dst, not args.no_validate, args.json, args.unfinished)
    return validate(args.path, args.full, args.json)


if __name__ == "__main__":
    sys.exit(main())
