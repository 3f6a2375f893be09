"""Shared-memory hand-off benchmarks: a table handed to a worker process that sums a column,
arrowmm's named segment + pickle-by-name against pyarrow's usual routes, same run.

Run from the repository root::

    python benchmarks/bench_shm.py            # full run: a 1 GiB table (8 float64 x 16M rows)
    python benchmarks/bench_shm.py --quick    # smoke version (32 MiB, a few seconds)
    python benchmarks/bench_shm.py --out bench_shm.md
    python benchmarks/bench_shm.py --channel-only   # rows 4 to 6 only (a minute or two)
    python benchmarks/bench_shm.py --latency-only   # rows 5 to 5c only (the small batches)

One worker process (``multiprocessing``, spawn) is started before timing and reused.  Each
timed run hands the table over and waits for the worker's sum of column ``c0``:

1. hand-off   - producer writes, worker sums.  arrowmm: ``arrowmm.shm.share(table)`` (an IPC
                file in /dev/shm), the reader's batches sent pickled by name, unlink.  pyarrow:
                an IPC stream written into a ``multiprocessing.shared_memory`` segment sized
                with ``MockOutputStream`` (``FixedSizeBufferWriter(py_buffer(shm.buf))``), the
                name sent, the worker reads ``pa.ipc.open_stream(pa.py_buffer(shm.buf))``,
                close and unlink.                                          target <= 1.2
2. consume    - the segment already written: only the send and the worker's map + sum
                (arrowmm batches pickled by name vs pyarrow attach + read_all + sum)
                                                                           target <= 1.5
3. vs pickle  - arrowmm's consume (2) against sending the pyarrow table itself through
                ``multiprocessing`` (pickled: the bytes are copied through a pipe)
                                                                           target <= 0.5

4. channel    - a stream of 1 MiB batches (one float64 column) from this process to a worker
                that takes each one (and reads its first and last value): ``arrowmm.shm.Channel`` (a ring in /dev/shm) against
                (a) an arrowmm IPC stream over a pipe, (b) a pyarrow IPC stream over a pipe
                (a FIFO grown to 1 MiB with F_SETPIPE_SZ where allowed), (c) a
                ``multiprocessing.Queue`` of pyarrow batches (pickled).  One long-lived worker
                per route; the four routes run in turn within each repeat (interleaved).
                Each route sends its library's own batches, made before timing.
                                                               target <= 0.2 (>= 5x a pipe)
5. latency    - one small batch (a timestamp) at a time, 0.5 ms apart: median one-way time
                from before ``send`` until the worker has the value (CLOCK_MONOTONIC, shared by
                processes), channel (the default consumer, whose spin adapts to the gaps) vs
                pyarrow over a pipe; the details give the 90th and 99th percentiles and the
                consumer's CPU time per batch (what staying awake costs).   target < 20 us
                5b: a consumer that spins (``attach(spin=0.001)``: busy-waits up to 1 ms).
                5c: batches 5 ms apart, so the default consumer sleeps between them (the
                futex wake-up's cost).
                5d: row 5 under load: two busy processes (one per core on a 2-core machine)
                run beside producer and consumer.                              target < 40 us
                The load average is printed before the channel rows.
6. in place   - the 1 MiB batches of 4 *generated* by the producer (a copy from a ready
                array, standing for a fast generator): into a batch reserved in a channel
                slot (``Channel.reserve``: the only copy is the generating one) against into a
                reused array written as an arrowmm stream to a pipe.         target <= 0.2

Both shared-memory routes are zero-copy on the worker side; what differs is the writing,
the per-batch bookkeeping and, for 3, the copy.  Times include the page faults of mapping
the segment in the worker each time (the worker drops its mapping after every run).  The
exit status is 0 whatever the ratios (machines are noisy) unless ``--strict``.
"""
from __future__ import annotations

import fcntl
import multiprocessing
import os
import pickle
import statistics
import sys
import tempfile
import time
from multiprocessing import shared_memory
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (Result, base_parser, compare, machine_lines, print_result,  # noqa: E402
                    report, settings)
import arrowmm  # noqa: E402
import arrowmm.shm  # noqa: E402

FULL = dict(columns=8, rows=1 << 24, batch_rows=1 << 20, repeats=5, warmup=1,   # 1 GiB
            stream_batches=256, pings=2000)
QUICK = dict(columns=8, rows=1 << 19, batch_rows=1 << 16, repeats=3, warmup=1,  # 32 MiB
             stream_batches=16, pings=100)


