package io.arrowmm.spark;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One task's writer: rows go into Arrow vectors, every {@code maxRecordsPerBatch} rows (or
 * {@code maxBytesPerBatch} of string and binary values, default 64 MiB) become a record batch of an Arrow IPC file (Arrow Java's writer: 8-byte
 * aligned buffers, optionally LZ4_FRAME or ZSTD bodies), with each batch's statistics gathered
 * while its values are set and stored in the footer as {@code arrowmm/ipc/core/statistics.py} lays
 * them out (version 3: with their digest, an id that record batch 0 carries, each
 * batch's footer Block, {@link StampedFileWriter}, and the types of the columns described).  The file is written under a hidden temporary name, fsynced, and named by the job's
 * commit ({@link CommitLog}); on a store without a cheap atomic rename ({@link HadoopStorage}:
 * object stores) under its final, attempt-unique name, invisible until a version lists it.
 */
final class ArrowmmDataWriter implements DataWriter<InternalRow> {
  static final int DEFAULT_BATCH_ROWS = 131_072;
  static final long BATCH_BYTES = 64L << 20;
  static final int MAX_BOUND_BYTES = 256;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Storage storage;
  private final String dir;
  /** The name the task writes: a hidden temporary renamed at commit where renames are cheap
   * and atomic, else the final, attempt-unique name (null tmpName in the message). */
  private final String writtenName;
  private final boolean direct;
  private final String finalName;
  private final int partition;
  private final int batchRows;
  private final long batchBytes;
  private final BufferAllocator allocator;
  private final VectorSchemaRoot root;
  private final Column[] columns;
  private final Storage.Output output;
  private final StampedFileWriter writer;
  /** The id binding the footer's statistics to this file: record batch 0 carries it. */
  private final String statisticsId = BatchStatistics.newId();
  private final ArrayNode batchStats = JSON.createArrayNode();
  private int n;
  /** Bytes of string and binary values in the batch being gathered. */
  private long varBytes;
  private long rows;
  private boolean done;

  ArrowmmDataWriter(Storage storage, String dir, String job, StructType schema, int partition,
      String compression, int batchRows, long batchBytes, String query, long epoch)
      throws IOException {
    this.batchBytes = batchBytes;
    this.storage = storage;
    this.dir = dir;
    int attempt = TaskContext.get() == null ? 0 : TaskContext.get().attemptNumber();
    this.direct = !storage.renamesTaskFiles();
    if (direct) {  // each attempt its own name: a speculative or retried one never collides
      this.finalName = CommitLog.finalName(String.format("part-%05d-%s-%d.arrow", partition,
          job, attempt), query, epoch);
      this.writtenName = finalName;
    } else {
      this.finalName = String.format("part-%05d-%s.arrow", partition, job);
      this.writtenName = ".arrowmm-" + job + "-part-" + partition + "-" + attempt + "-"
          + UUID.randomUUID().toString().substring(0, 8) + ".arrow";
    }
    this.partition = partition;
    this.batchRows = batchRows;
    this.allocator = new RootAllocator();
    List<Field> fields = new ArrayList<>();
    for (StructField f : schema.fields()) {
      fields.add(NestedWriter.field(f.name(), f.name(), f.dataType(), f.nullable()));
    }
    this.root = VectorSchemaRoot.create(new Schema(fields), allocator);
    this.columns = new Column[fields.size()];
    for (int i = 0; i < columns.length; i++) {
      columns[i] = new Column(schema.fields()[i], root.getVector(i));
    }
    this.output = storage.create(storage.child(dir, writtenName));
    CompressionUtil.CodecType codec = codec(compression);
    this.writer = new StampedFileWriter(root, output.channel(),
        Map.of(BatchStatistics.ID_KEY, statisticsId),
        codec == CompressionUtil.CodecType.NO_COMPRESSION ? NoCompressionCodec.Factory.INSTANCE
            : CommonsCompressionFactory.INSTANCE, codec);
    writer.start();
  }

  static CompressionUtil.CodecType codec(String name) {
    String c = name == null ? "none" : name.toLowerCase(java.util.Locale.ROOT);
    switch (c) {
      case "none": case "uncompressed": case "":
        return CompressionUtil.CodecType.NO_COMPRESSION;
      case "lz4": case "lz4_frame":
        return CompressionUtil.CodecType.LZ4_FRAME;
      case "zstd":
        return CompressionUtil.CodecType.ZSTD;
      default:
        throw new ArrowmmException("option compression: '" + name + "' is not one of none, lz4, "
            + "zstd");
    }
  }

  /** The Arrow type a Spark column is written as; a clear error for what is not written. */
  static ArrowType arrowType(StructField f) {
    DataType t = f.dataType();
    if (NestedWriter.isNested(t)) {  // checks every nested field's type
      return NestedWriter.field(f.name(), f.name(), t, f.nullable()).getType();
    } else if (t.equals(DataTypes.NullType)) {
      return ArrowType.Null.INSTANCE;
    } else if (t.equals(DataTypes.BooleanType)) {
      return ArrowType.Bool.INSTANCE;
    } else if (t.equals(DataTypes.ByteType)) {
      return new ArrowType.Int(8, true);
    } else if (t.equals(DataTypes.ShortType)) {
      return new ArrowType.Int(16, true);
    } else if (t.equals(DataTypes.IntegerType)) {
      return new ArrowType.Int(32, true);
    } else if (t.equals(DataTypes.LongType)) {
      return new ArrowType.Int(64, true);
    } else if (t.equals(DataTypes.FloatType)) {
      return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
    } else if (t.equals(DataTypes.DoubleType)) {
      return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
    } else if (t instanceof DecimalType) {
      DecimalType d = (DecimalType) t;
      return new ArrowType.Decimal(d.precision(), d.scale(), 128);
    } else if (t.equals(DataTypes.DateType)) {
      return new ArrowType.Date(DateUnit.DAY);
    } else if (t.equals(DataTypes.TimestampType)) {
      return new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC");
    } else if (t.equals(DataTypes.TimestampNTZType)) {
      return new ArrowType.Timestamp(TimeUnit.MICROSECOND, null);
    } else if (t instanceof org.apache.spark.sql.types.StringType) {
      return ArrowType.Utf8.INSTANCE;
    } else if (t.equals(DataTypes.BinaryType)) {
      return ArrowType.Binary.INSTANCE;
    }
    throw new ArrowmmException("column '" + f.name() + "': the JVM connector does not write "
        + t.simpleString() + " columns yet; the Python data source does: "
        + "df.write.format('arrowmm_python')");
  }

  @Override
  public void write(InternalRow row) throws IOException {
    try {
      for (int i = 0; i < columns.length; i++) {
        varBytes += columns[i].set(row, i, n);
      }
    } catch (Utf8.Invalid e) {
      throw new ArrowmmException("column '" + e.column + "': the string of row " + (rows + n)
          + " of task partition " + partition + " is not valid UTF-8: " + e.why
          + "; a Spark string is bytes (cast(binary as string) does not check them): write "
          + "the column as binary, or mend or drop such values first (make_valid_utf8, "
          + "is_valid_utf8)");
    }
    n++;
    if (n >= batchRows || varBytes >= batchBytes) {
      flush();
    }
  }

  private void flush() throws IOException {
    if (n == 0) {
      return;
    }
    root.setRowCount(n);
    writer.writeBatch();
    ObjectNode b = batchStats.addObject();
    b.put("rows", n);
    ObjectNode cs = b.putObject("columns");
    for (Column c : columns) {
      c.statistics(cs, n);
      c.reset();
    }
    rows += n;
    n = 0;
    varBytes = 0;
  }

  @Override
  public WriterCommitMessage commit() throws IOException {
    flush();
    writer.end(blocks -> BatchStatistics.footerEntries(statisticsId, root.getSchema(),
        batchStats, blocks));
    output.sync();
    close();
    return new CommitLog.Written(direct ? null : writtenName, finalName, rows).toMessage();
  }

  @Override
  public void abort() throws IOException {
    close();
    storage.delete(storage.child(dir, writtenName));
  }

  @Override
  public void close() throws IOException {
    if (done) {
      return;
    }
    done = true;
    try {
      writer.close();
      output.close();
    } finally {
      root.close();
      allocator.close();
    }
  }

  /** One column: sets values into its vector and keeps the batch's statistics. */
  private static final class Column {
    final String name;
    final DataType type;
    final FieldVector vector;
    final int precision;
    final int scale;
    /** The writer of a struct, array or map column's values (null for a flat column). */
    final NestedWriter nested;
    long nulls;
    boolean any;
    long lo;
    long hi;
    double dlo;
    double dhi;
    boolean nan;
    boolean anyNumber;
    BigInteger blo;
    BigInteger bhi;
    byte[] slo;
    byte[] shi;

    Column(StructField f, FieldVector vector) {
      this.name = f.name();
      this.type = f.dataType();
      this.vector = vector;
      this.precision = type instanceof DecimalType ? ((DecimalType) type).precision() : 0;
      this.scale = type instanceof DecimalType ? ((DecimalType) type).scale() : 0;
      this.nested = NestedWriter.isNested(type) ? NestedWriter.of(vector, type, name) : null;
      reset();
    }

    void reset() {
      vector.reset();
      nulls = 0;
      any = false;
      nan = false;
      anyNumber = false;
      blo = bhi = null;
      slo = shi = null;
    }

    private void track(long v) {
      if (!any) {
        lo = hi = v;
        any = true;
      } else if (v < lo) {
        lo = v;
      } else if (v > hi) {
        hi = v;
      }
    }

    private void trackDouble(double v) {
      if (Double.isNaN(v)) {
        nan = true;
        return;
      }
      if (!anyNumber) {
        dlo = dhi = v;
        anyNumber = true;
      } else if (v < dlo) {
        dlo = v;
      } else if (v > dhi) {
        dhi = v;
      }
    }

    private void trackBytes(byte[] b) {
      if (slo == null) {
        slo = shi = b;
      } else if (java.util.Arrays.compareUnsigned(b, slo) < 0) {
        slo = b;
      } else if (java.util.Arrays.compareUnsigned(b, shi) > 0) {
        shi = b;
      }
    }

    /** Set row {@code r}'s value of column {@code i} at index {@code at}; returns its bytes
     * beyond a fixed width (strings and binaries), to bound a batch's memory. */
    long set(InternalRow r, int i, int at) {
      if (nested != null) {
        return nested.set(r, i, at);
      }
      if (r.isNullAt(i)) {
        nulls++;
        vector.setNull(at);
        return 0;
      }
      if (vector instanceof Float8Vector) {
        double v = r.getDouble(i);
        ((Float8Vector) vector).setSafe(at, v);
        trackDouble(v);
      } else if (vector instanceof BigIntVector) {
        long v = r.getLong(i);
        ((BigIntVector) vector).setSafe(at, v);
        track(v);
      } else if (vector instanceof IntVector) {
        int v = r.getInt(i);
        ((IntVector) vector).setSafe(at, v);
        track(v);
      } else if (vector instanceof VarCharVector) {
        UTF8String s = r.getUTF8String(i);
        byte[] b = s.getBytes();
        Utf8.check(b, name);
        ((VarCharVector) vector).setSafe(at, b, 0, b.length);
        trackBytes(b);
        return b.length;
      } else if (vector instanceof VarBinaryVector) {
        byte[] b = r.getBinary(i);
        ((VarBinaryVector) vector).setSafe(at, b, 0, b.length);
        trackBytes(b);
        return b.length;
      } else if (vector instanceof Float4Vector) {
        float v = r.getFloat(i);
        ((Float4Vector) vector).setSafe(at, v);
        trackDouble(v);
      } else if (vector instanceof BitVector) {
        boolean v = r.getBoolean(i);
        ((BitVector) vector).setSafe(at, v ? 1 : 0);
        track(v ? 1 : 0);
      } else if (vector instanceof TinyIntVector) {
        byte v = r.getByte(i);
        ((TinyIntVector) vector).setSafe(at, v);
        track(v);
      } else if (vector instanceof SmallIntVector) {
        short v = r.getShort(i);
        ((SmallIntVector) vector).setSafe(at, v);
        track(v);
      } else if (vector instanceof DateDayVector) {
        int v = r.getInt(i);
        ((DateDayVector) vector).setSafe(at, v);
        track(v);
      } else if (vector instanceof TimeStampMicroTZVector) {
        long v = r.getLong(i);
        ((TimeStampMicroTZVector) vector).setSafe(at, v);
        track(v);
      } else if (vector instanceof TimeStampMicroVector) {
        long v = r.getLong(i);
        ((TimeStampMicroVector) vector).setSafe(at, v);
        track(v);
      } else if (vector instanceof DecimalVector) {
        org.apache.spark.sql.types.Decimal d = r.getDecimal(i, precision, scale);
        if (precision <= 18) {
          long u = d.toUnscaledLong();
          ((DecimalVector) vector).setSafe(at, u);
          track(u);
        } else {
          java.math.BigDecimal v = d.toJavaBigDecimal().setScale(scale);
          ((DecimalVector) vector).setSafe(at, v);
          BigInteger u = v.unscaledValue();
          if (blo == null || u.compareTo(blo) < 0) {
            blo = u;
          }
          if (bhi == null || u.compareTo(bhi) > 0) {
            bhi = u;
          }
        }
      } else if (vector instanceof org.apache.arrow.vector.NullVector) {
        return 0;  // only nulls (set above)
      } else {
        throw new ArrowmmException("column '" + name + "': no writer for " + vector);
      }
      return 0;
    }

    /** This batch's statistics of this column, as {@code arrowmm/ipc/core/statistics.py} writes. */
    void statistics(ObjectNode out, long rows) {
      if (nested != null) {
        return;  // top-level flat columns only, as arrowmm/ipc/core/statistics.py records
      }
      ObjectNode s = out.putObject(name);
      s.put("nulls", nulls);
      if (nulls == rows) {
        return;
      }
      if (vector instanceof Float8Vector || vector instanceof Float4Vector) {
        if (nan) {
          s.put("nan", true);
        }
        if (anyNumber) {
          putDouble(s, "min", dlo);
          putDouble(s, "max", dhi);
        }
      } else if (vector instanceof VarCharVector || vector instanceof VarBinaryVector) {
        boolean utf8 = vector instanceof VarCharVector;
        byte[] l = slo;
        if (l.length > MAX_BOUND_BYTES) {  // a prefix is still a lower bound
          int end = MAX_BOUND_BYTES;
          while (utf8 && end > 0 && (slo[end] & 0xC0) == 0x80) {
            end--;  // cut on a character boundary
          }
          l = java.util.Arrays.copyOf(slo, end);
        }
        putBound(s, "min", l, utf8);
        if (shi.length <= MAX_BOUND_BYTES) {
          putBound(s, "max", shi, utf8);
        }
      } else if (blo != null) {
        s.put("min", blo);
        s.put("max", bhi);
      } else if (any) {
        s.put("min", lo);
        s.put("max", hi);
      }
    }

    /** A string bound as text only when it decodes exactly (a U+FFFD in the place of bytes
     * that are not UTF-8 would sort elsewhere than the value), a binary one as hex. */
    private static void putBound(ObjectNode s, String key, byte[] bound, boolean utf8) {
      String text = utf8 ? Utf8.decodeExactly(bound) : hex(bound);
      if (text != null) {
        s.put(key, text);
      }
    }

    private static void putDouble(ObjectNode s, String key, double v) {
      if (Double.isInfinite(v)) {
        s.put(key, v > 0 ? "inf" : "-inf");
      } else {
        s.put(key, v);
      }
    }

    private static String hex(byte[] b) {
      StringBuilder sb = new StringBuilder(b.length * 2);
      for (byte x : b) {
        sb.append(Character.forDigit((x >> 4) & 15, 16)).append(Character.forDigit(x & 15, 16));
      }
      return sb.toString();
    }
  }
}
