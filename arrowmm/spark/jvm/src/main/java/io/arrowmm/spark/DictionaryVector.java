package io.arrowmm.spark;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A dictionary-encoded column as Spark's values: each row's index (read in place) is mapped
 * through the file's dictionary, its first dictionary batch followed by its deltas.  The reader
 * checked every non-null index against the dictionary's length before making one, so a getter
 * never reads outside it; a row is null when its index is null or its dictionary value is.
 */
final class DictionaryVector extends ColumnVector {
  /** One dictionary: the vectors of its dictionary batches, in file order, and where each
   * starts in the concatenation. */
  static final class Values {
    final List<ColumnVector> parts = new ArrayList<>();
    final List<Long> starts = new ArrayList<>();
    long length;

    void add(ColumnVector part, int rows) {
      parts.add(part);
      starts.add(length);
      length += rows;
    }
  }

  private final int length;
  private final long validity;
  private final boolean allNull;
  private final long indices;
  private final int width;
  private final boolean unsigned;
  private final ColumnVector[] parts;
  private final long[] starts;
  private final int nullCount;

  DictionaryVector(DataType type, int n, long validity, boolean allNull, long indices, int width,
      boolean unsigned, Values values, String where) {
    super(type);
    this.length = n;
    this.validity = validity;
    this.allNull = allNull;
    this.indices = indices;
    this.width = width;
    this.unsigned = unsigned;
    this.parts = values.parts.toArray(new ColumnVector[0]);
    this.starts = new long[parts.length];
    for (int i = 0; i < parts.length; i++) {
      starts[i] = values.starts.get(i);
    }
    int nulls = 0;
    for (int i = 0; i < n; i++) {
      if (indexIsNull(i)) {
        nulls++;
        continue;
      }
      long k = index(i);
      if (k < 0 || k >= values.length) {
        throw new ArrowmmException(where + ": index " + k + " at row " + i + " is outside the "
            + values.length + "-value dictionary");
      }
      int p = part(k);
      if (parts[p].isNullAt((int) (k - starts[p]))) {
        nulls++;
      }
    }
    this.nullCount = nulls;
  }

  private boolean indexIsNull(int i) {
    if (validity == 0) {
      return allNull;
    }
    return (Platform.getByte(null, validity + (i >> 3)) & (1 << (i & 7))) == 0;
  }

  private long index(int i) {
    switch (width) {
      case 1: {
        byte v = Platform.getByte(null, indices + i);
        return unsigned ? v & 0xffL : v;
      }
      case 2: {
        short v = Platform.getShort(null, indices + 2L * i);
        return unsigned ? v & 0xffffL : v;
      }
      case 4: {
        int v = Platform.getInt(null, indices + 4L * i);
        return unsigned ? v & 0xffffffffL : v;
      }
      default:
        return Platform.getLong(null, indices + 8L * i);
    }
  }

  private int part(long k) {
    int lo = 0;
    int hi = starts.length - 1;
    while (lo < hi) {  // the last part starting at or before k
      int mid = (lo + hi + 1) >>> 1;
      if (starts[mid] <= k) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }

  private ColumnVector vector(int rowId) {
    return parts[part(index(rowId))];
  }

  private int local(int rowId) {
    long k = index(rowId);
    return (int) (k - starts[part(k)]);
  }

  @Override
  public void close() {}  // the reader owns the memory

  @Override
  public boolean hasNull() {
    return nullCount > 0;
  }

  @Override
  public int numNulls() {
    return nullCount;
  }

  @Override
  public boolean isNullAt(int rowId) {
    return indexIsNull(rowId) || vector(rowId).isNullAt(local(rowId));
  }

  @Override
  public boolean getBoolean(int rowId) {
    return vector(rowId).getBoolean(local(rowId));
  }

  @Override
  public byte getByte(int rowId) {
    return vector(rowId).getByte(local(rowId));
  }

  @Override
  public short getShort(int rowId) {
    return vector(rowId).getShort(local(rowId));
  }

  @Override
  public int getInt(int rowId) {
    return vector(rowId).getInt(local(rowId));
  }

  @Override
  public long getLong(int rowId) {
    return vector(rowId).getLong(local(rowId));
  }

  @Override
  public float getFloat(int rowId) {
    return vector(rowId).getFloat(local(rowId));
  }

  @Override
  public double getDouble(int rowId) {
    return vector(rowId).getDouble(local(rowId));
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    return vector(rowId).getDecimal(local(rowId), precision, scale);
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    return vector(rowId).getUTF8String(local(rowId));
  }

  @Override
  public byte[] getBinary(int rowId) {
    return vector(rowId).getBinary(local(rowId));
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    throw new UnsupportedOperationException("getArray of a dictionary of flat values");
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    throw new UnsupportedOperationException("getMap of a dictionary of flat values");
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    throw new UnsupportedOperationException("getChild of a dictionary of flat values");
  }
}
