"""How many consumers a producer sees, with real processes: ``Channel.consumers`` and
``wait_for_consumers`` count consumers that are attached and still run; a SIGKILLed one,
whose entry stays until it is reclaimed, is not counted (review 19: F3: a producer waiting
for its first worker went on sending to nobody).  Timeouts only catch hangs.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import arrowmm
from arrowmm.shm import Channel

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

PREFIX = f"amm-chan-count-{os.getpid()}-"
HANG = 60
SCHEMA = arrowmm.schema([("x", arrowmm.int64())])

# a consumer that attaches, says so and waits to be killed
ATTACHED = """
    import sys, time
    from arrowmm.shm import Channel
    c = Channel.attach(sys.argv[1])
    print("attached", flush=True)
    time.sleep(600)
"""


def test_a_killed_consumer_is_not_counted(name):
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=4) as ch:
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(ATTACHED), name],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline() == "attached\n"
            assert ch.consumers == 1
            assert ch.wait_for_consumers(1, timeout=HANG) == 1
            proc.kill()
            proc.wait(timeout=HANG)
            assert ch.consumers == 0
            with pytest.raises(TimeoutError, match="0 of 1 consumers"):
                ch.wait_for_consumers(1, timeout=0.2)
            mine = Channel.attach(name)  # (its entry was reclaimed meanwhile, or another)
            assert ch.consumers == 1
            assert ch.wait_for_consumers(1, timeout=HANG) == 1
            mine.close()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
