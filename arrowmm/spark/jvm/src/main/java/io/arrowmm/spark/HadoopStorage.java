package io.arrowmm.spark;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.EtagSource;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.StreamCapabilities;

/**
 * Any filesystem Hadoop has a {@link FileSystem} class for (hdfs, viewfs, webhdfs, s3a, abfs,
 * gs, a custom scheme), paths as qualified URIs.  Reads are positioned reads of an
 * {@link FSDataInputStream} ({@code read(position, ...)}: no seek, safe from many threads, as
 * Hadoop's PositionedReadable contract says).  Task files are written under their final,
 * job-unique names (no rename: on an object store a rename is a copy).  The commit point,
 * create-only-if-absent, depends on the filesystem ({@link #commitPrimitive}): HDFS's
 * {@code FileContext.rename(tmp, dst, NONE)} (atomic on the NameNode, fails when dst exists),
 * S3A's conditional PUT ({@code If-None-Match: *}), a hard link when the path resolves to a
 * local file (viewfs over file:, a RawLocalFileSystem under its own scheme: its rename would
 * replace); any other filesystem is refused when a write is planned.
 */
final class HadoopStorage implements Storage {
  /** The path capability, and builder option, of a conditional create (Hadoop 3.4.2+: S3A
   * sends {@code If-None-Match: *}; the loser's close fails with a 412). */
  static final String CONDITIONAL_CREATE = "fs.option.create.conditional.overwrite";
  /** Schemes whose {@code FileContext.rename(src, dst, NONE)} is atomic and fails when dst
   * exists (one NameNode operation). */
  private static final List<String> ATOMIC_RENAME = Arrays.asList("hdfs", "webhdfs", "swebhdfs");

  private final Configuration conf;
  private final Map<String, FileSystem> filesystems = new HashMap<>();

  HadoopStorage(Configuration conf) {
    this.conf = conf;
  }

  /** The filesystem of {@code path} (one instance per scheme and authority per storage). */
  synchronized FileSystem fs(Path path) throws IOException {
    String key = path.toUri().getScheme() + "://" + path.toUri().getAuthority();
    FileSystem fs = filesystems.get(key);
    if (fs == null) {
      fs = path.getFileSystem(conf);
      filesystems.put(key, fs);
    }
    return fs;
  }

  @Override
  public String child(String dir, String name) {
    // "./": a name with a ':' before any '/' (a:b.arrow, a timestamp) is a path, not a scheme
    return new Path(new Path(dir), "./" + name).toString();
  }

  @Override
  public String name(String path) {
    return new Path(path).getName();
  }

  @Override
  public String parent(String path) {
    Path p = new Path(path).getParent();
    return p == null ? path : p.toString();
  }

  /** {@link Stat#version}'s prefix for an HDFS inode id. */
  static final String INODE = "inode:";
  /** Whether HDFS's client classes are on the class path (Spark's hadoop-client-api has them;
   * a build of Hadoop's separate jars may lack them). */
  private static final boolean HDFS_CLIENT = hdfsClient();

