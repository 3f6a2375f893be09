"""Files on disk, for every writer: the magic bytes, sinks, and atomic replacement.

``open_sink`` gives a writer a ``Sink`` (``os.writev`` in chunks for a real file, ``write``
for a file object); ``footer_blocks`` lays out a footer's Block vector; ``MAGIC`` opens and
closes an IPC file.

Replacing a file atomically without changing what ``open(path, "wb")`` would keep:
``atomic_target(path)`` is the one place where arrowmm writes a file under a
temporary name and renames it into place (the writers, ``repair``, the Spark
commit).  Compared with ``open(path, "wb")``:

* a reader never sees a partial file under ``path``: before ``commit()`` the
  data is in a hidden temporary ``.<name>.<random>.arrowmm-tmp`` beside the
  target (a crash leaves only that; ``abort()`` removes it);
* a symlink is written through: the temporary goes beside the file the link
  points at and replaces it, so the link stays a link;
* the temporary takes the existing target's permission bits (and owner and
  group where the caller may set them) at creation, before any data goes in,
  so a 0600 file never becomes, even for a moment, a 0644 one;
* a new file derived from another (a repair, a conversion, a copy with statistics added:
  ``narrow_to=source``, or a ``DerivedPath``) is created with at most the source's
  permission bits, as ``cp`` gives a copy, so a private file never gives a readable copy;
* a target the caller could not open for writing is refused with
  ``PermissionError`` (``os.access(W_OK)`` with the effective ids, as the
  kernel checks ``open``: root passes, as it does for ``open``), a directory
  with ``IsADirectoryError``;
* unlike ``open(path, "wb")``, the rename gives the target a new inode: hard
  links to the old file keep the old data.

A target that exists and is not a regular file (a FIFO, a character device
such as ``/dev/null``) is opened and written in place, as ``open`` would: it
cannot be replaced by a rename.
"""
from __future__ import annotations

import errno
import io
import os
import secrets
import stat
import struct
from typing import Optional

import numpy as np

from ...errors import ArrowInvalid
from ...format import BLOCK

__all__ = ["AtomicTarget", "atomic_target", "write_atomically", "fsync_folder", "TEMP_SUFFIX",
           "temporary_name", "named",
           "MAGIC", "Sink", "open_sink", "write_groups", "footer_blocks", "footer_block_bytes",
           "DerivedPath",
           "derived_path", "source_mode"]

TEMP_SUFFIX = ".arrowmm-tmp"
_FLAGS = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class AtomicTarget:
    """An open temporary file (``fd``) that ``commit()`` renames over ``path``.

    ``path`` is the real file (symlinks resolved); ``tmp`` the temporary's path, or None when
    the target is written in place (a FIFO or device).  ``commit`` and ``abort`` close ``fd``;
    each may be called once, ``abort`` after ``commit`` does nothing.  ``abort`` in a process
    forked from the one that made the target (its copy finalized when it exits) only closes
    ``fd``: the temporary is the parent's, still being written.
    """

    __slots__ = ("path", "tmp", "fd", "_done", "_pid")

    def __init__(self, path: str, tmp: Optional[str], fd: int):
        self.path = path
        self.tmp = tmp
        self.fd = fd
        self._done = False
        self._pid = os.getpid()

    @property
    def done(self) -> bool:
        return self._done

    def commit(self, fsync: bool = False, replace: bool = True) -> None:
        """Close the temporary (fsync'd first if ``fsync``, with its folder after the rename)
        and rename it over the target.  ``replace=False`` publishes only if the target does not
        exist (``os.link``, which never clobbers: ``FileExistsError`` otherwise), for
        create-once names such as versioned manifests.  On failure the temporary is removed
        and the target left as it was."""
        if self._done:
            raise ValueError(f"{self.path}: already committed or aborted")
        try:
            if fsync and self.tmp is not None:  # (a FIFO or device has nothing to sync: EINVAL)
                os.fsync(self.fd)
        except BaseException as exc:
            named(exc, self.path)
            self.abort()
            raise
        self._done = True
        fd, self.fd = self.fd, -1
        try:
            try:
                os.close(fd)
            except OSError as exc:  # (a network file system may report a failed write here)
                raise named(exc, self.path)
            if self.tmp is not None:
                if replace:
                    os.replace(self.tmp, self.path)
                else:
                    os.link(self.tmp, self.path)
                    self._unlink()
        except BaseException:
            self._unlink()
            raise
        if fsync and self.tmp is not None:
            fsync_folder(os.path.dirname(self.path))

    def abort(self) -> None:
        """Close and remove the temporary; the target keeps what it had."""
        if self._done:
            return
        self._done = True
        fd, self.fd = self.fd, -1
        try:
            os.close(fd)
        finally:
            if os.getpid() == self._pid:
                self._unlink()

    def _unlink(self):
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except FileNotFoundError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    def __repr__(self):
        return f"<arrowmm.AtomicTarget {self.path!r} tmp={self.tmp!r}>"


