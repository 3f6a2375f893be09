package io.arrowmm.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The commit protocol of {@code docs/commit-protocol.md}, as the Python writer
 * ({@code arrowmm/spark/commit.py}) implements it: a directory's committed files are those the
 * highest-numbered manifest {@code _arrowmm_log/<20 digits>.json} lists; a job publishes
 * version {@code latest + 1} by hard-linking a complete temporary file to that name, which
 * fails rather than replaces when another job took it first (then it re-reads and retries).
 * The two implementations can commit into one directory at the same time.
 */
final class CommitLog {
  static final int KEEP_VERSIONS = 20;
  private static final int MAX_ATTEMPTS = 1000;
  private static final Pattern VERSION_NAME = Pattern.compile("^([0-9]{20})\\.json$");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Logger LOG = LoggerFactory.getLogger(CommitLog.class);

  /**
   * One task's file: its hidden temporary name, its final name and its rows.
   *
   * <p>It travels from the task to the driver as a commit message of Spark's own class
   * ({@link #toMessage}, {@link #of}): the driver deserializes task results with its base
   * class loader, which does not know the classes of a jar sent as a Spark Connect session
   * artifact ({@code addArtifacts}), so a message of the connector's own class failed every
   * such write with "ClassNotFound with classloader".  Spark's
   * {@code PythonWriterCommitMessage} carries bytes and nothing else: it is the generic
   * envelope here, whatever its name says.
   */
  static final class Written {
    private static final String TAG = "arrowmm-written/1";
    final String tmp;
    final String name;
    final long rows;

    Written(String tmp, String name, long rows) {
      this.tmp = tmp;
      this.name = name;
      this.rows = rows;
    }

    org.apache.spark.sql.connector.write.WriterCommitMessage toMessage() {
      java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
      try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
        out.writeUTF(TAG);
        out.writeUTF(tmp);
        out.writeUTF(name);
        out.writeLong(rows);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      return new org.apache.spark.sql.execution.datasources.v2.python.PythonWriterCommitMessage(
          bytes.toByteArray());
    }

    /** The file a task reported in {@code message} (made by {@link #toMessage}). */
    static Written of(org.apache.spark.sql.connector.write.WriterCommitMessage message) {
      if (!(message
          instanceof org.apache.spark.sql.execution.datasources.v2.python.PythonWriterCommitMessage)) {
        throw new ArrowmmException("not a commit message of the arrowmm connector's tasks: "
            + message.getClass().getName());
      }
      byte[] data = ((org.apache.spark.sql.execution.datasources.v2.python.PythonWriterCommitMessage)
          message).pickledMessage();
      try (java.io.DataInputStream in = new java.io.DataInputStream(
          new java.io.ByteArrayInputStream(data))) {
        if (!TAG.equals(in.readUTF())) {
          throw new ArrowmmException("not a commit message of the arrowmm connector's tasks");
        }
        return new Written(in.readUTF(), in.readUTF(), in.readLong());
      } catch (IOException e) {
        throw new ArrowmmException("a damaged commit message from a task: " + e.getMessage());
      }
    }
  }

  private CommitLog() {
  }

  static String versionName(long v) {
    return String.format("%020d.json", v);
  }

  static Path log(Path dir) {
    return dir.resolve(DataFiles.LOG_DIR);
  }

