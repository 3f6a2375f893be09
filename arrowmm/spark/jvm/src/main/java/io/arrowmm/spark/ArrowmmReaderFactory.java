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

  ArrowmmReaderFactory(ColumnSpec[] fileColumns, int[] selected) {
    this.fileColumns = fileColumns;
    this.selected = selected;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    return new ArrowmmBatchReader((ArrowmmPartition) partition, fileColumns, selected);
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException("arrowmm_jvm reads columnar batches only");
  }
}