# -- the worker side (module level: spawn imports it) ------------------------------------------
def amm_sum(batches) -> float:
    """arrowmm batches arrive pickled by name: the worker maps the segment and sums c0."""
    return float(sum(b.column("c0").to_numpy().sum() for b in batches))


def pa_shm_sum(name: str, size: int) -> float:
    shm = shared_memory.SharedMemory(name=name)
    table = pa.ipc.open_stream(pa.py_buffer(shm.buf[:size])).read_all()
    total = pc.sum(table.column("c0")).as_py()
    del table
    shm.close()
    return float(total)


def pa_table_sum(table) -> float:
    return float(pc.sum(table.column("c0")).as_py())


# -- the producer side ---------------------------------------------------------------------------
def make_table(cfg) -> pa.Table:
    rng = np.random.default_rng(20240501)
    batches = []
    for start in range(0, cfg["rows"], cfg["batch_rows"]):
        n = min(cfg["batch_rows"], cfg["rows"] - start)
        batches.append(pa.record_batch({f"c{k}": rng.random(n) for k in range(cfg["columns"])}))
    return pa.Table.from_batches(batches)


def pa_write_shm(table: pa.Table):
    """pyarrow's recipe: size the stream, create a segment that size, write the stream into it."""
    mock = pa.MockOutputStream()
    with pa.ipc.new_stream(mock, table.schema) as w:
        w.write_table(table)
    size = mock.size()
    shm = shared_memory.SharedMemory(create=True, size=size)
    sink = pa.FixedSizeBufferWriter(pa.py_buffer(shm.buf))
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    sink.close()
    return shm, size


def bench(pool, table: pa.Table, cfg) -> list:
    expected = float(pc.sum(table.column("c0")).as_py())
    results = []

    def check(total):
        assert abs(total - expected) <= 1e-6 * abs(expected), (total, expected)

    # 1. the whole hand-off
    def amm_handoff():
        with arrowmm.shm.share(table) as shared:
            check(pool.apply(amm_sum, (list(shared.open()),)))

    def pa_handoff():
        shm, size = pa_write_shm(table)
        try:
            check(pool.apply(pa_shm_sum, (shm.name, size)))
        finally:
            shm.close()
            shm.unlink()

    t_amm, t_pa = compare(amm_handoff, pa_handoff, cfg["repeats"], cfg["warmup"])
    results.append(Result("1. hand-off: write segment + worker sum", t_amm, t_pa, 1.2))

    # 2. and 3. the segment already written: send + map + sum
    with arrowmm.shm.share(table) as shared:
        batches = list(shared.open())
        payload = len(pickle.dumps(batches))
        shm, size = pa_write_shm(table)
        try:
            def amm_consume():
                check(pool.apply(amm_sum, (batches,)))

            def pa_consume():
                check(pool.apply(pa_shm_sum, (shm.name, size)))

            def pa_pickle():
                check(pool.apply(pa_table_sum, (table,)))

            t_amm, t_pa = compare(amm_consume, pa_consume, cfg["repeats"], cfg["warmup"])
            results.append(Result("2. consume: worker maps + sums", t_amm, t_pa, 1.5,
                                  f"arrowmm payload {payload:,} bytes for {len(batches)} batches"))
            t_amm, t_pk = compare(amm_consume, pa_pickle, cfg["repeats"], cfg["warmup"])
            results.append(Result("3. pickle-by-name vs pickled pyarrow table", t_amm, t_pk, 0.5,
                                  f"pyarrow pickle {len(pickle.dumps(table)):,} bytes"))
        finally:
            shm.close()
            shm.unlink()
    return results


# -- 4. and 5.: a live stream of batches to a worker -------------------------------------------
F_SETPIPE_SZ = 1031


