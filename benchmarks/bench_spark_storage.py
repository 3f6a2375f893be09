"""Spark benchmark of the JVM connector on HDFS and S3: ``format("arrowmm_jvm")`` against Spark's
Parquet, both read from and written to the same filesystem.

Run from the repository root::

    python benchmarks/bench_spark_storage.py            # 20 batches x 1,000,000 rows (~15 min)
    python benchmarks/bench_spark_storage.py --quick    # smoke version (small data, S3 only)
    python benchmarks/bench_spark_storage.py --filesystems hdfs --rounds 3

The storage is real and on loopback, started by the test suite's own code (imported from
``tests/``): HDFS is Hadoop's MiniDFSCluster (``tests/support/hdfs_support.py``, one NameNode and one
DataNode in their own JVM), S3 is a moto server in a process of its own
(``tests/support/s3_support.py``'s settings), reached through S3A (hadoop-aws 3.5.0 and the AWS SDK
modules ``tests/support/maven_support.py`` resolves with Maven).  One Spark session (``local[2]``,
driver 2g, the connector's jar from ``arrowmm.spark.configure``) serves both; moto is not a real
S3 (no network latency, a Python server), so the S3 rows measure request counts and client
overheads more than bandwidth.  moto as it is reads the whole object for every ranged GET (a
scan then costs GETs x object size, which real S3 does not charge); the server here reads only
the range asked for (``--moto-whole-objects`` leaves moto as it is).

The data is bench_spark_jvm.py's (bench_spark.py's ``make_data``, cached by shape), copied to
each filesystem once with Hadoop's own client.  Per filesystem, each timed in rounds that
alternate arrowmm and Parquet (A, B, A, B, ...) after one warm-up round; medians reported:

1. ``sum`` of the 4 float64 columns plus ``count(*)`` (20 x 1M rows): throughput ratio =
   Parquet time / arrowmm time, target >= 1.5;
2. ``sum(a)``, 1 of the 5 columns: the same ratio and target;
3. query 1 under a filter on the sorted key that the footer statistics narrow to 1% of the
   batches (the same rows as 200 x 100,000 batches), against query 1 on that file:
   speed-up = full-scan time / filtered time, target >= 5 (Parquet's own for comparison),
   and the floor: the filtered query over a two-row file on the same filesystem whose
   statistics leave no batch (no scan task runs: what remains is Spark's fixed cost and
   the reader's planning there);
4. writing the 20M rows (``k`` + 4 float64 from ``spark.range``/``rand``, cached, 2 tasks),
   mode overwrite: Parquet time / arrowmm time, target >= 1.0;
5. planning 2,000 small files (100 rows each): ``load()`` plus physical planning with the
   input partitions (the time to ``executedPlan``), target <= Parquet's time; with
   ``--count`` (and in ``--quick``) also the whole ``count(*)`` query over them (Parquet reads
   its footers in the tasks, arrowmm in the driver while planning), for comparison.

Local mapped reads are ``bench_spark_jvm.py``'s.  ``--out`` writes the environment and the
tables as markdown; ``--strict`` exits 1 when a target is missed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from a checkout: arrowmm, and tests.support's HDFS,
# S3 and Maven support
from common import machine_lines  # noqa: E402
from bench_spark import DATA_DIR, make_data  # noqa: E402

FULL = dict(batches=20, rows=1_000_000, rounds=3, filter_batches=200, filter_rows=100_000,
            files=2_000, file_rows=100)
QUICK = dict(batches=4, rows=50_000, rounds=1, filter_batches=100, filter_rows=2_000,
             files=50, file_rows=100)
FILESYSTEMS = ("hdfs", "s3")
KINDS = {"hdfs": "hdfs (a MiniDFSCluster, 1 DataNode, loopback)",
         "s3": "s3 (a moto server on loopback, through S3A)"}
Q1 = "1. sum of 4 float64 + count"
Q2 = "2. sum(a), 1 of 5 columns"


# -- the storage ---------------------------------------------------------------------------
MOTO_CHILD = """
import logging, sys, threading
from moto.server import ThreadedMotoServer
from moto.s3.responses import S3Response
logging.getLogger("werkzeug").setLevel(logging.ERROR)
log, lock, served = open(sys.argv[1], "a", buffering=1), threading.Lock(), S3Response.key_response
def key_response(self, request, full_url, headers):  # one line per object request
    out = served(self, request, full_url, headers)
    body = out[2] if isinstance(out[2], (bytes, str)) else b""
    with lock:
        log.write(f"{request.method}\\t{request.path}\\t{request.headers.get('range')}\\t{len(body)}\\n")
    return out