class DerivedPath(os.PathLike):
    """A local path to write a file derived from the file ``source`` (a conversion, a repair):
    ``atomic_target`` creates a new file there with at most ``source``'s permission bits.
    What a writer is given in place of the bare path, so that every layer between the command
    and the file (``new_file``, ``open_sink``) passes the rule on without a parameter of its
    own.  Made by ``derived_path``."""

    __slots__ = ("path", "source")

    def __init__(self, path: str, source: str):
        self.path = path
        self.source = source

    def __fspath__(self) -> str:
        return self.path

    def __str__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"DerivedPath({self.path!r}, source={self.source!r})"


def derived_path(path, source):
    """``path`` as a ``DerivedPath`` of ``source`` when both are local paths, else ``path``
    itself (a URL, ``-``, a file object: their permissions are not arrowmm's to set)."""
    if _local_path(path) and _local_path(source):
        return DerivedPath(os.fspath(path), os.fspath(source))
    return path


def _local_path(p) -> bool:
    p = os.fspath(p) if isinstance(p, os.PathLike) else p
    return isinstance(p, str) and p != "-" and "://" not in p and p[:5].lower() != "file:"


def source_mode(source) -> Optional[int]:
    """The permission bits a file derived from the local file ``source`` may have at most:
    its own (``0o777`` at most), None when ``source`` is not a regular file (a pipe, a device:
    ``cat src > dst`` would not narrow either), ``0o600`` when it cannot be looked at any more
    (removed since it was read): private, when in doubt."""
    try:
        st = os.stat(source)
    except OSError:
        return 0o600
    return stat.S_IMODE(st.st_mode) & 0o777 if stat.S_ISREG(st.st_mode) else None


def _refuse_folder_name(named: str) -> None:
    """What ``open(named, "wb")`` raises for a name ending in a separator (``abspath`` would
    drop it, and the file before it be replaced, or a file made under the folder's name)."""
    folder = os.path.dirname(os.path.abspath(named).rstrip(os.sep + (os.altsep or ""))) or os.sep
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", named)
    raise IsADirectoryError(errno.EISDIR, "Is a directory", named)


def atomic_target(path, *, narrow_to=None) -> AtomicTarget:
    """A new ``AtomicTarget`` for ``path`` (str or ``os.PathLike``).

    ``narrow_to``: the local file the new contents derive from (also given by ``path`` being a
    ``DerivedPath``): a target that does not exist yet is created with at most its permission
    bits (an existing one keeps its own, as always).

    Raises what ``open(path, "wb")`` raises for the path itself (``PermissionError``,
    ``IsADirectoryError``, ``FileNotFoundError`` for a missing folder), before anything is
    created.
    """
    if narrow_to is None and isinstance(path, DerivedPath):
        narrow_to = path.source
    named = os.fspath(path)
    if isinstance(named, bytes):
        named = os.fsdecode(named)
    if named.endswith(os.sep) or (os.altsep and named.endswith(os.altsep)):
        _refuse_folder_name(named)
    target = os.path.realpath(os.path.abspath(named))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", target)
        if not stat.S_ISREG(st.st_mode):  # a FIFO, a device: written in place, as open() does
            return AtomicTarget(target, None, os.open(target, _FLAGS | os.O_TRUNC))
        if not _may_write(target):
            raise PermissionError(errno.EACCES, "Permission denied (the file is not writable "
                                  "by this user; open(path, 'wb') would fail too)", target)
    limit = source_mode(narrow_to) if narrow_to is not None and st is None else None
    tmp, fd = _create_temporary(target, st, limit)
    return AtomicTarget(target, tmp, fd)


def _may_write(path: str) -> bool:
    if os.access in os.supports_effective_ids:
        return os.access(path, os.W_OK, effective_ids=True)
    return os.access(path, os.W_OK)