def _now_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def stream_worker(route: str, where, conn) -> None:
    """A worker that receives batches by ``route`` and answers ("sum", n) with the sum of the
    first and last values of column 0 over n batches and ("latency", n) with the median one-way latency of n batches (ns)."""
    consumer = None
    if route.startswith("channel"):  # ("channel-spin": a consumer that busy-waits up to 1 ms)
        consumer = arrowmm.shm.Channel.attach(where, spin=1e-3 if route == "channel-spin" else None)
    conn.send("ready")
    while True:
        cmd = conn.recv()
        if cmd is None:
            break
        kind, n = cmd
        if consumer is not None:
            source = (consumer.recv(timeout=300) for _ in range(n))
            column = lambda b: b.column(0).to_numpy()  # noqa: E731
        elif route == "queue":
            source = (where.get(timeout=300) for _ in range(n))
            column = lambda b: b.column(0).to_numpy()  # noqa: E731
        else:
            f = open(where, "rb")  # (buffered: read(n) returns n bytes, as pyarrow expects)
            if route == "arrowmm-pipe":
                reader = arrowmm.open_stream(f)
                column = lambda b: b.column(0).to_numpy()  # noqa: E731
            else:
                reader = pa.ipc.open_stream(f)
                column = lambda b: b.column(0).to_numpy()  # noqa: E731
            source = iter(reader)
        if kind == "sum":  # (first + last value: the data is there, and in order; a worker
            total = 0.0     # that scans every byte adds the same cost to every route)
            for batch in source:
                values = column(batch)
                total += float(values[0] + values[-1])
            values = None
            out = total
        else:
            lat = []
            cpu = time.process_time()
            for batch in source:
                lat.append(_now_ns() - int(column(batch)[0]))
            cpu = time.process_time() - cpu
            out = (float(np.median(lat)), float(np.percentile(lat, 90)),
                   float(np.percentile(lat, 99)), cpu / max(len(lat), 1))
        if route in ("arrowmm-pipe", "pyarrow-pipe"):
            for _ in source:  # (the end of the stream)
                pass
            f.close()
        batch = None
        conn.send(out)
    if consumer is not None:
        consumer.close()


class _Route:
    """The producer's side of one route to its worker."""

    def __init__(self, ctx, route: str, schema: pa.Schema, tmp: Path, tag: str = ""):
        self.route = route
        self.schema = schema
        self.channel = None
        if route.startswith("channel"):
            self.channel = arrowmm.shm.Channel.create(None, schema, capacity=16 << 20, slots=8)
            where = self.channel.name
        elif route == "queue":
            where = self.queue = ctx.Queue(maxsize=8)
        else:
            where = self.fifo = str(tmp / f"{tag}{route}.fifo")
            os.mkfifo(where)
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=stream_worker, args=(route, where, child), daemon=True)
        self.proc.start()
        assert self.conn.recv() == "ready"

    @property
    def native(self) -> bool:
        """Whether the route sends arrowmm batches (else pyarrow's)."""
        return self.route in ("channel", "channel-spin", "arrowmm-pipe")

    def own(self, batches) -> list:
        """``batches`` (pyarrow's) as this route's library's own batches, made before timing:
        the pyarrow routes are not timed importing theirs either."""
        return [arrowmm.record_batch(b) for b in batches] if self.native else list(batches)

    def fill(self, sources) -> float:
        """Row 6: each of ``sources`` (float64 arrays) *generated* into a batch and sent: for
        the channel, copied into a batch reserved in its slot (``Channel.reserve``, no other
        copy); for the arrowmm pipe, copied into one reused array (the write has copied it
        into the pipe when it returns), made a batch and written to the stream.  The copy stands for the producer making its data (a memcpy-speed
        generator: the most favourable case to the channel, whose transport is then all
        that differs).  Returns the worker's answer."""
        self.conn.send(("sum", len(sources)))
        if self.channel is not None:
            for v in sources:
                with self.channel.reserve(len(v), timeout=300) as b:
                    np.copyto(b["v"], v)
        else:
            with open(self.fifo, "wb", buffering=0) as f:
                try:
                    fcntl.fcntl(f.fileno(), F_SETPIPE_SZ, 1 << 20)
                except OSError:
                    pass
                out = np.empty_like(sources[0])  # (reused: the write copies it into the pipe)
                with arrowmm.new_stream(f, self.schema) as w:
                    for v in sources:
                        np.copyto(out, v)
                        w.write_batch(arrowmm.record_batch({"v": out}))
        return self.conn.recv()

    def run(self, kind: str, batches, gap: float = 0.0):
        """Send ``batches`` (each library's own batches, from ``own``: arrowmm's to the channel
        and the arrowmm pipe, pyarrow's to the others) and return the worker's answer.  For
        latency, each batch is a one-row view of ``stamp``, which gets the time just before it
        is sent."""
        self.conn.send((kind, len(batches)))
        native = self.native
        if kind == "latency":
            stamp = np.zeros(1, dtype=np.int64)
            one = (arrowmm.record_batch({"t": stamp}) if native else
                   pa.record_batch({"t": pa.array(stamp)}))
            batches = [one] * len(batches)

        def each():
            for b in batches:
                if kind == "latency":
                    time.sleep(gap)
                    stamp[0] = _now_ns()  # (the batch is a view of it: no copy)
                yield b

        if self.channel is not None:
            for b in each():
                self.channel.send(b, timeout=300)
        elif self.route == "queue":
            for b in each():
                self.queue.put(b)
        else:
            with open(self.fifo, "wb", buffering=0) as f:
                try:
                    fcntl.fcntl(f.fileno(), F_SETPIPE_SZ, 1 << 20)
                except OSError:
                    pass  # (pipe-max-size below 1 MiB: the default 64 KiB)
                new = arrowmm.new_stream if native else pa.ipc.new_stream
                with new(f, self.schema) as w:
                    for b in each():
                        w.write_batch(b)
        return self.conn.recv()

    def close(self):
        self.conn.send(None)
        self.proc.join(60)
        if self.channel is not None:
            self.channel.close()


