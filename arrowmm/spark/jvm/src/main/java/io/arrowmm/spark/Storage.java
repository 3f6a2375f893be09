package io.arrowmm.spark;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.List;

import org.apache.hadoop.conf.Configuration;

/**
 * What the connector does with files, on one filesystem: list, stat, positioned reads, create,
 * create-only-if-absent (the commit point of docs/commit-protocol.md), delete, mkdirs.  Two
 * implementations: {@link LocalStorage} for local paths (plain absolute paths, java.nio: the
 * positioned reads of FileChannel, hard links for the commit point) and {@link HadoopStorage}
 * for every other filesystem Hadoop has a class for (qualified URIs: hdfs, viewfs, s3a, ...).
 * A path names its storage: a local path starts with {@code /}, any other is a URI
 * ({@link PathResolver} makes them so).
 */
interface Storage {
  /** A file's length and modification time (ms), and whether it is a directory. */
  final class Stat {
    final String path;
    final String name;
    final long length;
    final long modified;
    final boolean directory;
    /** The content's version where the filesystem names one (an object store's ETag, an HDFS
     * inode id: "inode:16387"), or null: a file overwritten with bytes of the same length in
     * the same second has another. */
    final String version;
    /** A Hadoop filesystem's own status (null for a local file): opening the file with it
     * asks for this version of the content (S3A: If-Match on every GET). */
    final org.apache.hadoop.fs.FileStatus status;

    Stat(String path, String name, long length, long modified, boolean directory) {
      this(path, name, length, modified, directory, null, null);
    }

    Stat(String path, String name, long length, long modified, boolean directory,
        String version, org.apache.hadoop.fs.FileStatus status) {
      this.path = path;
      this.name = name;
      this.length = length;
      this.modified = modified;
      this.directory = directory;
      this.version = version;
      this.status = status;
    }
  }

  /** Positioned reads of one open file; safe from many threads (no read moves a position). */
  interface Input extends Closeable {
    long size() throws IOException;

    /** Read into {@code into} (from its position to its limit) from byte {@code position} of
     * the file: the bytes read, -1 at the end of the file (as {@code FileChannel.read}). */
    int read(ByteBuffer into, long position) throws IOException;

    /** Whether reads are cheap enough that the reader need not gather nearby ranges (a local
     * file: the page cache) or cost a request each (a remote filesystem). */
    boolean local();
  }

  /** A file being written: bytes go to {@link #channel()}; {@link #sync()} makes them durable
   * where the filesystem can. */
  interface Output extends Closeable {
    WritableByteChannel channel();

    void sync() throws IOException;
  }

  /** The storage of {@code path} ({@link PathResolver}'s form), with {@code conf} for Hadoop. */
  static Storage of(String path, Configuration conf) {
    if (path.startsWith("/")) {
      return LocalStorage.INSTANCE;
    }
    if (conf == null) {
      throw new ArrowmmException(path + ": no Hadoop configuration to reach its filesystem "
          + "with (a bug: the plan should carry the session's)");
    }
    return new HadoopStorage(conf);
  }

  /** Whether every one of {@code paths} is local (then no Hadoop configuration is shipped). */
  static boolean allLocal(Iterable<String> paths) {
    for (String p : paths) {
      if (!p.startsWith("/")) {
        return false;
      }
    }
    return true;
  }

  /** {@code name} inside directory {@code dir}. */
  String child(String dir, String name);

  /** The last component of {@code path}. */
  String name(String path);

  /** The directory holding {@code path}. */
  String parent(String path);

  /** {@code path}'s status, or null when nothing is there. */
  Stat stat(String path) throws IOException;

  /** The entries of directory {@code dir}, or null when it does not exist or is no directory. */
  List<Stat> list(String dir) throws IOException;

  /** The paths matching glob {@code pattern}, sorted; names starting with _ or . match only a
   * pattern that names them literally (as Spark's file sources). */
  List<String> glob(String pattern) throws IOException;

  Input open(String path) throws IOException;

  /** {@link #open(String)} of a file whose status was just taken ({@code known}: its length
   * and that it is a file; null when not known): a remote filesystem opens it without asking
   * for its status again. */
  default Input open(String path, Stat known) throws IOException {
    return open(path);
  }

  /** {@link #open(String)} of a file planned at {@code version} ({@link Stat#version}, or
   * null: not known): a file whose version is now another throws {@link ArrowmmException}
   * ("changed since the query was planned"), and where the filesystem can, every later read
   * asks for that version only (S3's If-Match), so an overwrite while the file is read fails
   * the read instead of mixing two files' bytes. */
  default Input openAt(String path, String version) throws IOException {
    return open(path);
  }

  /** The whole of a small file (a manifest), or null when it does not exist. */
  byte[] readSmall(String path) throws IOException;

  /** Create a new file (never replacing one) to write a task's data into. */
  Output create(String path) throws IOException;

  /**
   * Create {@code path} holding exactly {@code data}, whole or not at all, only if no file has
   * that name: true when this call created it, false when a file of that name existed (the
   * commit point: two writers racing for one name, one wins).  Throws when the filesystem
   * cannot do this atomically (see {@link #commitPrimitive}).
   */
  boolean createIfAbsent(String path, byte[] data) throws IOException;

  /** Put {@code data} at {@code path}, replacing what is there, readers seeing the old or the
   * new content (a {@code _SUCCESS} mirror, a tombstone). */
  void replace(String path, byte[] data) throws IOException;

  /** Delete a file; false when it was not there. */
  boolean delete(String path) throws IOException;

  /** Delete an empty directory; false when it was not there or not empty. */
  boolean deleteEmptyDirectory(String path) throws IOException;

  void mkdirs(String dir) throws IOException;

  /** Whether a task writes a hidden temporary that the job commit renames to its final name
   * (a cheap atomic rename: local), else the final, job-unique name directly (object stores:
   * a rename is a copy; invisible until a manifest version lists it). */
  boolean renamesTaskFiles();

  /** Rename {@code from} to {@code to} (a task's temporary to its final name). */
  void rename(String from, String to) throws IOException;

  /** How {@link #createIfAbsent} is done on {@code dir}'s filesystem, for the docs and errors;
   * throws {@link ArrowmmException} naming why when it cannot be done atomically (checked when
   * a write is planned, before any task runs). */
  String commitPrimitive(String dir) throws IOException;
}
