"""A channel's ends across ``fork``, with real processes: a forked child cannot send, reserve
or close on its parent's producer, nor receive through or close its parent's consumer
(``ArrowInvalid`` naming both processes; the parent's stream is unharmed).  Every child reports
through a pipe and leaves with ``os._exit``; timeouts only catch hangs.
"""
from __future__ import annotations

import itertools
import json
import os
import sys

import pytest

import arrowmm
from arrowmm.shm import Channel

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-fork-{os.getpid()}-"
_counter = itertools.count()
HANG = 60
SCHEMA = arrowmm.schema([("x", arrowmm.int64())])


@pytest.fixture
def name():
    n = f"{PREFIX}{next(_counter)}"
    yield n
    try:
        os.unlink(f"/dev/shm/{n}")
    except FileNotFoundError:
        pass


def in_child(work) -> dict:
    """Run ``work()`` in a forked child; what it returned, or the exception it raised."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            try:
                out = {"returned": work()}
            except BaseException as exc:  # noqa: BLE001  (reported to the parent)
                out = {"raised": type(exc).__name__, "message": str(exc)}
            os.write(w, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        got = f.read()
    assert os.waitpid(pid, 0)[1] == 0
    return json.loads(got)


@pytest.mark.parametrize("call", ["send", "reserve", "close"])
def test_a_forked_child_cannot_use_its_parents_producer(name, call):
    with Channel.create(name, SCHEMA, capacity=1 << 14, slots=4) as ch, \
            Channel.attach(name) as c:
        def work():
            if call == "send":
                return ch.send({"x": [-1]}, timeout=5)
            if call == "reserve":
                with ch.reserve(1, timeout=5) as b:
                    b["x"][:] = [-1]
                return b.sequence
            return ch.close()
        got = in_child(work)
        assert got.get("raised") == "ArrowInvalid", got
        assert f"belongs to process {os.getpid()}" in got["message"], got
        assert "forked child" in got["message"], got
        assert ch.send({"x": [1]}, timeout=HANG) == 0  # the parent's stream is unharmed
        assert c.recv(timeout=HANG).column("x").to_pylist() == [1]


@pytest.mark.parametrize("call", ["recv", "iterate", "close"])
def test_a_forked_child_cannot_use_its_parents_consumer(name, call):
    with Channel.create(name, SCHEMA, capacity=1 << 14, slots=4) as ch, \
            Channel.attach(name) as c:
        ch.send({"x": [7]}, timeout=HANG)

        def work():
            if call == "recv":
                return c.recv(timeout=5).column("x").to_pylist()
            if call == "iterate":
                return next(iter(c)).column("x").to_pylist()
            return c.close()
        got = in_child(work)
        assert got.get("raised") == "ArrowInvalid", got
        assert f"attached in process {os.getpid()}" in got["message"], got
        assert "Channel.attach" in got["message"], got
        assert c.recv(timeout=HANG).column("x").to_pylist() == [7]  # still the parent's
        assert c.dropped == 0

