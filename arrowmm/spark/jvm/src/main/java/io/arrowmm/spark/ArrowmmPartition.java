package io.arrowmm.spark;

import java.io.Serializable;
import java.util.List;

import org.apache.spark.sql.connector.read.InputPartition;

/** One task's work: consecutive record batches of one or more files (a few big or many small). */
final class ArrowmmPartition implements InputPartition {
  private static final long serialVersionUID = 1L;

  /** Record batches {@code [first, first + offsets.length)} of one file, from its footer. */
  static final class Range implements Serializable {
    private static final long serialVersionUID = 1L;
    final String path;
    final long fileSize;
    /** The file's version when planned (an object store's ETag, an HDFS inode id), or null. */
    final String version;
    final int first;
    final long[] offsets;
    final int[] metaLengths;
    final long[] bodyLengths;
    /** The file's dictionary batches (every range of the file needs all of them). */
    final long[] dictOffsets;
    final int[] dictMetaLengths;
    final long[] dictBodyLengths;
    /** A stream's dictionary batches apply from record batch {@code dictBefore[d]} on (a file's
     * all from the start), and a stream's may replace an earlier one of their id. */
    final int[] dictBefore;
    final boolean stream;
    /** The file's own columns: files with one Spark schema may differ in Arrow layout
     * (string and large_string, dictionary-encoded or not), so each is read by its own. */
    final ColumnSpec[] columns;

    Range(FileFooter f, int first, int stop) {
      this.path = f.path;
      this.fileSize = f.fileSize;
      this.version = f.version;
      this.first = first;
      this.offsets = java.util.Arrays.copyOfRange(f.offsets, first, stop);
      this.metaLengths = java.util.Arrays.copyOfRange(f.metaLengths, first, stop);
      this.bodyLengths = java.util.Arrays.copyOfRange(f.bodyLengths, first, stop);
      this.dictOffsets = f.dictOffsets;
      this.dictMetaLengths = f.dictMetaLengths;
      this.dictBodyLengths = f.dictBodyLengths;
      this.dictBefore = f.dictBefore;
      this.stream = f.stream;
      this.columns = f.columns.toArray(new ColumnSpec[0]);
    }
  }

  final Range[] ranges;

  ArrowmmPartition(List<Range> ranges) {
    this.ranges = ranges.toArray(new Range[0]);
  }
}
