package io.arrowmm.spark;

import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Writes the values of a nested column (struct, array, map, at any depth) into Arrow Java's
 * vectors, as Spark's own Arrow conversion lays them out ({@code ArrowUtils}): an array is a
 * {@code list} whose child is named {@code element}, a map a {@code map} of non-null
 * {@code entries} structs of a non-null {@code key} and a {@code value}; nullability at every
 * level comes from the Spark type ({@code containsNull}, {@code valueContainsNull}, each
 * field's {@code nullable}), so the file holds the type that was written (a read declares
 * every level nullable: later appends may hold nulls), and a collated string its collation.
 *
 * <p>A tree of writers mirrors the type: each sets one value (row {@code ordinal} of a row, an
 * array or a map's key or value array, all {@code SpecializedGetters}) at a position of its
 * vector; a null struct or list sets its children's slots null too, so every vector has a slot
 * for every position of its parent.
 */
abstract class NestedWriter {
  /** Spark's default string collation: not recorded. */
  private static final String DEFAULT_COLLATION = "UTF8_BINARY";

  static boolean isNested(DataType t) {
    return t instanceof StructType || t instanceof ArrayType || t instanceof MapType;
  }

  /** The Arrow field a Spark column (or nested field {@code path}) is written as; a clear error
   * naming the nested field for a type not written. */
  static Field field(String path, String name, DataType t, boolean nullable) {
    if (t instanceof StructType) {
      List<Field> children = new ArrayList<>();
      for (StructField f : ((StructType) t).fields()) {
        children.add(field(path + "." + f.name(), f.name(), f.dataType(), f.nullable()));
      }
      return new Field(name, new FieldType(nullable, ArrowType.Struct.INSTANCE, null), children);
    } else if (t instanceof ArrayType) {
      ArrayType a = (ArrayType) t;
      return new Field(name, new FieldType(nullable, ArrowType.List.INSTANCE, null),
          List.of(field(path + "[]", "element", a.elementType(), a.containsNull())));
    } else if (t instanceof MapType) {
      MapType m = (MapType) t;
      Field entries = new Field("entries", new FieldType(false, ArrowType.Struct.INSTANCE, null),
          List.of(field(path + ".key", "key", m.keyType(), false),
              field(path + ".value", "value", m.valueType(), m.valueContainsNull())));
      return new Field(name, new FieldType(nullable, new ArrowType.Map(false), null),
          List.of(entries));
    }
    ArrowType leaf = ArrowmmDataWriter.arrowType(new StructField(path, t, nullable,
        Metadata.empty()));
    return new Field(name, new FieldType(nullable, leaf, null, collation(t)), null);
  }

  /** A collated string's field metadata: its collation under {@link ColumnSpec#COLLATION_KEY}
   * (the readers give the type back; the bytes alone would compare case-sensitively); else
   * none. */
  private static java.util.Map<String, String> collation(DataType t) {
    if (t instanceof org.apache.spark.sql.types.StringType) {
      String name = ((org.apache.spark.sql.types.StringType) t).collationName();
      if (!name.equals(DEFAULT_COLLATION)) {
        return java.util.Map.of(ColumnSpec.COLLATION_KEY, name);
      }
    }
    return null;
  }

  /** The writer of vector {@code v}, made from {@link #field} for type {@code t} of the column
   * or nested field {@code path} (named as {@link #field} names it). */
  static NestedWriter of(FieldVector v, DataType t, String path) {
    if (t instanceof StructType) {
      StructField[] fs = ((StructType) t).fields();
      NestedWriter[] children = new NestedWriter[fs.length];
      StructVector sv = (StructVector) v;
      for (int j = 0; j < fs.length; j++) {
        children[j] = of((FieldVector) sv.getChildByOrdinal(j), fs[j].dataType(),
            path + "." + fs[j].name());
      }
      return new Struct(sv, children);
    } else if (t instanceof MapType) {
      MapVector mv = (MapVector) v;
      StructVector entries = (StructVector) mv.getDataVector();
      MapType m = (MapType) t;
      return new MapWriter(mv, entries,
          of((FieldVector) entries.getChildByOrdinal(0), m.keyType(), path + ".key"),
          of((FieldVector) entries.getChildByOrdinal(1), m.valueType(), path + ".value"));
    } else if (t instanceof ArrayType) {
      ListVector lv = (ListVector) v;
      return new ListWriter(lv, of(lv.getDataVector(), ((ArrayType) t).elementType(),
          path + "[]"));
    }
    return new Leaf(v, t, path);
  }

  /** Set value {@code ordinal} of {@code g} at position {@code at}; returns its bytes of string
   * and binary values (to bound a batch's memory). */
  abstract long set(SpecializedGetters g, int ordinal, int at);

  abstract void setNull(int at);

  private static final class Struct extends NestedWriter {
    private final StructVector vector;
    private final NestedWriter[] children;

    Struct(StructVector vector, NestedWriter[] children) {
      this.vector = vector;
      this.children = children;
    }

    @Override
    long set(SpecializedGetters g, int ordinal, int at) {
      if (g.isNullAt(ordinal)) {
        setNull(at);
        return 0;
      }
      vector.setIndexDefined(at);
      SpecializedGetters row = g.getStruct(ordinal, children.length);
      long bytes = 0;
      for (int j = 0; j < children.length; j++) {
        bytes += children[j].set(row, j, at);
      }
      return bytes;
    }

    @Override
    void setNull(int at) {
      vector.setNull(at);
      for (NestedWriter c : children) {
        c.setNull(at);
      }
    }
  }

  private static final class ListWriter extends NestedWriter {
    private final ListVector vector;
    private final NestedWriter element;

    ListWriter(ListVector vector, NestedWriter element) {
      this.vector = vector;
      this.element = element;
    }

    @Override
    long set(SpecializedGetters g, int ordinal, int at) {
      if (g.isNullAt(ordinal)) {
        setNull(at);
        return 0;
      }
      ArrayData a = g.getArray(ordinal);
      int n = a.numElements();
      int start = vector.startNewValue(at);
      long bytes = 0;
      for (int k = 0; k < n; k++) {
        bytes += element.set(a, k, start + k);
      }
      vector.endValue(at, n);
      return bytes;
    }

    @Override
    void setNull(int at) {
      vector.setNull(at);  // an empty slot in the child
    }
  }

  private static final class MapWriter extends NestedWriter {
    private final MapVector vector;
    private final StructVector entries;
    private final NestedWriter key;
    private final NestedWriter value;

    MapWriter(MapVector vector, StructVector entries, NestedWriter key, NestedWriter value) {
      this.vector = vector;
      this.entries = entries;
      this.key = key;
      this.value = value;
    }

    @Override
    long set(SpecializedGetters g, int ordinal, int at) {
      if (g.isNullAt(ordinal)) {
        setNull(at);
        return 0;
      }
      MapData m = g.getMap(ordinal);
      ArrayData keys = m.keyArray();
      ArrayData values = m.valueArray();
      int n = m.numElements();
      int start = vector.startNewValue(at);
      long bytes = 0;
      for (int k = 0; k < n; k++) {
        entries.setIndexDefined(start + k);
        bytes += key.set(keys, k, start + k) + value.set(values, k, start + k);
      }
      vector.endValue(at, n);
      return bytes;
    }

    @Override
    void setNull(int at) {
      vector.setNull(at);
    }
  }

  /** A value of a flat type inside a nested column (statistics are kept for top-level columns
   * only, as arrowmm's writers do). */
  private static final class Leaf extends NestedWriter {
    private final FieldVector vector;
    private final int precision;
    private final int scale;
    /** The nested field's path, to name a string that is not UTF-8. */
    private final String path;

    Leaf(FieldVector vector, DataType t, String path) {
      this.vector = vector;
      this.path = path;
      this.precision = t instanceof DecimalType ? ((DecimalType) t).precision() : 0;
      this.scale = t instanceof DecimalType ? ((DecimalType) t).scale() : 0;
    }

    @Override
    void setNull(int at) {
      vector.setNull(at);
    }

    @Override
    long set(SpecializedGetters g, int i, int at) {
      if (g.isNullAt(i)) {
        vector.setNull(at);
        return 0;
      }
      if (vector instanceof Float8Vector) {
        ((Float8Vector) vector).setSafe(at, g.getDouble(i));
      } else if (vector instanceof BigIntVector) {
        ((BigIntVector) vector).setSafe(at, g.getLong(i));
      } else if (vector instanceof IntVector) {
        ((IntVector) vector).setSafe(at, g.getInt(i));
      } else if (vector instanceof VarCharVector) {
        UTF8String s = g.getUTF8String(i);
        byte[] b = s.getBytes();
        Utf8.check(b, path);
        ((VarCharVector) vector).setSafe(at, b, 0, b.length);
        return b.length;
      } else if (vector instanceof VarBinaryVector) {
        byte[] b = g.getBinary(i);
        ((VarBinaryVector) vector).setSafe(at, b, 0, b.length);
        return b.length;
      } else if (vector instanceof Float4Vector) {
        ((Float4Vector) vector).setSafe(at, g.getFloat(i));
      } else if (vector instanceof BitVector) {
        ((BitVector) vector).setSafe(at, g.getBoolean(i) ? 1 : 0);
      } else if (vector instanceof TinyIntVector) {
        ((TinyIntVector) vector).setSafe(at, g.getByte(i));
      } else if (vector instanceof SmallIntVector) {
        ((SmallIntVector) vector).setSafe(at, g.getShort(i));
      } else if (vector instanceof DateDayVector) {
        ((DateDayVector) vector).setSafe(at, g.getInt(i));
      } else if (vector instanceof TimeStampMicroTZVector) {
        ((TimeStampMicroTZVector) vector).setSafe(at, g.getLong(i));
      } else if (vector instanceof TimeStampMicroVector) {
        ((TimeStampMicroVector) vector).setSafe(at, g.getLong(i));
      } else if (vector instanceof DecimalVector) {
        org.apache.spark.sql.types.Decimal d = g.getDecimal(i, precision, scale);
        if (precision <= 18) {
          ((DecimalVector) vector).setSafe(at, d.toUnscaledLong());
        } else {
          ((DecimalVector) vector).setSafe(at, d.toJavaBigDecimal().setScale(scale));
        }
      } else if (vector instanceof NullVector) {
        return 0;  // only nulls
      } else {
        throw new ArrowmmException("field '" + vector.getName() + "': no writer for " + vector);
      }
      return 0;
    }
  }
}
