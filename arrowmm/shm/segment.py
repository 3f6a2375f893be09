"""Zero-copy sharing between processes through named shared-memory segments.

Why this module exists: Plasma is gone, and the do-it-yourself recipe
(``multiprocessing.shared_memory`` + an IPC stream + ``py_buffer``) is fiddly
and copies on every hand-off.  ``share(data)`` writes ``data`` as a complete
Arrow IPC *file* into a new POSIX shared-memory segment (no daemon); any
process opens it by name with ``open_shared(name)`` and reads it zero-copy
through a read-only mapping.  Readers, batches and arrays over such a mapping
pickle *by name* (segment name plus which batch / which buffers), so
``multiprocessing`` and DataLoader workers map the same segment instead of
receiving copies of the data.

Segments are named files of the shared-memory filesystem (``/dev/shm/<name>``
on Linux), so any Arrow implementation reads them too
(``pyarrow.ipc.open_file(pyarrow.memory_map("/dev/shm/<name>"))``).  On
Linux, ``share`` writes a hidden temporary ``.arrowmm-share-<pid>-...`` and
publishes it with ``os.link``: a reader polling for the name sees nothing or
the complete file, never part of one.  Where ``/dev/shm`` does not exist (macOS, BSDs) segments
are made with ``shm_open`` (the call ``multiprocessing.shared_memory`` uses):
the name then exists before the data is complete (``open_shared`` may raise
``ArrowInvalid`` during that window, never read a partial file as whole), and
the size the system reports may be rounded up to a page (the zero padding
after the file's trailing magic is ignored).  Windows is not supported.

Lifetime follows POSIX: a segment lives until it is unlinked
(``SharedFile.unlink``, the end of a ``with share(...)`` block, or
``arrowmm.shm.unlink(name)``), and unlinking it while processes have it
mapped leaves their data valid; the memory is freed when the last mapping
goes.  A segment nobody unlinks lasts until reboot, like a file.  So each
segment records its creator (pid, process start time, pid namespace, boot,
and ``keep``) in the file's custom metadata under ``arrowmm:shm:creator``,
and temporaries carry the creator in their name: ``cleanup()`` (and
``arrowmm shm rm --stale``) removes those whose creator has died (SIGKILL,
OOM killer) unless they were shared with ``keep=True``; ``segments()`` (and
``arrowmm shm ls``) lists them.

Nothing under a name is trusted: ``open_shared`` opens with ``O_NOFOLLOW |
O_NONBLOCK`` and requires a regular file owned by the current user (or by
``owner=``), so a symbolic link, a FIFO or another user's file planted under
the name is refused with ``ArrowInvalid`` saying which.

Examples
--------
>>> import arrowmm, arrowmm.shm, pickle
>>> batch = arrowmm.record_batch({"x": [1, 2, 3]})
>>> with arrowmm.shm.share(batch) as shared:
...     reader = arrowmm.shm.open_shared(shared.name)
...     got = pickle.loads(pickle.dumps(reader.get_batch(0)))  # by name, not by value
...     got.column("x").to_pylist()
[1, 2, 3]
"""
from __future__ import annotations

import errno
import json
import mmap
import os
import secrets
import stat
import weakref
from dataclasses import dataclass
from typing import Iterable, List, Optional, Tuple, Union

from .. import hooks, types as t
from .._core._region import BufferView, Region, empty_view
from ..errors import ArrowInvalid, ArrowNotImplementedError
from ..ipc.core.files import MAGIC
from ..ipc.read.file_reader import FileReader
from ..arrays.batch import RecordBatch
from ..interop.build import record_batch
from ..interop.interchange import RecordBatchReader
from ..ipc.write.writer import new_file
from ..arrays.provenance import copy_reason
from .ring import channel_record
from .liveness import TMP_NAME, process_alive, temporary_name, this_process
from .names import check_name

__all__ = ["share", "open_shared", "unlink", "SharedFile", "SHM_DIR", "cleanup", "segments",
           "SegmentInfo", "CREATOR_KEY"]

#: Where named segments live as files (None: use ``shm_open`` directly, see the module doc).
SHM_DIR: Optional[str] = "/dev/shm" if os.path.isdir("/dev/shm") else None

