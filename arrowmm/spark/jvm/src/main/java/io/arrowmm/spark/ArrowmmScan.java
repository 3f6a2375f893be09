package io.arrowmm.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A scan of the files' selected columns.  Planning reads every file's footer (its schema must be
 * the table's) and cuts the record batches into input partitions by bytes, as Spark's file
 * sources cut files: a partition holds at most {@code spark.sql.files.maxPartitionBytes} (or the
 * option {@code maxPartitionBytes}), less when that would leave cores idle, so big files split
 * at batch boundaries and small files pack together, each counting {@code
 * spark.sql.files.openCostInBytes} (or the option {@code openCostInBytes}) extra.
 */
final class ArrowmmScan implements Scan, Batch, SupportsReportStatistics {
  private final StructType schema;
  private final StructType required;
  private final CaseInsensitiveStringMap options;
  private List<FileFooter> footers;

  ArrowmmScan(StructType schema, StructType required, CaseInsensitiveStringMap options) {
    this.schema = schema;
    this.required = required;
    this.options = options;
  }

  @Override
  public StructType readSchema() {
    return required;
  }

  @Override
  public String description() {
    return "arrowmm_jvm " + DataFiles.loadPaths(options) + " columns " + required.simpleString();
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public ColumnarSupportMode columnarSupportMode() {
    return ColumnarSupportMode.SUPPORTED;
  }

  private synchronized List<FileFooter> footers() {
    if (footers == null) {
      List<FileFooter> out = new ArrayList<>();
      FileFooter first = null;
      for (String path : DataFiles.resolve(DataFiles.loadPaths(options))) {
        FileFooter f = FileFooter.read(path);
        StructType s = ColumnSpec.sparkSchema(f.columns);
        if (!sameColumns(s, schema)) {
          String other = first == null ? "the table's schema (read when the DataFrame was made)"
              : "that of " + first.path;
          StructType expected = first == null ? schema : ColumnSpec.sparkSchema(first.columns);
          throw new ArrowmmException(path + ": its schema " + s.simpleString()
              + " differs from " + other + ": " + expected.simpleString());
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

  private static boolean sameColumns(StructType a, StructType b) {
    if (a.fields().length != b.fields().length) {
      return false;
    }
    for (int i = 0; i < a.fields().length; i++) {
      StructField x = a.fields()[i];
      StructField y = b.fields()[i];
      if (!x.name().equals(y.name()) || !x.dataType().equals(y.dataType())) {
        return false;
      }
    }
    return true;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    List<FileFooter> files = footers();
    long openCost = options.containsKey("openCostInBytes")
        ? JavaUtils.byteStringAsBytes(options.get("openCostInBytes"))
        : conf("spark.sql.files.openCostInBytes", 4L << 20);
    long maxBytes = options.containsKey("maxPartitionBytes")
        ? JavaUtils.byteStringAsBytes(options.get("maxPartitionBytes"))
        : conf("spark.sql.files.maxPartitionBytes", 128L << 20);
    long total = 0;
    for (FileFooter f : files) {
      total += openCost;
      for (int i = 0; i < f.numBatches(); i++) {
        total += f.batchBytes(i);
      }
    }
    long split = Math.max(1, Math.min(maxBytes, Math.max(openCost, total / parallelism())));
    List<InputPartition> parts = new ArrayList<>();
    List<ArrowmmPartition.Range> current = new ArrayList<>();
    long bytes = 0;
    for (FileFooter f : files) {
      int start = 0;
      bytes += openCost;
      for (int i = 0; i < f.numBatches(); i++) {
        long b = f.batchBytes(i);
        if (bytes + b > split && (i > start || !current.isEmpty())) {
          if (i > start) {
            current.add(new ArrowmmPartition.Range(f, start, i));
          }
          parts.add(new ArrowmmPartition(current));
          current = new ArrayList<>();
          start = i;
          bytes = 0;
        }
        bytes += b;
      }
      if (f.numBatches() > start) {
        current.add(new ArrowmmPartition.Range(f, start, f.numBatches()));
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
    return new ArrowmmReaderFactory(fileColumns, indexes);
  }

  /** Batches whose headers planning reads to count rows for the optimizer (beyond: no count). */
  static final int COUNT_ROWS_UP_TO = 10_000;

  @Override
  public Statistics estimateStatistics() {
    long bytes = 0;
    long batches = 0;
    for (FileFooter f : footers()) {
      batches += f.numBatches();
      for (int i = 0; i < f.numBatches(); i++) {
        bytes += f.batchBytes(i);
      }
    }
    long rows = batches <= COUNT_ROWS_UP_TO ? 0 : -1;
    for (FileFooter f : footers()) {
      if (rows < 0) {
        break;
      }
      long n = f.countRows();
      rows = n < 0 ? -1 : rows + n;
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
