package io.arrowmm.spark;

import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.Platform;

/**
 * Struct, list and map columns over the mapped file: a nested column is its validity bitmap
 * (and, for lists and maps, its offsets) over child vectors, which are {@link MappedVector}s or
 * nested vectors themselves.  Spark reads a struct row through {@link #getChild} and a list or
 * map row as a window of its children ({@link ColumnarArray}, {@link ColumnarMap}), so nothing
 * is copied.  The reader checked every offset (from 0 or more, never decreasing, inside the
 * child) before making one, so each getter is a plain read.
 */
final class NestedVector {
  private NestedVector() {
  }

  /** A struct: Spark's {@code getStruct} reads the children at the same row. */
  static final class Struct extends MappedVector {
    private final ColumnVector[] children;

    Struct(DataType t, int n, int nulls, long v, boolean all, ColumnVector[] children) {
      super(t, n, nulls, v, all, 0);
      this.children = children;
    }

    @Override
    public ColumnVector getChild(int ordinal) {
      return children[ordinal];
    }
  }

  /** list and map (int32 offsets) and large_list (int64 offsets, each list under 2^31 values);
   * fixed_size_list (no offsets: row i is values {@code size * i} to {@code size * (i + 1)}). */
  static final class Lists extends MappedVector {
    private final ColumnVector values;
    private final int width;  // 4 or 8 bytes per offset; 0 for fixed-size lists
    private final int size;
    /** MAP: the keys and values of the entries (the child is a struct of both). */
    private final ColumnVector keys;
    private final ColumnVector items;

    Lists(DataType t, int n, int nulls, long v, boolean all, long offsets, int width, int size,
        ColumnVector values, ColumnVector keys, ColumnVector items) {
      super(t, n, nulls, v, all, offsets);
      this.values = values;
      this.width = width;
      this.size = size;
      this.keys = keys;
      this.items = items;
    }

    private long start(int i) {
      if (width == 4) {
        return Platform.getInt(null, data + 4L * i);
      }
      if (width == 8) {
        return Platform.getLong(null, data + 8L * i);
      }
      return (long) size * i;
    }

    @Override
    public ColumnarArray getArray(int i) {
      long s = start(i);
      return new ColumnarArray(values, (int) s, (int) (start(i + 1) - s));
    }

    @Override
    public ColumnarMap getMap(int i) {
      long s = start(i);
      return new ColumnarMap(keys, items, (int) s, (int) (start(i + 1) - s));
    }

    @Override
    public ColumnVector getChild(int ordinal) {
      return values;
    }
  }
}
