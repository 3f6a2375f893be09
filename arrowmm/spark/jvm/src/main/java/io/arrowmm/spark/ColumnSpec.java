package io.arrowmm.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** One top-level column of a file: its Arrow kind, how many IPC buffers it has, its Spark type. */
final class ColumnSpec implements Serializable {
  private static final long serialVersionUID = 1L;
  /** The Arrow field metadata key holding a string field's Spark collation (e.g.
   * {@code UTF8_LCASE}), when not the default; the Python data source uses the same key. */
  static final String COLLATION_KEY = "arrowmm.spark.collation";

  enum Kind {
    NULL(0, 0), BOOL(2, 0), INT8(2, 1), INT16(2, 2), INT32(2, 4), INT64(2, 8), FLOAT32(2, 4),
    FLOAT64(2, 8), DECIMAL128(2, 16), DATE32(2, 4), DATE64(2, 8), TIMESTAMP(2, 8),
    STRING(3, 0), BINARY(3, 0), LARGE_STRING(3, 0), LARGE_BINARY(3, 0),
    STRUCT(1, 0), LIST(2, 0), LARGE_LIST(2, 0), FIXED_SIZE_LIST(1, 0), MAP(2, 0),
    /** Dictionary-encoded: validity and indices; the values come from dictionary batches. */
    DICTIONARY(2, 0),
    /** Read widened, as the Python source's {@code cast} reads them (see {@link WideVector}):
     * unsigned integers to the next signed type (uint64 to decimal(20, 0)), float16 to float,
     * decimal32/64/256 to Spark's decimal, fixed_size_binary to binary, durations to
     * day-time intervals (microseconds). */
    UINT8(2, 1), UINT16(2, 2), UINT32(2, 4), UINT64(2, 8), FLOAT16(2, 2), DECIMAL32(2, 4),
    DECIMAL64(2, 8), DECIMAL256(2, 32), FIXED_BINARY(2, 0), DURATION(2, 8),
    /** string_view/binary_view: validity, views, then the batch's variadic data buffers (their
     * number is per batch: {@link #bufferCount} counts the fixed two). Top-level only. */
    STRING_VIEW(2, 16), BINARY_VIEW(2, 16);

    /** The number of IPC buffers a column of this kind has. */
    final int buffers;
    /** Bytes per value of the data buffer (0: bits or variable width). */
    final int width;

    Kind(int buffers, int width) {
      this.buffers = buffers;
      this.width = width;
    }

    boolean isView() {
      return this == STRING_VIEW || this == BINARY_VIEW;
    }
  }

  final String name;
  final Kind kind;
  /** TIMESTAMP, DURATION: the file's unit (SECOND, MILLISECOND, MICROSECOND, NANOSECOND); else
   * null. */
  final TimeUnit unit;
  /** Nested kinds: nullable at every level, whatever the file says ({@link #sparkSchema}). */
  final DataType sparkType;
  /** The file's nullability of the column (Spark is told every column is nullable). */
  final boolean nullable;
  /** Nested kinds: the child columns (MAP: one entries STRUCT of key and value); else empty. */
  final ColumnSpec[] children;
  /** FIXED_SIZE_LIST: the number of values per list; DICTIONARY: bytes per index;
   * FIXED_BINARY: bytes per value; else 0. */
  final int listSize;
  /** DICTIONARY: the dictionary's values (a flat column) and its id; else null and 0. */
  ColumnSpec values;
  long dictionaryId;
  boolean unsignedIndex;

  private ColumnSpec(String name, Kind kind, TimeUnit unit, DataType sparkType, boolean nullable) {
    this(name, kind, unit, sparkType, nullable, new ColumnSpec[0], 0);
  }

  private ColumnSpec(String name, Kind kind, TimeUnit unit, DataType sparkType, boolean nullable,
      ColumnSpec[] children, int listSize) {
    this.name = name;
    this.kind = kind;
    this.unit = unit;
    this.sparkType = sparkType;
    this.nullable = nullable;
    this.children = children;
    this.listSize = listSize;
  }

