package io.arrowmm.spark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadAllAvailable;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.ReadMaxFiles;
import org.apache.spark.sql.connector.read.streaming.SupportsAdmissionControl;
import org.apache.spark.sql.connector.read.streaming.SupportsTriggerAvailableNow;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * {@code spark.readStream.format("arrowmm_jvm").load(dir)}: a directory into which jobs commit
 * Arrow files, read as they arrive, with the Python source's offsets and replay rules
 * (arrowmm/spark/source.py, {@code ArrowmmStreamReader}).
 *
 * <p>An offset is {@code {"last": name}}: every committed file up to and including {@code name}
 * has been read.  Only committed files are seen: a directory with a commit log (or a
 * {@code _SUCCESS} manifest) is read in its latest version's list order, which is commit order
 * (an append puts its files after those already listed), so the files after {@code name} in
 * that list are the new ones whatever their names (a batch append's are random).  A directory
 * without a manifest is read in name order, so there files must arrive in name order (as
 * time-stamped or numbered names do).  A micro-batch's files are fixed by its two offsets alone,
 * so a query restarted from its checkpoint reads again exactly the files of the batch it had
 * not finished, and then the new ones: none is skipped or read twice.  A file an offset names
 * that is no longer committed (an overwrite replaced it) stops the query with an error naming
 * it, instead of guessing where to resume.
 *
 * <p>Option {@code maxFilesPerTrigger}: at most that many files per micro-batch (Spark's file
 * sources' option; {@code Trigger.AvailableNow} still reads everything there was when it
 * started, in such batches).
 */
final class ArrowmmMicroBatchStream implements MicroBatchStream, SupportsAdmissionControl,
    SupportsTriggerAvailableNow {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final StructType schema;
  private final CaseInsensitiveStringMap options;
  private final Path directory;
  private final int maxFiles;
  /** With {@code Trigger.AvailableNow}: the offset that was latest when the query started. */
  private FileOffset availableNow;

  ArrowmmMicroBatchStream(StructType schema, CaseInsensitiveStringMap options) {
    this.schema = schema;
    this.options = options;
    List<String> paths = DataFiles.loadPaths(options);
    if (paths.size() != 1 || !Files.isDirectory(Path.of(paths.get(0)))) {
      throw new ArrowmmException("a streaming read needs one directory, got " + paths);
    }
    this.directory = Path.of(paths.get(0)).toAbsolutePath().normalize();
    String max = options.get("maxFilesPerTrigger");
    if (max == null) {
      this.maxFiles = -1;
    } else {
      int n;
      try {
        n = Integer.parseInt(max.trim());
      } catch (NumberFormatException e) {
        n = 0;
      }
      if (n <= 0) {
        throw new ArrowmmException("option maxFilesPerTrigger must be a positive number of "
            + "files, got '" + max + "'");
      }
      this.maxFiles = n;
    }
  }

  /** The offset: the name of the last file read ("" before the first). */
  static final class FileOffset extends Offset {
    final String last;

    FileOffset(String last) {
      this.last = last;
    }

    @Override
    public String json() {
      return JSON.createObjectNode().put("last", last).toString();
    }
  }

  /** The committed files, in the order they arrive: names relative to the directory. */
  private List<String> committed() {
    List<String> out = new ArrayList<>();
    for (String p : DataFiles.filesIn(directory)) {
      out.add(directory.relativize(Path.of(p)).toString());
    }
    return out;
  }

  private boolean hasManifest() {
    return DataFiles.latestVersionFiles(directory) != null
        || DataFiles.successFiles(directory) != null;
  }

  /** Where in {@code names} the files after offset {@code last} start. */
  private int after(List<String> names, String last, boolean ordered) {
    if (last.isEmpty()) {
      return 0;
    }
    if (!ordered) {  // name order: files sorting after the offset's name
      int i = 0;
      while (i < names.size() && names.get(i).compareTo(last) <= 0) {
        i++;
      }
      return i;
    }
    int i = names.indexOf(last);
    if (i < 0) {
      throw new ArrowmmException(directory + ": the stream has read up to file '" + last
          + "', which the directory no longer lists (an overwrite or a deletion replaced it); a "
          + "streaming read follows a directory that jobs only append to. Start the query with "
          + "a new checkpoint to read the directory again from its start");
    }
    return i + 1;
  }

  @Override
  public Offset initialOffset() {
    return new FileOffset("");
  }

  @Override
  public Offset deserializeOffset(String json) {
    try {
      JsonNode node = JSON.readTree(json);
      if (node != null && node.path("last").isTextual()) {
        return new FileOffset(node.get("last").asText());
      }
    } catch (IOException e) {
      // below
    }
    throw new ArrowmmException("not an arrowmm stream offset: " + json);
  }

  @Override
  public Offset latestOffset() {
    throw new UnsupportedOperationException("latestOffset(Offset, ReadLimit) is used instead");
  }

  @Override
  public ReadLimit getDefaultReadLimit() {
    return maxFiles > 0 ? ReadLimit.maxFiles(maxFiles) : ReadLimit.allAvailable();
  }

  @Override
  public void prepareForTriggerAvailableNow() {
    List<String> names = committed();
    availableNow = new FileOffset(names.isEmpty() ? "" : names.get(names.size() - 1));
  }

  @Override
  public Offset latestOffset(Offset startOffset, ReadLimit limit) {
    String start = startOffset == null ? "" : ((FileOffset) startOffset).last;
    boolean ordered = hasManifest();
    List<String> names = committed();
    if (!ordered) {
      names.sort(null);
    }
    int from = after(names, start, ordered);
    int to = names.size();
    if (availableNow != null) {
      int cap = after(names, availableNow.last, ordered);
      to = Math.max(from, Math.min(to, cap));
    }
    if (limit instanceof ReadMaxFiles) {
      to = Math.min(to, from + ((ReadMaxFiles) limit).maxFiles());
    } else if (!(limit instanceof ReadAllAvailable)) {
      throw new ArrowmmException("read limit " + limit + " is not supported (maxFilesPerTrigger "
          + "is)");
    }
    return to > from ? new FileOffset(names.get(to - 1)) : new FileOffset(start);
  }

  @Override
  public Offset reportLatestOffset() {
    List<String> names = committed();
    if (!hasManifest()) {
      names.sort(null);
    }
    return names.isEmpty() ? null : new FileOffset(names.get(names.size() - 1));
  }

  /** A batch scan of the given files (the table's schema checked against each footer). */
  private ArrowmmScan scanOf(List<String> names) {
    Map<String, String> copy = new HashMap<>(options);
    copy.remove("path");
    copy.remove("paths");
    var paths = JSON.createArrayNode();
    for (String n : names) {
      paths.add(directory.resolve(n).toString());
    }
    copy.put("paths", paths.toString());
    return new ArrowmmScan(schema, schema, new CaseInsensitiveStringMap(copy),
        new org.apache.spark.sql.sources.Filter[0], -1);
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    String lo = start == null ? "" : ((FileOffset) start).last;
    String hi = ((FileOffset) end).last;
    if (hi.equals(lo)) {
      return new InputPartition[0];
    }
    boolean ordered = hasManifest();
    List<String> names = committed();
    if (!ordered) {
      names.sort(null);
    }
    int from = after(names, lo, ordered);
    int to = after(names, hi, ordered);
    if (to < from) {
      throw new ArrowmmException(directory + ": stream offsets out of order: file '" + hi
          + "' is listed before '" + lo + "'");
    }
    return scanOf(names.subList(from, to)).planInputPartitions();
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    List<String> names = committed();
    return scanOf(names.isEmpty() ? names : names.subList(0, 1)).createReaderFactory();
  }

  @Override
  public void commit(Offset end) {
    // files are the writers' to keep: nothing to clean up
  }

  @Override
  public void stop() {
    // no resources held between micro-batches
  }
}
