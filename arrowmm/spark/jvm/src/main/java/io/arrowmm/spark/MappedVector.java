package io.arrowmm.spark;

import java.math.BigDecimal;
import java.math.BigInteger;

import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A column of one record batch, read in place from the mapped file (or from memory the task
 * owns, for a compressed buffer).  The reader checked every buffer against the message body
 * before making one, so each getter is a plain read at {@code address + width * rowId}; a
 * validity bit is read only when the column has nulls.  Valid until the reader's next batch.
 */
abstract class MappedVector extends ColumnVector {
  final int length;
  final int nullCount;
  /** Address of the validity bitmap; 0 when the column has no nulls or is all null. */
  final long validity;
  final boolean allNull;
  final long data;

  MappedVector(DataType type, int length, int nullCount, long validity, boolean allNull,
      long data) {
    super(type);
    this.length = length;
    this.nullCount = nullCount;
    this.validity = validity;
    this.allNull = allNull;
    this.data = data;
  }

  @Override
  public final void close() {}  // the reader owns the memory

  @Override
  public final boolean hasNull() {
    return nullCount > 0;
  }

  @Override
  public final int numNulls() {
    return nullCount;
  }

  @Override
  public final boolean isNullAt(int rowId) {
    if (validity == 0) {
      return allNull;
    }
    return (Platform.getByte(null, validity + (rowId >> 3)) & (1 << (rowId & 7))) == 0;
  }

  private UnsupportedOperationException wrong(String what) {
    return new UnsupportedOperationException(what + " of a " + dataType().simpleString()
        + " column");
  }

  @Override
  public boolean getBoolean(int rowId) {
    throw wrong("getBoolean");
  }

  @Override
  public byte getByte(int rowId) {
    throw wrong("getByte");
  }

  @Override
  public short getShort(int rowId) {
    throw wrong("getShort");
  }

  @Override
  public int getInt(int rowId) {
    throw wrong("getInt");
  }

  @Override
  public long getLong(int rowId) {
    throw wrong("getLong");
  }

  @Override
  public float getFloat(int rowId) {
    throw wrong("getFloat");
  }

  @Override
  public double getDouble(int rowId) {
    throw wrong("getDouble");
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    throw wrong("getArray");
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    throw wrong("getMap");
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    throw wrong("getDecimal");
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    throw wrong("getUTF8String");
  }

  @Override
  public byte[] getBinary(int rowId) {
    throw wrong("getBinary");
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    throw wrong("getChild");
  }

  static final class Nulls extends MappedVector {
    Nulls(DataType type, int length) {
      super(type, length, length, 0, true, 0);
    }
  }

  static final class Bools extends MappedVector {
    Bools(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public boolean getBoolean(int i) {
      return (Platform.getByte(null, data + (i >> 3)) & (1 << (i & 7))) != 0;
    }
  }

  static final class Int8 extends MappedVector {
    Int8(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public byte getByte(int i) {
      return Platform.getByte(null, data + i);
    }
  }

  static final class Int16 extends MappedVector {
    Int16(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public short getShort(int i) {
      return Platform.getShort(null, data + 2L * i);
    }
  }

  /** int32 and date32 (days since the epoch, as Spark's DateType). */
  static final class Int32 extends MappedVector {
    Int32(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public int getInt(int i) {
      return Platform.getInt(null, data + 4L * i);
    }
  }

  /** int64 and timestamp[us] (microseconds, as Spark's timestamps). */
  static final class Int64 extends MappedVector {
    Int64(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public long getLong(int i) {
      return Platform.getLong(null, data + 8L * i);
    }
  }

  static final class Float32 extends MappedVector {
    Float32(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public float getFloat(int i) {
      return Platform.getFloat(null, data + 4L * i);
    }
  }

  static final class Float64 extends MappedVector {
    Float64(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public double getDouble(int i) {
      return Platform.getDouble(null, data + 8L * i);
    }
  }

