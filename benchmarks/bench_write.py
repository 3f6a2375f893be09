"""Write benchmarks: arrowmm against pyarrow, same process, same data.

Run from the repository root::

    python benchmarks/bench_write.py                 # full run (1 GiB writes, a 4 GiB copy; ~2 min)
    python benchmarks/bench_write.py --quick         # smoke version (< 30 s, ~50 MB)
    python benchmarks/bench_write.py --out bench.md  # also write the table as markdown
    python benchmarks/bench_write.py --profile       # also cProfile one arrowmm write of benchmark 1
    python benchmarks/bench_write.py --small-only    # benchmark 4 alone (~1 min)

The outputs go to ``benchmarks/data/`` (git-ignored) and are deleted at the end
(``--keep`` keeps them).  ``ratio`` is arrowmm / pyarrow (below 1 means arrowmm
is faster or smaller):

1. file write    - uncompressed IPC *file* of 16 float64/int64 columns (8 + 8),
                   batches of 1 Mi rows, 1 GiB in all (--quick: 3 batches of
                   128 Ki rows, 48 MiB), from numpy arrays in memory, to a path:
                   open + write every batch + close.  arrowmm's batches wrap
                   the numpy arrays without copying (``arrowmm.record_batch``
                   when present), pyarrow's are ``pa.record_batch`` of the same
                   arrays.  Both outputs are deleted before every timed run, so
                   neither run pays for truncating or writing back the
                   previous one.                         target: time ratio <= 1.1
2. stream write  - the same with the IPC *stream* format.        target <= 1.1
3. memory        - a 4 GiB file (--quick: 192 MiB) written with pyarrow is
                   opened with ``arrowmm.open_file`` (memory-mapped) and every
                   batch is written with arrowmm's file writer to a new path,
                   in a child process; pyarrow does the same in another child
                   (``pa.memory_map`` + ``pa.ipc.open_file`` + ``pa.ipc.new_file``).
                   The child samples ``/proc/self/status`` every 50 ms.
   3a. peak anonymous memory growth (max RssAnon - baseline)   target <= 64 MiB
   3b. tracemalloc peak (Python and numpy allocations)         target <= 64 MiB
   3c. peak RSS growth (VmHWM - baseline; includes the mapped source pages,
       which are file-backed and reclaimable)                  information only
   "Zero extra copies" of the data means 3a and 3b stay within a few MiB.
4. small writes  - what a write costs besides its bytes: (a) a 16-column, 10-row table
                   (int64, float64, string, bool) written as a whole file to memory
                   (``new_file(BytesIO)`` + ``write_table`` + close), time per file;
                   (b) 1,000 batches of 8 rows x 3 columns written to one stream in
                   memory, time for the stream; (c) the same with each batch built
                   in the loop (``record_batch`` of two numpy arrays and 8 str), as
                   a producer makes them: the building is timed too.  target <= 1.0

Throughput is data bytes (rows x columns x 8, not file bytes) per second, in
GB/s (1e9 bytes).  Each timed benchmark runs both libraries alternately after
warm-up runs and reports the median (``time.perf_counter``).  The exit status
is 0 whatever the results (machines are noisy) unless ``--strict`` is given.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
from common import (Result, base_parser, fmt_time, machine_lines, print_result,  # noqa: E402
                    report, settings, warm_cache)  # (benchmarks/common.py, beside this script)

SEED = 20240501
MiB, GiB = 2 ** 20, 2 ** 30
FULL = dict(cols=16, rows=1 << 20, batches=8,  # 8 x 128 MiB = 1 GiB
            mem_batches=32,  # 32 x 128 MiB = 4 GiB
            repeats=9, warmup=1)
QUICK = dict(cols=16, rows=1 << 17, batches=3,  # 3 x 16 MiB = 48 MiB
             mem_batches=12,  # 12 x 16 MiB = 192 MiB
             repeats=3, warmup=1)
MEM_TARGET = 64 * MiB
SAMPLE_S = 0.05


@dataclass
class WriteResult(Result):
    """``arrowmm_s``/``pyarrow_s`` are seconds when ``kind`` is "time" (the ratio of times is the
    criterion) or bytes when it is "mem" (``target``: the most bytes for arrowmm).  ``target``
    None: information only."""
    kind: str = "time"
    nbytes: int = 0  # data bytes written, for GB/s

    @property
    def ratio(self) -> Optional[float]:
        if self.kind == "mem" and self.pyarrow_s < MiB:
            return None  # a ratio of two near-zero numbers means nothing
        return self.arrowmm_s / self.pyarrow_s

    @property
    def passed(self) -> Optional[bool]:
        if self.target is None:
            return None
        return self.ratio <= self.target if self.kind == "time" else self.arrowmm_s <= self.target

    def cell(self, v: float) -> str:
        if self.kind == "mem":
            return f"{v / MiB:,.1f} MiB"
        if not self.nbytes:  # (a fixed cost: the time is the measure)
            return fmt_time(v)
        return f"{self.nbytes / v / 1e9:.2f} GB/s ({fmt_time(v, ms_digits=1)})"

    def target_cell(self) -> str:
        if self.target is None:
            return "-"
        return f"<= {self.target}" if self.kind == "time" else f"<= {self.target / MiB:.0f} MiB"


# -- data ----------------------------------------------------------------------------------
def names(ncols: int):
    return [f"{'f' if k % 2 == 0 else 'i'}{k}" for k in range(ncols)]


def make_columns(rng, ncols: int, rows: int):
    """One batch worth of numpy columns: float64 at even positions, int64 at odd ones."""
    return [rng.random(rows) if k % 2 == 0 else rng.integers(-1 << 40, 1 << 40, rows)
            for k in range(ncols)]


def pa_schema(ncols: int):
    import pyarrow as pa
    return pa.schema([(n, pa.float64() if n[0] == "f" else pa.int64()) for n in names(ncols)])


def amm_batch(cols):
    """An arrowmm RecordBatch over the numpy arrays, without copying them.

    ``arrowmm.record_batch`` (or ``arrowmm.interop.build.record_batch``) when the package
    has it; otherwise the arrays are wrapped directly (``as_view`` + ``make_array``),
    which is what it does for contiguous numeric arrays without nulls.
    Returns (batch, how).
    """
    import arrowmm
    cols_by_name = dict(zip(names(len(cols)), cols))
    if hasattr(arrowmm, "record_batch"):
        return arrowmm.record_batch(cols_by_name), "arrowmm.record_batch"
    try:
        from arrowmm.interop.build import record_batch
        return record_batch(cols_by_name), "arrowmm.interop.build.record_batch"
    except ImportError:
        pass
    from arrowmm._core._region import as_view
    from arrowmm.arrays.array import make_array
    arrays = [make_array(arrowmm.float64() if a.dtype.kind == "f" else arrowmm.int64(), len(a),
                         [None, as_view(a)], null_count=0) for a in cols]
    return arrowmm.RecordBatch.from_arrays(arrays, names=list(cols_by_name)), "as_view + make_array"


def shares_memory(batch, cols) -> bool:
    """Whether every column of the arrowmm batch views its numpy array's memory."""
    return all(batch.column(k).to_numpy().ctypes.data == c.ctypes.data for k, c in enumerate(cols))


