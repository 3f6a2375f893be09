"""A producer that stops on an exception while a ``reserve``d batch is still open (taken
without a ``with`` of its own): the half-built batch is dropped, the stream is aborted, and the
producer's exception, not an error about the reservation, leaves its ``with`` block (review 19:
F1).  Timeouts only catch hangs.
"""
from __future__ import annotations

import os
import sys

import pytest

import arrowmm
from arrowmm.errors import ArrowInvalid, ProducerDiedError
from arrowmm.shm import Channel

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-abort-{os.getpid()}-"
HANG = 60
SCHEMA = arrowmm.schema([("x", arrowmm.int64())])


def test_an_exception_with_a_reservation_open_aborts_the_stream_and_comes_out(name):
    ch = Channel.create(name, SCHEMA, capacity=1 << 16, slots=4)
    consumer = Channel.attach(name)
    pending = None
    try:
        with pytest.raises(ValueError, match="the source failed"):
            with ch:
                ch.send({"x": [1]}, timeout=HANG)
                pending = ch.reserve(2, timeout=HANG)  # (kept alive, as a frame would keep it)
                raise ValueError("the source failed")
        assert consumer.recv(timeout=HANG).column("x").to_pylist() == [1]
        with pytest.raises(ProducerDiedError, match=r"\(ValueError\)"):
            consumer.recv(timeout=HANG)  # (was a wait for batches that never come)
        assert "aborted" in repr(pending)
        with pytest.raises(ArrowInvalid, match="was aborted"):
            pending.commit()
    finally:
        consumer.close()