def _create_temporary(target: str, st: Optional[os.stat_result], limit: Optional[int] = None):
    """(path, fd) of a new hidden file beside ``target`` with ``target``'s permissions.

    A new target gets mode 0o666 less the umask, as ``open(target, "wb")`` gives
    (``mkstemp`` would give 0o600), and less the bits ``limit`` lacks: asked of ``open`` itself,
    so the file is never, even for a moment, wider.  An existing one's owner and group are
    copied where the caller may set them (root; a group the caller belongs to), then its
    permission bits (after the chown, which may clear set-id bits): all before a byte of data is
    written.
    """
    folder, name = os.path.split(target)
    flags = _FLAGS | os.O_CREAT | os.O_EXCL
    create_mode = (0o666 if limit is None else 0o666 & limit) if st is None else 0o600
    try:
        name_max = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # (no such limit to ask for: the usual one)
        name_max = 255
    for _ in range(100):
        tmp = os.path.join(folder, temporary_name(name, name_max))
        try:
            fd = os.open(tmp, flags, create_mode)
            break
        except FileExistsError:
            continue
        except (FileNotFoundError, PermissionError) as exc:  # named for the target, as open() does
            why = ("the folder does not exist" if isinstance(exc, FileNotFoundError) else
                   "cannot create a file in its folder, which writing it atomically needs")
            raise type(exc)(exc.errno, f"{exc.strerror} ({why})", target) from None
    else:
        raise FileExistsError(f"could not create a temporary file beside {target!r}")
    if st is None:
        return tmp, fd
    try:
        _copy_owner(fd, st)
        mode = stat.S_IMODE(st.st_mode) & 0o1777  # set-id bits are not carried over
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        else:  # (Windows before Python 3.13)
            os.chmod(tmp, mode)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    return tmp, fd


def temporary_name(name: str, name_max: int = 255) -> str:
    """The hidden name of a new temporary beside the file ``name``:
    ``.<name>.<8 random hex digits>.arrowmm-tmp``, ``name`` cut (to whole characters) so that
    the whole fits in ``name_max`` bytes: a target whose name is near the limit can be written,
    as ``open`` writes it (the random part keeps the temporary's name unique)."""
    room = name_max - len(f"..{'0' * 8}{TEMP_SUFFIX}")
    raw = os.fsencode(name)
    if len(raw) > room:
        name = raw[:max(room, 0)].decode("utf-8", "ignore")
    return f".{name}.{secrets.token_hex(4)}{TEMP_SUFFIX}"


def _copy_owner(fd: int, st: os.stat_result) -> None:
    if not hasattr(os, "fchown"):  # (Windows: no owners to copy)
        return
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) == (st.st_uid, st.st_gid):
        return
    for uid in (st.st_uid, -1):
        try:
            os.fchown(fd, uid, st.st_gid)
            return
        except PermissionError:
            continue
        except OSError:  # a filesystem without owners (FAT, some network mounts)
            return


def write_atomically(path, parts, fsync: bool = True, *, narrow_to=None) -> None:
    """Write the bytes-like ``parts`` to ``path`` through ``atomic_target`` (fsync'd by
    default: what ``repair`` uses; ``narrow_to`` as ``atomic_target``'s)."""
    target = atomic_target(path, narrow_to=narrow_to)
    try:
        for p in parts:
            view = memoryview(p).cast("B")
            while view.nbytes:
                view = view[os.write(target.fd, view):]
    except BaseException as exc:
        named(exc, target.path)
        target.abort()
        raise
    target.commit(fsync=fsync)


def named(exc: BaseException, path: Optional[str]) -> BaseException:
    """``exc``, an ``OSError`` of a write to ``path`` that names no file (``writev``, ``fsync``
    on a full disk), given ``path`` as its file name: the error then says which file failed."""
    if isinstance(exc, OSError) and exc.filename is None and path is not None:
        exc.filename = path
    return exc