  /** The field nodes this column takes in a record batch: its own and its descendants'. */
  int nodeCount() {
    int n = 1;
    for (ColumnSpec c : children) {
      n += c.nodeCount();
    }
    return n;
  }

  /** Whether this column or a descendant is a view (their buffer counts vary per batch). */
  boolean hasView() {
    if (kind.isView()) {
      return true;
    }
    for (ColumnSpec c : children) {
      if (c != null && c.hasView()) {
        return true;
      }
    }
    return false;
  }

  /** The IPC buffers this column takes in a record batch: its own and its descendants'
   * (a view column's variadic data buffers not counted). */
  int bufferCount() {
    int n = kind.buffers;
    for (ColumnSpec c : children) {
      n += c.bufferCount();
    }
    return n;
  }

  /** The columns of an Arrow schema; every column Spark cannot hold here is named in one error. */
  static List<ColumnSpec> of(org.apache.arrow.vector.types.pojo.Schema schema, String path) {
    List<ColumnSpec> out = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    java.util.Set<String> names = new java.util.HashSet<>();
    for (Field f : schema.getFields()) {
      if (!names.add(f.getName())) {  // columns are found by name: two would be ambiguous
        throw new ArrowmmException(path + ": the column name '" + f.getName()
            + "' occurs more than once in the schema");
      }
      ColumnSpec spec = convert(f, problems);
      if (spec != null) {
        out.add(spec);
      }
    }
    if (!problems.isEmpty()) {
      throw new ArrowmmException(path + ": these columns have Arrow types the JVM connector "
          + "does not read:\n  " + String.join("\n  ", problems));
    }
    return out;
  }

  /** The Spark schema of a file's columns, nullable at every level whatever the file says: a
   * directory's schema is its first file's, and an append may add nulls to any column (Spark's
   * file sources say the same, {@code asNullable}); a NOT NULL Spark trusted would read a null
   * as 0. */
  static StructType sparkSchema(List<ColumnSpec> columns) {
    StructField[] fields = new StructField[columns.size()];
    for (int i = 0; i < fields.length; i++) {
      ColumnSpec c = columns.get(i);
      fields[i] = DataTypes.createStructField(c.name, c.sparkType, true);
    }
    return DataTypes.createStructType(fields);
  }

  /** {@code type} nullable at every level (struct fields, array elements, map values), as a
   * table's schema is: a schema given with {@code .schema()} cannot vouch for every file, and
   * schemas are compared without nullability ({@link #difference}). */
  static DataType nullable(DataType type) {
    if (type instanceof StructType) {
      StructField[] fields = ((StructType) type).fields().clone();
      for (int i = 0; i < fields.length; i++) {
        fields[i] = new StructField(fields[i].name(), nullable(fields[i].dataType()), true,
            fields[i].metadata());
      }
      return new StructType(fields);
    } else if (type instanceof ArrayType) {
      return DataTypes.createArrayType(nullable(((ArrayType) type).elementType()), true);
    } else if (type instanceof MapType) {
      MapType m = (MapType) type;
      return DataTypes.createMapType(nullable(m.keyType()), nullable(m.valueType()), true);
    }
    return type;
  }

  /** Where schema {@code a} (of {@code aName}) differs from {@code b} (of {@code bName}),
   * nullability aside: the first column whose name or type differs, or the column counts; null
   * when they do not differ. */
  static String difference(StructType a, String aName, StructType b, String bName) {
    StructField[] x = a.fields();
    StructField[] y = b.fields();
    for (int i = 0; i < Math.min(x.length, y.length); i++) {
      if (!x[i].name().equals(y[i].name())) {
        return "column " + (i + 1) + " is '" + x[i].name() + "' in " + aName + " and '"
            + y[i].name() + "' in " + bName;
      }
      if (!nullable(x[i].dataType()).equals(nullable(y[i].dataType()))) {
        return "column '" + x[i].name() + "' is " + x[i].dataType().simpleString() + " in "
            + aName + " and " + y[i].dataType().simpleString() + " in " + bName;
      }
    }
    if (x.length != y.length) {
      StructField extra = x.length > y.length ? x[y.length] : y[x.length];
      return aName + " has " + x.length + " columns and " + bName + " " + y.length
          + " (column '" + extra.name() + "' is in " + (x.length > y.length ? aName : bName)
          + " only)";
    }
    return null;
  }

