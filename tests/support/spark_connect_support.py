"""A Spark Connect session in a process of its own (``python tests/support/spark_connect_support.py
FOLDER``): pyspark's ``remote("local[2]")`` starts a Connect server in the process that asks
for it, which cannot share a process with the suite's classic sessions.

The session starts WITHOUT the connector's jar; ``arrowmm.spark.add_jar`` sends it as a session
artifact, as a client of a remote server must.  The process writes through the JVM connector,
appends, reads back, and prints what it found as one JSON line on stdout.
"""
from __future__ import annotations

import json
import os
import sys


def main(folder: str) -> None:
    from pyspark.sql import SparkSession
    import arrowmm.spark
    spark = SparkSession.builder.remote("local[2]").getOrCreate()
    found = {"connect": type(spark).__module__}
    try:
        arrowmm.spark.add_jar(spark)
        out = os.path.join(folder, "out")
        df = spark.range(100).selectExpr("id", "CAST(id AS DOUBLE) / 2 AS half", "CAST(id AS STRING) AS s")
        df.write.format(arrowmm.spark.JVM_FORMAT).save(out)  # only the JVM connector answers
        df.limit(10).write.format(arrowmm.spark.JVM_FORMAT).mode("append").save(out)
        back = spark.read.format(arrowmm.spark.JVM_FORMAT).load(out)
        found["rows"] = sorted(tuple(r) for r in back.collect())
        found["files"] = sorted(os.listdir(out))
    finally:
        spark.stop()
    print(json.dumps(found))


if __name__ == "__main__":
    main(sys.argv[1])