def fsync_folder(folder: str) -> None:
    """Make a rename in ``folder`` durable (where the OS lets a folder be opened)."""
    try:
        fd = os.open(folder or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- sinks: writev for real files, write() for file objects ------------------------------

MAGIC = b"ARROW1"
_IOV_MAX = 1024
# Bytes handed to one writev: the kernel copies each call's bytes into the page cache, and
# calls that fit this machine's L2 run fastest (28 Nov, interleaved medians: 384 MiB from
# memory 470 ms in 4 MiB calls, 131 ms in 1 MiB, 130 ms in 512 KiB; a 192 MiB mapped file
# copied 146, 124 and 96 ms; pyarrow, which writes each buffer in one call, 116 and 80 ms).
_WRITE_CHUNK = 512 << 10


def write_groups(views):
    """Split ``views`` into writev calls of at most ``_WRITE_CHUNK`` bytes and ``_IOV_MAX`` parts."""
    group, size = [], 0
    for v in views:
        for start in range(0, v.nbytes, _WRITE_CHUNK):
            piece = v[start:start + _WRITE_CHUNK]
            if group and (size + piece.nbytes > _WRITE_CHUNK or len(group) == _IOV_MAX):
                yield group
                group, size = [], 0
            group.append(piece)
            size += piece.nbytes
    if group:
        yield group


class Sink:
    """Writes parts to a file descriptor (``os.writev``) or a file-like object (``write``);
    ``path``: the file the descriptor writes, named by its write errors (``named``)."""

    def __init__(self, fileobj, fd: Optional[int], path: Optional[str] = None):
        self.file = fileobj
        self.fd = fd
        self.path = path
        self.position = 0
        # (looked up once: a writer of many small batches writes and flushes each,
        # ``_flatten.BatchEncoder.emit`` through these)
        self._write_file = fileobj.write if fd is None else None
        self._flush_file = getattr(fileobj, "flush", None) if fd is None else None

    def write(self, parts) -> None:
        if self.fd is not None:
            views = [memoryview(p).cast("B") for p in parts]
            try:
                for group in write_groups(views):
                    while group:
                        written = os.writev(self.fd, group)
                        self.position += written
                        while group and written >= group[0].nbytes:  # partial: resume mid-part
                            written -= group[0].nbytes
                            group.pop(0)
                        if group and written:
                            group[0] = group[0][written:]
            except OSError as exc:
                raise named(exc, self.path)
            return
        for p in parts:
            if type(p) is bytes:  # (a message and a small body, one object: written whole, mostly)
                n = self.file.write(p)
                if n is None or n == len(p):
                    self.position += len(p)
                    continue
                self.position += n
                p = memoryview(p)[n:]
            mv = memoryview(p).cast("B")
            while mv.nbytes:
                n = self.file.write(mv)  # raw files and sockets may take only part of it
                n = mv.nbytes if n is None else n
                self.position += n
                mv = mv[n:]

    def flush(self) -> None:
        """Hand buffered bytes of a file-like sink to the OS (a stream reader sees each batch)."""
        if self._flush_file is not None:
            self._flush_file()


def open_sink(sink):
    """(sink, ``AtomicTarget`` or None) for a path or a binary file-like object."""
    if isinstance(sink, (str, os.PathLike)):
        target = atomic_target(sink)
        return Sink(None, target.fd, target.path), target
    if not hasattr(sink, "write"):
        raise ArrowInvalid(f"sink must be a path or a binary file-like object, got {type(sink).__name__}")
    fd = None
    if isinstance(sink, io.FileIO):  # unbuffered real file: writev is safe
        fd = sink.fileno()
    return Sink(sink, fd), None


def footer_blocks(rows) -> np.ndarray:
    """Footer Blocks from (offset, metadata length, body length) rows, padding bytes zeroed
    (``np.array(rows, BLOCK)`` would leave them uninitialised: output not reproducible)."""
    if len(rows) > 64:
        out = np.zeros(len(rows), BLOCK)
        offsets, meta, body = zip(*rows)
        out["offset"], out["metadata_length"], out["body_length"] = offsets, meta, body
        return out
    # (a few rows, as most files have: packed, ~5x faster than numpy's field assignments)
    return np.frombuffer(bytearray(b"".join([_BLOCK.pack(*row) for row in rows])), BLOCK)


def footer_block_bytes(rows) -> bytes:
    """``footer_blocks(rows)``'s bytes, made directly (what a writer's footer takes)."""
    if len(rows) > 64:
        return footer_blocks(rows).tobytes()
    return b"".join([_BLOCK.pack(*row) for row in rows])


#: One Block as ``BLOCK`` lays it out: offset, metadata length, 4 zero bytes, body length.
_BLOCK = struct.Struct("<qi4xq")
