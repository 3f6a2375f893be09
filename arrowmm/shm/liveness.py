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
"""
from __future__ import annotations

import os
import re
import secrets
from typing import Optional, Tuple

__all__ = ["TMP_PREFIX", "TMP_NAME", "process_start", "this_process", "process_alive",
           "temporary_name"]

#: Prefix of the hidden temporary a ``share`` or ``Channel.create`` writes before publishing.
TMP_PREFIX = ".arrowmm-share-"
#: .arrowmm-share-<pid namespace>-<pid>-<process start>-<random>
TMP_NAME = re.compile(r"^\.arrowmm-share-([0-9]+)-([0-9]+)-([0-9]+)-[0-9a-f]+$")

_BOOT: Optional[str] = None

#: This process's pid, kept current across ``fork`` (a hook below): a channel's ends compare
#: it on every call to tell a forked child, which ``os.getpid()`` (a system call) costs more.
PID = os.getpid()


def _forked() -> None:
    global PID
    PID = os.getpid()


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


def process_alive(record: dict) -> Optional[bool]:
    """Whether the process ``record`` describes still runs (None: this process cannot tell)."""
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
        return state not in ("Z", "X")  # a zombie holds nothing
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def temporary_name() -> str:
    """A fresh hidden name for a segment being written, naming this process as its creator."""
    me = this_process()
    return f"{TMP_PREFIX}{me['pidns']}-{me['pid']}-{me['start']}-{secrets.token_hex(6)}"