S3Response.key_response = key_response
if sys.argv[2] == "ranges":  # a ranged GET reads its range, as real S3's cost is
    import re
    from moto.s3.models import FakeKey
    whole, plain_get, lazy = FakeKey.value, S3Response.get_object, threading.local()
    class Ranged:  # the object's bytes, read only where _handle_range_header slices them
        def __init__(self, key):
            self.key, self.size = key, key.size
        def __len__(self):
            return self.size
        def __getitem__(self, cut):
            start, stop, _ = cut.indices(self.size)
            with self.key.lock:
                self.key._value_buffer.seek(start)
                return self.key._value_buffer.read(max(0, stop - start))
    FakeKey.value = property(lambda key: Ranged(key) if getattr(lazy, "on", False) else whole.fget(key),
                             whole.fset)
    def get_object(self):  # (only a single range from a first byte: moto slices it)
        lazy.on = bool(re.fullmatch(r"bytes=[0-9]+-[0-9]*", self.headers.get("range") or ""))
        try:
            return plain_get(self)
        finally:
            lazy.on = False
    S3Response.get_object = get_object
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print("PORT", server.get_host_and_port()[1], flush=True)
sys.stdin.read()
server.stop()
"""


class MotoProcess:
    """A moto S3 server in a process of its own on a free port of 127.0.0.1 (so its Python
    does not share this one's interpreter lock); ``server`` is the suite's ``S3Server``."""

    def __init__(self, log: Path, whole_objects: bool = False):
        from tests.support.s3_support import S3Server
        self.log = open(log, "w")
        self.requests = log.with_name("moto-requests.log")
        self.requests.write_text("")
        # the suite's server (ThreadedMotoServer), in a child that prints its port and ends
        # when its stdin closes (with this process, too)
        self.proc = subprocess.Popen([sys.executable, "-c", MOTO_CHILD, str(self.requests),
                                      "whole" if whole_objects else "ranges"],
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError(f"moto did not start (printed {line!r}): {log.read_text()[-2000:]}")
        self.server = S3Server(endpoint_url=f"http://127.0.0.1:{int(line.split()[1])}")

    def served(self) -> tuple[int, int, int]:
        """The GETs the server has answered so far, the bytes they returned, and the CPU seconds
        (user + system) its process has used (with ``whole_objects``, moto as it is answers a
        ranged GET by reading the whole object, ``FakeKey.value``, and slicing it: its cost is
        then GETs x object size)."""
        gets = sent = 0
        with open(self.requests) as f:
            for line in f:
                method, _, _, size = line.rstrip("\n").split("\t")
                if method == "GET":
                    gets += 1
                    sent += int(size)
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return gets, sent, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        """End the server's process (ours, by its handle) and close its log."""
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def copy_up(spark, local: Path, uri: str, s3=None) -> float:
    """Copy a local file or folder to ``uri`` with the filesystem's own client (boto3 for
    S3: S3A's ``copyFromLocalFile`` sends ``Expect: 100-continue``, which moto answers with a
    bare 100); seconds taken."""
    t = time.perf_counter()
    if s3 is not None:
        bucket, _, key = uri[len("s3a://"):].partition("/")
        client = s3.client()
        for f in ([local] if local.is_file() else sorted(local.iterdir())):
            client.upload_file(str(f), bucket, key if f == local else f"{key}/{f.name}")
        return time.perf_counter() - t
    jvm = spark._jvm
    dst = jvm.org.apache.hadoop.fs.Path(uri)
    fs = dst.getFileSystem(spark._jsc.hadoopConfiguration())
    fs.copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path(str(local.resolve())), dst)
    return time.perf_counter() - t


