"""Apache Spark integration: ``spark.read.format("arrowmm")`` and ``df.write.format("arrowmm")``.

Needs pyspark 4 and pyarrow (``pip install "arrowmm[spark]"``) in the driver's
and the executors' Python.  ``register(spark)`` registers the data source
(on any session, with the jar or without) and turns on Spark's Python filter
pushdown, which lets reads skip record batches by the statistics arrowmm's
writers record.

The JVM connector ships as a jar inside this package: ``configure(builder)``
adds it to a ``SparkSession.builder`` (``local_session()`` does so whenever a
Java runtime is there), ``jar_path()`` gives its path (``python -m arrowmm.spark
jar`` prints it).  With the jar on the session, ``format("arrowmm")`` is the JVM
connector (Spark finds JVM sources' names first); without it (a Spark Connect
client that cannot add jars, say) it is the Python data source.  Two more names
reach one engine whatever the session: ``arrowmm_jvm`` and ``arrowmm_python``.
"""
from __future__ import annotations

__all__ = ["register", "configure", "add_jar", "jar_path", "FORMAT", "JVM_FORMAT", "PYTHON_FORMAT",
           "ArrowmmDataSource", "spark_schema"]

from .jar import FORMAT, JVM_FORMAT, PYTHON_FORMAT, add_jar, configure, jar_path


def register(spark, *, pushdown: bool = True) -> None:
    """Register the Python data source on ``spark`` as ``arrowmm_python`` and, unless a JVM
    source already answers to it, as ``arrowmm`` (and enable Spark's Python filter pushdown).

    Safe on any session, with or without the JVM connector's jar, and as often as called.  In
    a session with the jar, ``arrowmm`` stays the connector's (Spark refuses a Python source
    the name of a JVM one) and ``arrowmm_python`` is how the Python source is reached.

    The registered source carries the session's ``fs.defaultFS``, which a path without a
    scheme means, and its Hadoop S3A settings (``fs.s3a.endpoint``, ``fs.s3a.access.key`` ...),
    which configure s3fs for ``s3a://`` paths (the source's planning runs in Python workers that
    cannot read them): register again after changing them.  Without ``register`` (Spark's own lookup of the ``pyspark_*``
    modules) the workers take ``fs.defaultFS`` from ``$HADOOP_CONF_DIR/core-site.xml``.
    """
    from .paths import session_default_fs, session_s3a
    from .source import ArrowmmDataSource, ArrowmmPythonDataSource
    default_fs = session_default_fs(spark)
    s3a = session_s3a(spark)
    spark.dataSource.register(_recording(ArrowmmPythonDataSource, default_fs, s3a))
    try:
        spark.dataSource.register(_recording(ArrowmmDataSource, default_fs, s3a))
    except Exception as exc:  # (pyspark's AnalysisException, classic or Connect)
        if not _name_taken(exc):
            raise
    if pushdown:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    _activate_before_writes()


#: pyspark's classic writer methods that make Spark look a format's name up
_WRITES = {"pyspark.sql.readwriter.DataFrameWriter": ("save", "saveAsTable", "insertInto"),
           "pyspark.sql.streaming.readwriter.DataStreamWriter": ("start", "toTable")}


def _activate_before_writes() -> None:
    """Have classic pyspark's writers make their session the JVM thread's active one (when
    the thread has none) before Spark looks the format up.

    Spark finds a registered Python data source only through the calling JVM thread's active
    session (``DataSource.lookupDataSource``), and pyspark gives each Python thread its own
    JVM thread, which has one only in the thread that made the session: a write of
    ``format("arrowmm_python")`` from any other thread failed with DATA_SOURCE_NOT_FOUND.
    (Reads and SQL statements set it themselves.)  Installed once; Spark Connect's writers
    are other classes, untouched."""
    import importlib
    for where, methods in _WRITES.items():
        module, name = where.rsplit(".", 1)
        cls = getattr(importlib.import_module(module), name)
        for method in methods:
            original = getattr(cls, method)
            if not getattr(original, "_arrowmm_activates", False):
                setattr(cls, method, _activating(original))


def _activating(original):
    """Writer method ``original``, run after ``_activate`` of the writer's session."""
    import functools

    @functools.wraps(original)
    def write(self, *args, **kwargs):
        _activate(self._spark)
        return original(self, *args, **kwargs)

    write._arrowmm_activates = True
    return write


def _activate(spark) -> None:
    """Make ``spark`` the calling JVM thread's active session unless it has one."""
    from pyspark.sql import SparkSession
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return
    sessions = SparkSession._get_j_spark_session_class(jvm)
    if sessions.getActiveSession().isEmpty():
        sessions.setActiveSession(spark._jsparkSession)


def _recording(source, default_fs, s3a=None):
    """``source``, or when ``default_fs`` or S3A settings (``s3a``) are known a subclass of it
    that records them (pickled by value to Spark's workers, as classes that no module defines
    are)."""
    if not default_fs and not s3a:
        return source
    return type(source.__name__, (source,), {"default_fs": default_fs, "hadoop_s3a": s3a or None,
                                             "__doc__": source.__doc__,
                                             "__module__": source.__module__})


def _name_taken(exc: Exception) -> bool:
    """Whether ``exc`` is Spark refusing a Python source a name a JVM source has."""
    condition = getattr(exc, "getCondition", None)
    return callable(condition) and condition() == "DATA_SOURCE_ALREADY_EXISTS"


def __getattr__(name):  # the pyspark-dependent parts load on first use
    if name in ("ArrowmmDataSource", "ArrowmmPythonDataSource"):
        from . import source
        return getattr(source, name)
    if name == "spark_schema":
        from .types import spark_schema
        return spark_schema
    raise AttributeError(name)
