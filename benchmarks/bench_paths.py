"""Everyday paths (issue 17): arrowmm against pyarrow (and polars where it has the operation).

Run from the repository root::

    python benchmarks/bench_paths.py                 # full run (a few minutes)
    python benchmarks/bench_paths.py --quick         # smoke version (< 60 s)
    python benchmarks/bench_paths.py --out paths.md  # also write the table as markdown

Every row is measured in one process, arrowmm and its peer alternately after warm-up runs;
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
       ``readinto`` of the same bytes) is in the details                  target <= 0.91
       (throughput >= 1.1x)
4.     all 100 columns of a random batch of a 100-column file (float64/int64, 10,000 rows,
       1,000 batches) to numpy, reader opened once                        target <= 0.8
5.     open that 100-column file and read its schema, repeated in one process  <= 0.8
6.     ``to_pandas()`` of a string column of 1,000 distinct values over 1M rows   <= 1.0
7.     open a file of 10^6 fields (10^4 with --quick)                        target <= 2.0
8.     ``to_pandas()`` of a file of 5,000 batches of 10 rows (the schema of rows 1-2),
       arrowmm's reader against pyarrow's ``read_all().to_pandas()``; arrowmm's
       ``read_all().to_pandas()`` is in the details                         target <= 1.0

``--rows 1a,2b,2c`` runs only those rows (and writes only their files).  Each row prints the
load average (1, 5, 15 minutes) before it starts: the ratios of a loaded machine are not an
idle one's, so compare runs at like loads.

The exit status is 0 whatever the ratios unless ``--strict`` is given.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
from common import (Result, base_parser, compare, machine_lines, print_result,  # noqa: E402
                    report, settings, warm_cache)  # (benchmarks/common.py, beside this script)
import arrowmm  # noqa: E402

SEED = 20261124
FULL = dict(batches=6, rows=1_000_000, wide_batches=1_000, wide_rows=10_000, fields=1_000_000,
            pandas_rows=1_000_000, small_batches=5_000, small_rows=10, repeats=5, warmup=1)
QUICK = dict(batches=2, rows=50_000, wide_batches=20, wide_rows=1_000, fields=10_000,
             pandas_rows=50_000, small_batches=5_000, small_rows=10, repeats=3, warmup=1)


# -- data ------------------------------------------------------------------------------------

def _nulls(rng, rows):
    return pa.array(rng.random(rows) < 0.1)


def mixed_batch(rng, rows: int) -> pa.RecordBatch:
    """float64, int64, utf8 (1-12 chars), list<int32> (0-8 items), bool; ~10% nulls each."""
    def masked(values):
        return pa.array(values, mask=rng.random(rows) < 0.1)
    words = np.array(["abcdefghijkl"[:n] for n in range(1, 13)] +
                     [f"w{i}"[:12] for i in range(2000)], dtype=object)
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


# -- benchmarks --------------------------------------------------------------------------------

def bench_table(path: Path, codec: str, cfg, label: str) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            return pa.table(r)

    def pya():
        return pa.ipc.open_file(pa.memory_map(str(path))).read_all()

    assert amm().equals(pya())
    times = compare(amm, pya, cfg["repeats"], cfg["warmup"])
    return Result(label, *times, 0.8, f"{cfg['batches']} x {cfg['rows']:,} rows, "
                                      f"{path.stat().st_size / 2**20:,.0f} MiB {codec} file")


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

    assert amm() == pya()
    times = compare(amm, pya, cfg["repeats"], cfg["warmup"])
    return Result("2. every column one at a time, zstd", *times, round(1 / 1.2, 2),
                  f"throughput ratio {times[1] / times[0]:.2f}x (target >= 1.2x)")


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

    with arrowmm.open_file(path) as r:  # (the same values, checked once, untimed)
        rp = pa.ipc.open_file(pa.memory_map(str(path)))
        for i in range(r.num_record_batches):
            b, want = r.get_batch(i), rp.get_batch(i)
            assert all(pa.array(b.column(k)).equals(want.column(k)) for k in range(b.num_columns))
    times = compare(amm, pya, cfg["repeats"], cfg["warmup"])
    # (the processor time of one more walk each, every thread's: on a machine whose cores
    # other jobs keep busy, the wall time follows a process's share of them, not its work)
    cpu = []
    for f in (amm, pya):
        c0 = time.process_time()
        f()
        cpu.append(time.process_time() - c0)
    return Result(label, *times, 0.8, f"{cfg['batches']} x {cfg['rows']:,} rows, "
                                      f"{path.stat().st_size / 2**20:,.0f} MiB {codec} file; "
                                      f"CPU {cpu[0] * 1e3:.0f} ms against {cpu[1] * 1e3:.0f} ms")


_PIPE_CHILD = r"""
import sys, time
import numpy as np
lib = sys.argv[1]
if lib == "arrowmm":
    import arrowmm
elif lib == "pyarrow":
    import pyarrow as pa