  /** The version numbers in the log, ascending. */
  static List<Long> versions(Path dir) throws IOException {
    List<Long> out = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(log(dir))) {
      for (Path c : ds) {
        Matcher m = VERSION_NAME.matcher(c.getFileName().toString());
        if (m.matches()) {
          out.add(Long.parseLong(m.group(1)));
        }
      }
    } catch (NoSuchFileException e) {
      return out;
    }
    out.sort(null);
    return out;
  }

  /** Version {@code v}'s document, or null when it is gone (a tombstone or absent). */
  static ObjectNode read(Path dir, long v) throws IOException {
    Path p = log(dir).resolve(versionName(v));
    byte[] text;
    try {
      text = Files.readAllBytes(p);
    } catch (NoSuchFileException e) {
      return null;
    }
    JsonNode doc;
    try {
      doc = JSON.readTree(text);
    } catch (IOException e) {
      throw new ArrowmmException(p + ": not a manifest of version " + v + " (" + e + ")");
    }
    if (doc == null || !doc.isObject() || !DataFiles.FORMAT.equals(doc.path("format").asText(null))
        || doc.path("version").asLong(-1) != v) {
      throw new ArrowmmException(p + ": not a manifest of version " + v);
    }
    if (doc.path("pruned").asBoolean(false)) {
      return null;
    }
    JsonNode files = doc.get("files");
    if (files == null || !files.isArray()) {
      throw new ArrowmmException(p + ": not a manifest of version " + v + " (files is not a list)");
    }
    JsonNode streams = doc.get("streams");
    if (streams != null && !streams.isObject()) {
      throw new ArrowmmException(p + ": not a manifest of version " + v + " (streams)");
    }
    return (ObjectNode) doc;
  }

  /** The latest complete version's document (tombstones skipped by listing again). */
  static ObjectNode latest(Path dir) throws IOException {
    for (int attempt = 0; attempt < 100; attempt++) {
      List<Long> vs = versions(dir);
      if (vs.isEmpty()) {
        return null;
      }
      ObjectNode doc = read(dir, vs.get(vs.size() - 1));
      if (doc != null) {
        return doc;
      }
    }
    throw new ArrowmmException(log(dir) + ": the latest manifest keeps disappearing while read");
  }

  /** Create version {@code v} holding {@code doc}, whole or not at all; false if it exists. */
  static boolean publish(Path dir, long v, ObjectNode doc) throws IOException {
    Path log = log(dir);
    Path tmp = log.resolve(".tmp-jvm-" + UUID.randomUUID().toString().replace("-", ""));
    byte[] data = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(doc);
    try {
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW,
          StandardOpenOption.WRITE)) {
        ByteBuffer b = ByteBuffer.wrap(data);
        while (b.hasRemaining()) {
          ch.write(b);
        }
        ch.force(true);
      }
      try {
        Files.createLink(log.resolve(versionName(v)), tmp);  // never replaces: the commit point
      } catch (FileAlreadyExistsException e) {
        return false;
      } catch (UnsupportedOperationException e) {
        throw new ArrowmmException(log + ": cannot publish manifest version " + v + ": this "
            + "filesystem refuses hard links, which the commit protocol needs to create a "
            + "version without replacing one");
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
    fsyncDir(log);
    return true;
  }

  static void fsyncDir(Path dir) {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      // some platforms cannot open a folder for fsync; the link itself is atomic
    }
  }

  /** Make sure {@code dir} has a log with a version (adopting the older layout); §5.4. */
  static void ensureLog(Path dir) throws IOException {
    Files.createDirectories(dir);
    Path log = log(dir);
    try {
      Files.createDirectory(log);
    } catch (FileAlreadyExistsException e) {
      // fine if a real folder
    }
    if (!Files.isDirectory(log, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      throw new ArrowmmException(log + ": the commit log must be a folder (found something else)");
    }
    while (versions(dir).isEmpty()) {
      List<String> files = DataFiles.successFiles(dir);
      if (files == null) {
        files = new ArrayList<>();
        for (String p : DataFiles.filesIn(dir)) {
          files.add(Path.of(p).getFileName().toString());
        }
      }
      ObjectNode doc = JSON.createObjectNode();
      doc.put("format", DataFiles.FORMAT).put("version", 0).putNull("previous")
          .put("operation", "adopt").putNull("job");
      strings(doc.putArray("files"), files);
      doc.putArray("removed");
      doc.putObject("streams");
      if (publish(dir, 0, doc)) {
        fsyncDir(dir);
        return;
      }
    }
  }

  private static void strings(ArrayNode a, List<String> values) {
    for (String s : values) {
      a.add(s);
    }
  }

  private static List<String> files(JsonNode doc) {
    List<String> out = new ArrayList<>();
    for (JsonNode n : doc.get("files")) {
      out.add(n.asText());
    }
    return out;
  }

  /**
   * Commit a job (§5.3): move its tasks' files in and publish the next version; an overwrite's
   * version lists only this job's files and its dropped files are deleted after publishing.
   * Returns the published version.
   */
  static long commit(Path dir, List<Written> written, String job, boolean overwrite)
      throws IOException {
    return commit(dir, written, job, overwrite, null, -1);
  }

  /** Whether micro-batch {@code batch} of streaming query {@code query} is in {@code doc}. */
  private static boolean already(JsonNode doc, String query, long batch) {
    JsonNode done = doc == null ? null : doc.path("streams").get(query);
    return done != null && done.isIntegralNumber() && batch <= done.asLong();
  }

  /**
   * Commit a job, or with {@code query} a streaming micro-batch {@code batch}: its files are
   * named {@code batch-<8 digits>-part-...} and a micro-batch a version already records (Spark
   * replays one after a failure) is not added again (§5.3 steps 2 and 4.2, §10).  Returns the
   * published version, or -1 for a replay.
   */
  static long commit(Path dir, List<Written> written, String job, boolean overwrite,
      String query, long batch) throws IOException {
    ensureLog(dir);
    if (query != null && already(latest(dir), query, batch)) {
      for (Written w : written) {
        Files.deleteIfExists(dir.resolve(w.tmp));
      }
      return -1;
    }
    List<Written> keep = new ArrayList<>();
    for (Written w : written) {
      if (w.rows > 0) {
        keep.add(w);
      }
    }
    if (keep.isEmpty() && !written.isEmpty()) {
      keep.add(written.get(0));  // all empty: keep one so the directory keeps a schema
    }
    for (Written w : written) {
      if (!keep.contains(w)) {
        Files.deleteIfExists(dir.resolve(w.tmp));
      }
    }
    List<String> added = new ArrayList<>();
    for (Written w : keep) {
      String name = query == null ? w.name : String.format("batch-%08d-%s", batch, w.name);
      Path fin = dir.resolve(name);
      if (Files.exists(fin, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        throw new ArrowmmException(fin + ": a file of job " + job + " already exists; job ids "
            + "must be unique and committed once");
      }
      Files.move(dir.resolve(w.tmp), fin, StandardCopyOption.ATOMIC_MOVE);
      added.add(name);
    }
    fsyncDir(dir);
    ObjectNode doc = null;
    for (int attempt = 0; attempt < MAX_ATTEMPTS && doc == null; attempt++) {
      List<Long> vs = versions(dir);
      long v = vs.get(vs.size() - 1);
      ObjectNode base = read(dir, v);
      if (base == null) {
        continue;  // pruned meanwhile: many newer versions exist
      }
      if (query != null && already(base, query, batch)) {  // another run of it won
        for (String n : added) {
          Files.deleteIfExists(dir.resolve(n));
        }
        return -1;
      }
      List<String> old = files(base);
      List<String> files = new ArrayList<>(overwrite ? List.of() : old);
      for (String n : added) {
        if (!files.contains(n)) {
          files.add(n);
        }
      }
      Set<String> now = new HashSet<>(files);
      ObjectNode next = JSON.createObjectNode();
      next.put("format", DataFiles.FORMAT).put("version", v + 1).put("previous", v)
          .put("operation", overwrite ? "overwrite" : "append").put("job", job);
      strings(next.putArray("files"), files);
      ArrayNode removed = next.putArray("removed");
      for (String n : old) {
        if (!now.contains(n)) {
          removed.add(n);
        }
      }
      JsonNode streams = base.get("streams");
      ObjectNode st = streams == null ? JSON.createObjectNode() : (ObjectNode) streams.deepCopy();
      if (query != null) {
        JsonNode was = st.get(query);
        st.put(query, was != null && was.isIntegralNumber() ? Math.max(batch, was.asLong()) : batch);
      }
      next.set("streams", st);
      if (publish(dir, v + 1, next)) {
        doc = next;
      } else {
        try {
          Thread.sleep(ThreadLocalRandom.current().nextInt(1, 2 + Math.min(50, attempt)));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new ArrowmmException(dir + ": interrupted while publishing job " + job);
        }
      }
    }
    if (doc == null) {
      throw new ArrowmmException(dir + ": could not publish job " + job + " after "
          + MAX_ATTEMPTS + " attempts (other jobs kept committing first); nothing of it was "
          + "published");
    }
    long version = doc.get("version").asLong();
    // committed: what follows tidies up, and must not fail the job (a retry would add it twice)
    try {
      writeMirror(dir);
      Set<String> listed = new HashSet<>(files(doc));
      for (JsonNode n : doc.get("removed")) {
        if (!listed.contains(n.asText())) {
          Files.deleteIfExists(dir.resolve(n.asText()));
        }
      }
      prune(dir, version);
    } catch (IOException | RuntimeException e) {
      LOG.warn(dir + ": job " + job + " is committed (version " + version + "), but tidying "
          + "up after it failed: " + e);
    }
    return version;
  }

  /** Copy the latest version's list to {@code _SUCCESS} until no newer version appeared; §8. */
  static void writeMirror(Path dir) throws IOException {
    while (true) {
      ObjectNode doc = latest(dir);
      ObjectNode m = JSON.createObjectNode();
      m.put("format", DataFiles.FORMAT);
      m.set("version", doc.get("version"));
      m.set("job", doc.get("job"));
      m.set("files", doc.get("files"));
      m.put("log", DataFiles.LOG_DIR);
      Path tmp = dir.resolve("._SUCCESS." + UUID.randomUUID().toString().substring(0, 12)
          + ".tmp");
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW,
          StandardOpenOption.WRITE)) {
        ByteBuffer b = ByteBuffer.wrap(JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(m));
        while (b.hasRemaining()) {
          ch.write(b);
        }
        ch.force(true);
      }
      Files.move(tmp, dir.resolve(DataFiles.MANIFEST), StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
      List<Long> vs = versions(dir);
      if (vs.get(vs.size() - 1) == doc.get("version").asLong()) {
        return;
      }
    }
  }

  /** Shrink versions more than {@link #KEEP_VERSIONS} below the latest to tombstones; §9. */
  static void prune(Path dir, long latest) throws IOException {
    Set<String> current = new HashSet<>(files(latest(dir)));
    for (long v = Math.max(0, latest - 2 * KEEP_VERSIONS); v <= latest - KEEP_VERSIONS; v++) {
      ObjectNode doc = read(dir, v);
      if (doc == null) {
        continue;
      }
      JsonNode removed = doc.get("removed");
      if (removed != null && removed.isArray()) {
        for (JsonNode n : removed) {
          if (!current.contains(n.asText()) && plain(n.asText())) {
            Files.deleteIfExists(dir.resolve(n.asText()));
          }
        }
      }
      ObjectNode tomb = JSON.createObjectNode();
      tomb.put("format", DataFiles.FORMAT).put("version", v).put("pruned", true);
      tomb.putArray("files");
      Path tmp = log(dir).resolve(".tmp-jvm-" + UUID.randomUUID().toString().replace("-", ""));
      Files.write(tmp, JSON.writeValueAsBytes(tomb), StandardOpenOption.CREATE_NEW);
      Files.move(tmp, log(dir).resolve(versionName(v)), StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private static boolean plain(String n) {
    return !n.isEmpty() && !n.equals(".") && !n.equals("..") && n.indexOf('/') < 0
        && n.indexOf('\0') < 0;
  }

  /** Remove job {@code job}'s files that no published version kept (§7); returns them. */
  static List<String> abort(Path dir, String job) throws IOException {
    List<String> gone = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return gone;
    }
    ObjectNode latest = latest(dir);
    Set<String> listed = new HashSet<>();
    if (latest != null) {
      listed.addAll(files(latest));
    } else {
      List<String> s = DataFiles.successFiles(dir);
      if (s != null) {
        listed.addAll(s);
      }
    }
    Pattern fin = Pattern.compile("^(batch-[0-9]+-)?part-[0-9]+-" + Pattern.quote(job)
        + "\\.arrow$");
    String tag = "arrowmm-" + job + "-";
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path c : ds) {
        String n = c.getFileName().toString();
        if ((n.startsWith(".") && n.contains(tag)) || (fin.matcher(n).matches()
            && !listed.contains(n))) {
          gone.add(n);
        }
      }
    }
    for (String n : gone) {
      Files.deleteIfExists(dir.resolve(n));
    }
    return gone;
  }
}
