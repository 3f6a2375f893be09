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

  ArrowmmReaderFactory(ColumnSpec[] fileColumns, int[] selected, String batchLog) {
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
    return new ArrowmmBatchReader((ArrowmmPartition) partition, fileColumns, selected, batchLog);
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException("arrowmm's JVM connector reads columnar batches only");
  }
}