def make_source_file(path: Path, cfg, nbatches: int) -> Path:
    """The memory benchmark's source file, written with pyarrow one batch at a time and fsynced."""
    import pyarrow as pa
    if path.exists():
        return path
    rng = np.random.default_rng(SEED + 1)
    schema = pa_schema(cfg["cols"])
    tmp = path.with_suffix(".tmp")
    with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
        for _ in range(nbatches):
            writer.write_batch(pa.record_batch(make_columns(rng, cfg["cols"], cfg["rows"]), schema=schema))
    with open(tmp, "rb") as f:  # on disk now, so that its write-back does not slow the timed copies
        os.fsync(f.fileno())
    tmp.rename(path)
    return path


def unlink(*paths: Path) -> None:
    for p in paths:
        try:
            p.unlink()
        except FileNotFoundError:
            pass


# -- benchmarks 1 and 2: write throughput ------------------------------------------------------
def compare(f_amm, f_pa, setup, repeats: int, warmup: int):
    """Seconds of ``f_amm`` and ``f_pa`` (lists), alternated; ``setup()`` (untimed) before each."""
    for _ in range(warmup):
        for f in (f_amm, f_pa):
            setup()
            f()
    t_amm, t_pa = [], []
    for _ in range(repeats):
        for f, out in ((f_amm, t_amm), (f_pa, t_pa)):
            setup()
            gc.collect()
            t0 = time.perf_counter()
            f()
            out.append(time.perf_counter() - t0)
    return t_amm, t_pa


