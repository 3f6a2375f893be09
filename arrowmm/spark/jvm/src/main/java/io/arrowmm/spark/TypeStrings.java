package io.arrowmm.spark;

import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * pyarrow's string of a column's type ({@code str(pyarrow_type)}: {@code int32},
 * {@code timestamp[ms, tz=Europe/Paris]}, {@code decimal128(10, 2)}), which a statistics
 * document records under {@code types} for every column it describes (statistics version 3,
 * {@link BatchStatistics}): one damaged schema byte (an int32 read as uint32, a timestamp's
 * unit) changes what every reader takes the values for, and bounds recorded for the old type
 * would then judge the new values.  Both engines must give the same strings, so they are
 * pyarrow's exactly, for the types a document may describe: flat integers, floats, decimals,
 * dates, times, timestamps, durations, booleans, strings and binaries (an extension column: its
 * storage type's).  Any other type has none (null, which no document's string equals).
 * {@code TypeStringsTest} compares every string with pyarrow's, read from a file pyarrow wrote.
 */
final class TypeStrings {
  private TypeStrings() {
  }

  /** pyarrow's string of {@code field}'s storage type, or null when statistics never describe
   * a column of its type (nested, dictionary-encoded, null, interval, union, ...). */
  static String of(Field field) {
    if (field.getDictionary() != null) {
      return null;  // (Arrow Java's type of such a field is its values' type)
    }
    return of(field.getType());
  }

  /** pyarrow's string of {@code type} (an extension type: its storage type's), or null. */
  static String of(ArrowType type) {
    if (type instanceof ArrowType.ExtensionType) {
      return of(((ArrowType.ExtensionType) type).storageType());
    }
    switch (type.getTypeID()) {
      case Null:
        return "null";
      case Bool:
        return "bool";
      case Int: {
        ArrowType.Int i = (ArrowType.Int) type;
        int bits = i.getBitWidth();
        return bits == 8 || bits == 16 || bits == 32 || bits == 64
            ? (i.getIsSigned() ? "int" : "uint") + bits : null;
      }
      case FloatingPoint:
        switch (((ArrowType.FloatingPoint) type).getPrecision()) {
          case HALF: return "halffloat";
          case SINGLE: return "float";
          case DOUBLE: return "double";
          default: return null;
        }
      case Decimal: {
        ArrowType.Decimal d = (ArrowType.Decimal) type;
        int bits = d.getBitWidth();
        return bits == 32 || bits == 64 || bits == 128 || bits == 256
            ? "decimal" + bits + "(" + d.getPrecision() + ", " + d.getScale() + ")" : null;
      }
      case Date:
        return ((ArrowType.Date) type).getUnit() == DateUnit.DAY ? "date32[day]" : "date64[ms]";
      case Time: {
        ArrowType.Time t = (ArrowType.Time) type;
        TimeUnit unit = t.getUnit();
        boolean narrow = unit == TimeUnit.SECOND || unit == TimeUnit.MILLISECOND;
        if (t.getBitWidth() != (narrow ? 32 : 64)) {
          return null;  // (Arrow's Time is 32 bits for s and ms, 64 for us and ns)
        }
        return "time" + t.getBitWidth() + "[" + unit(unit) + "]";
      }
      case Timestamp: {
        ArrowType.Timestamp t = (ArrowType.Timestamp) type;
        String zone = t.getTimezone();
        // (pyarrow, as Arrow C++, names no zone for an empty one)
        return "timestamp[" + unit(t.getUnit())
            + (zone == null || zone.isEmpty() ? "" : ", tz=" + zone) + "]";
      }
      case Duration:
        return "duration[" + unit(((ArrowType.Duration) type).getUnit()) + "]";
      case Utf8:
        return "string";
      case LargeUtf8:
        return "large_string";
      case Utf8View:
        return "string_view";
      case Binary:
        return "binary";
      case LargeBinary:
        return "large_binary";
      case BinaryView:
        return "binary_view";
      case FixedSizeBinary: {
        int width = ((ArrowType.FixedSizeBinary) type).getByteWidth();
        return width >= 0 ? "fixed_size_binary[" + width + "]" : null;
      }
      default:
        return null;
    }
  }

  /** pyarrow's name of a time unit. */
  private static String unit(TimeUnit unit) {
    switch (unit) {
      case SECOND: return "s";
      case MILLISECOND: return "ms";
      case MICROSECOND: return "us";
      case NANOSECOND: return "ns";
      default: throw new IllegalArgumentException("time unit " + unit);
    }
  }
}
