"""Spark's hook for finding arrowmm's Python data source as ``arrowmm_python``.

The name reaches the Python data source in every session, those whose ``arrowmm`` is the JVM
connector (its jar on the session) included; see ``pyspark_arrowmm`` for how PySpark finds
``pyspark_*`` modules.
"""
from arrowmm.spark.source import ArrowmmPythonDataSource


class DefaultSource(ArrowmmPythonDataSource):
    """arrowmm's Python data source under the short name ``arrowmm_python``."""