def writers(fmt: str, amm_batches, pa_batches, out_amm: Path, out_pa: Path):
    import arrowmm
    import pyarrow as pa
    amm_new = arrowmm.new_file if fmt == "file" else arrowmm.new_stream
    pa_new = pa.ipc.new_file if fmt == "file" else pa.ipc.new_stream
    amm_schema, pa_sch = amm_batches[0].schema, pa_batches[0].schema

    def amm():
        with amm_new(str(out_amm), amm_schema) as w:
            for b in amm_batches:
                w.write(b)

    def pya():
        with pa_new(str(out_pa), pa_sch) as w:
            for b in pa_batches:
                w.write_batch(b)
    return amm, pya


def check_output(fmt: str, path: Path, pa_batches) -> None:
    """arrowmm's output reads back with pyarrow and equals the source batches."""
    import pyarrow as pa
    if fmt == "file":
        r = pa.ipc.open_file(pa.memory_map(str(path)))
        got = [r.get_batch(i) for i in range(r.num_record_batches)]
    else:
        got = list(pa.ipc.open_stream(pa.memory_map(str(path))))
    assert len(got) == len(pa_batches), (len(got), len(pa_batches))
    for a, b in zip(got, pa_batches):
        assert a.schema.types == b.schema.types and a.equals(b.cast(a.schema)), "round trip differs"


def bench_throughput(fmt: str, data, cfg, d: Path) -> WriteResult:
    amm_batches, pa_batches, how, nbytes = data
    out_amm, out_pa = d / f"write_{fmt}_arrowmm.arrow", d / f"write_{fmt}_pyarrow.arrow"
    amm, pya = writers(fmt, amm_batches, pa_batches, out_amm, out_pa)
    amm()
    check_output(fmt, out_amm, pa_batches)
    sizes = out_amm.stat().st_size, None
    pya()
    sizes = sizes[0], out_pa.stat().st_size
    t_amm, t_pa = compare(amm, pya, lambda: unlink(out_amm, out_pa), cfg["repeats"], cfg["warmup"])
    unlink(out_amm, out_pa)
    t = statistics.median(t_amm), statistics.median(t_pa)
    n = 1 if fmt == "file" else 2
    shape = f"{cfg['batches']} batches x {cfg['rows']:,} rows x {cfg['cols']} cols"
    return WriteResult(f"{n}. {fmt} write (uncompressed, from memory)", *t, 1.1,
                       f"{shape} = {nbytes / MiB:,.0f} MiB to a path; open + write + close; "
                       f"min {fmt_time(min(t_amm), ms_digits=1)} / {fmt_time(min(t_pa), ms_digits=1)}; "
                       f"files {sizes[0]:,} / {sizes[1]:,} B; arrowmm batches via {how}",
                       kind="time", nbytes=nbytes)


