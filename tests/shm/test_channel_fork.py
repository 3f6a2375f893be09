"""A channel's ends across ``fork``, with real processes: a forked child cannot send, reserve
or close on its parent's producer, nor receive through or close its parent's consumer
(``ArrowInvalid`` naming both processes; the parent's stream is unharmed), and a batch the
child inherited keeps its values while the parent's producer goes on.  Every child reports
through a pipe and leaves with ``os._exit``; timeouts only catch hangs.
"""
from __future__ import annotations

import gc
import json
import multiprocessing
import os
import sys

import pytest

import arrowmm
from arrowmm.shm import Channel

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-fork-{os.getpid()}-"
HANG = 60
SCHEMA = arrowmm.schema([("x", arrowmm.int64())])


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


def _report_inherited(batch, view, go, out):
    go.wait(HANG)  # (until the parent let go of its copy and the producer went on)
    out.put([batch.column("x").to_pylist(), view.tolist()])


@pytest.mark.parametrize("on_slow", ["wait", "drop"])
def test_a_forked_child_keeps_the_values_of_a_batch_it_inherited(name, on_slow):
    # multiprocessing's fork start method hands ``args`` over by inheritance: the child's
    # batch and numpy view are over the slot's pages, and the parent then lets go of them
    ctx = multiprocessing.get_context("fork")
    with Channel.create(name, SCHEMA, capacity=1 << 14, slots=2, on_slow=on_slow) as ch, \
            Channel.attach(name) as c:
        ch.send({"x": [10, 11]}, timeout=HANG)
        batch = c.recv(timeout=HANG)
        view = batch.column("x").to_numpy()
        go, out = ctx.Event(), ctx.Queue()
        child = ctx.Process(target=_report_inherited, args=(batch, view, go, out))
        child.start()
        try:
            del batch, view
            gc.collect()
            for k in range(2, 7):  # every slot rewritten, the parent's first one twice
                ch.send({"x": [k * 10, k * 10 + 1]}, timeout=HANG)
                got = c.recv(timeout=HANG)  # (the parent reads the shared slot again)
                assert got.column("x").to_pylist() == [k * 10, k * 10 + 1]
                del got
            go.set()
            assert out.get(timeout=HANG) == [[10, 11], [10, 11]]
        finally:
            child.join(HANG)
            if child.is_alive():
                child.kill()
        assert child.exitcode == 0

