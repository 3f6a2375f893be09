package io.arrowmm.spark;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;

/**
 * Where a load or save path points: the one resolver every path of the connector goes through,
 * with Spark's rules, the same as the Python source's (arrowmm/spark/paths.py).
 *
 * <p>Spark's file sources read a path as Hadoop's {@code Path} does and qualify it with the
 * session's Hadoop configuration ({@code FileSystem.get(uri, conf).makeQualified(path)}): a
 * scheme is what comes before the first {@code :} when no {@code /} comes before it, an
 * authority follows {@code //}, and a path without a scheme means {@code fs.defaultFS}
 * (relative: against that filesystem's working directory, the driver's current directory for
 * the local one).  {@code file:/abs}, {@code file:///abs} and {@code file://localhost/abs} all
 * name {@code /abs}; {@code file:rel} is relative.  The connector serves the local filesystem
 * only, so any path that qualifies to another (s3a, hdfs, viewfs, gs, a custom scheme, or a
 * plain path when {@code fs.defaultFS} is not {@code file:}) is refused here, at planning,
 * naming the scheme and what would serve it: an {@code s3a://} path used to become the folder
 * {@code s3a:/} in the driver's working directory, and its read said "does not exist".
 */
final class LocalPaths {
  private LocalPaths() {}

  private static final String[][] SERVED_BY = {
      {"s3a", "mount the bucket locally (mountpoint-s3, s3fs-fuse, goofys)"},
      {"s3", "mount the bucket locally (mountpoint-s3, s3fs-fuse, goofys)"},
      {"s3n", "mount the bucket locally (mountpoint-s3, s3fs-fuse, goofys)"},
      {"gs", "mount the bucket locally (gcsfuse)"},
      {"abfs", "mount the container locally (blobfuse2)"},
      {"abfss", "mount the container locally (blobfuse2)"},
      {"wasb", "mount the container locally (blobfuse2)"},
      {"wasbs", "mount the container locally (blobfuse2)"},
      {"hdfs", "mount HDFS locally (its NFS gateway or fuse-dfs)"},
      {"viewfs", "mount the filesystems its mount table names locally"},
  };

  /** The local absolute paths of {@code paths} (glob characters kept), qualified with
   * {@code conf}; any other filesystem refused. */
  static List<String> resolve(List<String> paths, Configuration conf) {
    URI defaultFs = FileSystem.getDefaultUri(conf);
    String cwd = null;
    List<String> out = new ArrayList<>();
    for (String p : paths) {
      String rest = localPart(p, defaultFs);
      if (!rest.startsWith("/")) {
        if (cwd == null) {
          cwd = workingDirectory(conf);
        }
        rest = cwd + "/" + rest;
      }
      out.add(java.nio.file.Path.of(rest).normalize().toString());
    }
    return out;
  }

  /** The session's Hadoop configuration with the options of the load or save, as Spark's file
   * sources make it ({@code sessionState.newHadoopConfWithOptions}): the active session's
   * (the one planning), or Hadoop's defaults and {@code core-site.xml} without one. */
  static Configuration hadoopConf(Map<String, String> options) {
    scala.Option<org.apache.spark.sql.classic.SparkSession> active =
        org.apache.spark.sql.classic.SparkSession.getActiveSession();
    if (active.isEmpty()) {
      active = org.apache.spark.sql.classic.SparkSession.getDefaultSession();
    }
    return hadoopConf(active.isEmpty() ? null : active.get(), options);
  }

  /** {@code session}'s Hadoop configuration (Hadoop's defaults when null) with the options. */
  static Configuration hadoopConf(org.apache.spark.sql.SparkSession session,
      Map<String, String> options) {
    Configuration conf = session instanceof org.apache.spark.sql.classic.SparkSession
        ? ((org.apache.spark.sql.classic.SparkSession) session).sessionState().newHadoopConf()
        : new Configuration();
    for (Map.Entry<String, String> e : options.entrySet()) {
      String k = e.getKey();
      if (e.getValue() != null && !k.equalsIgnoreCase("path") && !k.equalsIgnoreCase("paths")) {
        conf.set(k, e.getValue());
      }
    }
    return conf;
  }

  /** {@code (scheme, authority, path)} of {@code path} as Hadoop's {@code Path(String)} parses
   * it (scheme and authority null when absent; the scheme lower-cased). */
  static String[] split(String path) {
    String scheme = null;
    int colon = path.indexOf(':');
    int slash = path.indexOf('/');
    int start = 0;
    if (colon > 0 && (slash == -1 || colon < slash)) {
      scheme = path.substring(0, colon).toLowerCase(Locale.ROOT);
      start = colon + 1;
    }
    String authority = null;
    if (path.startsWith("//", start) && path.length() - start > 2) {
      int end = path.indexOf('/', start + 2);
      end = end == -1 ? path.length() : end;
      authority = path.substring(start + 2, end);
      start = end;
    }
    return new String[] {scheme, authority, path.substring(start)};
  }

  /** The path part of {@code path} when it names the local filesystem, else an error. */
  private static String localPart(String path, URI defaultFs) {
    if (path == null || path.isEmpty()) {
      throw new ArrowmmException("path '" + path + "': a path must be a non-empty string");
    }
    String[] parts = split(path);
    String scheme = parts[0];
    String authority = parts[1];
    String rest = parts[2];
    if (scheme == null) {
      String fsScheme = defaultFs.getScheme() == null ? null
          : defaultFs.getScheme().toLowerCase(Locale.ROOT);
      if (fsScheme != null && !fsScheme.equals("file")) {
        throw new ArrowmmException("path '" + path + "': unsupported scheme '" + fsScheme
            + "': a path without a scheme means fs.defaultFS (" + defaultFs + "), which the "
            + "JVM connector (format('arrowmm')) cannot read or write; it serves local files "
            + "only. " + servedBy(fsScheme) + "; or give a local path as a file: URI "
            + "(file:///abs/path), which names the driver's and executors' local filesystem "
            + "whatever fs.defaultFS is");
      }
    } else if (!scheme.equals("file")) {
      throw new ArrowmmException("path '" + path + "': unsupported scheme '" + scheme + "': "
          + "the JVM connector (format('arrowmm')) reads and writes local files only (plain "
          + "paths and file: URIs). " + servedBy(scheme));
    }
    if (authority != null && !authority.isEmpty()
        && !authority.equalsIgnoreCase("localhost")) {
      throw new ArrowmmException("path '" + path + "' names host '" + authority + "': a file: "
          + "URI names this machine's files (file:/abs/path, file:///abs/path, "
          + "file://localhost/abs/path); mount the other host's folder locally");
    }
    if (rest.isEmpty()) {
      throw new ArrowmmException("path '" + path + "' names no file or folder");
    }
    return rest;
  }

  private static String servedBy(String scheme) {
    String how = "mount that filesystem locally";
    for (String[] s : SERVED_BY) {
      if (s[0].equals(scheme)) {
        how = s[1];
      }
    }
    return "For " + scheme + ": " + how + " and give the mounted local path. The Python data "
        + "source (arrowmm_python) refuses " + scheme + " too; Spark's own file formats "
        + "(parquet) reach it through Hadoop's FileSystem";
  }

  /** The local filesystem's working directory as Hadoop qualifies a relative path with it
   * (the driver's current directory). */
  private static String workingDirectory(Configuration conf) {
    try {
      return FileSystem.getLocal(conf).getWorkingDirectory().toUri().getPath();
    } catch (IOException e) {
      return System.getProperty("user.dir");
    }
  }
}