def tree_bytes(spark, uri: str) -> int:
    """The bytes of every file under ``uri``, as the filesystem lists them."""
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
    return fs.getContentSummary(path).getLength()


def small_files(folder: Path, files: int, rows: int) -> tuple[Path, Path]:
    """``files`` files of ``rows`` rows (k + 4 float64) as arrowmm IPC and as Parquet, in two
    folders (cached by shape)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    import arrowmm
    tag = f"{files}x{rows}"
    ipc, parquet = folder / f"small-{tag}-arrow", folder / f"small-{tag}-parquet"
    if ipc.is_dir() and parquet.is_dir():
        return ipc, parquet
    for d in (ipc, parquet):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    schema = arrowmm.schema([("k", arrowmm.int64())] + [(c, arrowmm.float64()) for c in "abcd"])
    for i in range(files):
        rng = np.random.default_rng(i)
        cols = {"k": np.arange(i * rows, (i + 1) * rows, dtype=np.int64)}
        cols.update({c: rng.random(rows) for c in "abcd"})
        with arrowmm.new_file(str(ipc / f"part-{i:05d}.arrow"), schema, statistics=True) as w:
            w.write(cols)
        pq.write_table(pa.table(cols), parquet / f"part-{i:05d}.parquet", compression="snappy")
    return ipc, parquet


def halves(ipc: Path) -> Path:
    """The batches of ``ipc`` as bench_spark.py's Parquet folder holds them: two files, the
    even batches and the odd ones (cached).  Both readers then scan objects of the same count
    and size: moto reads the whole object for every ranged GET, so one 763 MiB file against
    two of 382 MiB doubles the server's cost per GET, a cost real S3 does not have."""
    import arrowmm
    folder = ipc.with_name(ipc.stem + "-halves")
    if folder.is_dir() and len(list(folder.iterdir())) == 2:
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    with arrowmm.open_file(str(ipc)) as reader:
        for half in range(2):
            with arrowmm.new_file(str(folder / f"part-{half}.arrow"), reader.schema,
                                  statistics=True) as w:
                for i in range(half, reader.num_record_batches, 2):
                    w.write(reader.get_batch(i))
    return folder


# -- the benchmarks ------------------------------------------------------------------------
def interleaved(runs: dict, rounds: int, served=None) -> tuple[dict, dict]:
    """Each of ``runs`` (name -> callable) once per round, in turn, after one warm-up round;
    the medians of the timed rounds and each run's last answer.  With ``served`` (the moto
    server's counters), each run's GETs, bytes and server CPU in its last round are printed."""
    times = {name: [] for name in runs}
    answers = {}
    for round_ in range(rounds + 1):  # round 0 warms up
        for name, run in runs.items():
            before = served() if served is not None else None
            t = time.perf_counter()
            answers[name] = run()
            if round_:
                times[name].append(time.perf_counter() - t)
            if before is not None and round_ == rounds:
                after = served()
                print(f"  {name}: {after[0] - before[0]} GETs, "
                      f"{(after[1] - before[1]) / 2**20:.0f} MiB sent, moto CPU "
                      f"{after[2] - before[2]:.1f} s", flush=True)
    return {name: statistics.median(ts) for name, ts in times.items()}, answers