def bench_small(cfg) -> list:
    """Benchmark 4: the fixed cost of a write (metadata, checks, calls), not its bandwidth."""
    import io
    import arrowmm
    import pyarrow as pa
    kinds = (lambda n: np.arange(n, dtype=np.int64), lambda n: np.arange(n, dtype=np.float64),
             lambda n: [f"s{j}" for j in range(n)], lambda n: np.arange(n) % 2 == 0)
    cols = {f"c{i}": kinds[i % 4](10) for i in range(16)}
    at, pt = arrowmm.table(cols), pa.table(cols)
    few = {f"c{i}": kinds[i](8) for i in range(3)}
    ab, pb = arrowmm.record_batch(few), pa.record_batch(few)
    files = 200

    def amm_files():
        for _ in range(files):
            with arrowmm.new_file(io.BytesIO(), at.schema) as w:
                w.write_table(at)

    def pa_files():
        for _ in range(files):
            with pa.ipc.new_file(pa.BufferOutputStream(), pt.schema) as w:
                w.write_table(pt)

    def amm_stream():
        with arrowmm.new_stream(io.BytesIO(), ab.schema) as w:
            for _ in range(1000):
                w.write(ab)

    def pa_stream():
        with pa.ipc.new_stream(pa.BufferOutputStream(), pb.schema) as w:
            for _ in range(1000):
                w.write_batch(pb)

    def amm_built():  # (each batch made in the loop, as a producer makes them)
        with arrowmm.new_stream(io.BytesIO(), ab.schema) as w:
            for i in range(1000):
                w.write(arrowmm.record_batch({"c0": np.arange(8, dtype=np.int64) + i,
                                              "c1": np.arange(8, dtype=np.float64),
                                              "c2": [f"s{j}" for j in range(8)]}))

    def pa_built():
        with pa.ipc.new_stream(pa.BufferOutputStream(), pb.schema) as w:
            for i in range(1000):
                w.write_batch(pa.record_batch({"c0": np.arange(8, dtype=np.int64) + i,
                                               "c1": np.arange(8, dtype=np.float64),
                                               "c2": [f"s{j}" for j in range(8)]}))

    sink = io.BytesIO()
    with arrowmm.new_file(sink, at.schema) as w:
        w.write_table(at)
    assert pa.ipc.open_file(sink.getvalue()).read_all().equals(pt), "round trip differs"
    out = []
    t_amm, t_pa = compare(amm_files, pa_files, lambda: None, cfg["repeats"], cfg["warmup"])
    out.append(WriteResult("4a. small file: 16 columns x 10 rows to memory (per file)",
                           statistics.median(t_amm) / files, statistics.median(t_pa) / files, 1.0,
                           f"{files} files per timed run", kind="time"))
    t_amm, t_pa = compare(amm_stream, pa_stream, lambda: None, cfg["repeats"], cfg["warmup"])
    out.append(WriteResult("4b. 1,000 batches of 8 rows x 3 columns to a stream in memory",
                           statistics.median(t_amm), statistics.median(t_pa), 1.0,
                           "one stream per timed run", kind="time"))
    t_amm, t_pa = compare(amm_built, pa_built, lambda: None, cfg["repeats"], cfg["warmup"])
    out.append(WriteResult("4c. the same 1,000 batches, each built in the loop (numpy + strings)",
                           statistics.median(t_amm), statistics.median(t_pa), 1.0,
                           "record_batch of 2 numpy arrays and 8 str per batch, then write",
                           kind="time"))
    return out


def profile_write(data, d: Path, top: int = 15) -> str:
    import cProfile
    import io
    import pstats
    amm_batches, pa_batches, _, _ = data
    out = d / "write_profile.arrow"
    amm, _ = writers("file", amm_batches, pa_batches, out, d / "unused.arrow")
    amm()  # warm
    unlink(out)
    prof = cProfile.Profile()
    prof.enable()
    amm()
    prof.disable()
    unlink(out)
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(top)
    return s.getvalue()


# -- benchmark 3: memory while writing from a memory-mapped file -------------------------------
def proc_status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) * 1024
    return out


def mem_child(lib: str, src: str, dst: str) -> dict:
    """Run in the child: copy ``src`` batch by batch to ``dst`` with ``lib``; report memory."""
    if lib == "arrowmm":
        import arrowmm

        def run():
            r = arrowmm.open_file(src)
            with arrowmm.new_file(dst, r.schema) as w:
                for i in range(r.num_record_batches):
                    w.write(r.get_batch(i))
            n = r.num_record_batches
            r.close()
            return n
    else:
        import pyarrow as pa

        def run():
            with pa.memory_map(src) as source:
                r = pa.ipc.open_file(source)
                with pa.ipc.new_file(dst, r.schema) as w:
                    for i in range(r.num_record_batches):
                        w.write_batch(r.get_batch(i))
                return r.num_record_batches
    gc.collect()
    base = proc_status()
    peak = dict(base)
    stop = threading.Event()

    def sample():
        while True:
            s = proc_status()
            for k in ("RssAnon", "RssFile", "VmRSS"):
                peak[k] = max(peak[k], s[k])
            if stop.wait(SAMPLE_S):
                return
    sampler = threading.Thread(target=sample, daemon=True)
    tracemalloc.start()
    sampler.start()
    t0 = time.perf_counter()
    n = run()
    elapsed = time.perf_counter() - t0
    traced_peak = tracemalloc.get_traced_memory()[1]
    stop.set()
    sampler.join()
    tracemalloc.stop()
    end = proc_status()
    for k in ("RssAnon", "RssFile", "VmRSS"):
        peak[k] = max(peak[k], end[k])
    return dict(lib=lib, batches=n, seconds=elapsed, base=base, end=end, peak=peak,
                hwm_growth=end["VmHWM"] - base["VmRSS"],
                anon_growth=peak["RssAnon"] - base["RssAnon"],
                file_growth=peak["RssFile"] - base["RssFile"],
                tracemalloc_peak=traced_peak, file_size=os.path.getsize(dst))


