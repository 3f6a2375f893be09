package io.arrowmm.spark;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The data files of a load path, as the Python source finds them (arrowmm/spark/files.py): a
 * file, a directory, a glob, or a list of them.  A directory's files are those its commit log's
 * latest version lists ({@code _arrowmm_log/}, docs/commit-protocol.md), else those its
 * {@code _SUCCESS} manifest lists, else its visible Arrow files.
 */
final class DataFiles {
  static final String MANIFEST = "_SUCCESS";
  static final String LOG_DIR = "_arrowmm_log";
  static final String FORMAT = "arrowmm-manifest/1";
  private static final Pattern VERSION_NAME = Pattern.compile("^([0-9]{20})\\.json$");
  private static final ObjectMapper JSON = new ObjectMapper();

  private DataFiles() {}

  static final String NO_READ_PATH = "no path: use spark.read.format('arrowmm').load(path)";
  static final String NO_WRITE_PATH = "no path: use df.write.format('arrowmm').save(path)";

  /** The paths a load(...) call or a catalog table gave ({@link #givenPaths}) qualified with
   * the active session's Hadoop configuration and the options ({@link PathResolver}): a scheme
   * no Hadoop FileSystem serves is refused here. */
  static List<String> loadPaths(Map<String, String> options) {
    return PathResolver.resolve(givenPaths(options, NO_READ_PATH),
        PathResolver.hadoopConf(options));
  }

  /** {@link #loadPaths} of a write: a missing path asks for {@code save(path)}. */
  static List<String> savePaths(Map<String, String> options) {
    return PathResolver.resolve(givenPaths(options, NO_WRITE_PATH),
        PathResolver.hadoopConf(options));
  }

  /** Whether the options name any path ({@link #givenPaths} would not raise for none). */
  static boolean hasPath(Map<String, String> options) {
    return get(options, "paths") != null || get(options, "path") != null
        || get(options, "location") != null;
  }

  /** The paths a load(...) or save(...) call gave (the option path, or the JSON list paths),
   * else a catalog table's {@code location} (which Spark hands a {@code CREATE TABLE} as that
   * property), as given; none is an error saying {@code noPath}. */
  static List<String> givenPaths(Map<String, String> options, String noPath) {
    List<String> out = new ArrayList<>();
    String paths = get(options, "paths");
    if (paths != null) {
      try {
        JsonNode node = JSON.readTree(paths);
        if (node.isTextual()) {
          out.add(node.asText());
        } else if (node.isArray()) {
          for (JsonNode p : node) {
            if (!p.isTextual()) {
              throw new ArrowmmException("option paths is not a JSON list of strings: " + paths);
            }
            out.add(p.asText());
          }
        } else {
          throw new ArrowmmException("option paths is not a JSON list: " + paths);
        }
      } catch (IOException e) {
        throw new ArrowmmException("option paths is not a JSON list: " + e.getMessage());
      }
    } else if (get(options, "path") != null) {
      out.add(get(options, "path"));
    } else if (get(options, "location") != null) {
      out.add(get(options, "location"));
    } else {
      throw new ArrowmmException(noPath);
    }
    return out;
  }

  private static String get(Map<String, String> options, String key) {
    for (Map.Entry<String, String> e : options.entrySet()) {  // case-insensitive, as Spark's
      if (e.getKey().equalsIgnoreCase(key)) {
        return e.getValue();
      }
    }
    return null;
  }

  /** Every data file under {@code paths}, in a stable order, each once, with the status a
   * directory's listing gave it on a remote filesystem (null for a path named directly, a local
   * file, or a name the listing lacks): planning then asks for no status per file
   * ({@link FooterCache#readAll}). */
  static Map<String, Storage.Stat> resolve(List<String> paths,
      org.apache.hadoop.conf.Configuration conf) {
    return resolve(paths, p -> Storage.of(p, conf));
  }

  /** {@link #resolve(List, org.apache.hadoop.conf.Configuration)} with each path's storage from
   * {@code storageOf} (a test's counting storage). */
  static Map<String, Storage.Stat> resolve(List<String> paths,
      Function<String, Storage> storageOf) {
    Map<String, Storage.Stat> out = new LinkedHashMap<>();
    for (String p : paths) {
      Storage st = storageOf.apply(p);
      try {
        Storage.Stat s = st.stat(p);
        if (s != null && s.directory) {
          addFilesIn(out, st, p);
        } else if (s != null) {
          out.putIfAbsent(p, null);
        } else if (hasMagic(p)) {
          List<String> matches = st.glob(p);
          if (matches.isEmpty()) {
            throw new ArrowmmException("path '" + p + "' matches no file");
          }
          for (String m : matches) {
            Storage.Stat ms = st.stat(m);
            if (ms != null && ms.directory) {
              addFilesIn(out, st, m);
            } else {
              out.putIfAbsent(m, null);
            }
          }
        } else {
          throw new ArrowmmException("path '" + p + "' does not exist");
        }
      } catch (ArrowmmException e) {
        throw e;
      } catch (IOException | RuntimeException e) {
        // (a filesystem's own runtime error, a name Hadoop cannot parse: named, not bare)
        throw new ArrowmmException("path '" + p + "': " + e, e);
      }
    }
    return out;
  }