#: Custom metadata key of a segment's creator record (JSON: pid, start, pidns, boot, keep).
CREATOR_KEY = "arrowmm:shm:creator"
# .arrowmm-share-<pid namespace>-<pid>-<process start>-<random>: a share() in progress

# segment identity -> Region: one mapping per segment per process, shared by everything
# unpickled from it; key (name, st_dev, st_ino, size), so a name that was unlinked and made
# again maps the new segment while the old one stays valid for those that hold it.
_REGIONS: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()
_IDENTITY: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # Region -> key
# readers that rebuild unpickled batches: (key, allow_copies) -> reader, alive while a batch
# rebuilt through it is (a finalizer on the batch holds the reader: batches compare by value,
# so they are unhashable and cannot key a WeakKeyDictionary)
_READERS: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()


def _release_reader(reader) -> None:
    """Finalizer of a rebuilt batch: dropping it drops the batch's hold on ``reader``."""


def _check_name(name) -> str:
    """``name`` if it is a valid segment name, checked as the bytes the system sees (and for
    characters that would not print as themselves: ``names.check_name``)."""
    return check_name(name, "shared segment")


# -- the two backends: files under SHM_DIR, or shm_open ----------------------------------
def _posixshmem():
    try:
        import _posixshmem
    except ImportError:  # Windows
        raise ArrowNotImplementedError("arrowmm.shm needs POSIX shared memory (/dev/shm or "
                                       "shm_open); this platform has neither") from None
    return _posixshmem


class _NoSegment(ArrowInvalid):
    """Nothing is under the name (as opposed to something refused)."""


_Owner = Union[None, int, str, Iterable[Union[int, str]]]


def _owners(owner: _Owner) -> Optional[set]:
    """The uids ``owner`` allows (None: any)."""
    if owner is None:
        return {os.geteuid()}
    if isinstance(owner, str) and owner == "*":
        return None
    items = [owner] if isinstance(owner, (int, str)) else list(owner)
    out = set()
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise ArrowInvalid(f"owner must be a uid, a user name, a list of them or '*', "
                               f"got {item!r}")
        if isinstance(item, str):
            import pwd
            try:
                item = pwd.getpwnam(item).pw_uid
            except KeyError:
                raise ArrowInvalid(f"owner {item!r}: no such user") from None
        out.add(item)
    return out


