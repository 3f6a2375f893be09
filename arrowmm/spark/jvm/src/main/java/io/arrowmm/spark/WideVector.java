package io.arrowmm.spark;

import java.math.BigDecimal;
import java.math.BigInteger;

import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.Platform;

/**
 * Columns whose Arrow type Spark holds only in a wider type, read in place and widened per value:
 * the Spark types and values the Python source gives with {@code option("cast", "true")}
 * ({@code arrowmm/spark/types.py}), so both engines answer alike.  Like {@link MappedVector},
 * every buffer was checked against the message body before one is made.
 */
final class WideVector {
  private WideVector() {}

  /** uint8 as smallint. */
  static final class UInt8 extends MappedVector {
    UInt8(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public short getShort(int i) {
      return (short) (Platform.getByte(null, data + i) & 0xff);
    }
  }

  /** uint16 as int. */
  static final class UInt16 extends MappedVector {
    UInt16(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public int getInt(int i) {
      return Platform.getShort(null, data + 2L * i) & 0xffff;
    }
  }

  /** uint32 as bigint. */
  static final class UInt32 extends MappedVector {
    UInt32(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public long getLong(int i) {
      return Platform.getInt(null, data + 4L * i) & 0xffffffffL;
    }
  }

  /** uint64 as decimal(20, 0): every value fits, none wraps to a negative number. */
  static final class UInt64 extends MappedVector {
    UInt64(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public Decimal getDecimal(int i, int precision, int scale) {
      long raw = Platform.getLong(null, data + 8L * i);
      if (raw >= 0) {
        return new Decimal().set(raw, precision, scale);
      }
      BigInteger big = BigInteger.valueOf(raw >>> 1).shiftLeft(1).or(BigInteger.valueOf(raw & 1));
      return Decimal.apply(new BigDecimal(big, scale), precision, scale);
    }
  }

  /** float16 as float (exact: every half-precision value is a float). */
  static final class Float16 extends MappedVector {
    Float16(DataType t, int n, int nulls, long v, boolean all, long data) {
      super(t, n, nulls, v, all, data);
    }

    @Override
    public float getFloat(int i) {
      return halfToFloat(Platform.getShort(null, data + 2L * i));
    }
  }

  /** IEEE 754 binary16 to binary32 (Java 17 has no {@code Float.float16ToFloat}). */
  static float halfToFloat(short h) {
    int bits = h & 0xffff;
    int sign = (bits & 0x8000) << 16;
    int exp = (bits >>> 10) & 0x1f;
    int mant = bits & 0x3ff;
    if (exp == 0x1f) {  // infinities and NaNs (payload kept)
      return Float.intBitsToFloat(sign | 0x7f800000 | (mant << 13));
    }
    if (exp == 0) {
      if (mant == 0) {
        return Float.intBitsToFloat(sign);  // +-0
      }
      float v = mant * 0x1p-24f;  // subnormal: mant * 2^-24, exact in a float
      return sign != 0 ? -v : v;
    }
    return Float.intBitsToFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
  }

  /** decimal32/64/256 as decimal (precision at most 38: the value fits Spark's decimal). */
  static final class OtherDecimal extends MappedVector {
    private final int width;

    OtherDecimal(DataType t, int n, int nulls, long v, boolean all, long data, int width) {
      super(t, n, nulls, v, all, data);
      this.width = width;
    }

    @Override
    public Decimal getDecimal(int i, int precision, int scale) {
      long at = data + (long) width * i;
      if (width == 4) {
        return new Decimal().set(Platform.getInt(null, at),
            precision, scale);
      }
      if (width == 8) {
        long lo = Platform.getLong(null, at);
        if (precision <= 18) {
          return new Decimal().set(lo, precision, scale);
        }
        return Decimal.apply(
            new BigDecimal(BigInteger.valueOf(lo), scale), precision, scale);
      }
      byte[] be = new byte[width];
      for (int k = 0; k < width; k++) {
        be[width - 1 - k] = Platform.getByte(null, at + k);
      }
      return Decimal.apply(
          new BigDecimal(new BigInteger(be), scale), precision, scale);
    }
  }

  /** string_view/binary_view: 16-byte views, a value of up to 12 bytes inline, a longer one
   * in a data buffer (its index and offset checked by the reader for every valid row). */
  static final class Views extends MappedVector {
    private final long[] buffers;

    Views(DataType t, int n, int nulls, long v, boolean all, long views, long[] buffers) {
      super(t, n, nulls, v, all, views);
      this.buffers = buffers;
    }

    private long address(int i) {
      long at = data + 16L * i;
      int length = Platform.getInt(null, at);
      return length <= 12 ? at + 4
          : buffers[Platform.getInt(null, at + 8)] + Platform.getInt(null, at + 12);
    }

    @Override
    public org.apache.spark.unsafe.types.UTF8String getUTF8String(int i) {
      return org.apache.spark.unsafe.types.UTF8String.fromAddress(null, address(i),
          Platform.getInt(null, data + 16L * i));
    }

    @Override
    public byte[] getBinary(int i) {
      byte[] out = new byte[Platform.getInt(null, data + 16L * i)];
      Platform.copyMemory(null, address(i), out, Platform.BYTE_ARRAY_OFFSET, out.length);
      return out;
    }
  }

  /** fixed_size_binary as binary (each value copied out, as Spark's binary getter does). */
  static final class FixedBinary extends MappedVector {
    private final int width;

    FixedBinary(DataType t, int n, int nulls, long v, boolean all, long data, int width) {
      super(t, n, nulls, v, all, data);
      this.width = width;
    }

    @Override
    public byte[] getBinary(int i) {
      byte[] out = new byte[width];
      Platform.copyMemory(null, data + (long) width * i, out, Platform.BYTE_ARRAY_OFFSET, width);
      return out;
    }
  }
}