  /** Add directory {@code dir}'s files not already in {@code out}, with their listed status. */
  private static void addFilesIn(Map<String, Storage.Stat> out, Storage st, String dir) {
    Map<String, Storage.Stat> listed = new HashMap<>();
    for (String f : filesIn(st, dir, listed)) {
      if (!out.containsKey(f)) {
        out.put(f, listed.get(f));
      }
    }
  }

  private static boolean hasMagic(String p) {
    return p.indexOf('*') >= 0 || p.indexOf('?') >= 0 || p.indexOf('[') >= 0;
  }

  /** The data files of one local directory. */
  static List<String> filesIn(Path dir) {
    return filesIn(LocalStorage.INSTANCE, dir.toAbsolutePath().normalize().toString());
  }

  /** The data files of one directory. */
  static List<String> filesIn(Storage st, String dir) {
    return filesIn(st, dir, null);
  }

  /** {@link #filesIn(Storage, String)}, putting in {@code listed} (unless null) the status the
   * directory's listing gave each file on a remote filesystem (a local listing has no lengths
   * or times): a directory with a commit log or manifest is listed once for the statuses of the
   * names they give (a name the listing lacks gets none: it is asked for when read). */
  private static List<String> filesIn(Storage st, String dir, Map<String, Storage.Stat> listed) {
    boolean remote = listed != null && !(st instanceof LocalStorage);
    List<String> names = latestVersionFiles(st, dir);
    if (names == null) {
      names = successFiles(st, dir);
    }
    List<String> out = new ArrayList<>();
    if (names != null) {
      Map<String, Storage.Stat> byName = new HashMap<>();
      List<Storage.Stat> entries = remote ? list(st, dir) : null;
      if (entries != null) {
        for (Storage.Stat c : entries) {
          if (!c.directory) {
            byName.put(c.name, c);
          }
        }
      }
      for (String n : names) {
        String p = st.child(dir, n);
        out.add(p);
        if (byName.containsKey(n)) {
          listed.put(p, byName.get(n));
        }
      }
      return out;
    }
    List<Storage.Stat> entries = list(st, dir);
    if (entries == null) {
      throw new ArrowmmException(dir + ": not a directory (or removed while read)");
    }
    TreeMap<String, Storage.Stat> visible = new TreeMap<>();
    for (Storage.Stat c : entries) {
      if (!c.name.startsWith("_") && !c.name.startsWith(".") && !c.directory) {
        visible.put(c.name, c);
      }
    }
    for (Storage.Stat c : visible.values()) {
      String p = st.child(dir, c.name);
      if (isArrowFile(st, p, c.name, remote ? c : null)) {
        out.add(p);
        if (remote) {
          listed.put(p, c);
        }
      }
    }
    return out;
  }

  /** The entries of directory {@code dir}, or null when it is none. */
  private static List<Storage.Stat> list(Storage st, String dir) {
    try {
      return st.list(dir);
    } catch (IOException e) {
      throw new ArrowmmException(dir + ": " + e, e);
    }
  }

