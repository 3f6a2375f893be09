"""Object-store reads: arrowmm over s3fs against pyarrow's own S3 filesystem, same S3 server.

Run from the repository root (needs ``moto[server]``, ``s3fs`` and ``boto3``)::

    python benchmarks/bench_object_store.py            # 16 batches x 16,384 rows, 10 float64
    python benchmarks/bench_object_store.py --quick    # smoke version (a few seconds)
    python benchmarks/bench_object_store.py --out bench_object_store.md

The S3 server is moto's (``ThreadedMotoServer``) on 127.0.0.1, in this process: no network
latency, no bandwidth limit, and a server that is much slower per request than S3 and shares
the processors with the client.  The ratios say how the two clients compare in requests and
bytes asked for, not what a real S3 would take.  pyarrow writes the file; it is uploaded once.

1. projection - open, then 2 of the 10 columns of 3 random batches to numpy:
                ``arrowmm.open_file(url, filesystem=s3fs, columns=[...])`` and ``get_batch``,
                vs ``pyarrow.ipc.open_file(pyarrow.fs.S3FileSystem.open_input_file(key),
                options=IpcReadOptions(included_fields=[...]))``.     target <= 1.5
                The details give the bytes arrowmm asked the server for and both
                libraries' requests.
1b. the same, pyarrow reading through the same s3fs file object (``cache_type="none"``):
                both through one client, so the row compares the readers, not the S3 clients
                (s3fs's Python requests cost several times the C++ SDK's).   target <= 1.5
2. full read  - every column of every batch: ``pyarrow.table(arrowmm.open_file(url, ...))``
                vs ``pyarrow.ipc.open_file(...).read_all()``.           target <= 1.5

The exit status is 0 whatever the ratios (machines are noisy) unless ``--strict``.
"""
from __future__ import annotations

import io
import logging
import random
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.ipc as pa_ipc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (Result, base_parser, compare, machine_lines, print_result,  # noqa: E402
                    report, settings)
import arrowmm  # noqa: E402

FULL = dict(batches=16, batch_rows=1 << 14, columns=10, repeats=5, warmup=1)
QUICK = dict(batches=8, batch_rows=1 << 12, columns=10, repeats=2, warmup=1)
PICKED = ["c2", "c7"]
CREDENTIALS = dict(key="testing", secret="testing")
REGION = "us-east-1"


def _file_bytes(cfg) -> bytes:
    rng = np.random.default_rng(0)
    schema = pa.schema([(f"c{i}", pa.float64()) for i in range(cfg["columns"])])
    sink = io.BytesIO()
    with pa_ipc.new_file(sink, schema) as w:
        for _ in range(cfg["batches"]):
            w.write_batch(pa.record_batch([rng.random(cfg["batch_rows"])
                                           for _ in range(cfg["columns"])], schema=schema))
    return sink.getvalue()


class _Requests(logging.Handler):
    """The requests the server answered (its werkzeug log lines, counted, not printed)."""

    def __init__(self):
        super().__init__()
        self.count = 0
        log = logging.getLogger("werkzeug")
        log.setLevel(logging.INFO)
        log.propagate = False
        log.addHandler(self)

    def emit(self, record):
        self.count += 1

    def of(self, f) -> int:
        """How many requests one call of ``f`` made."""
        before = self.count
        f()
        return self.count - before


class _Counter:
    """Bytes asked of the server by an s3fs filesystem (its GetObject ranges)."""

    def __init__(self, fs):
        self.bytes = 0
        fs.s3.meta.events.register("provide-client-params.s3.GetObject", self._seen)

    def _seen(self, params, **_):
        r = params.get("Range")
        if r:
            start, end = r.split("=")[1].split("-")
            self.bytes += int(end) - int(start) + 1