def burn(seconds: float) -> None:
    """Row 5d's load: a busy loop for ``seconds`` (a process of its own)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


class LatencyResult(Result):
    """Median one-way latency: passes when the channel's is under ``target`` seconds."""

    @property
    def passed(self):
        return self.arrowmm_s < self.target

    def cell(self, v: float) -> str:
        return f"{v * 1e6:.1f} us"

    def target_cell(self) -> str:
        return f"channel < {self.target * 1e6:.0f} us"


def bench_channel(cfg, latency_only: bool = False) -> list:
    """4. to 6.: every route in turn within each repeat; ratios of medians (``latency_only``:
    rows 5 to 5c, for a before/after of the small batches' trip)."""
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"load average {load}", flush=True)
    ctx = multiprocessing.get_context("spawn")
    rows = (1 << 20) // 8  # 1 MiB of float64 per batch
    rng = np.random.default_rng(7)
    batches = [pa.record_batch({"v": rng.random(rows)}) for _ in range(8)]
    stream = [batches[i % len(batches)] for i in range(cfg["stream_batches"])]
    expected = sum(float(b.column(0)[0].as_py() + b.column(0)[-1].as_py()) for b in stream)
    names = ["channel", "arrowmm-pipe", "pyarrow-pipe", "queue"]
    times = {n: [] for n in names + ["fill-channel", "fill-arrowmm-pipe"]}
    sources = [b.column(0).to_numpy() for b in stream]
    lat = {"channel": [], "channel-spin": [], "pyarrow-pipe": []}
    # (5c: 5 ms apart; 5d: row 5 beside two busy processes)
    lat_slow = {"channel": [], "pyarrow-pipe": []}
    lat_load = {"channel": [], "pyarrow-pipe": []}
    with tempfile.TemporaryDirectory(prefix="amm-bench-") as tmp:
        routes = {} if latency_only else \
            {n: _Route(ctx, n, batches[0].schema, Path(tmp)) for n in names}
        own = {n: routes[n].own(stream) for n in routes}
        try:
            for rep in range(0 if latency_only else cfg["warmup"] + cfg["repeats"]):
                for n in names:
                    t0 = time.perf_counter()
                    total = routes[n].run("sum", own[n])
                    dt = time.perf_counter() - t0
                    assert abs(total - expected) <= 1e-6 * abs(expected), (n, total, expected)
                    if rep >= cfg["warmup"]:
                        times[n].append(dt)
                for n in ("channel", "arrowmm-pipe"):  # row 6: generated in place vs piped
                    t0 = time.perf_counter()
                    total = routes[n].fill(sources)
                    dt = time.perf_counter() - t0
                    assert abs(total - expected) <= 1e-6 * abs(expected), (n, total, expected)
                    if rep >= cfg["warmup"]:
                        times["fill-" + n].append(dt)
        finally:
            for r in routes.values():
                r.close()
        tiny = pa.schema([("t", pa.int64())])
        pings = [None] * cfg["pings"]
        routes = {n: _Route(ctx, n, tiny, Path(tmp), "small-") for n in lat}
        try:
            for rep in range(cfg["warmup"] + cfg["repeats"]):
                for n in lat:
                    got = routes[n].run("latency", pings, gap=0.0005)
                    if rep >= cfg["warmup"]:
                        lat[n].append(got)
                for n in lat_slow:
                    got = routes[n].run("latency", pings[:max(len(pings) // 5, 20)], gap=0.005)
                    if rep >= cfg["warmup"]:
                        lat_slow[n].append(got)
            for rep in range(0 if latency_only else cfg["warmup"] + cfg["repeats"]):
                burners = [ctx.Process(target=burn, args=(600,), daemon=True) for _ in range(2)]
                for b in burners:
                    b.start()
                try:
                    for n in lat_load:
                        got = routes[n].run("latency", pings, gap=0.0005)
                        if rep >= cfg["warmup"]:
                            lat_load[n].append(got)
                finally:
                    for b in burners:
                        b.terminate()
                        b.join()
        finally:
            for r in routes.values():
                r.close()
    med = {n: statistics.median(v) if v else float("nan") for n, v in times.items()}
    mib = cfg["stream_batches"]
    out = []
    for n, label in () if latency_only else (("arrowmm-pipe", "4a. channel vs arrowmm stream over a pipe"),
                     ("pyarrow-pipe", "4b. channel vs pyarrow stream over a pipe"),
                     ("queue", "4c. channel vs multiprocessing.Queue of pyarrow batches")):
        out.append(Result(label, med["channel"], med[n], 0.2,
                          f"{mib} x 1 MiB: channel {mib / med['channel']:,.0f} MiB/s, "
                          f"{n} {mib / med[n]:,.0f} MiB/s"))
    def latency(label, runs, target, what, channel="channel"):
        def stat(n, k):  # (the median over repeats of each repeat's median / percentile)
            return statistics.median(r[k] for r in runs[n])
        tail = ", ".join(f"{n} p90 {stat(n, 1) / 1e3:.1f} / p99 {stat(n, 2) / 1e3:.1f} us, "
                         f"CPU {stat(n, 3) * 1e6:.0f} us a batch" for n in (channel, "pyarrow-pipe"))
        return LatencyResult(label, stat(channel, 0) * 1e-9, stat("pyarrow-pipe", 0) * 1e-9,
                             target, f"{what}; {tail}")

    out.append(latency("5. small batch one-way latency (median) vs pyarrow pipe", lat, 20e-6,
                       f"{cfg['pings']} one-row batches, 0.5 ms apart, per repeat; the "
                       f"default consumer (adaptive spin)"))
    out.append(latency("5b. the same, consumer spinning (attach(spin=0.001)) vs pyarrow pipe",
                       lat, 20e-6, "the consumer busy-waits up to 1 ms for each batch",
                       "channel-spin"))
    out.append(latency("5c. batches 5 ms apart (the default consumer sleeps) vs pyarrow pipe",
                       lat_slow, 50e-6, "the futex wake-up of a sleeping consumer"))
    if latency_only:
        return out
    out.append(latency("5d. row 5 under load (two busy processes beside) vs pyarrow pipe",
                       lat_load, 40e-6, f"load average before the rows: {load}"))
    out.append(Result("6. channel batches built in place (reserve) vs generated + arrowmm pipe",
                      med["fill-channel"], med["fill-arrowmm-pipe"], 0.2,
                      f"{mib} x 1 MiB generated (a copy from a ready array) then sent: channel "
                      f"{mib / med['fill-channel']:,.0f} MiB/s, arrowmm-pipe "
                      f"{mib / med['fill-arrowmm-pipe']:,.0f} MiB/s"))
    return out


def main(argv=None) -> int:
    parser = base_parser(__doc__, quick_help="small smoke version")
    parser.add_argument("--channel-only", action="store_true",
                        help="only rows 4 to 6 (the live channel against pipes and a queue)")
    parser.add_argument("--latency-only", action="store_true",
                        help="only rows 5 to 5c (one-row batches: channel vs pyarrow pipe)")
    args = parser.parse_args(argv)
    cfg = settings(args, FULL, QUICK)
    if args.channel_only or args.latency_only:
        rows = "5 to 5c only (--latency-only)" if args.latency_only else \
            "4 to 6 only (--channel-only)"
        env = "\n".join(machine_lines(args.quick) + [f"- rows {rows}"])
        print(env + "\n", flush=True)
        results = bench_channel(cfg, args.latency_only)
        for r in results:
            print_result(r)
        return report(results, "arrowmm shared-memory channel benchmarks", env, cfg, args.out,
                      args.strict)
    t0 = time.perf_counter()
    table = make_table(cfg)
    print(f"table ready in {time.perf_counter() - t0:.1f} s", flush=True)
    env = "\n".join(machine_lines(args.quick) + [
        f"- table: {cfg['columns']} float64 columns x {cfg['rows']:,} rows in batches of "
        f"{cfg['batch_rows']:,} ({table.nbytes / 2**20:,.0f} MiB); shared memory under "
        f"{arrowmm.shm.SHM_DIR or 'shm_open'}"])
    print(env + "\n", flush=True)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        pool.apply(amm_sum, ([],))  # the worker is up (and has imported both libraries)
        results = bench(pool, table, cfg)
    del table
    results += bench_channel(cfg)
    for r in results:
        print_result(r)
    return report(results, "arrowmm shared-memory benchmarks", env, cfg, args.out, args.strict)


if __name__ == "__main__":
    sys.exit(main())