  private static boolean hdfsClient() {
    try {
      Class.forName("org.apache.hadoop.hdfs.protocol.HdfsFileStatus", false,
          FileStatus.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  private static Stat stat(FileStatus s) {
    return new Stat(s.getPath().toString(), s.getPath().getName(), s.getLen(),
        s.getModificationTime(), !s.isFile(), version(s), s);
  }

  /** The content's version in {@code s}: an object store's ETag, or an HDFS file's inode id
   * ("inode:16387"; HDFS has no ETag, and a client may set a file's length and time to a
   * replaced file's: {@code cp -p}), or null. */
  static String version(FileStatus s) {
    String etag = s instanceof EtagSource ? ((EtagSource) s).getEtag() : null;
    if (etag != null && !etag.isEmpty()) {
      return etag;
    }
    if (HDFS_CLIENT && s instanceof org.apache.hadoop.hdfs.protocol.HdfsFileStatus) {
      return INODE + ((org.apache.hadoop.hdfs.protocol.HdfsFileStatus) s).getFileId();
    }
    return null;
  }

  @Override
  public Stat stat(String path) throws IOException {
    Path p = new Path(path);
    try {
      return stat(fs(p).getFileStatus(p));
    } catch (FileNotFoundException e) {
      return null;
    }
  }

  @Override
  public List<Stat> list(String dir) throws IOException {
    Path p = new Path(dir);
    FileStatus[] all;
    try {
      all = fs(p).listStatus(p);
    } catch (FileNotFoundException e) {
      return null;
    }
    if (all.length == 1 && all[0].isFile() && all[0].getPath().equals(fs(p).makeQualified(p))) {
      return null;  // a file, not a directory
    }
    List<Stat> out = new ArrayList<>();
    for (FileStatus s : all) {
      out.add(stat(s));
    }
    return out;
  }

  @Override
  public List<String> glob(String pattern) throws IOException {
    Path p = new Path(pattern);
    FileStatus[] found = fs(p).globStatus(p, q -> {
      String n = q.getName();
      return !n.startsWith("_") && !n.startsWith(".");
    });
    List<String> out = new ArrayList<>();
    if (found != null) {
      for (FileStatus s : found) {
        out.add(s.getPath().toString());
      }
    }
    out.sort(null);
    return out;
  }

  /** An {@link FSDataInputStream}'s positioned reads. */
  static final class StreamInput implements Input {
    /** The most a read into direct memory takes in one request, through the heap, from a
     * stream without positioned reads into buffers (S3A): the most the batch reader
     * coalesces into one range ({@link ArrowmmBatchReader#COALESCE_MAX}), so a coalesced
     * range is one read (one GET with S3A's classic stream; its analytics stream, the default
     * since Hadoop 3.5, sends it as GETs of up to 8 MiB in parallel). */
    static final int HEAP_CHUNK = (int) ArrowmmBatchReader.COALESCE_MAX;

    private final FSDataInputStream in;
    private final long size;
    private final boolean byteBuffers;

    StreamInput(FSDataInputStream in, long size) {
      this.in = in;
      this.size = size;
      this.byteBuffers = in.hasCapability(StreamCapabilities.PREADBYTEBUFFER);
    }

    @Override
    public long size() {
      return size;
    }

    @Override
    public int read(ByteBuffer into, long position) throws IOException {
      if (!into.hasRemaining()) {
        return 0;
      }
      if (position >= size) {
        return -1;
      }
      int want = (int) Math.min(into.remaining(), size - position);
      if (into.hasArray()) {
        int n = in.read(position, into.array(), into.arrayOffset() + into.position(), want);
        if (n > 0) {
          into.position(into.position() + n);
        }
        return n <= 0 ? -1 : n;
      }
      if (byteBuffers) {
        ByteBuffer part = into.duplicate();
        part.limit(part.position() + want);
        int n = in.read(position, part);
        if (n > 0) {
          into.position(into.position() + n);
        }
        return n <= 0 ? -1 : n;
      }
      // one request per chunk: S3A's readFully GETs exactly the range, where each
      // read(position, ...) of a chunk is a GET of its own (1 MiB chunks: 763 GETs for a
      // 763 MiB scan, 7x Parquet's time over moto)
      byte[] chunk = new byte[Math.min(want, HEAP_CHUNK)];
      try {
        in.readFully(position, chunk, 0, chunk.length);
      } catch (java.io.EOFException e) {
        return -1;  // cut since its length was taken: the caller names where it ended
      }
      into.put(chunk, 0, chunk.length);
      return chunk.length;
    }

    @Override
    public boolean local() {
      return false;
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }

  @Override
  public Input open(String path) throws IOException {
    return open(path, null);
  }

  @Override
  public Input open(String path, Stat known) throws IOException {
    Path p = new Path(path);
    FileSystem fs = fs(p);
    long length;
    FileStatus status;
    if (known == null) {
      status = fs.getFileStatus(p);
      if (!status.isFile()) {
        throw new java.nio.file.FileSystemException(path + ": not a file");
      }
      length = status.getLen();
    } else if (known.directory) {
      throw new java.nio.file.FileSystemException(path + ": not a file");
    } else {
      length = known.length;
      status = known.status;
    }
    // random reads (S3A: ranged GETs, not one GET to the end); the length saves a HEAD, and
    // the status taken (its ETag) makes every GET ask for that version of the object: S3A's
    // analytics stream otherwise takes the ETag from a cache of its own, which still holds
    // the old object's for a while after an overwrite (its GETs then fail)
    org.apache.hadoop.fs.FutureDataInputStreamBuilder open = fs.openFile(p);
    if (status != null && status.getPath().getName().equals(p.getName())) {
      open = open.withFileStatus(status);  // (a viewfs status may name the resolved target)
    }
    FSDataInputStream in = org.apache.hadoop.util.functional.FutureIO.awaitFuture(
        open.opt("fs.option.openfile.read.policy", "random")
            .opt("fs.option.openfile.length", Long.toString(length)).build());
    return new StreamInput(in, length);
  }

  @Override
  public Input openAt(String path, String version) throws IOException {
    if (version == null) {
      return openNamed(path);
    }
    Path p = new Path(path);
    FileSystem fs = fs(p);
    if (version.startsWith(INODE)) {
      // opened first, then its status (one NameNode request more than a file of no version):
      // inode ids are never reused, so a status naming the planned inode after the open says
      // the stream holds the planned file's blocks (short of that file moved away and back)
      Input in = openNamed(path);
      try {
        checkVersion(path, version, fs.getFileStatus(p));
      } catch (IOException | RuntimeException e) {
        in.close();
        throw e;
      }
      return in;
    }
    FileStatus s = fs.getFileStatus(p);
    checkVersion(path, version, s);
    // the status carries the version: S3A then sends it with every GET (If-Match), and a GET
    // of an object overwritten since fails (RemoteFileChangedException) instead of reading
    // the new bytes at the old footer's offsets
    FSDataInputStream in = org.apache.hadoop.util.functional.FutureIO.awaitFuture(
        fs.openFile(p).withFileStatus(s).opt("fs.option.openfile.read.policy", "random")
            .opt("fs.option.openfile.length", Long.toString(s.getLen())).build());
    return new StreamInput(in, s.getLen());
  }

  /** Throw unless {@code s} is a file at {@code version}. */
  private static void checkVersion(String path, String version, FileStatus s)
      throws IOException {
    if (!s.isFile()) {
      throw new java.nio.file.FileSystemException(path + ": not a file");
    }
    String now = version(s);
    if (!version.equals(now)) {
      throw new ArrowmmException(path + ": changed since the query was planned (version "
          + now + ", " + version + " when planned): overwritten while the query ran");
    }
  }

  /** {@link #open(String)} in one request where the filesystem can: HDFS's open asks the
   * NameNode for the block locations, which carry the file's length (its visible length, the
   * bytes a reader can read), so no status request goes before it (a task opened its file with
   * two NameNode round trips).  Other filesystems take their status first, as open does. */
  private Input openNamed(String path) throws IOException {
    Path p = new Path(path);
    FileSystem fs = fs(p);
    if (!"hdfs".equalsIgnoreCase(fs.getScheme())) {
      return open(path);
    }
    FSDataInputStream in;
    try {
      in = fs.open(p);
    } catch (FileNotFoundException e) {
      throw e;
    } catch (IOException e) {
      // (HDFS refuses to open a directory: "Path is not a file")
      throw new java.nio.file.FileSystemException(path + ": not a file (" + e.getMessage() + ")");
    }
    if (in instanceof org.apache.hadoop.hdfs.client.HdfsDataInputStream) {
      return new StreamInput(in,
          ((org.apache.hadoop.hdfs.client.HdfsDataInputStream) in).getVisibleLength());
    }
    in.close();
    return open(path);
  }

  @Override
  public byte[] readSmall(String path) throws IOException {
    Path p = new Path(path);
    try (FSDataInputStream in = fs(p).open(p)) {
      return in.readAllBytes();
    } catch (FileNotFoundException e) {
      return null;
    }
  }

  @Override
  public Output create(String path) throws IOException {
    Path p = new Path(path);
    FSDataOutputStream out = fs(p).create(p, false);
    WritableByteChannel ch = Channels.newChannel(out);
    return new Output() {
      @Override
      public WritableByteChannel channel() {
        return ch;
      }

      @Override
      public void sync() throws IOException {
        if (out.hasCapability(StreamCapabilities.HSYNC)) {
          out.hsync();
        }
      }

      @Override
      public void close() throws IOException {
        out.close();
      }
    };
  }

  /** How the commit point is made on the filesystem of {@code path}. */
  private enum Primitive { LINK, RENAME, CONDITIONAL }

  /** The local file a path resolves to (viewfs over file:, a RawLocalFileSystem of another
   * scheme), or null. */
  private java.io.File localFile(Path resolved) throws IOException {
    FileSystem fs = fs(resolved);
    if (fs instanceof LocalFileSystem) {
      fs = ((LocalFileSystem) fs).getRaw();
    }
    if (fs instanceof RawLocalFileSystem) {
      return ((RawLocalFileSystem) fs).pathToFile(resolved);
    }
    return null;
  }

  /** The path with mount points and symbolic links resolved (viewfs to its target). */
  private Path resolved(Path p) throws IOException {
    FileSystem fs = fs(p);
    try {
      return fs.resolvePath(p);
    } catch (FileNotFoundException e) {  // not there yet: resolve its parent
      Path parent = p.getParent();
      if (parent == null || parent.equals(p)) {
        throw e;
      }
      return new Path(resolved(parent), p.getName());
    }
  }

  private Primitive primitive(Path dir) throws IOException {
    Path r = resolved(dir);
    if (localFile(r) != null) {
      return Primitive.LINK;
    }
    String scheme = r.toUri().getScheme() == null ? ""
        : r.toUri().getScheme().toLowerCase(Locale.ROOT);
    if (ATOMIC_RENAME.contains(scheme)) {
      return Primitive.RENAME;
    }
    FileSystem fs = fs(r);
    if (fs.hasPathCapability(r, CONDITIONAL_CREATE)) {
      return Primitive.CONDITIONAL;
    }
    String s = dir.toUri().getScheme();
    String hint = scheme.startsWith("s3")
        ? " (S3A does it with Hadoop 3.4.2 or later and fs.s3a.create.conditional.enabled=true, "
          + "against a store that honours If-None-Match: AWS S3 since 2024, MinIO, ...)"
        : "";
    throw new ArrowmmException(dir + ": the JVM connector cannot commit writes to this "
        + "filesystem (" + s + (scheme.equals(s) ? "" : ", resolved to " + scheme) + ", "
        + fs.getClass().getName() + "): its commit protocol creates each manifest version only "
        + "if the name is free, atomically, and this filesystem offers neither an atomic "
        + "rename that fails when the target exists (HDFS) nor a conditional create (S3A's "
        + "If-None-Match)" + hint + "; a non-atomic check-then-write could lose a concurrent "
        + "job, so nothing was written. Reads of it work");
  }

  @Override
  public String commitPrimitive(String dir) throws IOException {
    switch (primitive(new Path(dir))) {
      case LINK:
        return "a hard link of a complete temporary file (the path is a local file)";
      case RENAME:
        return "FileContext.rename(tmp, version, NONE): atomic, fails when the version exists";
      default:
        return "a conditional create (If-None-Match: *)";
    }
  }

  @Override
  public boolean createIfAbsent(String path, byte[] data) throws IOException {
    Path target = new Path(path);
    switch (primitive(target.getParent())) {
      case LINK: {
        Path r = resolved(target.getParent());
        java.io.File dir = localFile(r);
        return LocalStorage.INSTANCE.createIfAbsent(
            new java.io.File(dir, target.getName()).getAbsolutePath(), data);
      }
      case RENAME: {
        Path r = new Path(resolved(target.getParent()), target.getName());
        Path tmp = new Path(r.getParent(), ".tmp-jvm-" + UUID.randomUUID().toString()
            .replace("-", ""));
        FileSystem fs = fs(r);
        try (FSDataOutputStream out = fs.create(tmp, false)) {
          out.write(data);
          out.hsync();
        }
        try {
          FileContext.getFileContext(r.toUri(), conf).rename(tmp, r, Options.Rename.NONE);
          return true;
        } catch (org.apache.hadoop.fs.FileAlreadyExistsException e) {
          return false;
        } finally {
          fs.delete(tmp, false);
        }
      }
      default: {
        FileSystem fs = fs(target);
        FSDataOutputStream out;
        try {
          out = (FSDataOutputStream) fs.createFile(target).overwrite(false)
              .must(CONDITIONAL_CREATE, true).build();
        } catch (org.apache.hadoop.fs.FileAlreadyExistsException e) {
          return false;
        }
        try {
          out.write(data);
          out.close();  // the PUT, with If-None-Match: *
          return true;
        } catch (IOException e) {
          // a 412 (another writer created it first) surfaces as a PathIOException or a
          // RemoteFileChangedException: lost when the name now holds other bytes
          byte[] there = readSmall(path);
          if (there != null && !Arrays.equals(there, data)) {
            return false;
          }
          throw e;
        }
      }
    }
  }

  @Override
  public void replace(String path, byte[] data) throws IOException {
    Path target = new Path(path);
    FileSystem fs = fs(target);
    if (primitive(target.getParent()) == Primitive.CONDITIONAL) {
      try (FSDataOutputStream out = fs.create(target, true)) {  // a PUT: whole or not at all
        out.write(data);
      }
      return;
    }
    Path tmp = new Path(target.getParent(), ".tmp-jvm-" + UUID.randomUUID().toString()
        .replace("-", ""));
    try (FSDataOutputStream out = fs.create(tmp, false)) {
      out.write(data);
      out.hsync();
    }
    Path r = new Path(resolved(target.getParent()), target.getName());
    if (primitive(target.getParent()) == Primitive.RENAME) {
      FileContext.getFileContext(r.toUri(), conf).rename(
          new Path(r.getParent(), tmp.getName()), r, Options.Rename.OVERWRITE);
    } else if (!fs.rename(tmp, target)) {  // a local file: rename(2) replaces atomically
      fs.delete(tmp, false);
      throw new IOException(path + ": could not rename a temporary over it");
    }
  }

  @Override
  public boolean delete(String path) throws IOException {
    Path p = new Path(path);
    return fs(p).delete(p, false);
  }

  @Override
  public boolean deleteEmptyDirectory(String path) throws IOException {
    Path p = new Path(path);
    FileSystem fs = fs(p);
    FileStatus[] in;
    try {
      if (!fs.getFileStatus(p).isDirectory()) {
        return false;
      }
      in = fs.listStatus(p);
    } catch (FileNotFoundException e) {
      return false;
    }
    if (in.length > 0) {
      return false;
    }
    try {
      return fs.delete(p, false);
    } catch (org.apache.hadoop.fs.PathIsNotEmptyDirectoryException e) {
      return false;
    }
  }

  @Override
  public void mkdirs(String dir) throws IOException {
    Path p = new Path(dir);
    if (!fs(p).mkdirs(p)) {
      throw new IOException(dir + ": could not make the directory");
    }
  }

  @Override
  public boolean renamesTaskFiles() {
    return false;
  }

  @Override
  public void rename(String from, String to) throws IOException {
    throw new UnsupportedOperationException("task files are written under their final names");
  }
}
