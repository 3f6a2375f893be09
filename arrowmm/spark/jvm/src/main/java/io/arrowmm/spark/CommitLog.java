package io.arrowmm.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
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
 * version {@code latest + 1} by creating that name only if it is free
 * ({@link Storage#createIfAbsent}: a hard link locally, HDFS's rename without overwrite, S3's
 * conditional PUT), which fails rather than replaces when another job took it first (then it
 * re-reads and retries).
 * The two implementations can commit into one directory at the same time.
 */
final class CommitLog {
  static final int KEEP_VERSIONS = 20;
  private static final int MAX_ATTEMPTS = 1000;
  private static final Pattern VERSION_NAME = Pattern.compile("^([0-9]{20})\\.json$");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Logger LOG = LoggerFactory.getLogger(CommitLog.class);

  /**
   * One task's file: its hidden temporary name (null when the task wrote its final name
   * directly: {@link Storage#renamesTaskFiles}), its final name and its rows.
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
        out.writeBoolean(tmp != null);
        out.writeUTF(tmp == null ? "" : tmp);
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
        boolean hasTmp = in.readBoolean();
        String tmp = in.readUTF();
        return new Written(hasTmp ? tmp : null, in.readUTF(), in.readLong());
      } catch (IOException e) {
        throw new ArrowmmException("a damaged commit message from a task: " + e.getMessage());
      }
    }

    /** The name the file has now, in the directory. */
    String current() {
      return tmp == null ? name : tmp;
    }
  }

  private CommitLog() {
  }

  static String versionName(long v) {
    return String.format("%020d.json", v);
  }

  static String log(Storage st, String dir) {
    return st.child(dir, DataFiles.LOG_DIR);
  }

  /** The version numbers in the log, ascending. */
  static List<Long> versions(Storage st, String dir) throws IOException {
    List<Long> out = new ArrayList<>();
    List<Storage.Stat> entries = st.list(log(st, dir));
    if (entries == null) {
      return out;
    }
    for (Storage.Stat c : entries) {
      Matcher m = VERSION_NAME.matcher(c.name);
      if (m.matches()) {
        out.add(Long.parseLong(m.group(1)));
      }
    }
    out.sort(null);
    return out;
  }

  /** Version {@code v}'s document, or null when it is gone (a tombstone or absent). */
  static ObjectNode read(Storage st, String dir, long v) throws IOException {
    String p = st.child(log(st, dir), versionName(v));
    byte[] text = st.readSmall(p);
    if (text == null) {
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
  static ObjectNode latest(Storage st, String dir) throws IOException {
    for (int attempt = 0; attempt < 100; attempt++) {
      List<Long> vs = versions(st, dir);
      if (vs.isEmpty()) {
        return null;
      }
      ObjectNode doc = read(st, dir, vs.get(vs.size() - 1));
      if (doc != null) {
        return doc;
      }
    }
    throw new ArrowmmException(log(st, dir) + ": the latest manifest keeps disappearing while "
        + "read");
  }

  /** Create version {@code v} holding {@code doc}, whole or not at all; false if it exists. */
  static boolean publish(Storage st, String dir, long v, ObjectNode doc) throws IOException {
    byte[] data = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(doc);
    return st.createIfAbsent(st.child(log(st, dir), versionName(v)), data);
  }

  /**
   * Make sure {@code dir} has a log with a version (adopting the older layout); §5.4.  Returns
   * true when this call published version 0 (a job that fails before it commits then takes
   * it back: {@link #undoFirstWrite}).  {@code job}'s own files are never adopted (on stores
   * where tasks write final names, they may already be there).
   */
  static boolean ensureLog(Storage st, String dir, String job) throws IOException {
    st.mkdirs(dir);
    String log = log(st, dir);
    st.mkdirs(log);
    Storage.Stat ls = st.stat(log);
    if (ls == null || !ls.directory) {
      throw new ArrowmmException(log + ": the commit log must be a folder (found something else)");
    }
    Pattern own = job == null ? null : ownFiles(job);
    while (versions(st, dir).isEmpty()) {
      List<String> files = DataFiles.successFiles(st, dir);
      if (files == null) {
        files = new ArrayList<>();
        for (String p : DataFiles.filesIn(st, dir)) {
          String n = st.name(p);
          if (own == null || !own.matcher(n).matches()) {
            files.add(n);
          }
        }
      }
      ObjectNode doc = JSON.createObjectNode();
      doc.put("format", DataFiles.FORMAT).put("version", 0).putNull("previous")
          .put("operation", "adopt");
      if (job == null) {
        doc.putNull("job");
      } else {
        doc.put("job", job);
      }
      strings(doc.putArray("files"), files);
      doc.putArray("removed");
      doc.putObject("streams");
      if (publish(st, dir, 0, doc)) {
        return true;
      }
    }
    return false;
  }

  /** The final names of job {@code job}'s files. */
  static Pattern ownFiles(String job) {
    return Pattern.compile("^(batch-[0-9]+-)?part-[0-9]+-" + Pattern.quote(job)
        + "(-[0-9]+)?\\.arrow$");
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
  static long commit(Storage st, String dir, List<Written> written, String job,
      boolean overwrite) throws IOException {
    return commit(st, dir, written, job, overwrite, null, -1, null);
  }

  /** Whether micro-batch {@code batch} of streaming query {@code query} is in {@code doc}. */
  private static boolean already(JsonNode doc, String query, long batch) {
    JsonNode done = doc == null ? null : doc.path("streams").get(query);
    return done != null && done.isIntegralNumber() && batch <= done.asLong();
  }

  /** The final name of a task's file: a streaming micro-batch's names are prefixed. */
  static String finalName(String name, String query, long batch) {
    return query == null ? name : String.format("batch-%08d-%s", batch, name);
  }

  /**
   * Commit a job, or with {@code query} a streaming micro-batch {@code batch}: its files are
   * named {@code batch-<8 digits>-part-...} and a micro-batch a version already records (Spark
   * replays one after a failure) is not added again (§5.3 steps 2 and 4.2, §10).  An append's
   * {@code appendCheck}, given the path of a file of the version it would publish on, throws
   * when this job's rows may not join those files (an overwrite of another schema committed
   * since the job planned); the job's files are then deleted (§5.3 step 4.3).  Returns the
   * published version, or -1 for a replay.
   */
  static long commit(Storage st, String dir, List<Written> written, String job,
      boolean overwrite, String query, long batch, Consumer<String> appendCheck)
      throws IOException {
    // the log job setup ensured (§5.1); never adopted again here: on stores where tasks write
    // final names in place, the folder may hold other jobs' uncommitted files
    if (versions(st, dir).isEmpty()) {
      throw new ArrowmmException(log(st, dir) + ": the commit log has no version (job setup "
          + "made one; a failed first write into the same directory took it back while job "
          + job + " ran); nothing of this job was published: run it again");
    }
    if (query != null && already(latest(st, dir), query, batch)) {
      for (Written w : written) {
        st.delete(st.child(dir, w.current()));
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
        st.delete(st.child(dir, w.current()));
      }
    }
    List<String> added = new ArrayList<>();
    for (Written w : keep) {
      if (w.tmp == null) {  // written under its final name (no rename on this store)
        added.add(w.name);
        continue;
      }
      String name = finalName(w.name, query, batch);
      String fin = st.child(dir, name);
      if (st.stat(fin) != null) {
        throw new ArrowmmException(fin + ": a file of job " + job + " already exists; job ids "
            + "must be unique and committed once");
      }
      st.rename(st.child(dir, w.tmp), fin);
      added.add(name);
    }
    if (st instanceof LocalStorage) {
      LocalStorage.fsyncDir(java.nio.file.Path.of(dir));
    }
    ObjectNode doc = null;
    for (int attempt = 0; attempt < MAX_ATTEMPTS && doc == null; attempt++) {
      List<Long> vs = versions(st, dir);
      if (vs.isEmpty()) {
        throw new ArrowmmException(log(st, dir) + ": the commit log lost all its versions while "
            + "job " + job + " ran (a failed first write into the same directory took its "
            + "version 0 back); nothing of this job was published: run it again");
      }
      long v = vs.get(vs.size() - 1);
      ObjectNode base = read(st, dir, v);
      if (base == null) {
        continue;  // pruned meanwhile: many newer versions exist
      }
      if (query != null && already(base, query, batch)) {  // another run of it won
        for (String n : added) {
          st.delete(st.child(dir, n));
        }
        return -1;
      }
      List<String> old = files(base);
      if (!overwrite && appendCheck != null && !old.isEmpty()) {
        try {
          appendCheck.accept(st.child(dir, old.get(0)));
        } catch (RuntimeException e) {
          for (String n : added) {
            st.delete(st.child(dir, n));
          }
          throw e;
        }
      }
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
      ObjectNode sts = streams == null ? JSON.createObjectNode() : (ObjectNode) streams.deepCopy();
      if (query != null) {
        JsonNode was = sts.get(query);
        sts.put(query, was != null && was.isIntegralNumber() ? Math.max(batch, was.asLong())
            : batch);
      }
      next.set("streams", sts);
      if (publish(st, dir, v + 1, next)) {
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
      writeMirror(st, dir);
      Set<String> listed = new HashSet<>(files(doc));
      for (JsonNode n : doc.get("removed")) {
        if (!listed.contains(n.asText())) {
          st.delete(st.child(dir, n.asText()));
        }
      }
      prune(st, dir, version);
    } catch (IOException | RuntimeException e) {
      LOG.warn(dir + ": job " + job + " is committed (version " + version + "), but tidying "
          + "up after it failed: " + e);
    }
    return version;
  }

  /** Copy the latest version's list to {@code _SUCCESS} until no newer version appeared; §8. */
  static void writeMirror(Storage st, String dir) throws IOException {
    while (true) {
      ObjectNode doc = latest(st, dir);
      ObjectNode m = JSON.createObjectNode();
      m.put("format", DataFiles.FORMAT);
      m.set("version", doc.get("version"));
      m.set("job", doc.get("job"));
      m.set("files", doc.get("files"));
      m.put("log", DataFiles.LOG_DIR);
      st.replace(st.child(dir, DataFiles.MANIFEST),
          JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(m));
      List<Long> vs = versions(st, dir);
      if (vs.get(vs.size() - 1) == doc.get("version").asLong()) {
        return;
      }
    }
  }

  /** Shrink versions more than {@link #KEEP_VERSIONS} below the latest to tombstones; §9. */
  static void prune(Storage st, String dir, long latest) throws IOException {
    Set<String> current = new HashSet<>(files(latest(st, dir)));
    for (long v = Math.max(0, latest - 2 * KEEP_VERSIONS); v <= latest - KEEP_VERSIONS; v++) {
      ObjectNode doc = read(st, dir, v);
      if (doc == null) {
        continue;
      }
      JsonNode removed = doc.get("removed");
      if (removed != null && removed.isArray()) {
        for (JsonNode n : removed) {
          if (!current.contains(n.asText()) && plain(n.asText())) {
            st.delete(st.child(dir, n.asText()));
          }
        }
      }
      ObjectNode tomb = JSON.createObjectNode();
      tomb.put("format", DataFiles.FORMAT).put("version", v).put("pruned", true);
      tomb.putArray("files");
      st.replace(st.child(log(st, dir), versionName(v)), JSON.writeValueAsBytes(tomb));
    }
  }

  private static boolean plain(String n) {
    return !n.isEmpty() && !n.equals(".") && !n.equals("..") && n.indexOf('/') < 0
        && n.indexOf('\0') < 0;
  }

  /** Remove job {@code job}'s files that no published version kept (§7); returns them. */
  static List<String> abort(Storage st, String dir, String job) throws IOException {
    List<String> gone = new ArrayList<>();
    List<Storage.Stat> entries = st.list(dir);
    if (entries == null) {
      return gone;
    }
    ObjectNode latest = latest(st, dir);
    Set<String> listed = new HashSet<>();
    if (latest != null) {
      listed.addAll(files(latest));
    } else {
      List<String> s = DataFiles.successFiles(st, dir);
      if (s != null) {
        listed.addAll(s);
      }
    }
    Pattern fin = ownFiles(job);
    String tag = "arrowmm-" + job + "-";
    for (Storage.Stat c : entries) {
      String n = c.name;
      if ((n.startsWith(".") && n.contains(tag)) || (fin.matcher(n).matches()
          && !listed.contains(n))) {
        gone.add(n);
      }
    }
    for (String n : gone) {
      st.delete(st.child(dir, n));
    }
    return gone;
  }

  /**
   * After a failed job that published version 0 itself ({@link #ensureLog} returned true):
   * take that version back when it is still the only one, adopted nothing, and is this job's,
   * then the log folder when empty, and the directory when this job made it and it is empty,
   * so that a failed first write leaves the path as it found it (an empty log used to turn a
   * missing path into an empty table, and made the next mode('errorifexists') fail).
   */
  static void undoFirstWrite(Storage st, String dir, String job, boolean removeDir)
      throws IOException {
    List<Long> vs = versions(st, dir);
    if (vs.size() != 1 || vs.get(0) != 0) {
      return;
    }
    ObjectNode v0 = read(st, dir, 0);
    if (v0 == null || !job.equals(v0.path("job").asText(null)) || v0.get("files").size() > 0
        || !"adopt".equals(v0.path("operation").asText(null))) {
      return;
    }
    st.delete(st.child(log(st, dir), versionName(0)));
    st.delete(st.child(dir, DataFiles.MANIFEST));
    if (st.deleteEmptyDirectory(log(st, dir)) && removeDir) {
      st.deleteEmptyDirectory(dir);
    }
  }
}
