package io.arrowmm.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A batch write into one directory: each task writes one IPC file ({@link ArrowmmDataWriter});
 * the job commits them with {@link CommitLog} (append, or overwrite after {@link #truncate()}).
 * The log is made before any task writes, so a task's file is never visible uncommitted.
 * Options: {@code compression} (none, lz4, zstd), {@code maxRecordsPerBatch} (rows per record
 * batch, default 131072), {@code maxBytesPerBatch} (string and binary bytes per record batch,
 * default 64m).  As a Structured Streaming sink each micro-batch commits like an
 * append, keyed by the streaming query's id and the batch id so a replay is committed once.
 */
final class ArrowmmWrite implements WriteBuilder, SupportsTruncate, Write, BatchWrite,
    StreamingWrite {
  private final String dir;
  private final Storage storage;
  /** The session's Hadoop configuration for the tasks (null when the directory is local). */
  private final org.apache.spark.util.SerializableConfiguration conf;
  /** Whether job setup published the directory's version 0 / found no directory. */
  private boolean madeLog;
  private boolean madeDir;
  private final StructType schema;
  private final String compression;
  private final int batchRows;
  private final long batchBytes;
  private final String job = UUID.randomUUID().toString().replace("-", "");
  private final String queryId;
  private boolean overwrite;

  ArrowmmWrite(Map<String, String> properties, LogicalWriteInfo info) {
    List<String> paths = DataFiles.savePaths(properties);
    if (paths.size() != 1) {
      throw new ArrowmmException("a write needs one directory path, got " + paths);
    }
    this.dir = paths.get(0);
    org.apache.hadoop.conf.Configuration hadoop = PathResolver.hadoopConf(properties);
    this.storage = Storage.of(dir, hadoop);
    this.conf = storage instanceof LocalStorage ? null
        : new org.apache.spark.util.SerializableConfiguration(hadoop);
    try {
      storage.commitPrimitive(dir);  // a store that cannot commit atomically: refused here
    } catch (IOException e) {
      throw new UncheckedIOException(dir + ": " + e, e);
    }
    this.schema = info.schema();
    // names equal under the session's case rule (at any depth) are refused, as Parquet's
    // writes refuse them: in a case-insensitive session neither would be readable by name
    org.apache.spark.sql.util.SchemaUtils.checkSchemaColumnNameDuplication(schema,
        org.apache.spark.sql.internal.SQLConf.get().caseSensitiveAnalysis());
    this.queryId = info.queryId();
    Map<String, String> o = info.options();
    this.compression = o.getOrDefault("compression", "none");
    ArrowmmDataWriter.codec(compression);  // a bad name fails before any task runs
    String rows = o.get("maxRecordsPerBatch");
    this.batchRows = rows == null ? ArrowmmDataWriter.DEFAULT_BATCH_ROWS : Integer.parseInt(rows);
    String bytes = o.get("maxBytesPerBatch");
    this.batchBytes = bytes == null ? ArrowmmDataWriter.BATCH_BYTES
        : org.apache.spark.network.util.JavaUtils.byteStringAsBytes(bytes);
    if (batchRows < 1 || batchBytes < 1) {
      throw new ArrowmmException("options maxRecordsPerBatch (" + rows + ") and "
          + "maxBytesPerBatch (" + bytes + ") must be positive");
    }
    for (StructField f : schema.fields()) {
      ArrowmmDataWriter.arrowType(f);  // an unwritable column fails before any task runs
    }
  }

  @Override
  public WriteBuilder truncate() {
    overwrite = true;
    return this;
  }

  @Override
  public Write build() {
    return this;
  }

  @Override
  public BatchWrite toBatch() {
    try {
      madeDir = storage.stat(dir) == null;
      // §5.1: from here on, files appear only through the log
      madeLog = CommitLog.ensureLog(storage, dir, job);
      if (!overwrite) {
        checkAppendSchema();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(dir + ": " + e, e);
    }
    return this;
  }

  @Override
  public StreamingWrite toStreaming() {
    if (overwrite) {
      throw new ArrowmmException(dir + ": the streaming sink appends (outputMode append)");
    }
    toBatch();  // the log before any task writes; an append keeps the directory's schema
    return this;
  }

  @Override
  public boolean useCommitCoordinator() {
    return true;  // one committed attempt per task, for batch and streaming writes alike
  }

  @Override
  public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo info) {
    return new Factory(dir, conf, job, schema, compression, batchRows, batchBytes);
  }

  @Override
  public void commit(long epochId, WriterCommitMessage[] messages) {
    if (queryId == null || queryId.isEmpty()) {
      throw new ArrowmmException(dir + ": cannot tell which streaming query wrote micro-batch "
          + epochId + " (Spark gave no query id)");
    }
    try {
      CommitLog.commit(storage, dir, written(messages), job, false, queryId, epochId,
          this::checkAppendOnto);
      madeLog = false;
      CommitLog.abort(storage, dir, job);
    } catch (IOException e) {
      throw new UncheckedIOException(dir + ": committing micro-batch " + epochId + ": " + e, e);
    }
  }

  @Override
  public void abort(long epochId, WriterCommitMessage[] messages) {
    abort(messages);
  }

  private static List<CommitLog.Written> written(WriterCommitMessage[] messages) {
    List<CommitLog.Written> out = new ArrayList<>();
    for (WriterCommitMessage m : messages) {
      if (m != null) {
        out.add(CommitLog.Written.of(m));
      }
    }
    return out;
  }

  /** An append must keep the directory's schema (its readers refuse files that differ);
   * nullability may differ at any level (a directory's columns read as nullable). */
  private void checkAppendSchema() {
    List<String> files = DataFiles.filesIn(storage, dir);
    if (!files.isEmpty()) {
      checkAppend(files.get(0), "");
    }
  }

  /** At commit: an overwrite of another schema may have committed since planning. */
  private void checkAppendOnto(String file) {
    checkAppend(file, " (an overwrite committed them while this job ran; nothing of it was "
        + "published)");
  }

  private void checkAppend(String file, String when) {
    FileFooter first = FileFooter.read(storage, file);
    StructType have = ColumnSpec.sparkSchema(first.columns);
    String difference = ColumnSpec.difference(schema, "the rows", have, "the files");
    if (difference != null) {
      throw new ArrowmmException(dir + ": cannot append rows of schema " + schema.simpleString()
          + " to a directory whose files have " + have.simpleString() + " (" + first.path
          + ")" + when + ": " + difference + "; write with mode('overwrite') to replace them");
    }
  }

  @Override
  public String description() {
    return "arrowmm (JVM) write " + dir + (overwrite ? " (overwrite)" : " (append)");
  }

  @Override
  public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
    return new Factory(dir, conf, job, schema, compression, batchRows, batchBytes);
  }

  @Override
  public void commit(WriterCommitMessage[] messages) {
    try {
      CommitLog.commit(storage, dir, written(messages), job, overwrite, null, -1,
          this::checkAppendOnto);
      madeLog = false;
      // temporaries and files of failed or speculative task attempts (listed files stay)
      CommitLog.abort(storage, dir, job);
    } catch (IOException e) {
      throw new UncheckedIOException(dir + ": committing job " + job + ": " + e, e);
    }
  }

  @Override
  public void abort(WriterCommitMessage[] messages) {
    try {
      CommitLog.abort(storage, dir, job);
      if (madeLog) {  // a failed first write leaves the path as it found it
        CommitLog.undoFirstWrite(storage, dir, job, madeDir);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(dir + ": aborting job " + job + ": " + e, e);
    }
  }

  /** Sent to the executors: makes each task's writer. */
  static final class Factory implements DataWriterFactory, StreamingDataWriterFactory {
    private static final long serialVersionUID = 1L;
    private final String dir;
    private final org.apache.spark.util.SerializableConfiguration conf;
    private final String job;
    private final StructType schema;
    private final String compression;
    private final int batchRows;
    private final long batchBytes;

    Factory(String dir, org.apache.spark.util.SerializableConfiguration conf, String job,
        StructType schema, String compression, int batchRows, long batchBytes) {
      this.batchBytes = batchBytes;
      this.dir = dir;
      this.conf = conf;
      this.job = job;
      this.schema = schema;
      this.compression = compression;
      this.batchRows = batchRows;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return writer(partitionId, null, -1);
    }

    private DataWriter<InternalRow> writer(int partitionId, String query, long epochId) {
      try {
        Storage st = Storage.of(dir, conf == null ? null : conf.value());
        return new ArrowmmDataWriter(st, dir, job, schema, partitionId, compression,
            batchRows, batchBytes, query, epochId);
      } catch (IOException e) {
        throw new UncheckedIOException(dir + ": " + e, e);
      }
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long epochId) {
      return writer(partitionId, "stream", epochId);
    }
  }
}