  private static ColumnSpec convert(Field f, List<String> problems) {
    String name = f.getName();
    ArrowType t = f.getType();
    boolean nullable = f.isNullable();
    if (f.getDictionary() != null) {
      return dictionary(f, problems);
    }
    switch (t.getTypeID()) {
      case Null:
        return new ColumnSpec(name, Kind.NULL, null, DataTypes.NullType, true);
      case Bool:
        return new ColumnSpec(name, Kind.BOOL, null, DataTypes.BooleanType, nullable);
      case Int: {
        ArrowType.Int i = (ArrowType.Int) t;
        if (!i.getIsSigned()) {
          return unsigned(name, i.getBitWidth(), nullable, problems);
        }
        switch (i.getBitWidth()) {
          case 8: return new ColumnSpec(name, Kind.INT8, null, DataTypes.ByteType, nullable);
          case 16: return new ColumnSpec(name, Kind.INT16, null, DataTypes.ShortType, nullable);
          case 32: return new ColumnSpec(name, Kind.INT32, null, DataTypes.IntegerType, nullable);
          case 64: return new ColumnSpec(name, Kind.INT64, null, DataTypes.LongType, nullable);
          default: break;
        }
        break;
      }
      case FloatingPoint: {
        FloatingPointPrecision p = ((ArrowType.FloatingPoint) t).getPrecision();
        if (p == FloatingPointPrecision.SINGLE) {
          return new ColumnSpec(name, Kind.FLOAT32, null, DataTypes.FloatType, nullable);
        }
        if (p == FloatingPointPrecision.DOUBLE) {
          return new ColumnSpec(name, Kind.FLOAT64, null, DataTypes.DoubleType, nullable);
        }
        return new ColumnSpec(name, Kind.FLOAT16, null, DataTypes.FloatType, nullable);
      }
      case Decimal: {
        ArrowType.Decimal d = (ArrowType.Decimal) t;
        Kind kind = d.getBitWidth() == 128 ? Kind.DECIMAL128 : d.getBitWidth() == 256
            ? Kind.DECIMAL256 : d.getBitWidth() == 64 ? Kind.DECIMAL64 : d.getBitWidth() == 32
            ? Kind.DECIMAL32 : null;
        if (kind == null || d.getPrecision() < 1 || d.getPrecision() > 38 || d.getScale() < 0
            || d.getScale() > d.getPrecision()) {
          problems.add(name + ": decimal" + d.getBitWidth() + "(" + d.getPrecision() + ", "
              + d.getScale() + ") (Spark decimals hold 1 to 38 digits, scale 0 to precision)");
          return null;
        }
        return new ColumnSpec(name, kind, null,
            DataTypes.createDecimalType(d.getPrecision(), d.getScale()), nullable);
      }
      case Date: {
        boolean day = ((ArrowType.Date) t).getUnit() == DateUnit.DAY;
        return new ColumnSpec(name, day ? Kind.DATE32 : Kind.DATE64, null, DataTypes.DateType,
            nullable);
      }
      case Timestamp: {
        ArrowType.Timestamp ts = (ArrowType.Timestamp) t;
        DataType target = ts.getTimezone() != null ? DataTypes.TimestampType
            : DataTypes.TimestampNTZType;
        return new ColumnSpec(name, Kind.TIMESTAMP, ts.getUnit(), target, nullable);
      }
      case Utf8:
      case LargeUtf8:
      case Utf8View: {
        DataType string = stringType(f, problems);
        Kind kind = t.getTypeID() == ArrowType.ArrowTypeID.Utf8 ? Kind.STRING
            : t.getTypeID() == ArrowType.ArrowTypeID.LargeUtf8 ? Kind.LARGE_STRING
            : Kind.STRING_VIEW;
        return string == null ? null : new ColumnSpec(name, kind, null, string, nullable);
      }
      case Binary:
        return new ColumnSpec(name, Kind.BINARY, null, DataTypes.BinaryType, nullable);
      case LargeBinary:
        return new ColumnSpec(name, Kind.LARGE_BINARY, null, DataTypes.BinaryType, nullable);
      case BinaryView:
        return new ColumnSpec(name, Kind.BINARY_VIEW, null, DataTypes.BinaryType, nullable);
      case FixedSizeBinary: {
        int width = ((ArrowType.FixedSizeBinary) t).getByteWidth();
        if (width < 0) {
          break;
        }
        return new ColumnSpec(name, Kind.FIXED_BINARY, null, DataTypes.BinaryType, nullable,
            new ColumnSpec[0], width);
      }
      case Duration:
        return new ColumnSpec(name, Kind.DURATION, ((ArrowType.Duration) t).getUnit(),
            DataTypes.createDayTimeIntervalType(
                org.apache.spark.sql.types.DayTimeIntervalType.DAY(),
                org.apache.spark.sql.types.DayTimeIntervalType.SECOND()), nullable);
      case Struct:
      case List:
      case LargeList:
      case FixedSizeList:
      case Map:
        return nested(f, problems);
      default:
        break;
    }
    problems.add(name + ": " + describe(f) + " (" + whyNot(t) + ")");
    return null;
  }

