package io.arrowmm.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A scan of the files' selected columns.  Planning reads every file's footer (its schema must be
 * the table's) and cuts the record batches into input partitions by bytes, as Spark's file
 * sources cut files: a partition holds about {@code spark.sql.files.maxPartitionBytes} (or the
 * option {@code maxPartitionBytes}) or less, less when that would leave cores idle (a scan of
 * more than that per core is cut into a multiple of the cores, of even bytes, so the last wave
 * of tasks keeps every core busy), so big files split
 * at batch boundaries and small files pack together, each counting {@code
 * spark.sql.files.openCostInBytes} (or the option {@code openCostInBytes}) extra.  Footers
 * are read {@code planningThreads} (an option, default {@link FooterCache#PLANNING_THREADS})
 * at a time: on HDFS or an object store each read waits a round trip.
 *
 * <p>Before cutting, planning drops the batches that the footer statistics show no row of can
 * pass the pushed filters ({@link StatisticsFilter}), and with a pushed limit keeps only the
 * first batches that hold that many rows.  Statistics that would skip a batch or count rows
 * are first checked to be the file's own ({@link FileFooter#statistics()}: one read of record
 * batch 0's header per file, only for such files); a file whose are not is read whole.  Both only drop work: Spark still evaluates every
 * filter and the limit on what is read.
 */
final class ArrowmmScan implements Scan, Batch, SupportsReportStatistics {
  private final StructType schema;
  private final StructType required;
  private final CaseInsensitiveStringMap options;
  private final Filter[] filters;
  private final int limit;
  private List<FileFooter> footers;
  /** The session's Hadoop configuration for the tasks, when a file is not local. */
  private ShippedConfiguration hadoopConf;
  /** Per file (as {@link #footers}): which batches are read. */
  private List<boolean[]> kept;

  ArrowmmScan(StructType schema, StructType required, CaseInsensitiveStringMap options,
      Filter[] filters, int limit) {
    this.schema = schema;
    this.required = required;
    this.options = options;
    this.filters = filters;
    this.limit = limit;
  }

  /** The filters statistics may judge, judged by Spark types (what {@code explain} shows as
   * pushed; they are all also evaluated by Spark after the scan). */
  static Filter[] usableFilters(StructType schema, Filter[] filters) {
    List<Filter> out = new ArrayList<>();
    for (Filter f : filters) {
      boolean ok = f.references().length > 0;
      for (String a : f.references()) {
        String name = StatisticsFilter.topLevelColumn(a);  // a nested field is never judged
        DataType t = name != null && schema.getFieldIndex(name).isDefined()
            ? schema.apply(name).dataType() : null;
        ok &= t != null && !(t instanceof StructType) && !(t instanceof ArrayType)
            && !(t instanceof MapType) && !t.equals(DataTypes.NullType);
      }
      if (ok) {
        out.add(f);
      }
    }
    return out.toArray(new Filter[0]);
  }

  /** Which batches of each file are read (statistics and limit applied). */
  private synchronized List<boolean[]> kept() {
    if (kept != null) {
      return kept;
    }
    List<boolean[]> out = new ArrayList<>();
    long rows = 0;
    boolean counting = limit >= 0;
    for (FileFooter f : footers()) {
      boolean[] keep = new boolean[f.numBatches()];
      Arrays.fill(keep, true);
      Map<String, ColumnSpec> columns = new HashMap<>();
      for (ColumnSpec c : f.columns) {
        columns.put(c.name, c);
      }
      BatchStatistics claimed = f.claimedStatistics();
      boolean skips = false;
      if (claimed != null) {
        for (Filter flt : filters) {
          if (!StatisticsFilter.usable(flt, columns)) {
            continue;
          }
          for (int i = 0; i < keep.length; i++) {
            if (keep[i] && StatisticsFilter.verdict(flt, columns, claimed, i)
                == StatisticsFilter.NONE) {
              keep[i] = false;
              skips = true;
            }
          }
        }
      }
      if (skips && f.statistics() == null) {  // not this file's (damaged, or copied): read all
        Arrays.fill(keep, true);
      }
      if (counting) {
        long[] n = f.batchRows();
        for (int i = 0; i < keep.length; i++) {
          if (rows >= limit) {
            keep[i] = false;
          } else if (keep[i]) {
            if (n == null) {
              counting = false;  // rows unknown: read everything from here on
              break;
            }
            rows += n[i];
          }
        }
      }
      out.add(keep);
    }
    kept = out;
    return kept;
  }

  @Override
  public StructType readSchema() {
    return required;
  }

  @Override
  public String description() {
    return "arrowmm (JVM) " + DataFiles.loadPaths(options) + " columns " + required.simpleString()
        + (filters.length > 0 ? " statistics filters " + Arrays.toString(filters) : "")
        + (limit >= 0 ? " limit " + limit : "");
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  /** {@code spark.readStream}: the directory's files as they are committed. */
  @Override
  public org.apache.spark.sql.connector.read.streaming.MicroBatchStream toMicroBatchStream(
      String checkpointLocation) {
    return new ArrowmmMicroBatchStream(schema, options);
  }

  @Override
  public ColumnarSupportMode columnarSupportMode() {
    return ColumnarSupportMode.SUPPORTED;
  }

  private synchronized List<FileFooter> footers() {
    if (footers == null) {
      List<FileFooter> out = new ArrayList<>();
      FileFooter first = null;
      org.apache.hadoop.conf.Configuration conf = PathResolver.hadoopConf(options);
      List<String> paths = DataFiles.loadPaths(options);
      Map<String, Storage.Stat> files = ArrowmmTable.inCatalog(options) && absent(paths, conf)
          ? Map.of() : DataFiles.resolve(paths, conf);
      if (!Storage.allLocal(files.keySet())) {
        hadoopConf = new ShippedConfiguration(conf);
      }
      int threads = options.containsKey("planningThreads")
          ? Integer.parseInt(options.get("planningThreads")) : FooterCache.PLANNING_THREADS;
      if (threads < 1) {
        throw new ArrowmmException("option planningThreads must be 1 or more, not " + threads);
      }
      for (FileFooter f : FooterCache.readAll(files, conf, threads)) {
        String path = f.path;
        StructType s = ColumnSpec.sparkSchema(f.columns);
        if (first == null) {
          checkTableColumns(path, s, schema);
        } else {
          StructType firstSchema = ColumnSpec.sparkSchema(first.columns);
          String difference = ColumnSpec.difference(s, "this file", firstSchema, "that one");
          if (difference != null) {
            throw new ArrowmmException(path + ": its schema " + s.simpleString()
                + " differs from that of " + first.path + ", " + firstSchema.simpleString()
                + ": " + difference);
          }
        }
        if (first == null) {
          first = f;
        }
        out.add(f);
      }
      footers = out;
    }
    return footers;
  }

  /** Whether a catalog table's location is not there yet (a table created with a LOCATION
   * before its first INSERT: no rows, as Spark's file source tables read). */
  private static boolean absent(List<String> paths,
      org.apache.hadoop.conf.Configuration conf) {
    try {
      return paths.size() == 1 && Storage.of(paths.get(0), conf).stat(paths.get(0)) == null;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(paths.get(0) + ": " + e, e);
    }
  }

  /** The table's columns (the schema read when the DataFrame was made, or one given with
   * {@code .schema(...)}: columns selected by name, in its order) must be the file's, of the
   * same types: the connector reads each column as its own type and casts nothing. */
  private static void checkTableColumns(String path, StructType file, StructType table) {
    for (StructField want : table.fields()) {
      StructField have = null;
      for (StructField f : file.fields()) {
        if (f.name().equals(want.name())) {
          have = f;
          break;
        }
      }
      if (have == null) {
        throw new ArrowmmException(path + ": its schema " + file.simpleString() + " has no "
            + "column '" + want.name() + "' of the table's schema " + table.simpleString()
            + " (read when the DataFrame was made, or given with .schema())");
      }
      if (!have.dataType().equals(want.dataType())) {
        throw new ArrowmmException(path + ": column '" + want.name() + "' is "
            + have.dataType().simpleString() + " in the file and "
            + want.dataType().simpleString() + " in the table's schema " + table.simpleString()
            + "; the JVM connector reads columns as their own types (cast them in Spark, or "
            + "read with format('arrowmm_python'), which casts to a given schema)");
      }
    }
  }

  @Override
  public InputPartition[] planInputPartitions() {
    List<FileFooter> files = footers();
    List<boolean[]> keep = kept();
    long openCost = options.containsKey("openCostInBytes")
        ? JavaUtils.byteStringAsBytes(options.get("openCostInBytes"))
        : conf("spark.sql.files.openCostInBytes", 4L << 20);
    long maxBytes = options.containsKey("maxPartitionBytes")
        ? JavaUtils.byteStringAsBytes(options.get("maxPartitionBytes"))
        : conf("spark.sql.files.maxPartitionBytes", 128L << 20);
    long total = 0;
    for (int j = 0; j < files.size(); j++) {
      FileFooter f = files.get(j);
      total += openCost;
      for (int i = 0; i < f.numBatches(); i++) {
        total += keep.get(j)[i] ? f.batchBytes(i) : 0;
      }
    }
    int cores = parallelism();
    long split = Math.max(1, Math.min(maxBytes, Math.max(openCost, total / cores)));
    // A scan that maxBytes cuts into more pieces than there are cores is cut into a multiple of
    // the cores, of even bytes: 5 pieces on 2 cores run in 3 waves, the last on one core (a
    // sixth of the time with a core idle); 6 even ones keep both busy to the end.  Each batch
    // goes to the piece its middle byte falls in, so pieces hold whole batches in file order.
    long pieces = maxBytes > 0 ? (total + maxBytes - 1) / maxBytes : 0;
    long even = pieces > cores ? (pieces + cores - 1) / cores * cores : 0;
    long position = 0;  // bytes before the batch (opening costs included), for even pieces
    long piece = 0;
    List<InputPartition> parts = new ArrayList<>();
    List<ArrowmmPartition.Range> current = new ArrayList<>();
    long bytes = 0;
    for (int j = 0; j < files.size(); j++) {
      FileFooter f = files.get(j);
      boolean[] k = keep.get(j);
      int start = -1;  // the first batch of the run being gathered, -1: none
      boolean opened = false;
      for (int i = 0; i <= f.numBatches(); i++) {
        if (i == f.numBatches() || !k[i]) {  // a run of kept batches ends
          if (start >= 0) {
            current.add(new ArrowmmPartition.Range(f, start, i));
            start = -1;
          }
          continue;
        }
        if (!opened) {
          bytes += openCost;
          position += openCost;
          opened = true;
        }
        long b = f.batchBytes(i);
        long target = even > 0 ? (long) ((position + b / 2.0) * even / total) : 0;
        boolean full = even > 0 ? target > piece : bytes + b > split;
        piece = Math.max(piece, target);
        position += b;
        if (full && (start >= 0 || !current.isEmpty())) {
          if (start >= 0) {
            current.add(new ArrowmmPartition.Range(f, start, i));
          }
          parts.add(new ArrowmmPartition(current));
          current = new ArrayList<>();
          start = -1;
          bytes = 0;
        }
        if (start < 0) {
          start = i;
        }
        bytes += b;
      }
    }
    if (!current.isEmpty()) {
      parts.add(new ArrowmmPartition(current));
    }
    return parts.toArray(new InputPartition[0]);
  }

  private static long conf(String key, long fallback) {
    try {
      String v = SparkSession.active().conf().get(key, null);
      return v == null ? fallback : JavaUtils.byteStringAsBytes(v);
    } catch (RuntimeException e) {
      return fallback;
    }
  }

  private static int parallelism() {
    try {
      String v = SparkSession.active().conf().get("spark.sql.files.minPartitionNum", null);
      if (v != null) {
        return Math.max(1, Integer.parseInt(v));
      }
      return Math.max(1, SparkSession.active().sparkContext().defaultParallelism());
    } catch (RuntimeException e) {
      return 1;
    }
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    List<FileFooter> files = footers();
    List<ColumnSpec> all = files.isEmpty() ? null : files.get(0).columns;
    StructField[] want = required.fields();
    int[] indexes = new int[want.length];
    ColumnSpec[] specs = new ColumnSpec[want.length];
    for (int k = 0; k < want.length; k++) {
      indexes[k] = -1;
      for (int i = 0; all != null && i < all.size(); i++) {
        if (all.get(i).name.equals(want[k].name())) {
          indexes[k] = i;
          break;
        }
      }
      if (indexes[k] < 0 && all != null) {
        throw new ArrowmmException("column '" + want[k].name() + "' is not in the files");
      }
      specs[k] = all == null ? null : all.get(indexes[k]);
    }
    ColumnSpec[] fileColumns = all == null ? new ColumnSpec[0] : all.toArray(new ColumnSpec[0]);
    return new ArrowmmReaderFactory(fileColumns, indexes, options.get("batchLog"), hadoopConf);
  }

  /** Batches whose headers planning reads to count rows for the optimizer (beyond: no count). */
  static final int COUNT_ROWS_UP_TO = 10_000;

  @Override
  public Statistics estimateStatistics() {
    List<FileFooter> files = footers();
    List<boolean[]> keep = kept();
    long bytes = 0;
    long batches = 0;
    for (int j = 0; j < files.size(); j++) {
      for (int i = 0; i < files.get(j).numBatches(); i++) {
        if (keep.get(j)[i]) {
          batches++;
          bytes += files.get(j).batchBytes(i);
        }
      }
    }
    long rows = batches <= COUNT_ROWS_UP_TO ? 0 : -1;
    for (int j = 0; j < files.size() && rows >= 0; j++) {
      long[] n = files.get(j).batchRows();
      for (int i = 0; i < files.get(j).numBatches() && rows >= 0; i++) {
        if (keep.get(j)[i]) {
          rows = n == null ? -1 : rows + n[i];
        }
      }
    }
    if (limit >= 0 && rows > limit) {
      rows = limit;
    }
    final long size = bytes;
    final long numRows = rows;
    return new Statistics() {
      @Override
      public OptionalLong sizeInBytes() {
        return OptionalLong.of(size);
      }

      @Override
      public OptionalLong numRows() {
        return numRows < 0 ? OptionalLong.empty() : OptionalLong.of(numRows);
      }
    };
  }
}