def same_sums(a: tuple, b: tuple, what: str) -> None:
    """Both readers found the same count and sums (float addition order differs; a sum of no
    rows is None for both)."""
    assert len(a) == len(b) and all(x == y if x is None or y is None else
                                    abs(x - y) <= 1e-9 * abs(y) for x, y in zip(a, b)), (what, a, b)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def scans(spark, root: str, fs: str, rounds: int, served=None) -> list:
    """Queries 1 and 2 on the 20 x 1M rows; table rows."""
    from pyspark.sql import functions as F
    from arrowmm.spark import JVM_FORMAT
    readers = {"arrowmm": lambda: spark.read.format(JVM_FORMAT).load(f"{root}/scan.arrow"),
               "parquet": lambda: spark.read.parquet(f"{root}/scan.parquet")}
    queries = {Q1: [F.sum(c) for c in "abcd"] + [F.count("*")], Q2: [F.sum("a")]}
    rows = []
    for qname, aggs in queries.items():
        med, answers = interleaved(
            {r: (lambda make=make, aggs=aggs: tuple(make().agg(*aggs).first()))
             for r, make in readers.items()}, rounds, served)
        same_sums(answers["arrowmm"], answers["parquet"], f"{fs} {qname}")
        ratio = med["parquet"] / med["arrowmm"]
        print(f"{fs} {qname}: arrowmm {med['arrowmm']:.3f} s, Parquet {med['parquet']:.3f} s",
              flush=True)
        rows.append(f"| {fs}: {qname} | {med['arrowmm']:.3f} s | {med['parquet']:.3f} s | "
                    f"{ratio:.2f} | >= 1.5 | {verdict(ratio >= 1.5)} |")
    return rows


def filtered(spark, root: str, fs: str, cfg: dict) -> list:
    """Query 1 with and without the filter the statistics narrow to 1% of the batches; rows."""
    from pyspark.sql import functions as F
    from arrowmm.spark import JVM_FORMAT
    batches, rows = cfg["filter_batches"], cfg["filter_rows"]
    first = batches // 2 * rows
    stop = first + batches // 100 * rows  # 1% of the batches
    q1 = [F.sum(c) for c in "abcd"] + [F.count("*")]
    narrow = (F.col("k") >= first) & (F.col("k") < stop)
    readers = {"arrowmm": lambda: spark.read.format(JVM_FORMAT).load(f"{root}/filter.arrow"),
               "parquet": lambda: spark.read.parquet(f"{root}/filter.parquet")}
    # the floor: the same filtered query over a two-row file on the same filesystem whose
    # statistics leave no batch (no scan task runs: Spark's fixed cost per query, and the
    # reader's planning there)
    floors = {"arrowmm": lambda: spark.read.format(JVM_FORMAT).load(f"{root}/floor.arrow"),
              "parquet": lambda: spark.read.parquet(f"{root}/floor.parquet")}
    runs = {}
    for r, make in readers.items():
        runs[f"{r} full"] = lambda make=make: tuple(make().agg(*q1).first())
        runs[f"{r} 1%"] = lambda make=make: tuple(make().filter(narrow).agg(*q1).first())
        runs[f"{r} floor"] = lambda make=floors[r]: tuple(make().filter(narrow).agg(*q1).first())
    med, answers = interleaved(runs, cfg["rounds"])
    assert answers["arrowmm 1%"][-1] == stop - first, answers
    for kind in ("full", "1%", "floor"):
        same_sums(answers[f"arrowmm {kind}"], answers[f"parquet {kind}"], f"{fs} filter {kind}")
    print(f"{fs} 3. filter to 1%:", {n: f"{s:.3f} s" for n, s in med.items()}, flush=True)
    out = []
    for r in readers:
        full, part, floor = med[f"{r} full"], med[f"{r} 1%"], med[f"{r} floor"]
        target = r == "arrowmm"
        out.append(f"| {fs}: {r} | {full:.3f} s | {part:.3f} s | {full / part:.1f}x | "
                   f"{floor:.3f} s | {'>= 5' if target else ''} | "
                   f"{verdict(full / part >= 5) if target else ''} |")
    return out


