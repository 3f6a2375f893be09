"""Everyday paths (issues 17 and 34): arrowmm against pyarrow, polars and duckdb, beside the machine's ceiling.

Run from the repository root::

    python benchmarks/bench_paths.py                 # full run (10-15 min on a loaded machine)
    python benchmarks/bench_paths.py --quick         # smoke version (< 60 s)
    python benchmarks/bench_paths.py --out paths.md  # also write the tables as markdown

Every row is measured in one process, arrowmm and its peers in turn after warm-up runs;
the reported time is the median of the timed repeats and ``ratio`` is arrowmm time / pyarrow
time (for throughput rows too: a throughput target of ">= 1.2x" is a time ratio <= 1/1.2).
The data files are written by pyarrow into ``--data-dir`` (default ``benchmarks/data/``,
git-ignored) the first time and reused: about 9 GB for a full run (the 100-column file of
row 4 alone is 8 GB, as the issue sizes it; --quick writes under 60 MB), so delete them
when done.  The machine these numbers come from is shared: a
ratio between 0.85 and 1.2 means "the same".

1a/1b. ``pyarrow.table(reader)`` of a ZSTD / LZ4_FRAME file of 1M-row batches (float64,
       int64, utf8 of 1-12 chars, list<int32> of 0-8 items, bool, ~10% nulls) against
       pyarrow's ``open_file(memory_map(path)).read_all()``                 target <= 0.8
2.     every column of the ZSTD file read one column at a time across all batches
       (``get_batch(i).column(k)``, then a numpy view of numeric columns and a pyarrow
       array of the others) against the same walk over pyarrow's batches  target <= 0.83
       (throughput >= 1.2x)
2b/2c. every column of every batch in batch order (``get_batch(i)``, then each
       ``column(k).__arrow_c_array__()``) of the ZSTD / LZ4 file, against the same walk over
       pyarrow's batches (issue 34)                                         target <= 0.8
3.     the same batches as an uncompressed stream read from a pipe
       (``cat f.arrows | python ...``, ``open_stream(sys.stdin.buffer)``, every column's
       buffers touched), timed inside the reading process; the raw pipe's time (plain
       ``readv`` of the same bytes) is its ceiling                        target <= 0.91
       (throughput >= 1.1x)
4.     all 100 columns of a random batch of a 100-column file (float64/int64, 10,000 rows,
       1,000 batches) to numpy, reader opened once                        target <= 0.8
5.     open that 100-column file and read its schema, repeated in one process  <= 0.8
6.     ``to_pandas()`` of a string column of 1,000 distinct values over 1M rows   <= 1.0
7.     open a file of 10^6 fields (10^4 with --quick)                        target <= 2.0
8.     ``to_pandas()`` of a file of 5,000 batches of 10 rows (the schema of rows 1-2),
       arrowmm's reader against pyarrow's ``read_all().to_pandas()``; arrowmm's
       ``read_all().to_pandas()`` is in the details                         target <= 1.0

Peers (issue 34), timed in the same rounds as arrowmm and pyarrow (each round calls every
contender once, in turn), with the fairest operation each has for the row; a peer without
one shows "-":

====  ==================================================  =====================================
row   polars                                              duckdb
====  ==================================================  =====================================
1a/b  ``pl.scan_ipc(path).collect()`` (what               the file loaded into a duckdb table
      ``pl.read_ipc`` does in polars 2, which has no       (``con.from_arrow(reader)
      ``memory_map`` option any more)                      .create("t")``), read through
                                                          pyarrow's reader as a
                                                          ``RecordBatchReader``: duckdb has no
                                                          IPC file reader without its ``arrow``
                                                          extension, which it downloads (and
                                                          this machine cannot)
2     ``pl.scan_ipc(path).select(name).collect()`` per    - (through a stream every column is
      column (projection pushed into the scan), then       read each time: a strawman)
      ``to_numpy()`` / ``to_arrow()`` as the others
2b/c  ``pl.scan_ipc(path).collect_batches()``, each       - (no batch-by-batch reader of a
      column's ``__arrow_c_stream__()``                    file: its batches would be the
                                                          reader's, re-exported)
3     ``pl.read_ipc_stream(sys.stdin.buffer)`` in the      - (it would time pyarrow's stream
      piped process                                        reader and then its own copy)
4     ``pl.scan_ipc(path).slice(i * rows, rows)`` then     - (no random access to a file's
      each column's ``to_numpy()`` (polars reads only      batches)
      that batch: it copies it, from disk when the 8 GB
      file's pages are not cached, where the others view
      the mapping)
5, 7  ``pl.read_ipc_schema(path)``                         - (no schema-only open)
6, 8  ``pl.scan_ipc(path).collect().to_pandas()``          ``con.from_arrow(reader).df()``, the
                                                          reader as in 1a
====  ==================================================  =====================================

The ceiling (issue 34, ``bench_machine.py``) is the machine's time for the row's bytes with no
reader around them, measured in the same rounds: for the compressed rows (1a-2c) decompressing
exactly the file's compressed buffers with ``zstandard`` / ``lz4``, the faster of one thread
and a pool of two (both are in the details); for row 3 a process that only ``readv``s the
pipe (the pipe's own time is what each reading process measures inside itself); for rows 6 and
8 reading the file from the page cache into a buffer (memcpy of as many bytes in the details);
rows 4, 5 and 7 move no data (views of the mapping and metadata), so no bandwidth bounds them
and their ceiling is "-". arrowmm's share is ceiling time / arrowmm time: 100% is the machine's
limit (target >= 85% on the scans, the pipe and the compressed exports).

``--rows 1a,2b,2c`` runs only those rows (and writes only their files).  Each row prints the
load average (1, 5, 15 minutes) before it starts: the ratios of a loaded machine are not an
idle one's, so compare runs at like loads.

The exit status is 0 whatever the ratios unless ``--strict`` is given.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import duckdb
import lz4
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
import bench_machine as machine  # noqa: E402  (benchmarks/, beside this script)
from common import (Result, base_parser, compare, compare_many, fmt_time,  # noqa: E402
                    machine_lines, print_result, report, settings, warm_cache)
import arrowmm  # noqa: E402

SEED = 20261124
FULL = dict(batches=6, rows=1_000_000, wide_batches=1_000, wide_rows=10_000, fields=1_000_000,
            pandas_rows=1_000_000, small_batches=5_000, small_rows=10, repeats=5, warmup=1)
QUICK = dict(batches=2, rows=50_000, wide_batches=20, wide_rows=1_000, fields=10_000,
             pandas_rows=50_000, small_batches=5_000, small_rows=10, repeats=3, warmup=0)
# (--quick is a smoke run: each row's untimed check of the values is its warm-up)


# -- data ------------------------------------------------------------------------------------

def _nulls(rng, rows):
    return pa.array(rng.random(rows) < 0.1)


_WORDS = np.array(["abcdefghijkl"[:n] for n in range(1, 13)] +
                  [f"w{i}"[:12] for i in range(2000)], dtype=object)  # (made once: 5,000 batches)


def mixed_batch(rng, rows: int) -> pa.RecordBatch:
    """float64, int64, utf8 (1-12 chars), list<int32> (0-8 items), bool; ~10% nulls each."""
    def masked(values):
        return pa.array(values, mask=rng.random(rows) < 0.1)
    words = _WORDS
    lengths = rng.integers(0, 9, rows)
    offsets = np.zeros(rows + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    lists = pa.ListArray.from_arrays(pa.array(offsets), pa.array(rng.integers(0, 1000, offsets[-1],
                                                                            dtype=np.int32)),
                                     mask=_nulls(rng, rows))
    return pa.record_batch({
        "f64": masked(rng.random(rows)),
        "i64": masked(rng.integers(0, 1 << 40, rows)),
        "utf8": masked(words[rng.integers(0, len(words), rows)]),
        "list": lists,
        "flag": masked(rng.random(rows) < 0.5),
    })


def _write(path: Path, batches, schema, codec=None, stream=False) -> Path:
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    opts = pa.ipc.IpcWriteOptions(compression=codec)
    new = pa.ipc.new_stream if stream else pa.ipc.new_file
    with pa.OSFile(str(tmp), "wb") as sink, new(sink, schema, options=opts) as w:
        for b in batches:
            w.write_batch(b)
    tmp.rename(path)
    return path


def mixed_batches(cfg):
    rng = np.random.default_rng(SEED)
    return [mixed_batch(rng, cfg["rows"]) for _ in range(cfg["batches"])]


def wide_batches(cfg):
    rng = np.random.default_rng(SEED + 1)
    rows = cfg["wide_rows"]
    cols = {f"c{k}": (rng.random(rows) if k % 2 else rng.integers(0, 1 << 30, rows))
            for k in range(100)}
    one = pa.record_batch(cols)
    return one.schema, [one] * cfg["wide_batches"]  # (same values in every batch: only reading is timed)


def strings_batches(cfg):
    rng = np.random.default_rng(SEED + 2)
    words = np.array([f"value-{i:04d}" for i in range(1000)], dtype=object)
    b = pa.record_batch({"s": pa.array(words[rng.integers(0, 1000, cfg["pandas_rows"])])})
    return b.schema, [b]


def small_batches(cfg):
    rng = np.random.default_rng(SEED + 3)
    out = [mixed_batch(rng, cfg["small_rows"]) for _ in range(cfg["small_batches"])]
    return out[0].schema, out


def fields_batches(n: int):
    b = pa.record_batch({f"f{k}": pa.array([1], pa.int8()) for k in range(n)})
    return b.schema, [b]


# -- peers and ceilings ------------------------------------------------------------------------

@dataclass
class PathResult(Result):
    """A row with its peers' times (None: the peer has no equivalent operation) and the
    machine's ceiling for the same bytes (None: the row moves no data)."""
    polars_s: Optional[float] = None
    duckdb_s: Optional[float] = None
    ceiling_s: Optional[float] = None
    ceiling: str = ""


