"""The main job (``arrowmm demo``): a Spark pipeline that writes and reads ``.arrow`` through arrowmm.

1. a local Spark session (local[*]) generates a sensor dataset and writes it
   with the arrowmm data source (zstd, per-batch statistics, atomic commit);
2. Spark reads it back twice: a full aggregate, and a selective query whose
   filter the statistics prune to a few record batches (counted), checked against
   the Python data source (``arrowmm_python``) reading every batch;
3. one output file goes to arrowmm's lazy reader: open cost, random access,
   a zero-copy numpy view of one column.
"""
from __future__ import annotations

import os
import tempfile
import time

from ..dataset.discovery import data_files_in

__all__ = ["run"]


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def run(rows: int = 4_000_000, partitions: int = 4, folder: str = None, out=print) -> int:
    import numpy as np

    import arrowmm
    from pyspark.sql import functions as F

    from .session import local_session

    folder = folder or tempfile.mkdtemp(prefix="arrowmm-demo-")
    os.makedirs(folder, exist_ok=True)
    data = os.path.join(folder, "sensors")
    log = os.path.join(folder, "batches-read.log")
    out(f"arrowmm demo: a Spark pipeline over Arrow IPC files ({rows:,} rows, folder {folder})\n")

    spark, t = _timed(lambda: local_session("local[*]", "arrowmm-demo", os.path.join(folder, "spark"),
                                            driver_memory="2g",
                                            **{"spark.sql.execution.arrow.maxRecordsPerBatch": "100000"}))
    jars = spark.sparkContext.getConf().get("spark.jars", "") or ""
    engine = "the JVM connector" if "arrowmm-spark" in jars else "the Python data source"
    out(f"1. local Spark {spark.version} session started in {t:.1f} s "
        f"(master {spark.sparkContext.master}; format 'arrowmm' is {engine})")
    try:
        df = (spark.range(0, rows, numPartitions=partitions)
              .select(F.col("id"),
                      (F.lit(1_700_000_000) + F.col("id")).cast("timestamp").alias("ts"),
                      F.concat(F.lit("sensor-"), (F.col("id") % 16).cast("string")).alias("sensor"),
                      (F.sin(F.col("id") / 1000.0) * 10).alias("value")))
        _, t = _timed(lambda: df.write.format("arrowmm").mode("overwrite")
                      .option("compression", "zstd").save(data))
        files = data_files_in(data)
        size = sum(os.path.getsize(f) for f in files)
        out(f"2. wrote {len(files)} files, {size / 2**20:.1f} MiB (zstd, statistics "
            f"in the footers) in {t:.1f} s, committed atomically (a new manifest version in "
            f"_arrowmm_log/, mirrored to _SUCCESS)")

        full, t_full = _timed(lambda: spark.read.format("arrowmm").load(data)
                              .agg(F.count("*").alias("n"), F.sum("value").alias("total")).first())
        out(f"3. full scan: {full['n']:,} rows, sum(value) = {full['total']:.3f} in {t_full:.2f} s")

        lo = rows - rows // 200
        query = f"id >= {lo}"
        if os.path.exists(log):
            os.unlink(log)
        # the reference: the Python source without pushdown reads every batch
        plain, t_plain = _timed(lambda: spark.read.format("arrowmm_python").load(data)
                                .filter(query)
                                .agg(F.count("*").alias("n"), F.max("ts").alias("last")).first())
        pruned, t_pruned = _timed(lambda: spark.read.format("arrowmm").option("pushdown", "true")
                                  .option("batchLog", log).load(data).filter(query)
                                  .agg(F.count("*").alias("n"), F.max("ts").alias("last")).first())
        read = len(open(log).read().splitlines()) if os.path.exists(log) else 0
        batches = sum(arrowmm.open_file(f).num_record_batches for f in files)
        assert pruned == plain, (pruned, plain)
        out(f"4. selective query ({query}): {pruned['n']:,} rows, last {pruned['last']}; "
            f"statistics let tasks read {read} of {batches} record batches: "
            f"{t_pruned:.2f} s (the Python source reading every batch: {t_plain:.2f} s), "
            f"same answer")
    finally:
        spark.stop()

    path = max(files, key=os.path.getsize)
    reader, t_open = _timed(lambda: arrowmm.open_file(path))
    batch, t_get = _timed(lambda: reader.get_batch(-1))
    values, t_col = _timed(lambda: batch.column("value").to_numpy())
    out(f"5. lazy reader on {os.path.basename(path)}: open {t_open * 1e3:.2f} ms ({reader.num_record_batches} "
        f"batches, footer and schema only), get_batch(-1) {t_get * 1e3:.2f} ms, "
        f"column 'value' decompressed and viewed in {t_col * 1e3:.1f} ms "
        f"({len(values):,} float64, mean {float(np.mean(values)):.4f}); "
        f"columns decoded: {reader.stats.columns_loaded}")
    return 0

