"""Write the JUnit tests' Arrow files into ``resources/`` (tiny; committed, so Maven needs no
Python): run ``python arrowmm/spark/jvm/src/test/make_test_files.py`` after changing them.

``pyarrow_two_batches.arrow``: pyarrow's writer (the reference), columns ``k`` int64,
``name`` string (one null), ``x`` float64, two record batches of 3 rows.
``arrowmm_statistics.arrow``: arrowmm's writer with footer statistics, ``k`` int64 0..2 in
batch 0 and 10..12 in batch 1 (a filter ``k > 5`` can skip batch 0).
"""
import os

import pyarrow as pa

import arrowmm

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "resources")


def main() -> None:
    table = pa.table({"k": pa.array([0, 1, 2, 3, 4, 5], pa.int64()),
                      "name": pa.array(["a", None, "ccc", "d", "ee", "f"]),
                      "x": pa.array([0.5, 1.5, 2.5, 3.5, 4.5, 5.5])})
    with pa.ipc.new_file(os.path.join(HERE, "pyarrow_two_batches.arrow"), table.schema) as w:
        for batch in table.to_batches(max_chunksize=3):
            w.write_batch(batch)
    with arrowmm.new_file(os.path.join(HERE, "arrowmm_statistics.arrow"),
                          arrowmm.schema([("k", arrowmm.int64())]), statistics=True) as w:
        w.write({"k": [0, 1, 2]})
        w.write({"k": [10, 11, 12]})


if __name__ == "__main__":
    main()