def bench(cfg, endpoint: str):
    import s3fs
    host_port = endpoint.split("://", 1)[1]
    fs = s3fs.S3FileSystem(skip_instance_cache=True, **CREDENTIALS,
                           client_kwargs={"endpoint_url": endpoint, "region_name": REGION})
    pa_fs = pafs.S3FileSystem(access_key=CREDENTIALS["key"], secret_key=CREDENTIALS["secret"],
                              region=REGION, endpoint_override=host_port, scheme="http")
    import boto3
    boto3.client("s3", endpoint_url=endpoint, region_name=REGION,
                 aws_access_key_id=CREDENTIALS["key"],
                 aws_secret_access_key=CREDENTIALS["secret"]).create_bucket(Bucket="bench")
    data = _file_bytes(cfg)
    fs.pipe("bench/t.arrow", data)
    url, key = "s3://bench/t.arrow", "bench/t.arrow"
    names = [f"c{i}" for i in range(cfg["columns"])]
    indices = [names.index(c) for c in PICKED]
    counter = _Counter(fs)
    requests = _Requests()
    rng = random.Random(1)
    results = []

    def projection_amm():
        picks = rng.sample(range(cfg["batches"]), 3)
        with arrowmm.open_file(url, filesystem=fs, columns=PICKED) as r:
            for i in picks:
                b = r.get_batch(i)
                for c in PICKED:
                    b.column(c).to_numpy()

    def projection_pa():
        picks = rng.sample(range(cfg["batches"]), 3)
        with pa_fs.open_input_file(key) as f:
            r = pa_ipc.open_file(f, options=pa_ipc.IpcReadOptions(included_fields=indices))
            for i in picks:
                b = r.get_batch(i)
                for c in PICKED:
                    b.column(c).to_numpy()

    counter.bytes = 0
    amm_requests, pa_requests = requests.of(projection_amm), requests.of(projection_pa)
    amm_bytes = counter.bytes
    t_amm, t_pa = compare(projection_amm, projection_pa, cfg["repeats"], cfg["warmup"])
    results.append(Result("1. open + 2 of 10 columns of 3 random batches", t_amm, t_pa, 1.5,
                          f"arrowmm asked for {amm_bytes:,} of the file's {len(data):,} bytes "
                          f"(the columns: {3 * 2 * cfg['batch_rows'] * 8:,}); requests: "
                          f"arrowmm {amm_requests}, pyarrow {pa_requests}"))
    print_result(results[-1])

    def projection_pa_s3fs():
        picks = rng.sample(range(cfg["batches"]), 3)
        with fs.open(key, "rb", cache_type="none") as f:
            r = pa_ipc.open_file(f, options=pa_ipc.IpcReadOptions(included_fields=indices))
            for i in picks:
                b = r.get_batch(i)
                for c in PICKED:
                    b.column(c).to_numpy()

    pa_requests = requests.of(projection_pa_s3fs)
    t_amm, t_pa = compare(projection_amm, projection_pa_s3fs, cfg["repeats"], cfg["warmup"])
    results.append(Result("1b. the same, pyarrow through the same s3fs file", t_amm, t_pa, 1.5,
                          f"the clients' cost set aside; requests: arrowmm {amm_requests}, "
                          f"pyarrow {pa_requests}"))
    print_result(results[-1])

    def full_amm():
        with arrowmm.open_file(url, filesystem=fs) as r:
            return pa.table(r)

    def full_pa():
        with pa_fs.open_input_file(key) as f:
            return pa_ipc.open_file(f).read_all()

    amm_requests, pa_requests = requests.of(full_amm), requests.of(full_pa)
    if not full_amm().equals(full_pa()):
        raise SystemExit("arrowmm and pyarrow read different tables")
    t_amm, t_pa = compare(full_amm, full_pa, cfg["repeats"], cfg["warmup"])
    results.append(Result("2. full read (every column of every batch)", t_amm, t_pa, 1.5,
                          f"{len(data) / 1e6:.1f} MB file; requests: arrowmm {amm_requests}, "
                          f"pyarrow {pa_requests}"))
    print_result(results[-1])
    return results


def main(argv=None) -> int:
    parser = base_parser(__doc__)
    args = parser.parse_args(argv)  # (--data-dir is accepted and unused: nothing is kept)
    cfg = settings(args, FULL, QUICK)
    env = "\n".join(machine_lines(args.quick) + [
        f"- file: {cfg['batches']} batches x {cfg['batch_rows']:,} rows x {cfg['columns']} "
        f"float64 columns, written by pyarrow",
        "- server: moto's S3 (ThreadedMotoServer) on 127.0.0.1 in this process; arrowmm reads "
        "through s3fs, pyarrow through pyarrow.fs.S3FileSystem (not a real S3: no latency)"])
    print(env + "\n", flush=True)
    from moto.server import ThreadedMotoServer
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    t0 = time.perf_counter()
    try:
        host, port = server.get_host_and_port()
        results = bench(cfg, f"http://{host}:{port}")
    finally:
        server.stop()
    print(f"(ran in {time.perf_counter() - t0:.1f} s)")
    return report(results, "arrowmm object-store benchmarks", env, cfg, args.out, args.strict)


if __name__ == "__main__":
    sys.exit(main())