def _ratio(t: Optional[float], peer: Optional[float]) -> str:
    return "-" if t is None or peer is None else f"{t / peer:.2f}"


def _time_or_dash(t: Optional[float]) -> str:
    return "-" if t is None else fmt_time(t)


def peers_markdown(results) -> str:
    """The peers and ceiling table: each row's arrowmm time against polars, duckdb and the
    machine's ceiling (ratios are arrowmm / peer; share is ceiling / arrowmm)."""
    lines = ["| benchmark | arrowmm | polars | arrowmm/polars | duckdb | arrowmm/duckdb "
             "| ceiling | arrowmm's share | the ceiling |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        share = "-" if r.ceiling_s is None else f"{r.ceiling_s / r.arrowmm_s:.{0 if r.ceiling_s >= r.arrowmm_s / 10 else 1}%}"
        lines.append(f"| {r.name} | {fmt_time(r.arrowmm_s)} | {_time_or_dash(r.polars_s)} "
                     f"| {_ratio(r.arrowmm_s, r.polars_s)} | {_time_or_dash(r.duckdb_s)} "
                     f"| {_ratio(r.arrowmm_s, r.duckdb_s)} | {_time_or_dash(r.ceiling_s)} "
                     f"| {share} | {r.ceiling or '-'} |")
    return "\n".join(lines)


_BUFFERS: dict = {}


def _compressed(path: Path) -> machine.CompressedBuffers:
    if path not in _BUFFERS:  # (rows 1a, 2 and 2b share the ZSTD file)
        _BUFFERS[path] = machine.compressed_buffers(path)
    return _BUFFERS[path]


def _decompression(path: Path) -> dict:
    """The two decompression contenders of a compressed row."""
    bufs = _compressed(path)
    return {"dec1": machine.decompressor(bufs, 1), "dec2": machine.decompressor(bufs, 2)}


def _decompression_ceiling(path: Path, t: dict) -> dict:
    bufs = _compressed(path)
    best = min(t["dec1"], t["dec2"])
    return dict(ceiling_s=best, ceiling=(
        f"{bufs.codec} decompression of the file's {len(bufs.payloads)} compressed buffers "
        f"({sum(map(len, bufs.payloads)) / 2**20:,.0f} to {bufs.decoded / 2**20:,.0f} MiB): "
        f"1 thread {fmt_time(t['dec1'])}, 2 threads {fmt_time(t['dec2'])}"))


def _bytes_ceiling(path: Path, t: dict) -> dict:
    size = path.stat().st_size
    return dict(ceiling_s=t["cache"], ceiling=(
        f"the file's {size / 2**20:,.1f} MiB read from the page cache "
        f"({size / t['cache'] / 1e9:.2f} GB/s; memcpy {size / t['memcpy'] / 1e9:.2f} GB/s)"))


def _bytes_contenders(path: Path) -> dict:
    return {"cache": machine.file_reader(path), "memcpy": machine.memcpy(path.stat().st_size)}


def _duckdb_threads() -> int:
    return duckdb.execute("SELECT current_setting('threads')").fetchone()[0]


def _duckdb_reader(path: Path) -> pa.RecordBatchReader:
    """pyarrow's file reader as the stream duckdb scans (duckdb takes a ``RecordBatchReader``,
    not a file reader)."""
    r = pa.ipc.open_file(pa.memory_map(str(path)))
    return pa.RecordBatchReader.from_batches(r.schema, (r.get_batch(i)
                                                        for i in range(r.num_record_batches)))


def _same_table(got: pa.Table, want: pa.Table, who: str) -> None:
    """A peer's result, in its own types (polars' string views, duckdb's list names), holds
    want's values."""
    if not got.cast(want.schema).equals(want):
        raise AssertionError(f"{who} read other values than pyarrow")


def _same_frame(got, want, who: str) -> None:
    """A peer's pandas frame holds want's values (nulls as NaN, None or pandas.NA alike)."""
    assert list(got.columns) == list(want.columns), (who, list(got.columns))
    for name in want.columns:
        a = [None if _isnull(v) else v for v in got[name].tolist()]
        b = [None if _isnull(v) else v for v in want[name].tolist()]
        same = all(np.array_equal(x, y) if isinstance(y, np.ndarray) else x == y
                   for x, y in zip(a, b))
        if len(a) != len(b) or not same:
            raise AssertionError(f"{who}'s to_pandas() differs from pyarrow's in {name!r}")


def _isnull(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


# -- benchmarks --------------------------------------------------------------------------------

def bench_table(path: Path, codec: str, cfg, label: str) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            return pa.table(r)

    def pya():
        return pa.ipc.open_file(pa.memory_map(str(path))).read_all()

    def polars():
        return pl.scan_ipc(path).collect()

    con = duckdb.connect()

    def duck():
        con.execute("DROP TABLE IF EXISTS t")  # (the last call's table freed, as the others' are)
        con.from_arrow(_duckdb_reader(path)).create("t")

    want = pya()
    assert amm().equals(want)
    _same_table(pa.table(polars()), want, "polars")
    duck()
    _same_table(pa.table(con.sql("SELECT * FROM t")), want, "duckdb")
    del want
    t = compare_many({"amm": amm, "pa": pya, "polars": polars, "duckdb": duck,
                      **_decompression(path)}, cfg["repeats"], cfg["warmup"])
    con.close()
    return PathResult(label, t["amm"], t["pa"], 0.8,
                      f"{cfg['batches']} x {cfg['rows']:,} rows, "
                      f"{path.stat().st_size / 2**20:,.0f} MiB {codec} file",
                      polars_s=t["polars"], duckdb_s=t["duckdb"],
                      **_decompression_ceiling(path, t))


def _touch(col, numeric):
    return col.to_numpy(zero_copy_only=False).size if numeric else len(pa.array(col))


NUMERIC = (True, True, False, False, False)


def bench_columns(path: Path, cfg) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            batches = [r.get_batch(i) for i in range(r.num_record_batches)]
            return sum(_touch(b.column(k), NUMERIC[k]) for k in range(5) for b in batches)

    def pya():
        r = pa.ipc.open_file(pa.memory_map(str(path)))
        batches = [r.get_batch(i) for i in range(r.num_record_batches)]
        return sum(_touch(b.column(k), NUMERIC[k]) for k in range(5) for b in batches)

    names = pl.read_ipc_schema(path)

    def polars():  # (a column's values across every batch, as the others walk them)
        total = 0
        for k, name in enumerate(names):
            s = pl.scan_ipc(path).select(name).collect().to_series()
            total += s.to_numpy().size if NUMERIC[k] else len(s.to_arrow())
        return total

    assert amm() == pya() == polars()
    t = compare_many({"amm": amm, "pa": pya, "polars": polars, **_decompression(path)},
                     cfg["repeats"], cfg["warmup"])
    return PathResult("2. every column one at a time, zstd", t["amm"], t["pa"], round(1 / 1.2, 2),
                      f"throughput ratio {t['pa'] / t['amm']:.2f}x (target >= 1.2x)",
                      polars_s=t["polars"], **_decompression_ceiling(path, t))


def process_times(funcs: dict, repeats: int) -> dict:
    """Median processor seconds (every thread's) of each of ``funcs``, called in turn."""
    got = {name: [] for name in funcs}
    for _ in range(repeats):
        for name, f in funcs.items():
            c0 = time.process_time()
            f()
            got[name].append(time.process_time() - c0)
    return {name: float(np.median(x)) for name, x in got.items()}


def bench_batch_order(path: Path, codec: str, cfg, label: str) -> Result:
    """Every column of every batch, batch after batch: what a consumer that takes whole
    batches through the C data interface does (pyarrow decompresses each batch on its pool
    at ``get_batch``; arrowmm decodes a column when it is first touched)."""
    def amm():
        with arrowmm.open_file(path) as r:
            for i in range(r.num_record_batches):
                b = r.get_batch(i)
                for k in range(b.num_columns):
                    b.column(k).__arrow_c_array__()

    def pya():
        r = pa.ipc.open_file(pa.memory_map(str(path)))
        for i in range(r.num_record_batches):
            b = r.get_batch(i)
            for k in range(b.num_columns):
                b.column(k).__arrow_c_array__()

    def polars():  # (polars' batches, each column exported through the C stream interface)
        rows = 0
        for df in pl.scan_ipc(path).collect_batches():
            rows += df.height
            for s in df.iter_columns():
                s.__arrow_c_stream__()
        return rows

    with arrowmm.open_file(path) as r:  # (the same values, checked once, untimed)
        rp = pa.ipc.open_file(pa.memory_map(str(path)))
        for i in range(r.num_record_batches):
            b, want = r.get_batch(i), rp.get_batch(i)
            assert all(pa.array(b.column(k)).equals(want.column(k)) for k in range(b.num_columns))
        assert polars() == sum(rp.get_batch(i).num_rows for i in range(rp.num_record_batches))
    t = compare_many({"amm": amm, "pa": pya, "polars": polars, **_decompression(path)},
                     cfg["repeats"], cfg["warmup"])
    # (the processor time of each, every thread's: on a machine whose cores other jobs keep
    # busy, the wall time follows a process's share of them, not its work; the median of 3
    # more walks each, in turn: one walk each read 192 ms against 136 ms in one run where
    # seven in turn read 172 against 168)
    cpu = process_times({"amm": amm, "pa": pya}, 3)
    return PathResult(label, t["amm"], t["pa"], 0.8,
                      f"{cfg['batches']} x {cfg['rows']:,} rows, "
                      f"{path.stat().st_size / 2**20:,.0f} MiB {codec} file; "
                      f"CPU {cpu['amm'] * 1e3:.0f} ms against {cpu['pa'] * 1e3:.0f} ms",
                      polars_s=t["polars"], **_decompression_ceiling(path, t))


_PIPE_CHILD = r"""
import sys, time
lib = sys.argv[1]
if lib == "arrowmm":
    import arrowmm
elif lib == "pyarrow":
    import pyarrow as pa
else:
    import polars as pl
t0 = time.perf_counter()  # (imports are not timed)
n = 0
if lib == "arrowmm":
    for b in arrowmm.open_stream(sys.stdin.buffer):
        for c in b.columns:
            n += sum(x.size for x in c.buffers() if x is not None)
elif lib == "pyarrow":
    for b in pa.ipc.open_stream(sys.stdin.buffer):
        for c in b.columns:
            n += sum(x.size for x in c.buffers() if x is not None)
else:  # (polars reads the whole stream into its frame: its buffers are touched)
    n = pl.read_ipc_stream(sys.stdin.buffer).height
print(time.perf_counter() - t0, n)
"""


def _pipe(path: Path, lib: str):
    seconds, n = machine.run_piped(path, _PIPE_CHILD, lib)
    return float(seconds), int(n)


def bench_pipe(path: Path, cfg) -> Result:
    times = {"amm": [], "pa": [], "polars": [], "raw": []}
    counts = {"amm": set(), "pa": set(), "polars": set()}  # (every timed run's, checked below)
    for _ in range(cfg["repeats"]):
        for lib in times:
            if lib == "raw":  # (it raises unless it read every byte)
                times[lib].append(machine.raw_pipe(path))
                continue
            seconds, n = _pipe(path, {"amm": "arrowmm", "pa": "pyarrow"}.get(lib, lib))
            times[lib].append(seconds)
            counts[lib].add(n)
    assert len(counts["amm"]) == 1 and counts["amm"] == counts["pa"], counts  # (buffer bytes)
    assert counts["polars"] == {cfg["batches"] * cfg["rows"]}, counts  # (rows)
    med = {lib: float(np.median(x)) for lib, x in times.items()}
    size = path.stat().st_size
    gbs = {lib: size / s / 1e9 for lib, s in med.items()}
    return PathResult("3. uncompressed stream from a pipe", med["amm"], med["pa"], round(1 / 1.1, 2),
                      f"{size / 2**20:,.0f} MiB; arrowmm {gbs['amm']:.2f} GB/s, pyarrow "
                      f"{gbs['pa']:.2f} GB/s, polars {gbs['polars']:.2f} GB/s",
                      polars_s=med["polars"], ceiling_s=med["raw"],
                      ceiling=f"the raw pipe: a process that only reads it (readv), "
                              f"{gbs['raw']:.2f} GB/s")


def bench_wide_numpy(path: Path, cfg) -> Result:
    # Each library walks its own random batches (sequences from one distribution): on the
    # same sequence, whichever library went first paid for every page the kernel had evicted
    # from the 8 GB file (other jobs' files compete for the page cache) and the other read it
    # hot, which made this row swing by the order alone.
    rng = np.random.default_rng(SEED)
    libs = ("amm", "pa", "polars")
    picks = {lib: rng.integers(0, cfg["wide_batches"], 1000).tolist() for lib in libs}
    # The pages both libraries read (each batch's header) into the page cache, not the whole
    # 8 GB file: that is more than this VM's page cache keeps, and reading it through evicted
    # its own head (and every other file) before the row began.
    with arrowmm.open_file(path) as warm:
        for i in range(warm.num_record_batches):
            warm.get_batch(i)
    ra = arrowmm.open_file(path)
    rp = pa.ipc.open_file(pa.memory_map(str(path)))
    rows = cfg["wide_rows"]
    state = dict.fromkeys(libs, 0)

    def pick(lib):
        i = state[lib]
        state[lib] = i + 1
        return picks[lib][i % 1000]

    def amm():
        b = ra.get_batch(pick("amm"))
        return [b.column(k).to_numpy() for k in range(100)]

    def pya():
        b = rp.get_batch(pick("pa"))
        return [b.column(k).to_numpy() for k in range(100)]

    def polars():  # (the batch's rows: polars reads only that batch)
        df = pl.scan_ipc(path).slice(pick("polars") * rows, rows).collect()
        return [s.to_numpy() for s in df.iter_columns()]

    first = picks["amm"][0]
    want = [rp.get_batch(first).column(k).to_numpy() for k in range(100)]
    assert all(np.array_equal(x, y) for x, y in
               zip([c.to_numpy() for c in ra.get_batch(first).columns], want))
    assert all(np.array_equal(x, y) for x, y in zip(
        [s.to_numpy() for s in pl.scan_ipc(path).slice(first * rows, rows).collect().iter_columns()],
        want))
    inner = 50

    def loop(f):
        return lambda: [f() for _ in range(inner)]
    t = compare_many({"amm": loop(amm), "pa": loop(pya), "polars": loop(polars)},
                     cfg["repeats"], cfg["warmup"])
    ra.close()
    return PathResult("4. 100 columns of a random batch to numpy", t["amm"] / inner,
                      t["pa"] / inner, 0.8,
                      f"{cfg['wide_batches']:,} batches x {rows:,} rows x 100 cols; per batch",
                      polars_s=t["polars"] / inner)


def bench_wide_open(path: Path, cfg) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            return r.schema

    def pya():
        return pa.ipc.open_file(pa.memory_map(str(path))).schema

    def polars():
        return pl.read_ipc_schema(path)

    assert amm().names == pya().names == list(polars())
    inner = 20

    def loop(f):
        return lambda: [f() for _ in range(inner)]
    t = compare_many({"amm": loop(amm), "pa": loop(pya), "polars": loop(polars)},
                     cfg["repeats"], cfg["warmup"])
    return PathResult("5. open a 100-column file + schema (repeated)", t["amm"] / inner,
                      t["pa"] / inner, 0.8, "per open, same process",
                      polars_s=t["polars"] / inner)


def _pandas_peers(path: Path, want) -> dict:
    """polars' and duckdb's to_pandas() of the file, checked against ``want`` once."""
    con = duckdb.connect()

    def polars():
        return pl.scan_ipc(path).collect().to_pandas()

    def duck():
        return con.from_arrow(_duckdb_reader(path)).df()

    _same_frame(polars(), want, "polars")
    _same_frame(duck(), want, "duckdb")
    return {"polars": polars, "duckdb": duck, **_bytes_contenders(path)}


def bench_pandas(path: Path, cfg) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            return r.get_batch(0).to_pandas()

    def pya():
        return pa.ipc.open_file(pa.memory_map(str(path))).get_batch(0).to_pandas()

    a, p = amm(), pya()
    assert a.equals(p)
    t = compare_many({"amm": amm, "pa": pya, **_pandas_peers(path, p)},
                     cfg["repeats"], cfg["warmup"])
    return PathResult("6. to_pandas() of strings, 1,000 distinct", t["amm"], t["pa"], 1.0,
                      f"{cfg['pandas_rows']:,} rows", polars_s=t["polars"],
                      duckdb_s=t["duckdb"], **_bytes_ceiling(path, t))


def bench_small_pandas(path: Path, cfg) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            return r.to_pandas()

    def amm_read_all():
        with arrowmm.open_file(path) as r:
            return r.read_all().to_pandas()

    def pya():
        return pa.ipc.open_file(pa.memory_map(str(path))).read_all().to_pandas()

    want = pya()
    assert amm().equals(want) and amm_read_all().equals(want)
    t = compare_many({"amm": amm, "pa": pya, **_pandas_peers(path, want)},
                     cfg["repeats"], cfg["warmup"])
    t_all = compare(amm_read_all, pya, cfg["repeats"], 0)
    return PathResult(f"8. to_pandas() of {cfg['small_batches']:,} batches of {cfg['small_rows']} rows",
                      t["amm"], t["pa"], 1.0,
                      f"read_all().to_pandas(): {t_all[0] * 1e3:.0f} ms against "
                      f"{t_all[1] * 1e3:.0f} ms (ratio {t_all[0] / t_all[1]:.2f})",
                      polars_s=t["polars"], duckdb_s=t["duckdb"], **_bytes_ceiling(path, t))


def bench_fields(path: Path, n: int, cfg) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            return len(r.schema)

    def pya():
        return len(pa.ipc.open_file(pa.memory_map(str(path))).schema)

    def polars():
        return len(pl.read_ipc_schema(path))

    assert amm() == pya() == polars() == n
    t = compare_many({"amm": amm, "pa": pya, "polars": polars}, max(3, cfg["repeats"] // 2), 1)
    return PathResult(f"7. open a file of {n:,} fields", t["amm"], t["pa"], 2.0,
                      "1 row of int8 each", polars_s=t["polars"])


# -- main --------------------------------------------------------------------------------------

ROWS = ("1a", "1b", "2", "2b", "2c", "3", "4", "5", "6", "7", "8")


def _load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main(argv=None) -> int:
    parser = base_parser(__doc__)
    parser.add_argument("--rows", help=f"comma-separated rows to run (of {', '.join(ROWS)}; "
                                       f"default: all)")
    args = parser.parse_args(argv)
    rows = ROWS if not args.rows else tuple(x.strip() for x in args.rows.split(","))
    unknown = [x for x in rows if x not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}: the rows are {', '.join(ROWS)}")
    cfg = settings(args, FULL, QUICK)
    d = args.data_dir
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    print("preparing data files in", d, flush=True)
    # (the file each row reads, and how it is made: only the files of the rows run are written)
    needs = {"1a": "zstd", "1b": "lz4", "2": "zstd", "2b": "zstd", "2c": "lz4", "3": "plain",
             "4": "wide", "5": "wide", "6": "strings", "7": "fields", "8": "small"}
    wanted = {needs[x] for x in rows}
    tag = f"{cfg['batches']}x{cfg['rows']}"
    mixed = None
    paths = {}
    for name, codec, stream in (("zstd", "zstd", False), ("lz4", "lz4", False),
                                ("plain", None, True)):
        p = d / f"paths_{tag}.{name}.{'arrows' if stream else 'arrow'}"
        if name in wanted and not p.exists():
            mixed = mixed or mixed_batches(cfg)
            _write(p, mixed, mixed[0].schema, codec, stream)
        paths[name] = p
    del mixed
    wide_tag = f"{cfg['wide_batches']}x{cfg['wide_rows']}"
    paths["wide"] = d / f"paths_wide_{wide_tag}.arrow"
    if "wide" in wanted and not paths["wide"].exists():
        _write(paths["wide"], wide_batches(cfg)[1], wide_batches(cfg)[0])
    paths["strings"] = d / f"paths_strings_{cfg['pandas_rows']}.arrow"
    if "strings" in wanted and not paths["strings"].exists():
        _write(paths["strings"], strings_batches(cfg)[1], strings_batches(cfg)[0])
    paths["small"] = d / f"paths_small_{cfg['small_batches']}x{cfg['small_rows']}.arrow"
    if "small" in wanted and not paths["small"].exists():
        schema, small = small_batches(cfg)
        _write(paths["small"], small, schema)
        del small
    paths["fields"] = d / f"paths_fields_{cfg['fields']}.arrow"
    if "fields" in wanted and not paths["fields"].exists():
        _write(paths["fields"], *reversed(fields_batches(cfg["fields"])))
    print(f"data ready in {time.perf_counter() - t0:.1f} s\n", flush=True)
    env = "\n".join(machine_lines(args.quick) + [
        f"- arrowmm codec threads: {arrowmm.ipc.core.compression.parallel_threads()}, "
        f"pyarrow CPU pool: {pa.cpu_count()}",
        f"- peers: polars {pl.__version__} (thread pool {pl.thread_pool_size()}), duckdb "
        f"{duckdb.__version__} ({_duckdb_threads()} "
        f"threads); ceilings: zstandard {machine.zstandard.__version__}, lz4 "
        f"{lz4.__version__}",
        "- page cache: warm (each file is read once just before its row, the 8 GB file's "
        "batch headers only: this VM's page cache keeps less than the data and drops "
        "files within minutes)",
        f"- {_load()} at the start (each row's is in its details)"]
        + [f"- {paths[n].name}: {paths[n].stat().st_size / 2**20:,.1f} MiB" for n in sorted(wanted)])
    print(env + "\n", flush=True)
    steps = {"1a": lambda: bench_table(paths["zstd"], "zstd", cfg,
                                       "1a. pyarrow.table(reader), zstd"),
             "1b": lambda: bench_table(paths["lz4"], "lz4", cfg, "1b. pyarrow.table(reader), lz4"),
             "2": lambda: bench_columns(paths["zstd"], cfg),
             "2b": lambda: bench_batch_order(paths["zstd"], "zstd", cfg,
                                             "2b. every column of every batch, in batch order, zstd"),
             "2c": lambda: bench_batch_order(paths["lz4"], "lz4", cfg,
                                             "2c. every column of every batch, in batch order, lz4"),
             "3": lambda: bench_pipe(paths["plain"], cfg),
             "4": lambda: bench_wide_numpy(paths["wide"], cfg),
             "5": lambda: bench_wide_open(paths["wide"], cfg),
             "6": lambda: bench_pandas(paths["strings"], cfg),
             "7": lambda: bench_fields(paths["fields"], cfg["fields"], cfg),
             "8": lambda: bench_small_pandas(paths["small"], cfg)}
    results = []
    for row in ROWS:
        if row not in rows:
            continue
        if needs[row] != "wide":  # (row 4 warms what it reads itself)
            warm_cache(paths[needs[row]])
        load = _load()
        results.append(steps[row]())
        results[-1].detail += f"; {load}"
        print_result(results[-1])
        r = results[-1]
        print(f"    polars {_time_or_dash(r.polars_s)}, duckdb {_time_or_dash(r.duckdb_s)}, "
              f"ceiling {_time_or_dash(r.ceiling_s)} ({r.ceiling or 'none: no data moved'})")
        print(f"    ({load} before the row)", flush=True)
    status = report(results, "arrowmm vs pyarrow on everyday paths (issue 17)", env, cfg, args.out,
                    args.strict, note=f"median of the timed repeats after {cfg['warmup']} warm-up runs")
    peers = peers_markdown(results)
    print("\n(the same rounds: polars and duckdb, ratio = arrowmm / peer; the machine's ceiling "
          f"for the same bytes, share = ceiling / arrowmm)\n\n{peers}")
    if args.out:
        with open(args.out, "a", encoding="utf-8") as out:
            out.write(f"\n## Against polars and duckdb, and the machine's ceiling\n\n{peers}\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
