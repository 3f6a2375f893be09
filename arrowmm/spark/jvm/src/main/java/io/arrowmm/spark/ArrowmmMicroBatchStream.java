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
 * <p>An offset is {@code {"last": name, "order": "arrival"}}: every committed file up to and
 * including {@code name} in arrival order has been read ({@code {"last": name}}, the offsets of
 * the Python source before this rule: every file whose name sorts at or before it).  Only committed files are seen: a directory with a commit log (or a
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
    if (!Storage.allLocal(paths)) {
      throw new ArrowmmException("a streaming read (spark.readStream) serves local directories "
          + "only for now, not " + paths + "; batch reads and writes serve every Hadoop "
          + "filesystem");
    }
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

  /** What offsets of the arrival rule carry (arrowmm/spark/files.py ARRIVAL). */
  static final String ARRIVAL = "arrival";

  /** The offset: the name of the last file read ("" before the first), and whether it counts
   * in arrival order (else by name: older offsets of the Python source). */
  static final class FileOffset extends Offset {
    final String last;
    final boolean arrival;

    FileOffset(String last, boolean arrival) {
      this.last = last;
      this.arrival = arrival;
    }

    @Override
    public String json() {
      var node = JSON.createObjectNode().put("last", last);
      if (arrival) {
        node.put("order", ARRIVAL);
      }
      return node.toString();
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

  /** For each of {@code names}, whether {@code offset} counts it as read (as
   * arrowmm/spark/files.py {@code seen_by}). */
  private boolean[] seen(List<String> names, FileOffset offset, boolean ordered) {
    boolean[] out = new boolean[names.size()];
    if (offset == null || offset.last.isEmpty()) {
      return out;
    }
    if (!ordered || !offset.arrival) {  // name order: files sorting at or before the name
      for (int i = 0; i < out.length; i++) {
        out[i] = names.get(i).compareTo(offset.last) <= 0;
      }
      return out;
    }
    int at = names.indexOf(offset.last);
    if (at < 0) {
      throw new ArrowmmException(directory + ": the stream has read up to file '" + offset.last
          + "', which the directory no longer lists (an overwrite or a deletion replaced it); a "
          + "streaming read follows a directory that jobs only append to. Start the query with "
          + "a new checkpoint to read the directory again from its start");
    }
    for (int i = 0; i <= at; i++) {
      out[i] = true;
    }
    return out;
  }

  /** The committed files in arrival order, and whether that is commit order. */
  private List<String> arrivalOrder(boolean ordered) {
    List<String> names = committed();
    if (!ordered) {
      names.sort(null);
    }
    return names;
  }

  @Override
  public Offset initialOffset() {
    return new FileOffset("", false);
  }

  @Override
  public Offset deserializeOffset(String json) {
    try {
      JsonNode node = JSON.readTree(json);
      if (node != null && node.path("last").isTextual()) {
        return new FileOffset(node.get("last").asText(),
            ARRIVAL.equals(node.path("order").asText(null)));
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
    List<String> names = arrivalOrder(hasManifest());
    availableNow = names.isEmpty() ? new FileOffset("", false)
        : new FileOffset(names.get(names.size() - 1), true);
  }

  @Override
  public Offset latestOffset(Offset startOffset, ReadLimit limit) {
    FileOffset start = startOffset == null ? new FileOffset("", false) : (FileOffset) startOffset;
    boolean ordered = hasManifest();
    List<String> names = arrivalOrder(ordered);
    boolean[] done = seen(names, start, ordered);
    boolean[] cap = availableNow == null ? null : seen(names, availableNow, ordered);
    int max = Integer.MAX_VALUE;
    if (limit instanceof ReadMaxFiles) {
      max = ((ReadMaxFiles) limit).maxFiles();
    } else if (!(limit instanceof ReadAllAvailable)) {
      throw new ArrowmmException("read limit " + limit + " is not supported (maxFilesPerTrigger "
          + "is)");
    }
    int lastNew = -1;
    int taken = 0;
    for (int i = 0; i < names.size() && taken < max; i++) {
      if (!done[i] && (cap == null || cap[i])) {
        lastNew = i;
        taken++;
      }
    }
    // the end offset counts every file up to its own in arrival order as read: after an offset
    // of the name rule, files it read may come later in that order than the new ones, so the
    // end reaches the last of them too (as arrowmm/spark/source.py does)
    int top = lastNew;
    for (int i = 0; i < done.length; i++) {
      if (done[i]) {
        top = Math.max(top, i);
      }
    }
    return top < 0 ? start : new FileOffset(names.get(top), true);
  }

  @Override
  public Offset reportLatestOffset() {
    List<String> names = arrivalOrder(hasManifest());
    return names.isEmpty() ? null : new FileOffset(names.get(names.size() - 1), true);
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
    boolean ordered = hasManifest();
    List<String> names = arrivalOrder(ordered);
    boolean[] before = seen(names, (FileOffset) start, ordered);
    boolean[] after = seen(names, (FileOffset) end, ordered);
    List<String> chosen = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      if (after[i] && !before[i]) {
        chosen.add(names.get(i));
      }
    }
    if (chosen.isEmpty()) {
      return new InputPartition[0];
    }
    return scanOf(chosen).planInputPartitions();
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