  /** Whether a file found in a folder is a data file, as the Python source's discovery judges
   * (arrowmm/dataset/discovery.py): named as Arrow ({@link StreamIndex#EXTENSIONS}) whatever
   * its first bytes, so that one damaged at its start (empty, zero-filled: what a crash, a full
   * disk or an interrupted copy leaves) fails the query naming it ({@link FileFooter#read})
   * instead of being left out; not so named, only when it starts with the file magic or a
   * stream's marker. */
  private static boolean isArrowFile(Storage st, String p, String name, Storage.Stat listed) {
    if (StreamIndex.namedArrow(name)) {
      return true;
    }
    byte[] head = new byte[8];
    int n = 0;
    try (Storage.Input in = st.open(p, listed)) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(head);
      while (b.hasRemaining()) {
        int got = in.read(b, b.position());
        if (got < 0) {
          break;
        }
      }
      n = b.position();
    } catch (IOException e) {
      return false;
    }
    if (n >= 6 && new String(head, 0, 6, StandardCharsets.ISO_8859_1).equals("ARROW1")) {
      return true;
    }
    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(head, 0, n)
        .order(java.nio.ByteOrder.LITTLE_ENDIAN);
    return StreamIndex.looksLikeStream(b, name);
  }

  /** The latest version's file list of the local directory's log, or null without versions. */
  static List<String> latestVersionFiles(Path dir) {
    return latestVersionFiles(LocalStorage.INSTANCE, dir.toAbsolutePath().normalize().toString());
  }

  /** The latest version's file list of the directory's log, or null when it has no versions. */
  static List<String> latestVersionFiles(Storage st, String dir) {
    String log = st.child(dir, LOG_DIR);
    for (int attempt = 0; attempt < 100; attempt++) {
      TreeMap<Long, String> versions = new TreeMap<>();
      List<Storage.Stat> entries;
      try {
        entries = st.list(log);
      } catch (IOException e) {
        throw new ArrowmmException(log + ": " + e, e);
      }
      if (entries == null) {
        return null;
      }
      for (Storage.Stat c : entries) {
        Matcher m = VERSION_NAME.matcher(c.name);
        if (m.matches()) {
          versions.put(Long.parseUnsignedLong(m.group(1)), c.path);
        }
      }
      if (versions.isEmpty()) {
        return null;
      }
      Map.Entry<Long, String> latest = versions.lastEntry();
      String where = st.child(log, st.name(latest.getValue()));
      byte[] text;
      try {
        text = st.readSmall(where);
      } catch (IOException e) {
        throw new ArrowmmException(where + ": " + e, e);
      }
      if (text == null) {
        continue;  // removed by a writer keeping the log short: list again
      }
      JsonNode doc;
      try {
        doc = JSON.readTree(text);
      } catch (IOException e) {
        throw new ArrowmmException(where + ": not a manifest of version "
            + latest.getKey() + " (" + e.getMessage() + ")");
      }
      String bad = where + ": not a manifest of version " + latest.getKey();
      if (doc == null || !doc.isObject() || !FORMAT.equals(doc.path("format").asText(null))) {
        throw new ArrowmmException(bad + " (format is not '" + FORMAT + "')");
      }
      JsonNode v = doc.get("version");
      if (v == null || !v.isIntegralNumber() || v.asLong() != latest.getKey()) {
        throw new ArrowmmException(bad + " (it says version " + v + ")");
      }
      if (doc.path("pruned").isBoolean() && doc.path("pruned").asBoolean()) {
        continue;  // pruned to a tombstone between listing and reading: list again
      }
      return names(doc.get("files"), bad);
    }
    throw new ArrowmmException(log + ": the latest manifest keeps disappearing while read");
  }

  /** The local directory's _SUCCESS manifest's list, or null. */
  static List<String> successFiles(Path dir) {
    return successFiles(LocalStorage.INSTANCE, dir.toAbsolutePath().normalize().toString());
  }

  /** The _SUCCESS manifest's list, or null (no manifest, or an empty Hadoop-style marker). */
  static List<String> successFiles(Storage st, String dir) {
    String path = st.child(dir, MANIFEST);
    byte[] text;
    try {
      text = st.readSmall(path);
    } catch (IOException e) {
      throw new ArrowmmException(path + ": " + e, e);
    }
    if (text == null || new String(text, StandardCharsets.UTF_8).trim().isEmpty()) {
      return null;
    }
    try {
      JsonNode doc = JSON.readTree(text);
      return names(doc == null ? null : doc.get("files"), path + ": not an arrowmm manifest");
    } catch (IOException e) {
      throw new ArrowmmException(path + ": not an arrowmm manifest (" + e.getMessage() + ")");
    }
  }

  private static List<String> names(JsonNode files, String where) {
    if (files == null || !files.isArray()) {
      throw new ArrowmmException(where + " (files is not a list of names)");
    }
    List<String> out = new ArrayList<>();
    for (Iterator<JsonNode> it = files.elements(); it.hasNext(); ) {
      JsonNode n = it.next();
      String s = n.isTextual() ? n.asText() : null;
      if (s == null || s.isEmpty() || s.equals(".") || s.equals("..") || s.indexOf('/') >= 0
          || s.indexOf('\0') >= 0) {
        throw new ArrowmmException(where + " (file name " + n
            + " is not a plain name inside the directory)");
      }
      out.add(s);
    }
    return out;
  }
}
