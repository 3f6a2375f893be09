"""A real S3 endpoint for the tests: moto in server mode on loopback, and s3fs pointed at it.

Object-store code is tested against a real HTTP server speaking the S3 protocol (moto's
``ThreadedMotoServer``, started once per test session on a free port of 127.0.0.1), never
against mocks of the client. Tests that need it take the fixtures by name (``s3_server`` is
the root conftest's, ``s3_filesystem`` the IPC folder's: ``tests/ipc/conftest.py``)::

    def test_something(s3_server, s3_filesystem):
        bucket = s3_server.new_bucket()                 # a fresh, empty bucket each call
        s3_filesystem.pipe(f"{bucket}/key.arrow", data)
        url = f"s3://{bucket}/key.arrow"
        ... arrowmm.open_file(url, filesystem=s3_filesystem) ...

``s3_server.storage_options`` is what fsspec/s3fs, polars and pandas take as
``storage_options=``; ``s3_server.environ()`` the ``AWS_*`` variables for code that reads
credentials from the environment.

From Spark (``hadoop-aws``'s S3A filesystem), the same server is reached with::

    spark.hadoop.fs.s3a.endpoint              = s3_server.endpoint_url   (http://127.0.0.1:PORT)
    spark.hadoop.fs.s3a.path.style.access     = true    (moto serves buckets as paths, not hosts)
    spark.hadoop.fs.s3a.connection.ssl.enabled = false
    spark.hadoop.fs.s3a.access.key / secret.key = testing / testing
    spark.hadoop.fs.s3a.endpoint.region       = us-east-1
    spark.hadoop.fs.s3a.aws.credentials.provider =
        org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider

``s3_server.spark_conf()`` returns these as a dict. Paths are then ``s3a://BUCKET/...``.

The fixtures skip (with the reason printed) only when ``moto`` or ``s3fs`` is not installed
(``pip install 'moto[server]' s3fs boto3``, the ``test`` extra).
"""
from __future__ import annotations

import itertools
import logging
import os
from dataclasses import dataclass, field

import pytest

ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "us-east-1"


def _require(module: str):
    """Import ``module`` or skip the test saying what is missing and how to get it."""
    return pytest.importorskip(
        module, reason=f"{module} is not installed: pip install 'moto[server]' s3fs boto3 "
                       f"(the test extra) to run the object-store tests against a local S3")


@dataclass
class S3Server:
    """Where the moto S3 server listens and how to sign requests to it."""

    endpoint_url: str
    access_key: str = ACCESS_KEY
    secret_key: str = SECRET_KEY
    region: str = REGION
    _bucket_numbers: itertools.count = field(default_factory=itertools.count, repr=False)

    @property
    def storage_options(self) -> dict:
        """s3fs's (and so fsspec's, polars', pandas') ``storage_options`` for this server."""
        return {"key": self.access_key, "secret": self.secret_key,
                "client_kwargs": {"endpoint_url": self.endpoint_url,
                                  "region_name": self.region}}

    def environ(self) -> dict:
        """``AWS_*`` environment variables for clients that read credentials from there."""
        return {"AWS_ACCESS_KEY_ID": self.access_key, "AWS_SECRET_ACCESS_KEY": self.secret_key,
                "AWS_DEFAULT_REGION": self.region, "AWS_ENDPOINT_URL": self.endpoint_url}

    def spark_conf(self) -> dict:
        """Spark/Hadoop S3A settings that reach this server (path-style, plain HTTP)."""
        return {"spark.hadoop.fs.s3a.endpoint": self.endpoint_url,
                "spark.hadoop.fs.s3a.path.style.access": "true",
                "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
                "spark.hadoop.fs.s3a.access.key": self.access_key,
                "spark.hadoop.fs.s3a.secret.key": self.secret_key,
                "spark.hadoop.fs.s3a.endpoint.region": self.region,
                "spark.hadoop.fs.s3a.aws.credentials.provider":
                    "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"}

    def client(self):
        """A boto3 S3 client for this server (to look at what landed, list uploads...)."""
        boto3 = _require("boto3")
        return boto3.client("s3", endpoint_url=self.endpoint_url, region_name=self.region,
                            aws_access_key_id=self.access_key,
                            aws_secret_access_key=self.secret_key)

    def new_bucket(self, prefix: str = "arrowmm-test") -> str:
        """Create a fresh empty bucket and return its name (unique within the session)."""
        name = f"{prefix}-{os.getpid()}-{next(self._bucket_numbers)}"
        self.client().create_bucket(Bucket=name)
        return name


@pytest.fixture(scope="session")
def s3_server():
    """A moto S3 server on 127.0.0.1 and a free port, for the whole test session."""
    _require("s3fs")
    _require("boto3")
    server_module = _require("moto.server")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # (a log line per request otherwise)
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield S3Server(endpoint_url=f"http://{host}:{port}")
    finally:
        server.stop()


@pytest.fixture
def s3_filesystem(s3_server):
    """An ``s3fs.S3FileSystem`` pointed at the moto server (a new instance, no listing cache
    shared with other tests)."""
    s3fs = _require("s3fs")
    return s3fs.S3FileSystem(skip_instance_cache=True, **s3_server.storage_options)
