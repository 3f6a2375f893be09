"""A consumer in another pid namespace (a container sharing ``/dev/shm``, here ``unshare
--pid``) records its namespace in its entry: the producer, which cannot judge that
namespace's pids, never reclaims it as dead, so the batch it holds keeps its values and a
wait-mode producer waits for it.  Needs root (``unshare``); timeouts only catch hangs.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import arrowmm
from arrowmm.shm import Channel

pytestmark = [
    pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                       reason="channels need Linux (/dev/shm and futexes)"),
    pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0,
                       reason="needs unshare --pid (root)"),
]

HANG = 60
CONSUMER = """
    import gc, json, sys
    from arrowmm.shm import Channel
    c = Channel.attach(sys.argv[1])
    print("attached", flush=True)
    b = c.recv(timeout=60)
    print("got", flush=True)
    sys.stdin.readline()
    held = b.column("x").to_pylist()
    del b
    gc.collect()
    rest = [bb.column("x").to_pylist()[0] for bb in c]
    print(json.dumps({"held": held, "rest": rest, "dropped": c.dropped}), flush=True)
"""


def test_a_consumer_in_another_pid_namespace_is_not_reclaimed(tmp_path):
    name = f"amm-chan-pidns-{os.getpid()}"
    script = tmp_path / "consumer.py"
    script.write_text(textwrap.dedent(CONSUMER))
    ch = Channel.create(name, arrowmm.schema([("x", arrowmm.int64())]), capacity=1 << 14,
                        slots=2, on_slow="wait")
    proc = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", sys.executable,
                             str(script), name], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "attached"
        ch.send({"x": [10, 11]}, timeout=HANG)
        assert proc.stdout.readline().strip() == "got"
        ch.send({"x": [20, 21]}, timeout=HANG)  # (the other slot)
        with pytest.raises(TimeoutError):  # the live consumer holds slot 0 and is behind
            ch.send({"x": [30, 31]}, timeout=1)
        proc.stdin.write("\n")
        proc.stdin.flush()
        ch.send({"x": [30, 31]}, timeout=HANG)
        ch.close()
        got = json.loads(proc.communicate(timeout=HANG)[0].strip().splitlines()[-1])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        ch.close()
        try:
            os.unlink(f"/dev/shm/{name}")
        except FileNotFoundError:
            pass
    assert got == {"held": [10, 11], "rest": [20, 30], "dropped": 0}
