"""Who a process is, and whether it still runs: the records shared-memory objects carry.

A segment made by ``share`` and a channel record the process that made them (and a
channel every consumer attached to it) as ``{"pid", "start", "pidns", "boot"}``:
the pid alone is not enough, since pids are reused, so the process's start time
(clock ticks since boot, from ``/proc/<pid>/stat``), its pid namespace and the
boot id are kept too.  ``process_alive`` answers False only when it is sure the
process is gone (another boot, a pid that no longer runs or now belongs to a
later process, a zombie), and None when it cannot tell (a pid namespace other
than this process's: its pids mean nothing here).

Hidden temporaries (a ``share`` or a channel being created) are named for their
creator, ``.arrowmm-share-<pidns>-<pid>-<start>-<random>``, so ``cleanup`` can
judge them without opening them.

None of these change when a process ``exec``s, and no finalizer runs then: a channel's
producer or consumer that execs would be taken for alive for as long as the new program
runs.  So every process that maps a channel also holds a lock on it (``hold_lock``: a
shared open-file-description lock on byte ``LOCK_BASE + pid``, through a descriptor opened
``O_CLOEXEC`` and never mapped), which the kernel drops at its death *and* at its
``exec``; a record carrying ``"lock"`` (a descriptor of the channel) is judged gone once
nobody holds its pid's byte (``lock_held``).  A forked child releases its copies of them at
once: they share the parent's open file descriptions, and would keep the parent's locks held.
"""
from __future__ import annotations

import fcntl
import os
import re
import secrets
import struct
from typing import Optional, Tuple

from ..errors import ArrowInvalid

__all__ = ["TMP_PREFIX", "TMP_NAME", "process_start", "this_process", "process_alive",
           "temporary_name", "HeldLock", "hold_lock", "lock_held"]

#: Prefix of the hidden temporary a ``share`` or ``Channel.create`` writes before publishing.
TMP_PREFIX = ".arrowmm-share-"
#: .arrowmm-share-<pid namespace>-<pid>-<process start>-<random>
TMP_NAME = re.compile(r"^\.arrowmm-share-([0-9]+)-([0-9]+)-([0-9]+)-[0-9a-f]+$")

_BOOT: Optional[str] = None

#: This process's pid, kept current across ``fork`` (a hook below): a channel's ends compare
#: it on every call to tell a forked child, which ``os.getpid()`` (a system call) costs more.
PID = os.getpid()


#: A process locks byte ``LOCK_BASE + pid`` of a channel it maps (past any segment's end:
#: locks are advisory, and cover bytes a file does not have).
LOCK_BASE = 1 << 40
_FLOCK = struct.Struct("@hhqqi4x")  # struct flock: type, whence, start, len, pid (0 for OFD)


def _forked() -> None:
    global PID
    PID = os.getpid()
    # the child's copies of this process's liveness locks: the same open file descriptions,
    # which would keep the parent's locks held after the parent exec'd
    for lock in list(_HELD):
        lock.release()


os.register_at_fork(after_in_child=_forked)


def _read_text(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return f.read().decode("ascii", "replace")
    except OSError:
        return None


def process_start(pid: int) -> Optional[Tuple[int, str]]:
    """(start time in clock ticks since boot, state letter) of ``pid``, None if it is gone."""
    text = _read_text(f"/proc/{pid}/stat")
    if text is None:
        return None
    try:
        fields = text[text.rindex(")") + 2:].split()
        return int(fields[19]), fields[0]
    except (ValueError, IndexError):
        return None


def pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def boot_id() -> str:
    global _BOOT
    if _BOOT is None:  # (fixed for the life of the machine: read once)
        _BOOT = (_read_text("/proc/sys/kernel/random/boot_id") or "").strip()
    return _BOOT


def this_process() -> dict:
    """The record of the calling process: pid, start, pidns and boot."""
    pid = os.getpid()
    started = process_start(pid)
    return {"pid": pid, "start": started[0] if started else 0, "pidns": pid_namespace(),
            "boot": boot_id()}


class HeldLock:
    """A liveness lock this process holds: ``fd`` (None once released, or in a forked
    child) is a descriptor of its own open file description."""

    __slots__ = ("fd",)

    def __init__(self, fd: int):
        self.fd: Optional[int] = fd
        _HELD.add(self)

    def release(self) -> None:
        """Close the descriptor: the lock goes with it (idempotent)."""
        fd, self.fd = self.fd, None
        _HELD.discard(self)
        if fd is not None:
            os.close(fd)


_HELD: set = set()  # the HeldLocks this process holds (a forked child releases its copies)


def hold_lock(fd: int, what: str) -> HeldLock:
    """A new descriptor of the file open as ``fd`` (``O_CLOEXEC``, a description of its own)
    holding a shared lock on byte ``LOCK_BASE + pid`` of it until released; ``ArrowInvalid``
    naming ``what`` if the lock cannot be taken (peers would judge this process gone)."""
    try:
        lock_fd = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise ArrowInvalid(f"{what}: cannot reopen it to hold its liveness lock: "
                           f"{exc.strerror}") from None
    try:
        fcntl.fcntl(lock_fd, fcntl.F_OFD_SETLK,
                    _FLOCK.pack(fcntl.F_RDLCK, os.SEEK_SET, LOCK_BASE + os.getpid(), 1, 0))
    except OSError as exc:
        os.close(lock_fd)
        raise ArrowInvalid(f"{what}: cannot hold its liveness lock: {exc.strerror}") from None
    return HeldLock(lock_fd)


def lock_held(fd: int, pid: int) -> bool:
    """Whether some open file description holds a lock on byte ``LOCK_BASE + pid`` of the
    file open as ``fd`` (one held through ``fd``'s own description does not count)."""
    probe = _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, LOCK_BASE + pid, 1, 0)
    try:
        found = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, probe)
    except OSError:
        return True  # (cannot tell: never judged gone on that)
    return _FLOCK.unpack(found)[0] != fcntl.F_UNLCK


def process_alive(record: dict) -> Optional[bool]:
    """Whether the process ``record`` describes still runs (None: this process cannot tell).

    With ``"lock"`` (a descriptor of a channel the process holds its liveness lock on, or a
    ``HeldLock`` of this process on it): a process whose lock is gone has exec'd another
    program (or died), and is gone."""
    pid = record.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return None
    boot = record.get("boot")
    if boot and boot_id() and boot != boot_id():
        return False
    pidns = record.get("pidns")
    if pidns and pidns != pid_namespace():
        return None  # another pid namespace (container): its pids mean nothing here
    if os.path.isdir("/proc/self"):
        now = process_start(pid)
        if now is None:
            return False
        start, state = now
        if record.get("start") and start != record["start"]:
            return False  # the pid was reused by a later process
        if state in ("Z", "X"):
            return False  # a zombie holds nothing
    else:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
    lock = record.get("lock")
    if isinstance(lock, HeldLock):
        lock = lock.fd  # (None in a forked child: judged by pid only there)
    return lock is None or lock_held(lock, pid)


def temporary_name() -> str:
    """A fresh hidden name for a segment being written, naming this process as its creator."""
    me = this_process()
    return f"{TMP_PREFIX}{me['pidns']}-{me['pid']}-{me['start']}-{secrets.token_hex(6)}"