  /** A string field's Spark type: {@code string collate <name>} when a writer recorded the
   * collation under {@link #COLLATION_KEY} (both engines do), else {@code string}. */
  private static DataType stringType(Field f, List<String> problems) {
    String collation = f.getMetadata() == null ? null : f.getMetadata().get(COLLATION_KEY);
    if (collation == null) {
      return DataTypes.StringType;
    }
    try {
      return org.apache.spark.sql.types.StringType.apply(collation);
    } catch (Exception e) {  // a name this Spark does not know (a SparkException)
      problems.add(f.getName() + ": string with collation '" + collation + "' (" + COLLATION_KEY
          + "), which this Spark does not know: " + e.getMessage());
      return null;
    }
  }

  /** Why a type is not read: the reasons the Python source gives where Spark has no type. */
  private static String whyNot(ArrowType t) {
    switch (t.getTypeID()) {
      case Union: return "Spark has no union type";
      case RunEndEncoded: return "Spark has no run-end encoded type";
      case Interval: return "Spark has no Arrow interval type";
      case Time: return "Spark has no time-of-day type for it here; read it as integers";
      default: return "not read by the JVM connector; format('arrowmm_python') with "
          + "option('cast', 'true') reads it";
    }
  }

  /** An unsigned integer column, as the next wider signed Spark type (uint64: decimal(20, 0)),
   * the types the Python source's {@code cast} gives them. */
  private static ColumnSpec unsigned(String name, int bits, boolean nullable,
      List<String> problems) {
    switch (bits) {
      case 8: return new ColumnSpec(name, Kind.UINT8, null, DataTypes.ShortType, nullable);
      case 16: return new ColumnSpec(name, Kind.UINT16, null, DataTypes.IntegerType, nullable);
      case 32: return new ColumnSpec(name, Kind.UINT32, null, DataTypes.LongType, nullable);
      case 64:
        return new ColumnSpec(name, Kind.UINT64, null, DataTypes.createDecimalType(20, 0),
            nullable);
      default:
        problems.add(name + ": uint" + bits + " (not an Arrow integer width)");
        return null;
    }
  }

  /** A dictionary-encoded column of flat values: Spark sees the values, the reader maps each
   * index through the file's dictionary (its batch and deltas). */
  private static ColumnSpec dictionary(Field f, List<String> problems) {
    String name = f.getName();
    org.apache.arrow.vector.types.pojo.DictionaryEncoding enc = f.getDictionary();
    ArrowType.Int index = enc.getIndexType();
    Field plain = new Field(name, new org.apache.arrow.vector.types.pojo.FieldType(true,
        f.getType(), null, f.getMetadata()), f.getChildren());
    List<String> inner = new ArrayList<>();
    ColumnSpec values = convert(plain, inner);
    if (values == null || values.children.length > 0 || values.kind == Kind.NULL
        || values.kind.isView()) {
      // (uint64 indices read as signed: one past 2^63 is outside any dictionary and raises)
      problems.add(name + ": dictionary-encoded " + describe(plain) + " with "
          + (index.getIsSigned() ? "int" : "uint") + index.getBitWidth() + " indices (the JVM "
          + "reader reads dictionaries of flat values)");
      return null;
    }
    ColumnSpec spec = new ColumnSpec(name, Kind.DICTIONARY, null, values.sparkType,
        f.isNullable(), new ColumnSpec[0], index.getBitWidth() / 8);
    spec.values = values;
    spec.dictionaryId = enc.getId();
    spec.unsignedIndex = !index.getIsSigned();
    return spec;
  }

