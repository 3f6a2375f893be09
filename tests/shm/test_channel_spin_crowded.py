"""A default consumer's spin is turned off only when the machine is crowded (issue 34).

A spin that lost time (the wall time less its thread's CPU time) turned spinning off for
``BACKOFF`` seconds; on a virtual machine the hypervisor takes a CPU away for a while a few
times a second, so an idle machine's default consumer slept through most batches.  Now the
loss counts only when more threads are runnable than the machine has CPUs
(``spin.crowded``).  Lost time is made for real here by stopping the consumer's process
(SIGSTOP) while it spins, as a hypervisor stops a CPU; the verdict on the machine is the
test's, so the outcome does not depend on the machine's load.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import arrowmm
from arrowmm.shm import Channel
from arrowmm.shm.spin import BASE, STOLEN_LIMIT, WAKE_SPIN, AdaptiveSpin, crowded

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/dev/shm")),
                                reason="channels need Linux (/dev/shm and futexes)")

HANG = 60.0  # upper bound of a wait that only fails on a hang
SCHEMA = arrowmm.schema([("i", arrowmm.int64())])
PREFIX = f"amm-chan-test-crowded-{os.getpid()}-"


def _trained(start: float) -> AdaptiveSpin:
    """A policy that has seen a batch every 0.2 ms up to ``start``."""
    spin = AdaptiveSpin()
    for k in range(10):
        spin.arrived(start - 0.0002 * (9 - k))
    return spin


def test_time_lost_on_an_uncrowded_machine_keeps_the_spin():
    asked = []
    spin = _trained(3.0)
    assert not spin.spun(3.0001, STOLEN_LIMIT * 2, lambda: asked.append(1) or False)
    assert asked == [1]  # (lost time: the machine was asked about)
    assert spin.spin_until(3.0001) == pytest.approx(3.0004)  # still spinning two gaps
    assert spin.woken(3.0001) == 3.0001 + WAKE_SPIN
    # a crowded machine turns it off, as before
    assert spin.spun(3.0002, STOLEN_LIMIT * 2, lambda: True)
    assert spin.spin_until(3.0002) == 3.0002 + BASE


def test_the_machine_is_asked_about_only_when_time_was_lost():
    def never():
        raise AssertionError("asked without lost time")

    spin = _trained(4.0)
    assert not spin.spun(4.0001, STOLEN_LIMIT, never)
    assert not spin.spun(4.0001, 0.0, never)


def test_crowded_counts_runnable_threads_against_the_cpus(tmp_path):
    cpus = os.cpu_count() or 1
    loadavg = tmp_path / "loadavg"
    loadavg.write_text(f"0.50 0.40 0.30 {cpus}/210 4242\n")
    assert crowded(str(loadavg)) is False  # (one runnable thread a CPU: nobody waits)
    loadavg.write_text(f"3.10 2.00 1.00 {cpus + 1}/210 4242\n")
    assert crowded(str(loadavg)) is True
    for text in ("", "0.5 0.4 0.3 x/210 1\n", "0.5 0.4\n"):  # (unreadable: assume crowded,
        loadavg.write_text(text)                              # the old rule)
        assert crowded(str(loadavg)) is True
    assert crowded(str(tmp_path / "missing")) is True
    assert crowded() in (True, False)  # (the real file parses)


CONSUMER = """
    import sys
    from arrowmm.shm import Channel, consumer
    asked = []
    verdict = sys.argv[2] == "crowded"
    consumer.crowded = lambda: asked.append(1) or verdict  # (the test's verdict on the machine)
    c = Channel.attach(sys.argv[1])
    print("attached", flush=True)
    for batch in c:
        pass
    print(len(asked), c._adaptive.busy_until is not None, flush=True)
"""


@pytest.mark.parametrize("verdict", ["idle", "crowded"])
def test_a_default_consumer_stopped_mid_spin_keeps_spinning_unless_crowded(verdict):
    name = f"{PREFIX}{verdict}"
    with Channel.create(name, SCHEMA, capacity=1 << 16, slots=4, on_slow="drop") as ch:
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CONSUMER), name, verdict],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline() == "attached\n"
            for stop in range(30):
                for k in range(10):  # a batch every ~0.2 ms: the consumer learns to spin
                    ch.send({"i": [k]}, timeout=HANG)
                    time.sleep(0.0002)
                time.sleep(0.0001)  # (the batch taken, the consumer spins for the next)
                os.kill(proc.pid, signal.SIGSTOP)  # (its spin loses 5 ms, as to a hypervisor)
                time.sleep(0.005)
                os.kill(proc.pid, signal.SIGCONT)
            ch.close()
            out, _ = proc.communicate(timeout=HANG)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    asked, busy = out.split()
    assert int(asked) >= 1  # (some stop fell in a spin: the machine was asked about)
    assert busy == ("True" if verdict == "crowded" else "False")