def run_mem_child(lib: str, src: Path, dst: Path) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--mem-child", lib, str(src), str(dst)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"memory child ({lib}) failed:\n{proc.stdout}\n{proc.stderr}")
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["ru_maxrss_children"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    res["ru_maxrss_children_before"] = before
    return res


def bench_memory(src: Path, d: Path, note: str, cfg, mem_batches: int):
    t0 = time.perf_counter()
    make_source_file(src, cfg, mem_batches)
    warm_cache(src)  # for both children
    size = src.stat().st_size
    print(f"  3. source file {src.name} ({size / MiB:,.0f} MiB) ready in {time.perf_counter() - t0:.1f} s",
          flush=True)
    res = {}
    for lib in ("arrowmm", "pyarrow"):
        dst = d / f"mem_copy_{lib}.arrow"
        unlink(dst)
        res[lib] = run_mem_child(lib, src, dst)
        if lib == "arrowmm":  # the copy reads back with pyarrow: same batches, last one equal
            import pyarrow as pa
            with pa.memory_map(str(src)) as a, pa.memory_map(str(dst)) as b:
                ra, rb = pa.ipc.open_file(a), pa.ipc.open_file(b)
                n = ra.num_record_batches
                assert rb.num_record_batches == n and rb.get_batch(n - 1).equals(ra.get_batch(n - 1))
        unlink(dst)
        r = res[lib]
        print(f"  3. {lib}: {r['batches']} batches, {size / MiB:,.0f} MiB in {r['seconds']:.2f} s "
              f"({size / r['seconds'] / 1e9:.2f} GB/s); anon +{r['anon_growth'] / MiB:.1f} MiB, "
              f"file-backed +{r['file_growth'] / MiB:.1f} MiB, VmHWM +{r['hwm_growth'] / MiB:.1f} MiB, "
              f"tracemalloc peak {r['tracemalloc_peak'] / MiB:.1f} MiB, "
              f"ru_maxrss(children) {r['ru_maxrss_children'] / MiB:.0f} MiB", flush=True)
    a, p = res["arrowmm"], res["pyarrow"]
    base = (f"copy of a {size / MiB:,.0f} MiB mapped file{note} in a child; "
            f"{a['seconds']:.2f} s / {p['seconds']:.2f} s")
    return [
        WriteResult("3a. write-from-map: peak anonymous memory growth", a["anon_growth"], p["anon_growth"],
                    MEM_TARGET, f"{base}; max RssAnon (sampled every {SAMPLE_S * 1e3:.0f} ms) - baseline",
                    kind="mem"),
        WriteResult("3b. write-from-map: tracemalloc peak", a["tracemalloc_peak"], p["tracemalloc_peak"],
                    MEM_TARGET, "Python + numpy allocations (pyarrow's own allocator is not traced)", kind="mem"),
        WriteResult("3c. write-from-map: peak RSS growth", a["hwm_growth"], p["hwm_growth"], None,
                    f"VmHWM - baseline VmRSS; includes the mapped source pages (file-backed, reclaimable): "
                    f"file-backed peak +{a['file_growth'] / MiB:,.0f} / +{p['file_growth'] / MiB:,.0f} MiB",
                    kind="mem"),
    ]


# -- reporting -----------------------------------------------------------------------------
def environment(quick: bool, d: Path, notes) -> str:
    lines = machine_lines(quick) + [
        f"- output folder: {d} (written to the page cache; no fsync by either library)",
        "- load average at start: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())]
    return "\n".join(lines + [f"- {n}" for n in notes])


def main(argv=None) -> int:
    ap = base_parser(__doc__, data_dir_help="folder for the written files")
    ap.add_argument("--keep", action="store_true", help="keep the memory benchmark's source file")
    ap.add_argument("--profile", action="store_true",
                    help="also print a cProfile (top 15, cumulative) of one arrowmm write of benchmark 1")
    ap.add_argument("--small-only", action="store_true",
                    help="run benchmark 4 (small writes: the fixed cost) alone")
    ap.add_argument("--mem-child", nargs=3, metavar=("LIB", "SRC", "DST"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.mem_child:
        print(json.dumps(mem_child(*args.mem_child)))
        return 0

    import pyarrow as pa
    import arrowmm  # noqa: F401
    cfg = settings(args, FULL, QUICK)
    if args.small_only:
        results = bench_small(cfg)
        for result in results:
            print_result(result)
        env = "\n".join(machine_lines(args.quick)
                        + ["- load average at start: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())])
        return report(results, "arrowmm vs pyarrow small writes", env, cfg, args.out, args.strict,
                      note=f"median of {cfg['repeats']} repeats after {cfg['warmup']} warm-up run(s)")
    d = args.data_dir
    d.mkdir(parents=True, exist_ok=True)
    batch_bytes = cfg["cols"] * cfg["rows"] * 8
    notes = []

    # disk: two outputs of benchmarks 1/2 at a time, then the source + one copy of benchmark 3
    src = d / f"mem_source_{cfg['mem_batches']}x{cfg['rows']}x{cfg['cols']}.arrow"
    margin = 256 * MiB
    free = shutil.disk_usage(d).free
    need_12 = 2 * cfg["batches"] * batch_bytes + margin
    if free < need_12:
        raise SystemExit(f"only {free / GiB:.1f} GiB free in {d}: benchmarks 1-2 need {need_12 / GiB:.1f} GiB")
    have_src = src.exists()
    copies = 1 if have_src else 2
    mem_batches = cfg["mem_batches"]
    if free < copies * mem_batches * batch_bytes + margin:
        mem_batches = max(1, int((free - margin) // (2 * batch_bytes)))
        have_src = False
        src = d / f"mem_source_{mem_batches}x{cfg['rows']}x{cfg['cols']}.arrow"
        notes.append(f"only {free / GiB:.1f} GiB free: the memory benchmark's file shrinks from "
                     f"{cfg['mem_batches'] * batch_bytes / GiB:.2f} to {mem_batches * batch_bytes / GiB:.2f} GiB")
        print(notes[-1], flush=True)
    mem_note = "" if mem_batches == cfg["mem_batches"] else " (shrunk: low disk space)"

    t0 = time.perf_counter()
    print("preparing the data in memory", flush=True)
    rng = np.random.default_rng(SEED)
    schema = pa_schema(cfg["cols"])
    columns = [make_columns(rng, cfg["cols"], cfg["rows"]) for _ in range(cfg["batches"])]
    made = [amm_batch(cols) for cols in columns]
    amm_batches, how = [b for b, _ in made], made[0][1]
    if not all(shares_memory(b, cols) for b, cols in zip(amm_batches, columns)):
        how += " (COPIES the arrays)"
    pa_batches = [pa.record_batch(cols, schema=schema) for cols in columns]
    nbytes = cfg["batches"] * batch_bytes
    print(f"data ready in {time.perf_counter() - t0:.1f} s\n", flush=True)
    notes.append(f"in-memory data: {nbytes / MiB:,.0f} MiB; memory benchmark source: {src.name} "
                 f"({mem_batches * batch_bytes / MiB:,.0f} MiB of data), written with pyarrow and fsynced "
                 f"after benchmarks 1-2")
    env = environment(args.quick, d, notes)
    print(env + "\n", flush=True)

    data = (amm_batches, pa_batches, how, nbytes)
    results = []
    try:
        for fmt in ("file", "stream"):
            results.append(bench_throughput(fmt, data, cfg, d))
            print_result(results[-1])
        if args.profile:
            print("\ncProfile of one arrowmm file write (benchmark 1), top 15 by cumulative time:\n"
                  + profile_write(data, d), flush=True)
        del data, made, amm_batches, pa_batches, columns
        gc.collect()
        results += bench_memory(src, d, mem_note, cfg, mem_batches)
        for result in bench_small(cfg):
            results.append(result)
            print_result(result)
    finally:
        if not args.keep:
            unlink(src)
    return report(results, "arrowmm vs pyarrow write benchmarks", env, cfg, args.out, args.strict,
                  note=f"median of {cfg['repeats']} repeats after {cfg['warmup']} warm-up run(s)")


if __name__ == "__main__":
    sys.exit(main())
