package io.arrowmm.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Makes each task's reader: columnar only (Spark converts to rows where it needs rows). */
final class ArrowmmReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;
  private final ColumnSpec[] fileColumns;
  private final int[] selected;
  /** The {@code batchLog} option: a file each task appends the batches it read to, or null. */
  private final String batchLog;

  /** The session's Hadoop configuration (null when every file is local): executors reach
   * Hadoop filesystems with the driver's settings ({@code spark.hadoop.*}, the options),
   * built once per executor ({@link ShippedConfiguration}). */
  private final ShippedConfiguration conf;

  ArrowmmReaderFactory(ColumnSpec[] fileColumns, int[] selected, String batchLog,
      ShippedConfiguration conf) {
    this.conf = conf;
    this.fileColumns = fileColumns;
    this.selected = selected;
    this.batchLog = batchLog;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    return new ArrowmmBatchReader((ArrowmmPartition) partition, fileColumns, selected, batchLog,
        conf == null ? null : conf.value());
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException("arrowmm's JVM connector reads columnar batches only");
  }
}
