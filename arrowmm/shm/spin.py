"""How long a consumer with nothing to take busy-waits before it sleeps (``spin=None``).

Why a module of its own: waking a consumer asleep on its futex costs tens of microseconds
(the producer's wake call, the scheduler, on a virtual machine the hypervisor waking an idle
CPU), more than the rest of a small batch's trip; a consumer that busy-waits sees the batch
within a microsecond but keeps a core busy.  A fixed spin is wrong one way or the other: a
stream of a batch every half millisecond wants the consumer awake, one of a batch a minute
wants it asleep.  ``AdaptiveSpin`` spins as long as the recent gaps between batches say the
next one is near: after a batch, up to twice the typical gap (never more than ``AUTO_MAX``),
then sleeps.  A consumer waiting for minutes spins at most ``AUTO_MAX`` after its last batch,
and not at all once the gaps are known to be longer than that.

On a busy machine (more runnable processes than cores) spinning backfires: a spinner uses up
its turn on the CPU, and when the batch comes it waits behind the other processes, where one
woken from a sleep would have run first (and the producer may be the process it kept from a
CPU).  So a spin that lost more than ``STOLEN_LIMIT`` of its time (the wall time less the
thread's CPU time, measured by ``SharedMap.spin_while32``) while the machine is *crowded* (more
threads runnable than it has CPUs: ``crowded``) turns spinning off for ``BACKOFF`` seconds;
then it is tried again.  Time lost on an uncrowded machine says nothing about its load (the
hypervisor took the CPU away a moment, or the first spin started slowly), and when that
alone turned spinning off, an idle machine's default consumer of a batch every 0.5 ms slept
through 0.5 s of batches at a time (issue 34).

A sleeping consumer is woken by the producer as a send *begins* (``Channel.send``), so its
wake-up (tens of microseconds) overlaps the send's work; woken, it busy-waits up to
``WAKE_SPIN`` for the batch instead of going back to sleep.

The policy is pure arithmetic on the times it is given (the consumer passes
``time.monotonic()``), so its rules are tested without a clock.
"""
from __future__ import annotations

import os
from typing import Callable

__all__ = ["AdaptiveSpin", "crowded", "BASE", "AUTO_MAX", "WAKE_SPIN", "STOLEN_LIMIT", "BACKOFF"]

#: Seconds every wait busy-waits at least (a batch on its way is cheaper seen than slept for).
BASE = 10e-6
#: The longest adaptive busy-wait after a batch: a stream of more than ~1,000 batches a second
#: is met awake; slower ones cost a sleeping consumer's wake-up, and at most this much CPU
#: per batch while the gaps are being learnt.
AUTO_MAX = 1e-3
#: Seconds a consumer woken from its futex busy-waits for the batch whose send woke it.
WAKE_SPIN = 100e-6
#: Seconds a spin may lose to other processes before the machine counts as busy.
STOLEN_LIMIT = 50e-6
#: Seconds a busy machine's consumer sleeps straight away before it tries spinning again.
BACKOFF = 0.5
_WEIGHT = 0.25  # of the newest gap in the running estimate (the last ~4 gaps count)


class AdaptiveSpin:
    """The busy-wait of one consumer, learnt from the gaps between the batches it takes.

    ``arrived(now)`` records a batch taken at ``now``; ``spin_until(now)`` is the time until
    which a wait starting at ``now`` busy-waits (then it sleeps on the futex); ``spun(now,
    stolen)`` records a busy-wait that ended at ``now`` having lost ``stolen`` seconds to
    other processes.

    Examples
    --------
    >>> spin = AdaptiveSpin()
    >>> spin.spin_until(100.0) == 100.0 + BASE   # nothing learnt yet: the base spin
    True
    >>> for k in range(8):                        # a batch every 0.4 ms
    ...     spin.arrived(100.0 + 0.0004 * k)
    >>> round((spin.spin_until(100.0029) - 100.0028) * 1e6)   # up to 2 gaps after the last
    800
    >>> spin.spun(100.0030, stolen=0.002)         # a spin that lost 2 ms: the machine is busy
    True
    >>> spin.spin_until(100.0031) == 100.0031 + BASE
    True
    """

    __slots__ = ("last", "gap", "busy_until")

    def __init__(self):
        self.last = None  # when the last batch was taken
        self.gap = None   # the running estimate of the gap between batches (seconds)
        self.busy_until = None  # spinning is off until then (the machine was found busy)

    def woken(self, now: float) -> float:
        """Until when a consumer woken from its futex at ``now`` busy-waits: ``WAKE_SPIN`` (a
        producer wakes sleepers as its send begins, so the batch follows within the send's
        own time), ``BASE`` on a busy machine."""
        if self.busy_until is not None and now < self.busy_until:
            return now + BASE
        return now + WAKE_SPIN

    def spun(self, now: float, stolen: float, crowded: Callable[[], bool] = lambda: True
             ) -> bool:
        """A busy-wait ended at ``now``, ``stolen`` seconds of it not run by this thread; True
        if that makes the machine busy (spinning is off: the wait sleeps now).  ``crowded``,
        asked only when more than ``STOLEN_LIMIT`` was lost, says whether other threads wanted
        the CPU (the consumer passes ``crowded``); if not, the time went to the hypervisor."""
        if stolen > STOLEN_LIMIT and crowded():
            self.busy_until = now + BACKOFF
            return True
        return False

    def arrived(self, now: float) -> None:
        """A batch was taken at ``now``."""
        last, self.last = self.last, now
        if last is None:
            return
        gap = min(max(now - last, 0.0), 2 * AUTO_MAX)  # (a pause of minutes counts as 2 ms)
        self.gap = gap if self.gap is None else self.gap + _WEIGHT * (gap - self.gap)

    def spin_until(self, now: float) -> float:
        """Until when a wait that starts at ``now`` busy-waits: ``BASE`` from now, or longer
        while the next batch is due (within twice the typical gap of the last one, when that
        gap is at most ``AUTO_MAX``), unless the machine was found busy in the last
        ``BACKOFF`` seconds."""
        until = now + BASE
        gap = self.gap
        if gap is not None and gap <= AUTO_MAX and self.last is not None and \
                (self.busy_until is None or now >= self.busy_until):
            until = max(until, self.last + min(2 * gap, AUTO_MAX))
        return until


def crowded(loadavg: str = "/proc/loadavg") -> bool:
    """Whether more threads are runnable now than the machine has CPUs (the fourth field of
    ``/proc/loadavg``, running/total, counts the caller itself); True if it cannot be told.
    A read of ~20 microseconds: asked only after a spin lost time."""
    try:
        with open(loadavg, "rb") as f:
            running = int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return True
    return running > (os.cpu_count() or 1)
