package io.arrowmm.spark;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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

  /** The paths a load(...) or save(...) call gave (the option path, or the JSON list paths)
   * as local absolute paths, qualified with the active session's Hadoop configuration and the
   * options ({@link LocalPaths}): a path of another filesystem is refused here. */
  static List<String> loadPaths(Map<String, String> options) {
    return LocalPaths.resolve(givenPaths(options), LocalPaths.hadoopConf(options));
  }

  /** The paths a load(...) or save(...) call gave, as given. */
  static List<String> givenPaths(Map<String, String> options) {
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
    } else {
      throw new ArrowmmException("no path: use spark.read.format('arrowmm').load(path)");
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

  /** Every data file under {@code paths}, in a stable order, each once. */
  static List<String> resolve(List<String> paths) {
    Set<String> out = new LinkedHashSet<>();
    for (String p : paths) {
      Path path = Path.of(p);
      if (Files.isDirectory(path)) {
        out.addAll(filesIn(path));
      } else if (Files.isRegularFile(path)) {
        out.add(path.toAbsolutePath().normalize().toString());
      } else if (hasMagic(p)) {
        List<Path> matches = glob(p);
        if (matches.isEmpty()) {
          throw new ArrowmmException("path '" + p + "' matches no file");
        }
        for (Path m : matches) {
          if (Files.isDirectory(m)) {
            out.addAll(filesIn(m));
          } else {
            out.add(m.toAbsolutePath().normalize().toString());
          }
        }
      } else {
        throw new ArrowmmException("path '" + p + "' does not exist");
      }
    }
    return new ArrayList<>(out);
  }

  private static boolean hasMagic(String p) {
    return p.indexOf('*') >= 0 || p.indexOf('?') >= 0 || p.indexOf('[') >= 0;
  }

  /** Glob matches, component by component; like Spark's file sources, a name starting with _
   * or . matches only a pattern that names it literally. */
  private static List<Path> glob(String pattern) {
    Path pat = Path.of(pattern);
    Path root = pat.isAbsolute() ? pat.getRoot() : Path.of("");
    List<Path> current = new ArrayList<>();
    current.add(root);
    for (Path part : pat) {
      String comp = part.toString();
      List<Path> next = new ArrayList<>();
      for (Path dir : current) {
        if (!hasMagic(comp)) {
          Path child = dir.resolve(comp);
          if (Files.exists(child)) {
            next.add(child);
          }
          continue;
        }
        if (!Files.isDirectory(dir.toString().isEmpty() ? Path.of(".") : dir)) {
          continue;
        }
        PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + comp);
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> ds =
            Files.newDirectoryStream(dir.toString().isEmpty() ? Path.of(".") : dir)) {
          for (Path c : ds) {
            String name = c.getFileName().toString();
            if (!name.startsWith("_") && !name.startsWith(".") && m.matches(Path.of(name))) {
              found.add(dir.resolve(name));
            }
          }
        } catch (IOException e) {
          throw new ArrowmmException("path '" + pattern + "': " + e, e);
        }
        found.sort(null);
        next.addAll(found);
      }
      current = next;
    }
    return current;
  }

  /** The data files of one directory. */
  static List<String> filesIn(Path dir) {
    List<String> names = latestVersionFiles(dir);
    if (names == null) {
      names = successFiles(dir);
    }
    List<String> out = new ArrayList<>();
    if (names != null) {
      for (String n : names) {
        out.add(dir.resolve(n).toAbsolutePath().normalize().toString());
      }
      return out;
    }
    List<String> listed = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path c : ds) {
        String name = c.getFileName().toString();
        if (!name.startsWith("_") && !name.startsWith(".") && Files.isRegularFile(c)) {
          listed.add(name);
        }
      }
    } catch (IOException e) {
      throw new ArrowmmException(dir + ": " + e, e);
    }
    listed.sort(null);
    for (String name : listed) {
      Path p = dir.resolve(name);
      if (isArrowFile(p, name)) {
        out.add(p.toAbsolutePath().normalize().toString());
      }
    }
    return out;
  }

  /** Whether a file found in a folder is a data file, as the Python source's discovery judges
   * (arrowmm/dataset/discovery.py): named as Arrow ({@link StreamIndex#EXTENSIONS}) whatever
   * its first bytes, so that one damaged at its start (empty, zero-filled: what a crash, a full
   * disk or an interrupted copy leaves) fails the query naming it ({@link FileFooter#read})
   * instead of being left out; not so named, only when it starts with the file magic or a
   * stream's marker. */
  private static boolean isArrowFile(Path p, String name) {
    if (StreamIndex.namedArrow(name)) {
      return true;
    }
    byte[] head = new byte[8];
    int n;
    try (java.io.InputStream in = Files.newInputStream(p)) {
      n = in.readNBytes(head, 0, 8);
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

  /** The latest version's file list of the directory's log, or null when it has no versions. */
  static List<String> latestVersionFiles(Path dir) {
    Path log = dir.resolve(LOG_DIR);
    for (int attempt = 0; attempt < 100; attempt++) {
      TreeMap<Long, Path> versions = new TreeMap<>();
      try (DirectoryStream<Path> ds = Files.newDirectoryStream(log)) {
        for (Path c : ds) {
          Matcher m = VERSION_NAME.matcher(c.getFileName().toString());
          if (m.matches()) {
            versions.put(Long.parseUnsignedLong(m.group(1)), c);
          }
        }
      } catch (NoSuchFileException | java.nio.file.NotDirectoryException e) {
        return null;
      } catch (IOException e) {
        throw new ArrowmmException(log + ": " + e, e);
      }
      if (versions.isEmpty()) {
        return null;
      }
      Map.Entry<Long, Path> latest = versions.lastEntry();
      byte[] text;
      try {
        text = Files.readAllBytes(latest.getValue());
      } catch (NoSuchFileException e) {
        continue;  // removed by a writer keeping the log short: list again
      } catch (IOException e) {
        throw new ArrowmmException(latest.getValue() + ": " + e, e);
      }
      JsonNode doc;
      try {
        doc = JSON.readTree(text);
      } catch (IOException e) {
        throw new ArrowmmException(latest.getValue() + ": not a manifest of version "
            + latest.getKey() + " (" + e.getMessage() + ")");
      }
      String where = latest.getValue() + ": not a manifest of version " + latest.getKey();
      if (doc == null || !doc.isObject() || !FORMAT.equals(doc.path("format").asText(null))) {
        throw new ArrowmmException(where + " (format is not '" + FORMAT + "')");
      }
      JsonNode v = doc.get("version");
      if (v == null || !v.isIntegralNumber() || v.asLong() != latest.getKey()) {
        throw new ArrowmmException(where + " (it says version " + v + ")");
      }
      if (doc.path("pruned").isBoolean() && doc.path("pruned").asBoolean()) {
        continue;  // pruned to a tombstone between listing and reading: list again
      }
      return names(doc.get("files"), where);
    }
    throw new ArrowmmException(log + ": the latest manifest keeps disappearing while read");
  }

  /** The _SUCCESS manifest's list, or null (no manifest, or an empty Hadoop-style marker). */
  static List<String> successFiles(Path dir) {
    Path path = dir.resolve(MANIFEST);
    byte[] text;
    try {
      text = Files.readAllBytes(path);
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException e) {
      throw new ArrowmmException(path + ": " + e, e);
    }
    if (new String(text, StandardCharsets.UTF_8).trim().isEmpty()) {
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