_KINDS = [(stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"),
          (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
          (stat.S_ISLNK, "symbolic link")]


def _open_fd(name: str, owner: _Owner = None) -> int:
    """A read-only descriptor of segment ``name``: a regular file owned by ``owner`` (default:
    this user), never followed through a link nor blocking on a FIFO; ArrowInvalid says why not."""
    allowed = _owners(owner)
    where = os.path.join(SHM_DIR, name) if SHM_DIR is not None else "/" + name
    try:
        if SHM_DIR is not None:
            fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
                         | getattr(os, "O_CLOEXEC", 0))
        else:
            fd = _posixshmem().shm_open(where, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), 0)
    except FileNotFoundError:
        raise _NoSegment(f"no shared-memory segment named {name!r}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            why = "it is a symbolic link (refused: a link can point anywhere)"
        elif exc.errno in (errno.EACCES, errno.EPERM):
            why = "permission denied"
        else:
            why = exc.strerror or str(exc)
        raise ArrowInvalid(f"cannot open shared-memory segment {name!r} ({where}): {why}") from None
    try:
        st = os.fstat(fd)
        if SHM_DIR is not None and not stat.S_ISREG(st.st_mode):
            kind = next((k for test, k in _KINDS if test(st.st_mode)), "special file")
            raise ArrowInvalid(f"shared-memory segment {name!r} ({where}) is a {kind}, not a "
                               f"regular file: refused")
        if allowed is not None and st.st_uid not in allowed:
            raise ArrowInvalid(f"shared-memory segment {name!r} ({where}) is owned by uid "
                               f"{st.st_uid}, not {_describe(allowed)}: refused (another user "
                               f"may have planted it); pass owner={st.st_uid} to trust that user")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _describe(uids: set) -> str:
    if uids == {os.geteuid()}:
        return f"this user (uid {os.geteuid()})"
    return "uid " + " or ".join(str(u) for u in sorted(uids))


def _remove(name: str) -> None:
    if SHM_DIR is not None:
        os.unlink(os.path.join(SHM_DIR, name))
    else:
        _posixshmem().shm_unlink("/" + name)


def _identity(fd: int, name: str) -> tuple:
    st = os.fstat(fd)
    return (name, st.st_dev, st.st_ino, st.st_size)


def _map_fd(fd: int, key: tuple) -> Region:
    """The Region of the segment open as ``fd`` (reusing this process's mapping of it)."""
    region = _REGIONS.get(key)
    if region is not None:
        return region
    name, size = key[0], key[3]
    description = f"shared memory segment {name!r}"
    if size == 0:
        region = Region(b"", description=description)
    else:
        mapping = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        if SHM_DIR is None:  # shm_open sizes may be page-rounded: drop the padding
            mapping = memoryview(mapping)[:_file_end(mapping, size)]
        region = Region(mapping, description=description)
    region.mark_shared(name)
    _REGIONS[key] = region
    _IDENTITY[region] = key
    return region


def _file_end(mapping, size: int) -> int:
    """Where an Arrow file padded with zeros to ``size`` ends (``size`` if it is not one)."""
    end = size
    floor = max(0, size - mmap.PAGESIZE)
    while end > floor and mapping[end - 1] == 0:
        end -= 1
    return end if end >= len(MAGIC) and mapping[end - len(MAGIC):end] == MAGIC else size


def _map(name: str, owner: _Owner = None) -> Region:
    fd = _open_fd(_check_name(name), owner)
    try:
        return _map_fd(fd, _identity(fd, name))
    finally:
        os.close(fd)


def open_shared(name: str, *, allow_copies: bool = True, owner: _Owner = None) -> FileReader:
    """A ``FileReader`` over the shared segment ``name``, mapped read-only (zero-copy).

    The name must be a regular file owned by ``owner``: by default the current
    user; a uid, a user name or a list of them; ``"*"`` for anyone.  A missing
    name, a symbolic link, a FIFO or device, a file of another owner and a
    segment this user may not read raise ``ArrowInvalid`` saying which; a
    segment that is not an Arrow IPC file raises the reader's ``ArrowInvalid``.
    If the name was unlinked and made again, this maps the new segment.
    """
    return FileReader(_map(name, owner), allow_copies=allow_copies)


def unlink(name: str, *, missing_ok: bool = False) -> None:
    """Remove the name ``name``; processes that have the segment mapped keep their data."""
    try:
        _remove(_check_name(name))
    except FileNotFoundError:
        if not missing_ok:
            raise ArrowInvalid(f"no shared-memory segment named {name!r}") from None


# -- writing ------------------------------------------------------------------------------
def _source(data) -> Tuple[t.Schema, object]:
    """(schema, iterable of batches) of what ``share`` accepts."""
    if isinstance(data, RecordBatch):
        return data.schema, [data]
    if isinstance(data, (list, tuple)):
        batches = [b if isinstance(b, RecordBatch) else record_batch(b) for b in data]
        if not batches:
            raise ArrowInvalid("share() got no batches (an empty list has no schema; "
                               "pass a reader or a table to share an empty one)")
        return batches[0].schema, batches
    if isinstance(getattr(data, "schema", None), t.Schema) and hasattr(data, "__iter__"):
        return data.schema, data  # arrowmm readers
    if hasattr(data, "__arrow_c_stream__"):
        reader = RecordBatchReader.from_stream(data)
        return reader.schema, reader
    batch = record_batch(data)  # __arrow_c_array__, {name: values}, ...; raises what it can't take
    return batch.schema, [batch]


def _write_file(fd: int, data, compression, keep: bool) -> None:
    schema, batches = _source(data)
    creator = json.dumps({**this_process(), "keep": bool(keep)}, separators=(",", ":"))
    with os.fdopen(fd, "wb", buffering=0, closefd=False) as sink:
        # any batches the caller has can be shared: dictionaries that differ between batches
        # are unified (a file holds one per id; concatenated categoricals, a stream's
        # replacements), growth kept as deltas (arrowmm readers take them)
        with new_file(sink, schema, compression=compression, emit_dictionary_deltas=True,
                      unify_dictionaries=True, metadata={CREATOR_KEY: creator}) as writer:
            writer.write_table(batches)


def _share_dev_shm(name: str, data, compression, keep: bool) -> tuple:
    """Write under a hidden temporary name, map, then publish by ``os.link`` (atomic, no
    clobbering); the temporary's name says who made it, for ``cleanup``."""
    final = os.path.join(SHM_DIR, name)
    tmp = os.path.join(SHM_DIR, temporary_name())
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NOFOLLOW
                 | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        _write_file(fd, data, compression, keep)
        key = _identity(fd, name)
        region = _map_fd(fd, key)
        try:
            os.link(tmp, final)
        except FileExistsError:
            raise ArrowInvalid(f"a shared-memory segment named {name!r} already exists") from None
        return region, key
    finally:
        os.close(fd)
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def _share_shm_open(name: str, data, compression, keep: bool) -> tuple:
    """Without /dev/shm: write to a temporary file, then copy it into a new segment."""
    import shutil
    import tempfile
    shm = _posixshmem()
    with tempfile.TemporaryFile() as staging:
        _write_file(staging.fileno(), data, compression, keep)
        size = os.fstat(staging.fileno()).st_size
        try:
            fd = shm.shm_open("/" + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        except FileExistsError:
            raise ArrowInvalid(f"a shared-memory segment named {name!r} already exists") from None
        try:
            os.ftruncate(fd, size)
            with mmap.mmap(fd, size) as target:
                staging.seek(0)
                shutil.copyfileobj(staging, _MmapWriter(target), 1 << 24)
            key = _identity(fd, name)
            return _map_fd(fd, key), key
        except BaseException:
            shm.shm_unlink("/" + name)
            raise
        finally:
            os.close(fd)


class _MmapWriter:
    """A file-like ``write`` into a writable mapping (shm_open segments refuse ``write(2)``)."""

    def __init__(self, target):
        self.target = target
        self.pos = 0

    def write(self, data):
        n = len(data)
        self.target[self.pos:self.pos + n] = data
        self.pos += n
        return n


def share(data, *, name: Optional[str] = None, compression: Optional[str] = None,
          keep: bool = False) -> "SharedFile":
    """Write ``data`` as an Arrow IPC file into a new named shared-memory segment.

    ``data``: an arrowmm ``RecordBatch``, a list of batches, a reader, or
    anything with ``__arrow_c_stream__`` / ``__arrow_c_array__`` (a pyarrow
    Table or RecordBatch, a polars DataFrame, ...).  Batches are written one at
    a time by the streaming writer, so the segment is sized from what is
    written and the data is never gathered in Python memory; with dictionary
    columns the batches are held first, to give each column one dictionary
    (a file holds one per id; batches whose dictionaries differ are unified, as
    ``write_file`` does).  ``name``:
    default ``arrowmm-<random>``; an existing name raises ``ArrowInvalid``.
    ``compression``: ``None``, ``"lz4"`` or ``"zstd"`` (readers then
    decompress, a copy in each process).  ``keep``: leave the segment behind
    at the end of a ``with`` block, and for ``cleanup`` after this process ends.
    """
    name = _check_name(name if name is not None else f"arrowmm-{secrets.token_hex(8)}")
    if SHM_DIR is not None:
        region, key = _share_dev_shm(name, data, compression, keep)
    else:
        region, key = _share_shm_open(name, data, compression, keep)
    return SharedFile(name, region, key, keep)


class SharedFile:
    """An Arrow IPC file in a named shared-memory segment, made by ``share``.

    ``open()`` reads it through this process's mapping; other processes use
    ``open_shared(name)`` or receive pickled readers, batches or arrays.  As a
    context manager it unlinks the segment on exit unless ``keep`` is true.
    """

    def __init__(self, name: str, region: Region, key: tuple, keep: bool = False):
        self.name = name
        self.keep = keep
        self._region = region  # the creator's mapping (stays valid after unlink)
        self._key = key

    @property
    def size(self) -> int:
        """Bytes of the IPC file."""
        return self._region.size

    @property
    def path(self) -> Optional[str]:
        """The segment as a file path (``/dev/shm/<name>``), or None without ``/dev/shm``."""
        return os.path.join(SHM_DIR, self.name) if SHM_DIR is not None else None

    def open(self, *, allow_copies: bool = True) -> FileReader:
        """A ``FileReader`` over this segment (works after ``unlink`` too)."""
        return FileReader(self._region, allow_copies=allow_copies)

    @property
    def linked(self) -> bool:
        """Whether the name still refers to this segment."""
        try:
            fd = _open_fd(self.name, owner="*")  # compared by identity below
        except ArrowInvalid:
            return False
        try:
            return _identity(fd, self.name) == self._key
        finally:
            os.close(fd)

    def unlink(self) -> None:
        """Remove the name (idempotent; a newer segment under the same name is left alone).

        Mappings in this and other processes stay valid until they are dropped.
        """
        if self.linked:
            try:
                _remove(self.name)
            except FileNotFoundError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.keep:
            self.unlink()

    def __repr__(self):
        return f"<arrowmm.shm.SharedFile {self.name!r} {self.size} bytes>"


# -- finding and removing what dead producers left -----------------------------------------
def _channel_info(name: str, fd: int) -> Optional[tuple]:
    """(producer record, whether any side runs) of a channel segment, None if it is none."""
    record = channel_record(fd, name)
    if record is None:
        return None
    alive = record.pop("alive")
    return record, (True if alive else False)


@dataclass
class SegmentInfo:
    """A segment made by ``share`` (``kind`` "segment"), a ``Channel`` (``kind`` "channel":
    ``alive`` if its producer or a consumer still runs) or the temporary of a ``share`` or
    ``Channel.create`` that has not finished (``kind`` "temporary"), with its creator and
    whether it still runs."""
    name: str
    kind: str
    size: int
    creator: Optional[dict]
    alive: Optional[bool]  # None: cannot tell (another pid namespace, no record)
    keep: bool = False

    @property
    def stale(self) -> bool:
        """Left by a process that is gone, and not shared with ``keep=True``."""
        return self.alive is False and not self.keep


def _creator_record(name: str, fd: int) -> Optional[dict]:
    """The creator record of the segment open as ``fd``, None if it is no arrowmm segment."""
    size = os.fstat(fd).st_size
    if size < 2 * len(MAGIC) or os.pread(fd, len(MAGIC), 0) != MAGIC:
        return None
    try:  # the mapping goes with the reader (no explicit close: views may still hold it)
        mapping = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        with FileReader(Region(mapping, description=f"shared memory segment {name!r}")) as reader:
            meta = {**(reader.schema.metadata or {}), **(reader.footer.metadata or {})}
    except (ArrowInvalid, ValueError, OSError):
        return None  # not a readable Arrow file: not ours to judge
    try:
        record = json.loads(meta[CREATOR_KEY])
    except (KeyError, ValueError, TypeError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def segments() -> List[SegmentInfo]:
    """This user's segments made by ``share``, channels, and temporaries of unfinished calls,
    with whether their creators still run (only where segments are files: ``/dev/shm``)."""
    if SHM_DIR is None:
        raise ArrowNotImplementedError("listing shared-memory segments needs /dev/shm; "
                                       "shm_open systems offer no way to list them")
    out = []
    me = os.geteuid()
    for entry in sorted(os.scandir(SHM_DIR), key=lambda e: e.name):
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or st.st_uid != me:
            continue
        m = TMP_NAME.match(entry.name)
        if m:
            creator = {"pidns": int(m.group(1)), "pid": int(m.group(2)), "start": int(m.group(3))}
            out.append(SegmentInfo(entry.name, "temporary", st.st_size, creator, process_alive(creator)))
            continue
        if entry.name.startswith("."):
            continue
        try:
            fd = _open_fd(entry.name)
        except ArrowInvalid:
            continue
        try:
            record = _creator_record(entry.name, fd)
            channel = None if record is not None else _channel_info(entry.name, fd)
        finally:
            os.close(fd)
        if channel is not None:
            out.append(SegmentInfo(entry.name, "channel", st.st_size, channel[0], channel[1]))
        elif record is not None:
            out.append(SegmentInfo(entry.name, "segment", st.st_size, record, process_alive(record),
                                   bool(record.get("keep"))))
    return out


def cleanup(*, dry_run: bool = False) -> List[str]:
    """Remove this user's segments and temporaries whose creator process is gone, and
    channels whose producer and consumers are all gone.

    A segment shared with ``keep=True`` stays (it was meant to outlive its
    creator), as does anything whose creator cannot be judged from here (made
    in another pid namespace).  Returns the names removed (``dry_run``: the
    names that would be).
    """
    removed = []
    for info in segments():
        if not info.stale:
            continue
        if not dry_run and not _remove_if_same(info):
            continue
        removed.append(info.name)
    return removed


def _remove_if_same(info: SegmentInfo) -> bool:
    """Unlink ``info.name`` unless the name now holds something else (made again meanwhile)."""
    path = os.path.join(SHM_DIR, info.name)
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size != info.size:
            return False
        if info.kind in ("segment", "channel"):
            fd = _open_fd(info.name)
            try:
                if info.kind == "segment":
                    record = _creator_record(info.name, fd)
                else:  # a channel: the same producer, and still nobody attached alive
                    channel = _channel_info(info.name, fd)
                    record = None if channel is None or channel[1] is not False else channel[0]
            finally:
                os.close(fd)
            if record != info.creator or os.lstat(path).st_ino != st.st_ino:
                return False
        os.unlink(path)
    except (FileNotFoundError, ArrowInvalid):
        return False
    return True


def remove(name: str) -> None:
    """Remove segment ``name``, or a temporary a ``share`` left (for ``arrowmm shm rm``)."""
    if SHM_DIR is not None and TMP_NAME.match(name):
        try:
            os.unlink(os.path.join(SHM_DIR, name))
        except FileNotFoundError:
            raise ArrowInvalid(f"no temporary named {name!r} in {SHM_DIR}") from None
        return
    unlink(name)


# -- pickling by name ---------------------------------------------------------------------
def _shared_key(region) -> Optional[tuple]:
    if not isinstance(region, Region) or region.shared_name is None:
        return None
    return _IDENTITY.get(region)


def _region_for(key: tuple) -> Region:
    """This process's mapping of the segment ``key`` names (the same one, or ArrowInvalid)."""
    region = _REGIONS.get(key)
    if region is not None:
        return region
    name = key[0]
    try:
        fd = _open_fd(name, owner="*")  # the identity check below decides, whoever owns it
    except _NoSegment:
        raise ArrowInvalid(f"cannot unpickle: shared-memory segment {name!r} was unlinked "
                           f"(and this process has no mapping of it)") from None
    except ArrowInvalid as exc:
        raise ArrowInvalid(f"cannot unpickle: {exc}") from None
    try:
        current = _identity(fd, name)
        if current != key:
            raise ArrowInvalid(f"cannot unpickle: shared-memory segment {name!r} was replaced "
                               f"since the object was pickled")
        return _map_fd(fd, current)
    finally:
        os.close(fd)


def _not_shared(what: str, why: str = "its memory is not a shared-memory segment") -> TypeError:
    return TypeError(f"cannot pickle this arrowmm {what}: {why}. arrowmm pickles only data that "
                     f"lives in a segment made by arrowmm.shm.share (by name, no copy); share it "
                     f"first (arrowmm.shm.share(data)), or convert it explicitly (to_pylist, "
                     f"to_numpy, pyarrow)")


def reduce_reader(reader):
    """``FileReader.__reduce__``: (segment, allow_copies, the columns it was opened with)."""
    key = _shared_key(reader._region)
    if key is None:
        raise _not_shared("reader", "it is closed" if reader._region is None else
                          "its memory is not a shared-memory segment")
    return _rebuild_reader, (key, reader.allow_copies, reader.projection)


def _rebuild_reader(key, allow_copies, columns=None):
    return FileReader(_region_for(key), allow_copies=allow_copies, columns=columns)


def reduce_batch(batch):
    """``RecordBatch.__reduce__``: a batch read from a shared file pickles as (segment, byte
    offset of its message body, row slice), and is decoded (lazily) again where it lands; a batch
    assembled from arrays pickles its arrays, each by name."""
    body = getattr(batch._loader, "body", None)
    if isinstance(body, BufferView):
        key = _shared_key(body.region)
        if key is None:
            raise _not_shared("RecordBatch")
        return _rebuild_batch, (key, body.offset, batch._offset, batch.num_rows,
                                bool(getattr(batch._loader, "allow_copies", True)))
    # a batch assembled from arrays, or a lazy view of other batches' columns (a projection
    # at open, Table.select, a dataset's batch): its columns, each pickled by name
    return type(batch), (batch.schema, batch.num_rows, batch.storage_columns, None, batch.metadata)


def _reader_for(key, allow_copies) -> FileReader:
    """A reader of segment ``key``, reused while batches unpickled through it live (so a list of
    batches parses the footer once, and nothing keeps the mapping once they are gone)."""
    reader = _READERS.get((key, allow_copies))
    if reader is None or reader._region is None:
        reader = _READERS[(key, allow_copies)] = FileReader(_region_for(key),
                                                            allow_copies=allow_copies)
    return reader


def _rebuild_batch(key, body_offset, row_offset, num_rows, allow_copies):
    reader = _reader_for(key, allow_copies)
    blocks = reader._blocks  # (offset, metaDataLength, bodyLength) per batch
    meta = (blocks[:, 1] & 0xFFFFFFFF) - ((blocks[:, 1] & 0x80000000) << 1)
    hits = (blocks[:, 0] + meta == body_offset).nonzero()[0]
    if len(hits) != 1:
        raise ArrowInvalid(f"cannot unpickle: no record batch of shared segment {key[0]!r} has its "
                           f"body at byte {body_offset}")
    batch = reader.get_batch(int(hits[0]))
    if row_offset or num_rows != batch.num_rows:
        batch = batch.slice(row_offset, num_rows)
    weakref.finalize(batch, _release_reader, reader)
    return batch


def reduce_array(array):
    """``Array.__reduce__``: (segment, the array's layout with each buffer as a byte range)."""
    regions = set()
    layout = _layout(array, regions)
    reason = _reasons(array)
    if reason is not None:
        raise _not_shared(f"{array.type} array", f"it is a copy ({reason}), not the segment's "
                          f"memory; pickle its RecordBatch instead (decoded again where it "
                          f"lands) or share without compression")
    if len(regions) > 1:
        raise _not_shared(f"{array.type} array", "its buffers lie in more than one memory region")
    key = _shared_key(regions.pop()) if regions else None
    if key is None:
        raise _not_shared(f"{array.type} array")
    return _rebuild_array, (key, layout)


def _reasons(array) -> Optional[str]:
    return copy_reason(array)


def _layout(array, regions: set) -> tuple:
    buffers = []
    for buf in array._buffers:
        if buf is None or buf.size == 0:
            buffers.append(None if buf is None else 0)
        else:
            regions.add(buf.region)
            buffers.append((buf.offset, buf.size))
    children = tuple(_layout(c, regions) for c in array.children)
    dictionary = None if array.dictionary is None else _layout(array.dictionary, regions)
    return (type(array), array.type, array.length, array.offset, array._null_count,
            tuple(buffers), children, dictionary)


def _rebuild_array(key, layout):
    region = _region_for(key)
    array = _build(region, layout)
    array.validate(full=False, path=f"array unpickled from shared segment {key[0]!r}")
    return array


def _build(region: Region, layout: tuple):
    cls, dtype, length, offset, null_count, buffers, children, dictionary = layout
    views = [None if b is None else empty_view() if b == 0 else
             region.view(b[0], b[1], "pickled buffer") for b in buffers]
    return cls(dtype, length, views, [_build(region, c) for c in children], null_count, offset,
               None if dictionary is None else _build(region, dictionary))


# ``Array``, ``RecordBatch`` and ``FileReader`` (layers below) pickle through these
hooks.fill("reduce_array", reduce_array)
hooks.fill("reduce_batch", reduce_batch)
hooks.fill("reduce_file_reader", reduce_reader)