t0 = time.perf_counter()  # (imports are not timed)
n = 0
if lib == "raw":  # (the same 1 MiB pipe buffer arrowmm asks for: the pipe at its best)
    import fcntl
    try:
        fcntl.fcntl(0, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except OSError:
        pass
    buf = bytearray(1 << 22)
    src = sys.stdin.buffer
    while True:
        got = src.readinto(buf)
        if not got:
            break
        n += got
elif lib == "arrowmm":
    for b in arrowmm.open_stream(sys.stdin.buffer):
        for c in b.columns:
            n += sum(x.size for x in c.buffers() if x is not None)
else:
    for b in pa.ipc.open_stream(sys.stdin.buffer):
        for c in b.columns:
            n += sum(x.size for x in c.buffers() if x is not None)
print(time.perf_counter() - t0, n)
"""


def _pipe(path: Path, lib: str) -> float:
    cat = subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE)
    try:
        proc = subprocess.run([sys.executable, "-c", _PIPE_CHILD, lib], stdin=cat.stdout,
                              capture_output=True, text=True, check=False)
    finally:
        cat.stdout.close()
        cat.wait()
    if proc.returncode:
        raise RuntimeError(f"{lib} pipe reader failed:\n{proc.stderr[-2000:]}")
    seconds, n = proc.stdout.split()
    return float(seconds), int(n)


def bench_pipe(path: Path, cfg) -> Result:
    assert _pipe(path, "arrowmm")[1] == _pipe(path, "pyarrow")[1]
    t_amm, t_pa, t_raw = [], [], []
    for _ in range(cfg["repeats"]):
        for lib, out in (("arrowmm", t_amm), ("pyarrow", t_pa), ("raw", t_raw)):
            out.append(_pipe(path, lib)[0])
    med = [float(np.median(x)) for x in (t_amm, t_pa, t_raw)]
    size = path.stat().st_size
    gbs = [size / s / 1e9 for s in med]
    return Result("3. uncompressed stream from a pipe", med[0], med[1], round(1 / 1.1, 2),
                  f"{size / 2**20:,.0f} MiB; arrowmm {gbs[0]:.2f} GB/s, pyarrow {gbs[1]:.2f} GB/s, "
                  f"raw pipe {gbs[2]:.2f} GB/s (arrowmm at {med[2] / med[0]:.0%} of it, target >= 80%)")


def bench_wide_numpy(path: Path, cfg) -> Result:
    # Each library walks its own random batches (two sequences from one distribution): on the
    # same sequence, whichever library went first paid for every page the kernel had evicted
    # from the 8 GB file (other jobs' files compete for the page cache) and the other read it
    # hot, which made this row swing by the order alone.
    rng = np.random.default_rng(SEED)
    picks = {lib: rng.integers(0, cfg["wide_batches"], 1000).tolist() for lib in ("amm", "pa")}
    # The pages both libraries read (each batch's header) into the page cache, not the whole
    # 8 GB file: that is more than this VM's page cache keeps, and reading it through evicted
    # its own head (and every other file) before the row began.
    with arrowmm.open_file(path) as warm:
        for i in range(warm.num_record_batches):
            warm.get_batch(i)
    ra = arrowmm.open_file(path)
    rp = pa.ipc.open_file(pa.memory_map(str(path)))
    state = {"amm": 0, "pa": 0}

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

    first = picks["amm"][0]
    assert all(np.array_equal(x, y) for x, y in
               zip([c.to_numpy() for c in ra.get_batch(first).columns],
                   [rp.get_batch(first).column(k).to_numpy() for k in range(100)]))
    inner = 50

    def loop(f):
        return lambda: [f() for _ in range(inner)]
    t = compare(loop(amm), loop(pya), cfg["repeats"], cfg["warmup"])
    ra.close()
    return Result("4. 100 columns of a random batch to numpy", t[0] / inner, t[1] / inner, 0.8,
                  f"{cfg['wide_batches']:,} batches x {cfg['wide_rows']:,} rows x 100 cols; per batch")


def bench_wide_open(path: Path, cfg) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            return r.schema

    def pya():
        return pa.ipc.open_file(pa.memory_map(str(path))).schema

    assert amm().names == pya().names
    inner = 20

    def loop(f):
        return lambda: [f() for _ in range(inner)]
    t = compare(loop(amm), loop(pya), cfg["repeats"], cfg["warmup"])
    return Result("5. open a 100-column file + schema (repeated)", t[0] / inner, t[1] / inner, 0.8,
                  "per open, same process")


def bench_pandas(path: Path, cfg) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            return r.get_batch(0).to_pandas()

    def pya():
        return pa.ipc.open_file(pa.memory_map(str(path))).get_batch(0).to_pandas()

    a, p = amm(), pya()
    assert a.equals(p)
    times = compare(amm, pya, cfg["repeats"], cfg["warmup"])
    return Result("6. to_pandas() of strings, 1,000 distinct", *times, 1.0,
                  f"{cfg['pandas_rows']:,} rows")


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
    times = compare(amm, pya, cfg["repeats"], cfg["warmup"])
    t_all = compare(amm_read_all, pya, cfg["repeats"], 0)
    return Result(f"8. to_pandas() of {cfg['small_batches']:,} batches of {cfg['small_rows']} rows",
                  *times, 1.0, f"read_all().to_pandas(): {t_all[0] * 1e3:.0f} ms against "
                               f"{t_all[1] * 1e3:.0f} ms (ratio {t_all[0] / t_all[1]:.2f})")


def bench_fields(path: Path, n: int, cfg) -> Result:
    def amm():
        with arrowmm.open_file(path) as r:
            return len(r.schema)

    def pya():
        return len(pa.ipc.open_file(pa.memory_map(str(path))).schema)

    assert amm() == pya() == n
    times = compare(amm, pya, max(3, cfg["repeats"] // 2), 1)
    return Result(f"7. open a file of {n:,} fields", *times, 2.0, "1 row of int8 each")


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
        print(f"    ({load} before the row)", flush=True)
    return report(results, "arrowmm vs pyarrow on everyday paths (issue 17)", env, cfg, args.out,
                  args.strict, note=f"median of the timed repeats after {cfg['warmup']} warm-up runs")


if __name__ == "__main__":
    sys.exit(main())
