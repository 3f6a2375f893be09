"""Fixtures of the Spark tests: ``spark``, a session with the JVM connector's jar, one per
module (a module that wants another session defines its own ``spark``); ``hdfs``, a real HDFS
for the session (both from ``tests/support/``).  The S3 server is the root conftest's."""
from tests.support.hdfs_support import hdfs  # noqa: F401  (a session fixture)
from tests.support.spark_support import jvm_spark  # noqa: F401  (the "spark" fixture)
