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
 * name {@code /abs}; {@code file:rel} is relative.
 *
 * <p>A local path comes out as a plain absolute path ({@link LocalStorage}: java.nio, the fast
 * path); a path of any other filesystem Hadoop has a class for
 * ({@code FileSystem.getFileSystemClass(scheme, conf)}: hdfs, viewfs, webhdfs, a custom
 * {@code fs.<scheme>.impl}, s3a with hadoop-aws on the classpath...) as its qualified URI
 * ({@link HadoopStorage}); a scheme without one is refused here, at planning, naming the
 * scheme and what provides it (an {@code s3a://} path used to become the folder {@code s3a:/}
 * in the driver's working directory).
 */
final class PathResolver {
  private PathResolver() {}

  /** What provides the FileSystem class of well-known schemes. */
  private static final String[][] PROVIDED_BY = {
      {"s3a", "hadoop-aws (at the Hadoop version Spark ships, 3.5.0 for pyspark 4.3) and the AWS "
          + "SDK v2 bundle its POM names, on spark.jars (e.g. spark.jars.packages="
          + "org.apache.hadoop:hadoop-aws:3.5.0)"},
      {"s3", "hadoop-aws (s3a://; map s3:// to it with spark.hadoop.fs.s3.impl="
          + "org.apache.hadoop.fs.s3a.S3AFileSystem) and the AWS SDK v2 bundle, on spark.jars"},
      {"s3n", "hadoop-aws (use s3a://: s3n is gone from Hadoop 3)"},
      {"gs", "the Cloud Storage connector (com.google.cloud.bigdataoss:gcs-connector, "
          + "hadoop3 shaded jar) on spark.jars"},
      {"abfs", "hadoop-azure (and its Azure SDK dependencies) on spark.jars"},
      {"abfss", "hadoop-azure (and its Azure SDK dependencies) on spark.jars"},
      {"wasb", "hadoop-azure on spark.jars"},
      {"wasbs", "hadoop-azure on spark.jars"},
      {"oss", "hadoop-aliyun on spark.jars"},
      {"cos", "hadoop-cos on spark.jars"},
  };

  /** The paths of {@code paths} (glob characters kept), qualified with {@code conf}: local
   * ones as absolute paths, others as qualified URIs; a scheme without a Hadoop FileSystem
   * class refused. */
  static List<String> resolve(List<String> paths, Configuration conf) {
    URI defaultFs = FileSystem.getDefaultUri(conf);
    String cwd = null;
    List<String> out = new ArrayList<>();
    for (String p : paths) {
      if (p == null || p.isEmpty()) {
        throw new ArrowmmException("path '" + p + "': a path must be a non-empty string");
      }
      String[] parts = split(p);
      String scheme = parts[0];
      if (scheme == null) {
        String fsScheme = defaultFs.getScheme() == null ? null
            : defaultFs.getScheme().toLowerCase(Locale.ROOT);
        if (fsScheme != null && !fsScheme.equals("file")) {
          out.add(qualified(p, fsScheme, conf, " (a path without a scheme means fs.defaultFS, "
              + defaultFs + ")"));
          continue;
        }
      } else if (!scheme.equals("file")) {
        out.add(qualified(p, scheme, conf, ""));
        continue;
      }
      String rest = localPart(p, parts);
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

  /** {@code path} of filesystem {@code scheme} qualified by its Hadoop FileSystem, or an error
   * naming the scheme and what provides it when Hadoop has no class for it. */
  private static String qualified(String path, String scheme, Configuration conf, String why) {
    try {
      FileSystem.getFileSystemClass(scheme, conf);
    } catch (IOException | RuntimeException e) {
      String how = "a jar with a Hadoop FileSystem for it on spark.jars, or "
          + "spark.hadoop.fs." + scheme + ".impl naming its class";
      for (String[] s : PROVIDED_BY) {
        if (s[0].equals(scheme)) {
          how = s[1];
        }
      }
      throw new ArrowmmException("path '" + path + "': unsupported scheme '" + scheme + "'" + why
          + ": Hadoop has no FileSystem class for it on this classpath (" + e.getMessage()
          + "). The JVM connector (format('arrowmm')) reads and writes any filesystem Hadoop "
          + "can reach, as Spark's own file formats do; for " + scheme + " add " + how);
    }
    org.apache.hadoop.fs.Path hp = new org.apache.hadoop.fs.Path(path);
    try {
      return hp.getFileSystem(conf).makeQualified(hp).toString();
    } catch (IOException | RuntimeException e) {
      throw new ArrowmmException("path '" + path + "'" + why + ": its filesystem (" + scheme
          + ") cannot be reached: " + e, e);
    }
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
    // FileSystem classes of jars added to the session (ADD JAR, Spark Connect's artifacts)
    // are seen through the thread's context class loader, as the connector itself is
    ClassLoader context = Thread.currentThread().getContextClassLoader();
    if (context != null) {
      conf.setClassLoader(context);
    }
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

  /** The path part of local {@code path} ({@code parts} from {@link #split}). */
  private static String localPart(String path, String[] parts) {
    String authority = parts[1];
    String rest = parts[2];
    if (authority != null && !authority.isEmpty()
        && !authority.equalsIgnoreCase("localhost")) {
      throw new ArrowmmException("path '" + path + "' names host '" + authority + "': a file: "
          + "URI names this machine's files (file:/abs/path, file:///abs/path, "
          + "file://localhost/abs/path); give the other host's files through a filesystem "
          + "that reaches them (hdfs://, ...), or mount its folder locally");
    }
    if (rest.isEmpty()) {
      throw new ArrowmmException("path '" + path + "' names no file or folder");
    }
    return rest;
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