def writes(spark, root: str, fs: str, cfg: dict, df) -> list:
    """Writing the cached rows as arrowmm and as Parquet, mode overwrite; rows."""
    from arrowmm.spark import JVM_FORMAT
    writers = {"arrowmm": lambda: df.write.format(JVM_FORMAT).mode("overwrite")
               .save(f"{root}/written.arrow"),
               "parquet": lambda: df.write.mode("overwrite").parquet(f"{root}/written.parquet")}
    med, _ = interleaved(writers, cfg["rounds"])
    n = cfg["batches"] * cfg["rows"]
    assert spark.read.format(JVM_FORMAT).load(f"{root}/written.arrow").count() == n
    assert spark.read.parquet(f"{root}/written.parquet").count() == n
    sizes = {w: tree_bytes(spark, f"{root}/written.{w.replace('arrowmm', 'arrow')}")
             for w in writers}
    ratio = med["parquet"] / med["arrowmm"]
    print(f"{fs} 4. write: arrowmm {med['arrowmm']:.3f} s, Parquet {med['parquet']:.3f} s",
          flush=True)
    return [f"| {fs}: write {n:,} rows | {med['arrowmm']:.3f} s "
            f"({sizes['arrowmm'] / 2**20:.0f} MiB) | {med['parquet']:.3f} s "
            f"({sizes['parquet'] / 2**20:.0f} MiB) | {ratio:.2f} | >= 1.0 | "
            f"{verdict(ratio >= 1.0)} |"]


def planning(spark, root: str, fs: str, cfg: dict, count: bool) -> list:
    """``load()`` + physical planning of ``count(*)`` over the small files, and (``count``)
    the whole query; rows."""
    from pyspark.sql import functions as F
    from arrowmm.spark import JVM_FORMAT
    readers = {"arrowmm": lambda: spark.read.format(JVM_FORMAT).load(f"{root}/small.arrow"),
               "parquet": lambda: spark.read.parquet(f"{root}/small.parquet")}

    def plan(make):
        make().agg(F.count("*"))._jdf.queryExecution().executedPlan()  # input partitions too

    runs = {f"{r} plan": (lambda make=make: plan(make)) for r, make in readers.items()}
    if count:
        runs.update({f"{r} count": (lambda make=make: make().agg(F.count("*")).first()[0])
                     for r, make in readers.items()})
    med, answers = interleaved(runs, cfg["rounds"])
    n = cfg["files"] * cfg["file_rows"]
    assert not count or answers["arrowmm count"] == answers["parquet count"] == n, answers
    print(f"{fs} 5. planning:", {n: f"{s:.3f} s" for n, s in med.items()}, flush=True)
    files = cfg["files"]
    out = [f"| {fs}: {files:,} files, `load()` + planning | {med['arrowmm plan']:.3f} s | "
           f"{med['parquet plan']:.3f} s | {med['parquet plan'] / med['arrowmm plan']:.2f} | "
           f"<= Parquet | {verdict(med['arrowmm plan'] <= med['parquet plan'])} |"]
    if count:
        out.append(f"| {fs}: {files:,} files, the whole `count(*)` | {med['arrowmm count']:.3f} s "
                   f"| {med['parquet count']:.3f} s | "
                   f"{med['parquet count'] / med['arrowmm count']:.2f} | | |")
    return out


