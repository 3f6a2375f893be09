"""Fixtures of the IPC tests: ``s3_filesystem``, an s3fs filesystem on the root conftest's S3
server (``tests/support/s3_support.py``), for the object-store reads."""
from tests.support.s3_support import s3_filesystem  # noqa: F401  (a fixture)