  /** date64 (milliseconds) as days (truncated toward zero); a value outside Spark's range
   * raises. */
  static final class Date64 extends MappedVector {
    Date64(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public int getInt(int i) {
      // truncated toward zero, as pyarrow's cast (and so the Python source) reads date64
      return Math.toIntExact(Platform.getLong(null, data + 8L * i) / 86_400_000L);
    }
  }

  /** timestamp[s] and timestamp[ms] (and durations) scaled up to microseconds (overflow raises),
   * timestamp[ns] truncated toward zero to microseconds. */
  static final class ScaledTimestamp extends MappedVector {
    private final long multiply;
    private final long divide;

    ScaledTimestamp(DataType t, int n, int nulls, long v, boolean all, long data, long multiply,
        long divide) {
      super(t, n, nulls, v, all, data);
      this.multiply = multiply;
      this.divide = divide;
    }

    @Override
    public long getLong(int i) {
      long raw = Platform.getLong(null, data + 8L * i);
      // nanoseconds truncate toward zero, as pyarrow's cast (and so the Python source) does
      return divide > 1 ? raw / divide : Math.multiplyExact(raw, multiply);
    }
  }

  /** decimal128: 16 little-endian bytes, two's complement.  A value with more digits than the
   * column's precision raises (Spark's own check), never reads as another number. */
  static final class Decimal128 extends MappedVector {
    Decimal128(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public Decimal getDecimal(int i, int precision, int scale) {
      long lo = Platform.getLong(null, data + 16L * i);
      long hi = Platform.getLong(null, data + 16L * i + 8);
      if (precision <= 18 && hi == (lo >> 63)) {
        return new Decimal().set(lo, precision, scale);
      }
      byte[] be = new byte[16];
      for (int k = 0; k < 8; k++) {
        be[7 - k] = (byte) (hi >>> (8 * k));
        be[15 - k] = (byte) (lo >>> (8 * k));
      }
      return Decimal.apply(new BigDecimal(new BigInteger(be), scale), precision, scale);
    }
  }

  /** string/binary with int32 offsets (checked monotonic and inside the data buffer). */
  static final class Var32 extends MappedVector {
    private final long offsets;

    Var32(DataType t, int n, int nulls, long v, boolean all, long offsets, long data) {
      super(t, n, nulls, v, all, data);
      this.offsets = offsets;
    }

    @Override
    public UTF8String getUTF8String(int i) {
      int start = Platform.getInt(null, offsets + 4L * i);
      int end = Platform.getInt(null, offsets + 4L * i + 4);
      return UTF8String.fromAddress(null, data + start, end - start);
    }

    @Override
    public byte[] getBinary(int i) {
      int start = Platform.getInt(null, offsets + 4L * i);
      int end = Platform.getInt(null, offsets + 4L * i + 4);
      byte[] out = new byte[end - start];
      Platform.copyMemory(null, data + start, out, Platform.BYTE_ARRAY_OFFSET, out.length);
      return out;
    }
  }

  /** large_string/large_binary: int64 offsets (checked as Var32's, each value under 2 GiB). */
  static final class Var64 extends MappedVector {
    private final long offsets;

    Var64(DataType t, int n, int nulls, long v, boolean all, long offsets, long data) {
      super(t, n, nulls, v, all, data);
      this.offsets = offsets;
    }

    @Override
    public UTF8String getUTF8String(int i) {
      long start = Platform.getLong(null, offsets + 8L * i);
      long end = Platform.getLong(null, offsets + 8L * i + 8);
      return UTF8String.fromAddress(null, data + start, (int) (end - start));
    }

    @Override
    public byte[] getBinary(int i) {
      long start = Platform.getLong(null, offsets + 8L * i);
      long end = Platform.getLong(null, offsets + 8L * i + 8);
      byte[] out = new byte[(int) (end - start)];
      Platform.copyMemory(null, data + start, out, Platform.BYTE_ARRAY_OFFSET, out.length);
      return out;
    }
  }
}