# -- the run -------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="small smoke version (S3 only unless --filesystems says otherwise)")
    ap.add_argument("--rounds", type=int, help="timed rounds (median reported)")
    ap.add_argument("--filesystems", help="comma-separated, of: hdfs, s3 (default: both; "
                                          "--quick: s3)")
    ap.add_argument("--only", help="comma-separated benchmarks to run, of: scan, filter, "
                                   "write, planning (default: all)")
    ap.add_argument("--count", action="store_true",
                    help="also time the whole count(*) over the small files (a file open per "
                         "file in the tasks: minutes over moto; always on with --quick)")
    ap.add_argument("--s3a-stream", choices=("classic", "analytics"), default="classic",
                    help="S3A's input stream for both readers (default classic: the analytics "
                         "stream, Hadoop 3.5's default, serves repeated reads from its cache)")
    ap.add_argument("--moto-whole-objects", action="store_true",
                    help="leave moto as it is: every ranged GET reads the whole object (by "
                         "default the server reads only the range, as real S3 costs)")
    ap.add_argument("--layout", choices=("halves", "one"), default="halves",
                    help="the scans' IPC data: two files as Parquet's (default), or one file")
    ap.add_argument("--out", type=Path, help="also write the environment and tables as markdown here")
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--strict", action="store_true", help="exit 1 if any benchmark misses its target")
    args = ap.parse_args(argv)
    cfg = dict(QUICK if args.quick else FULL)
    if args.rounds:
        cfg["rounds"] = args.rounds
    filesystems = (args.filesystems or ("s3" if args.quick else ",".join(FILESYSTEMS))).split(",")
    unknown = set(filesystems) - set(FILESYSTEMS)
    if unknown:
        ap.error(f"--filesystems: unknown {sorted(unknown)}; known: {', '.join(FILESYSTEMS)}")
    only = (args.only or "scan,filter,write,planning").split(",")
    load_before = os.getloadavg()
    begun = time.perf_counter()

    ipc, parquet = make_data(args.data_dir, cfg["batches"], cfg["rows"])
    scan_ipc = halves(ipc) if args.layout == "halves" else ipc
    f_ipc, f_parquet = make_data(args.data_dir, cfg["filter_batches"], cfg["filter_rows"])
    s_ipc, s_parquet = small_files(args.data_dir, cfg["files"], cfg["file_rows"])
    tiny_ipc, tiny_parquet = make_data(args.data_dir, 2, 1)  # two one-row batches: the floor
    uploads = {"scan.arrow": scan_ipc, "scan.parquet": parquet, "filter.arrow": f_ipc,
               "filter.parquet": f_parquet, "floor.arrow": tiny_ipc, "floor.parquet": tiny_parquet,
               "small.arrow": s_ipc, "small.parquet": s_parquet}
    needed = {"scan": ("scan.arrow", "scan.parquet"),
              "filter": ("filter.arrow", "filter.parquet", "floor.arrow", "floor.parquet"),
              "planning": ("small.arrow", "small.parquet"), "write": ()}
    uploads = {k: v for k, v in uploads.items() if any(k in needed[b] for b in only)}

    from tests.support.maven_support import s3a_jars
    from tests.support.spark_cluster_support import S3A_FOR_MOTO
    from arrowmm.spark.session import local_session
    work = Path(args.data_dir) / f"storage-{uuid.uuid4().hex[:8]}"
    work.mkdir(parents=True)
    hdfs = moto = spark = None
    try:
        if "hdfs" in filesystems:
            from tests.support.hdfs_support import MiniHdfs
            hdfs = MiniHdfs()  # starts while the rest does
        conf = {"spark.hadoop.dfs.replication": "1", "spark.default.parallelism": "2"}
        if "s3" in filesystems:
            moto = MotoProcess(work / "moto.log", args.moto_whole_objects)
            conf["spark.jars"] = ",".join(s3a_jars())
            conf.update(moto.server.spark_conf(), **S3A_FOR_MOTO)
            # (Hadoop 3.5's default, the analytics stream, keeps what it read for later streams
            # of the JVM: a timed round after the warm-up then reads memory, not the store)
            conf["spark.hadoop.fs.s3a.input.stream.type"] = args.s3a_stream
        t0 = time.perf_counter()
        print(f"starting Spark ({time.perf_counter() - begun:.0f} s in)", flush=True)
        spark = local_session("local[2]", "arrowmm-bench-storage", str(work / "session"),
                              driver_memory="2g", fast_jit=False, jvm=True, **conf)
        start_s = time.perf_counter() - t0
        print(f"Spark up in {start_s:.0f} s", flush=True)
        roots = {}
        if hdfs is not None:
            roots["hdfs"] = f"{hdfs.uri}/bench"
        if moto is not None:
            roots["s3"] = f"s3a://{moto.server.new_bucket('arrowmm-bench')}/bench"
        tables = {"scan": [], "filter": [], "write": [], "planning": []}
        setup = []
        df = None
        if "write" in only:
            from pyspark.sql import functions as F
            n = cfg["batches"] * cfg["rows"]
            df = spark.range(0, n, numPartitions=2).select(
                F.col("id").alias("k"), *[F.rand(i).alias(c) for i, c in enumerate("abcd")]).cache()
            assert df.count() == n
        for fs in filesystems:
            root = roots[fs]
            s3 = moto.server if fs == "s3" else None
            took = sum(copy_up(spark, local, f"{root}/{name}", s3) for name, local in uploads.items())
            setup.append(f"{fs}: inputs copied in {took:.0f} s")
            print(f"{fs}: inputs copied to {root} in {took:.1f} s", flush=True)
            if "scan" in only:
                tables["scan"] += scans(spark, root, fs, cfg["rounds"],
                                        moto.served if fs == "s3" else None)
            if "filter" in only:
                tables["filter"] += filtered(spark, root, fs, cfg)
            if "write" in only:
                tables["write"] += writes(spark, root, fs, cfg, df)
            if "planning" in only:
                tables["planning"] += planning(spark, root, fs, cfg, args.quick or args.count)
        version = spark.version
    finally:
        if spark is not None:
            spark.stop()
        if moto is not None:
            moto.stop()
        if hdfs is not None:
            hdfs.stop()
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()

    heads = {"scan": ["| query ({:,} x {:,} rows) | arrowmm_jvm | Parquet | throughput ratio "
                      "| target | result |".format(cfg["batches"], cfg["rows"]),
                      "|---|---:|---:|---:|---:|:---:|"],
             "filter": ["| query 1 on {} batches x {:,} rows | full scan | filter to 1% of the "
                        "batches | speed-up | floor (no batch left) | target | result |".format(
                            cfg["filter_batches"], cfg["filter_rows"]),
                        "|---|---:|---:|---:|---:|---:|:---:|"],
             "write": ["| write (k + 4 float64, 2 tasks, overwrite) | arrowmm_jvm | Parquet "
                       "(snappy) | throughput ratio | target | result |",
                       "|---|---:|---:|---:|---:|:---:|"],
             "planning": ["| planning ({:,} rows per file) | arrowmm_jvm | Parquet | "
                          "Parquet / arrowmm | target | result |".format(cfg["file_rows"]),
                          "|---|---:|---:|---:|---:|:---:|"]}
    blocks = ["\n".join(heads[k] + rows) for k, rows in tables.items() if rows]
    table = "\n\n".join(blocks)
    env = "\n".join(machine_lines(args.quick) + [
        f"- spark {version}, local[2], driver 2g, session start {start_s:.1f} s; "
        f"filesystems: {'; '.join(KINDS[fs] for fs in filesystems)}; {'; '.join(setup)}",
        f"- data: {cfg['batches']} batches x {cfg['rows']:,} rows (k int64 + 4 float64), IPC "
        f"{os.path.getsize(ipc) / 2**20:.0f} MiB "
        f"({'2 files as Parquet' if args.layout == 'halves' else '1 file'}), Parquet "
        f"{sum(p.stat().st_size for p in parquet.iterdir()) / 2**20:.0f} MiB (snappy, a row "
        f"group per batch); Parquet written with Spark's default committer",
        f"- median of {cfg['rounds']} interleaved rounds after 1 warm-up round, planning "
        f"included; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after"])
    print(f"\n{env}\n\n(throughput ratio = Parquet time / arrowmm_jvm time, higher is better)"
          f"\n\n{table}")
    if args.out:
        args.out.write_text(f"# arrowmm JVM connector vs Parquet on HDFS and S3\n\n{env}\n\n"
                            f"{table}\n")
    return 1 if args.strict and "FAIL" in table else 0


if __name__ == "__main__":
    sys.exit(main())