  /** A struct, list, large_list, fixed_size_list or map column; a child the reader cannot hold
   * is reported under the column's name (so the whole column is refused, by name). */
  private static ColumnSpec nested(Field f, List<String> problems) {
    String name = f.getName();
    ArrowType t = f.getType();
    boolean nullable = f.isNullable();
    List<String> inner = new ArrayList<>();
    List<Field> fields = f.getChildren();
    ColumnSpec[] kids = new ColumnSpec[fields.size()];
    for (int i = 0; i < kids.length; i++) {
      kids[i] = convert(fields.get(i), inner);
    }
    for (int i = 0; i < kids.length && inner.isEmpty(); i++) {
      if (kids[i].hasView()) {
        inner.add(kids[i].name + ": a view inside a nested column (not read by the JVM "
            + "connector; format('arrowmm_python') with option('cast', 'true') reads it)");
      }
    }
    if (!inner.isEmpty()) {
      for (String p : inner) {
        problems.add(name + "." + p);
      }
      return null;
    }
    switch (t.getTypeID()) {
      case Struct: {
        StructField[] sf = new StructField[kids.length];
        java.util.Set<String> names = new java.util.HashSet<>();
        for (int i = 0; i < kids.length; i++) {
          if (!names.add(kids[i].name)) {
            problems.add(name + ": struct field name '" + kids[i].name + "' occurs twice");
            return null;
          }
          sf[i] = DataTypes.createStructField(kids[i].name, kids[i].sparkType, true);
        }
        return new ColumnSpec(name, Kind.STRUCT, null, DataTypes.createStructType(sf), nullable,
            kids, 0);
      }
      case List:
      case LargeList:
      case FixedSizeList: {
        if (kids.length != 1) {
          problems.add(name + ": a list type with " + kids.length + " children, not 1");
          return null;
        }
        Kind kind = t.getTypeID() == ArrowType.ArrowTypeID.List ? Kind.LIST
            : t.getTypeID() == ArrowType.ArrowTypeID.LargeList ? Kind.LARGE_LIST
            : Kind.FIXED_SIZE_LIST;
        int size = 0;
        if (kind == Kind.FIXED_SIZE_LIST) {
          size = ((ArrowType.FixedSizeList) t).getListSize();
          if (size < 0) {
            problems.add(name + ": fixed_size_list of " + size + " values");
            return null;
          }
        }
        return new ColumnSpec(name, kind, null,
            DataTypes.createArrayType(kids[0].sparkType, true), nullable, kids,
            size);
      }
      default: {  // Map
        if (kids.length != 1 || kids[0].kind != Kind.STRUCT || kids[0].children.length != 2) {
          problems.add(name + ": a map whose child is not a struct of key and value");
          return null;
        }
        ColumnSpec key = kids[0].children[0];
        ColumnSpec value = kids[0].children[1];
        return new ColumnSpec(name, Kind.MAP, null,
            DataTypes.createMapType(key.sparkType, value.sparkType, true), nullable,
            kids, 0);
      }
    }
  }

  /** A type with its children, e.g. {@code List<item: Int(32, true)>}. */
  static String describe(Field f) {
    if (f.getChildren().isEmpty()) {
      return f.getType().toString();
    }
    List<String> parts = new ArrayList<>();
    for (Field c : f.getChildren()) {
      parts.add(c.getName() + ": " + describe(c));
    }
    return f.getType() + "<" + String.join(", ", parts) + ">";
  }
}
