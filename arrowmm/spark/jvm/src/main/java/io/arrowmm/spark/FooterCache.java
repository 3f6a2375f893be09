package io.arrowmm.spark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Footers read by the driver, kept per (path, size, modification time, change time, file key;
 * for Hadoop filesystems: path, length, modification time, and the ETag or HDFS inode id where
 * there is one):
 * planning a
 * query over files already planned reads no footer again (a filtered query over a big file
 * otherwise spends part of its fixed cost parsing the footer and its statistics once for the
 * DataFrame's schema and once for the scan).  A file written again gets a new size, time or
 * inode (arrowmm's writers rename a new file over the old name), and a file rewritten in place
 * with its modification time put back (`cp -p`, `rsync --inplace -t`, `os.utime`) still gets a
 * new change time, which nothing can set back, so a changed file is read again (where the file
 * system has no change time, nothing is cached); an entry is kept only when the file's attributes were the same before and after its
 * footer was read and it was last modified more than {@link #SETTLED_NANOS} ago (file times
 * tick coarsely, so a file rewritten in place within one tick keeps its time: as git does with
 * racily clean files, a file modified just now is not trusted to its attributes).  At most {@link #MAX_ENTRIES} footers, least recently used dropped first.
 */
final class FooterCache {
  static final int MAX_ENTRIES = 1024;
  static final long SETTLED_NANOS = 2_000_000_000L;

  private FooterCache() {}

  private static final class Key {
    final long size;
    final long modified;
    final long changed;
    final Object fileKey;

    Key(BasicFileAttributes a, java.nio.file.attribute.FileTime ctime) {
      this.size = a.size();
      this.modified = a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS);
      this.changed = ctime.to(java.util.concurrent.TimeUnit.NANOSECONDS);
      this.fileKey = a.fileKey();
    }

    /** A Hadoop file's identity: its length, modification time and version (no change time
     * there; a client may set the time, so a file rewritten with its length and time kept is
     * told apart by its version alone). */
    Key(Storage.Stat s) {
      this.size = s.length;
      this.modified = s.modified * 1_000_000L;
      this.changed = this.modified;
      this.fileKey = s.version;  // an ETag or an HDFS inode id: an overwrite, time kept or not
    }

    /** The later of the modification and change times. */
    long touched() {
      return Math.max(modified, changed);
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Key)) {
        return false;
      }
      Key k = (Key) o;
      return size == k.size && modified == k.modified && changed == k.changed
          && Objects.equals(fileKey, k.fileKey);
    }

    @Override
    public int hashCode() {
      return Objects.hash(size, modified, changed, fileKey);
    }
  }

  private static final class Entry {
    final Key key;
    final FileFooter footer;

    Entry(Key key, FileFooter footer) {
      this.key = key;
      this.footer = footer;
    }
  }

  private static final Map<String, Entry> CACHE = new LinkedHashMap<>(64, 0.75f, true) {
    private static final long serialVersionUID = 1L;

    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
      return size() > MAX_ENTRIES;
    }
  };

  /** A Hadoop file's status, or null (then nothing is cached; the read names the problem). */
  private static Storage.Stat hadoopStat(Storage storage, String path) {
    try {
      Storage.Stat s = storage.stat(path);
      return s == null || s.directory ? null : s;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static Key key(Storage storage, String path) {
    if (!(storage instanceof LocalStorage)) {
      Storage.Stat s = hadoopStat(storage, path);
      return s == null ? null : new Key(s);
    }
    try {
      Path p = Path.of(path);
      return new Key(Files.readAttributes(p, BasicFileAttributes.class),
          (java.nio.file.attribute.FileTime) Files.getAttribute(p, "unix:ctime"));
    } catch (IOException | RuntimeException e) {
      return null;  // (FileFooter.read names a problem with the file; no change time: no cache)
    }
  }

  /** The footer of {@code path}: from the cache when the file is unchanged, else read. */
  static FileFooter read(Storage storage, String path) {
    return read(storage, path, null);
  }

  /** {@link #read(Storage, String)} of a file whose status its directory's listing gave
   * ({@code listed}, or null: then taken here; a local file's is always taken here): planning
   * a folder asks for no status per file.  A listed status is as fresh as one taken when the
   * folder was listed: a file removed or rewritten since fails its read here (opened at the
   * listed length and version) or, when its footer is cached, the task's check
   * ({@link Storage#openAt}: the planned version and size).
   *
   * <p>A Hadoop file's status is taken (or listed) once: it is the cache key and it opens the
   * file (its length; no second status request), and it is not taken again after the read.
   * A file replaced under its name has another version (an object store's ETag, an HDFS inode
   * id), whatever its length and time: a client sets HDFS times ({@code setTimes}: {@code hdfs
   * dfs -cp -p}, {@code distcp -pt}).  Where there is no version, a replacement gives a new length
   * or a newer time (set by the server), as a file is settled ({@link #SETTLED_NANOS}) only if
   * its old time is two seconds past; the entry then holds at worst the new file's footer
   * under the old file's key. */
  static FileFooter read(Storage storage, String path, Storage.Stat listed) {
    boolean local = storage instanceof LocalStorage;
    Storage.Stat status = local ? null : listed != null ? listed : hadoopStat(storage, path);
    Key before = local ? key(storage, path) : status == null ? null : new Key(status);
    if (before != null) {
      synchronized (CACHE) {
        Entry e = CACHE.get(path);
        if (e != null && e.key.equals(before)) {
          return e.footer;
        }
      }
    }
    FileFooter footer = FileFooter.read(storage, path, status);
    Key after = local ? key(storage, path) : before;
    java.time.Instant t = java.time.Instant.now();
    long now = t.getEpochSecond() * 1_000_000_000L + t.getNano();
    if (before != null && before.equals(after) && now - before.touched() > SETTLED_NANOS) {
      synchronized (CACHE) {
        CACHE.put(path, new Entry(before, footer));
      }
    }
    return footer;
  }

  /** Threads that read footers at once when planning: Hadoop filesystems answer each read
   * after a round trip (a NameNode, an object store's first byte), so many in flight hide the
   * latency; bounded, as Spark bounds its parallel listing. */
  static final int PLANNING_THREADS = 16;

  /** The footers of {@code files} (path to listed status, as {@link DataFiles#resolve} gives
   * them), in order, read {@code threads} at a time (each from the cache when unchanged); the
   * first failing file, in order, names the error. */
  static List<FileFooter> readAll(Map<String, Storage.Stat> files,
      org.apache.hadoop.conf.Configuration conf, int threads) {
    List<String> paths = new ArrayList<>(files.keySet());
    Storage hadoop = null;
    Storage[] stores = new Storage[paths.size()];
    for (int i = 0; i < stores.length; i++) {
      String p = paths.get(i);
      if (p.startsWith("/")) {
        stores[i] = LocalStorage.INSTANCE;
      } else {
        hadoop = hadoop == null ? Storage.of(p, conf) : hadoop;
        stores[i] = hadoop;
      }
    }
    return readAll(files, stores, threads);
  }

  /** {@link #readAll(Map, org.apache.hadoop.conf.Configuration, int)} with each file's storage
   * given, in order (a test's counting storage). */
  static List<FileFooter> readAll(Map<String, Storage.Stat> files, Storage[] stores,
      int threads) {
    List<String> paths = new ArrayList<>(files.keySet());
    List<FileFooter> out = new ArrayList<>();
    threads = Math.min(threads, paths.size());
    if (threads <= 1) {
      for (int i = 0; i < stores.length; i++) {
        out.add(read(stores[i], paths.get(i), files.get(paths.get(i))));
      }
      return out;
    }
    ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "arrowmm-footers");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<FileFooter>> futures = new ArrayList<>();
      for (int i = 0; i < stores.length; i++) {
        Storage st = stores[i];
        String p = paths.get(i);
        Storage.Stat listed = files.get(p);
        futures.add(pool.submit(() -> read(st, p, listed)));
      }
      for (Future<FileFooter> f : futures) {
        try {
          out.add(f.get());
        } catch (ExecutionException e) {
          Throwable c = e.getCause();
          if (c instanceof RuntimeException) {
            throw (RuntimeException) c;
          }
          throw new ArrowmmException(String.valueOf(c), c);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new ArrowmmException("interrupted while reading footers");
        }
      }
    } finally {
      pool.shutdownNow();
    }
    return out;
  }
}
