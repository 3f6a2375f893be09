package io.arrowmm.spark;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;
import org.apache.spark.sql.sources.StringStartsWith;

/**
 * Which record batches a pushed filter can match, judged from the footer statistics (the same
 * rules as the Python source's {@code arrowmm/spark/pruning.py}).  The verdict for a filter and
 * a batch is {@link #NONE} (no row can match: the batch is skipped), {@link #ALL} (every row
 * matches) or {@link #SOME}.  The scan only ever skips batches; every filter still goes back to
 * Spark, which checks the rows of the batches that are read, so a statistic this class cannot
 * read exactly costs speed, never a row.
 *
 * <p>Semantics are Spark's: comparisons with null are never true; NaN equals NaN and is greater
 * than every other float; strings and binaries compare as unsigned bytes (UTF-8 byte order is
 * code point order).  Columns whose values Spark sees changed by a conversion (nanosecond
 * timestamps truncated to microseconds, date64) are never judged.
 */
final class StatisticsFilter {
  static final int NONE = 0;
  static final int SOME = 1;
  static final int ALL = 2;

  /** Raised inside a judge when a value or statistic cannot be compared exactly. */
  private static final class Unknown extends Exception {
    private static final long serialVersionUID = 1L;

    Unknown() {
      super(null, null, false, false);
    }
  }

  private static final Unknown UNKNOWN = new Unknown();

  private StatisticsFilter() {
  }

  /** Whether statistics of this column describe exactly the values Spark sees. */
  static boolean prunable(ColumnSpec c) {
    switch (c.kind) {
      case BOOL: case INT8: case INT16: case INT32: case INT64: case FLOAT32: case FLOAT64:
      case DECIMAL128: case DATE32: case BINARY: case LARGE_BINARY:
        return true;
      case STRING: case LARGE_STRING:  // byte-wise bounds say nothing of UTF8_LCASE's equality
        return ((org.apache.spark.sql.types.StringType) c.sparkType).isUTF8BinaryCollation();
      case TIMESTAMP:
        return c.unit != TimeUnit.NANOSECOND;
      default:
        return false;
    }
  }

  /** Whether {@code f} can ever skip a batch: every column it names is known and prunable. */
  static boolean usable(Filter f, Map<String, ColumnSpec> columns) {
    if (f instanceof And) {
      return usable(((And) f).left(), columns) || usable(((And) f).right(), columns);
    }
    if (f instanceof Or) {
      return usable(((Or) f).left(), columns) && usable(((Or) f).right(), columns);
    }
    if (f instanceof Not) {
      return usable(((Not) f).child(), columns);
    }
    String a = topLevelColumn(attribute(f));
    ColumnSpec c = a == null ? null : columns.get(a);
    return c != null && prunable(c);
  }

  /** NONE, SOME or ALL: how many rows of batch {@code i} of a file {@code f} can match. */
  static int verdict(Filter f, Map<String, ColumnSpec> columns, BatchStatistics stats, int i) {
    if (f instanceof And) {
      int l = verdict(((And) f).left(), columns, stats, i);
      if (l == NONE) {
        return NONE;
      }
      int r = verdict(((And) f).right(), columns, stats, i);
      return r == NONE ? NONE : l == ALL && r == ALL ? ALL : SOME;
    }
    if (f instanceof Or) {
      int l = verdict(((Or) f).left(), columns, stats, i);
      if (l == ALL) {
        return ALL;
      }
      int r = verdict(((Or) f).right(), columns, stats, i);
      return r == ALL ? ALL : l == NONE && r == NONE ? NONE : SOME;
    }
    if (f instanceof Not) {
      // NOT of "every row true" is "no row true"; NOT of NONE may be null (unknown), not ALL
      return verdict(((Not) f).child(), columns, stats, i) == ALL ? NONE : SOME;
    }
    String a = topLevelColumn(attribute(f));
    ColumnSpec c = a == null ? null : columns.get(a);
    long rows = stats.rows(i);
    JsonNode s = c == null ? null : stats.column(i, c.name);
    if (c == null || s == null || rows < 0 || !prunable(c)) {
      return SOME;
    }
    JsonNode n = s.get("nulls");
    if (n == null || !n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < 0
        || n.asLong() > rows) {
      return SOME;
    }
    long nulls = n.asLong();
    if (f instanceof IsNull) {
      return nulls == 0 ? NONE : nulls == rows ? ALL : SOME;
    }
    if (f instanceof IsNotNull) {
      return nulls == rows ? NONE : nulls == 0 ? ALL : SOME;
    }
    if (f instanceof EqualNullSafe && ((EqualNullSafe) f).value() == null) {
      return nulls == 0 ? NONE : nulls == rows ? ALL : SOME;
    }
    if (!(f instanceof EqualTo || f instanceof EqualNullSafe || f instanceof GreaterThan
        || f instanceof GreaterThanOrEqual || f instanceof LessThan
        || f instanceof LessThanOrEqual || f instanceof In || f instanceof StringStartsWith)) {
      return SOME;
    }
    if (nulls == rows) {
      return NONE;  // comparisons with null are never true
    }
    int out;
    try {
      Object lo = stat(c, s.get("min"));
      Object hi = stat(c, s.get("max"));
      boolean nan = s.path("nan").asBoolean(false);
      out = judge(f, c, lo, hi, nan);
    } catch (Unknown | RuntimeException e) {
      return SOME;
    }
    return out == ALL && nulls > 0 ? SOME : out;
  }

  /**
   * The top-level column a pushed filter's attribute names; null for a nested field or a name
   * that does not parse (never judged).  Spark names a filter's column as a multi-part
   * identifier, back-quoting each part that is not a plain identifier
   * ({@code QuotingUtils.quoteIfNeeded}): {@code s.a} is field {@code a} of struct {@code s},
   * {@code `s.a`} the column named "s.a", {@code `a``b`} the column named "a`b".
   */
  static String topLevelColumn(String attribute) {
    if (attribute == null || attribute.isEmpty()) {
      return null;
    }
    if (attribute.charAt(0) != '`') {
      return attribute.indexOf('.') < 0 && attribute.indexOf('`') < 0 ? attribute : null;
    }
    StringBuilder name = new StringBuilder(attribute.length());
    for (int i = 1; i < attribute.length(); i++) {
      char ch = attribute.charAt(i);
      if (ch != '`') {
        name.append(ch);
      } else if (i + 1 < attribute.length() && attribute.charAt(i + 1) == '`') {
        name.append('`');  // a doubled back-quote is one inside the name
        i++;
      } else {
        return i + 1 == attribute.length() ? name.toString() : null;  // more parts: nested
      }
    }
    return null;  // no closing back-quote
  }

  private static String attribute(Filter f) {
    if (f instanceof EqualTo) {
      return ((EqualTo) f).attribute();
    } else if (f instanceof EqualNullSafe) {
      return ((EqualNullSafe) f).attribute();
    } else if (f instanceof GreaterThan) {
      return ((GreaterThan) f).attribute();
    } else if (f instanceof GreaterThanOrEqual) {
      return ((GreaterThanOrEqual) f).attribute();
    } else if (f instanceof LessThan) {
      return ((LessThan) f).attribute();
    } else if (f instanceof LessThanOrEqual) {
      return ((LessThanOrEqual) f).attribute();
    } else if (f instanceof In) {
      return ((In) f).attribute();
    } else if (f instanceof IsNull) {
      return ((IsNull) f).attribute();
    } else if (f instanceof IsNotNull) {
      return ((IsNotNull) f).attribute();
    } else if (f instanceof StringStartsWith) {
      return ((StringStartsWith) f).attribute();
    }
    return null;
  }

  private static int judge(Filter f, ColumnSpec c, Object lo, Object hi, boolean nan)
      throws Unknown {
    if (f instanceof EqualTo || f instanceof EqualNullSafe) {
      Object v = value(c, f instanceof EqualTo ? ((EqualTo) f).value()
          : ((EqualNullSafe) f).value());
      if ((lo != null && cmp(v, lo) < 0) || (hi != null && cmp(v, hi) > 0)) {
        return NONE;
      }
      need(lo, hi);
      return cmp(lo, hi) == 0 && cmp(lo, v) == 0 && !nan ? ALL : SOME;
    }
    if (f instanceof GreaterThan) {
      return greater(value(c, ((GreaterThan) f).value()), lo, hi, nan, true);
    }
    if (f instanceof GreaterThanOrEqual) {
      return greater(value(c, ((GreaterThanOrEqual) f).value()), lo, hi, nan, false);
    }
    if (f instanceof LessThan) {
      return less(value(c, ((LessThan) f).value()), lo, hi, nan, true);
    }
    if (f instanceof LessThanOrEqual) {
      return less(value(c, ((LessThanOrEqual) f).value()), lo, hi, nan, false);
    }
    if (f instanceof In) {
      List<Object> values = new ArrayList<>();
      for (Object x : ((In) f).values()) {
        if (x != null) {
          values.add(value(c, x));
        }
      }
      if (values.isEmpty()) {
        return NONE;  // x IN (NULL, ...) is never true
      }
      need(lo, hi);
      boolean any = false;
      boolean single = false;
      for (Object v : values) {
        if (cmp(v, lo) >= 0 && cmp(v, hi) <= 0) {
          any = true;
        }
        if (cmp(lo, hi) == 0 && cmp(v, lo) == 0) {
          single = true;
        }
      }
      return !any ? NONE : single && !nan ? ALL : SOME;
    }
    if (f instanceof StringStartsWith) {
      if (c.kind != ColumnSpec.Kind.STRING && c.kind != ColumnSpec.Kind.LARGE_STRING) {
        throw UNKNOWN;
      }
      byte[] p = ((StringStartsWith) f).value().getBytes(StandardCharsets.UTF_8);
      byte[] l = (byte[]) lo;
      byte[] h = (byte[]) hi;
      if (h != null && cmp(h, p) < 0) {
        return NONE;  // every value sorts before the prefix: none starts with it
      }
      if (l != null && cmp(java.util.Arrays.copyOf(l, Math.min(l.length, p.length)), p) > 0) {
        return NONE;  // every value sorts after all strings with the prefix
      }
      need(lo, hi);
      return startsWith(l, p) && startsWith(h, p) ? ALL : SOME;
    }
    throw UNKNOWN;
  }

  private static int greater(Object v, Object lo, Object hi, boolean nan, boolean strict)
      throws Unknown {
    if (nan) {
      return SOME;  // NaN is greater than every number
    }
    need(lo, hi);
    int h = cmp(hi, v);
    if (h < 0 || (strict && h == 0)) {
      return NONE;
    }
    int l = cmp(lo, v);
    return l > 0 || (!strict && l == 0) ? ALL : SOME;
  }

  private static int less(Object v, Object lo, Object hi, boolean nan, boolean strict)
      throws Unknown {
    if (lo != null) {
      int l = cmp(lo, v);
      if (l > 0 || (strict && l == 0)) {
        return NONE;  // NaN rows never compare less
      }
    }
    need(lo, hi);
    int h = cmp(hi, v);
    return !nan && (h < 0 || (!strict && h == 0)) ? ALL : SOME;
  }

  private static void need(Object lo, Object hi) throws Unknown {
    if (lo == null || hi == null) {
      throw UNKNOWN;
    }
  }

  private static boolean startsWith(byte[] s, byte[] p) {
    if (s.length < p.length) {
      return false;
    }
    for (int i = 0; i < p.length; i++) {
      if (s[i] != p[i]) {
        return false;
      }
    }
    return true;
  }

  /** Compare two values of one domain: BigDecimal, Double (never NaN) or byte[] (unsigned). */
  private static int cmp(Object a, Object b) throws Unknown {
    if (a instanceof BigDecimal && b instanceof BigDecimal) {
      return ((BigDecimal) a).compareTo((BigDecimal) b);
    }
    if (a instanceof Double && b instanceof Double) {
      double x = (Double) a;
      double y = (Double) b;
      return x < y ? -1 : x > y ? 1 : 0;  // -0.0 == 0.0, as in Spark
    }
    if (a instanceof byte[] && b instanceof byte[]) {
      return java.util.Arrays.compareUnsigned((byte[]) a, (byte[]) b);
    }
    throw UNKNOWN;
  }

  // -- values in a common, exact domain ---------------------------------------------------------
  /** A statistic in the column's comparison domain, null when absent. */
  private static Object stat(ColumnSpec c, JsonNode raw) throws Unknown {
    if (raw == null || raw.isNull()) {
      return null;
    }
    switch (c.kind) {
      case FLOAT32: case FLOAT64:
        if (raw.isTextual()) {
          if ("inf".equals(raw.asText())) {
            return Double.POSITIVE_INFINITY;
          }
          if ("-inf".equals(raw.asText())) {
            return Double.NEGATIVE_INFINITY;
          }
          throw UNKNOWN;
        }
        if (!raw.isNumber() || Double.isNaN(raw.asDouble())) {
          throw UNKNOWN;
        }
        return raw.asDouble();
      case STRING: case LARGE_STRING:
        if (!raw.isTextual()) {
          throw UNKNOWN;
        }
        return raw.asText().getBytes(StandardCharsets.UTF_8);
      case BINARY: case LARGE_BINARY:
        if (!raw.isTextual()) {
          throw UNKNOWN;
        }
        return hex(raw.asText());
      default:
        if (!raw.isIntegralNumber()) {
          throw UNKNOWN;
        }
        BigInteger x = raw.bigIntegerValue();
        if (c.kind == ColumnSpec.Kind.DECIMAL128) {
          return new BigDecimal(x,
              ((org.apache.spark.sql.types.DecimalType) c.sparkType).scale());
        }
        if (c.kind == ColumnSpec.Kind.TIMESTAMP) {
          return new BigDecimal(x.multiply(BigInteger.valueOf(microsPer(c.unit))));
        }
        return new BigDecimal(x);
    }
  }

  private static long microsPer(TimeUnit unit) throws Unknown {
    switch (unit) {
      case SECOND: return 1_000_000L;
      case MILLISECOND: return 1_000L;
      case MICROSECOND: return 1L;
      default: throw UNKNOWN;
    }
  }

  private static byte[] hex(String s) throws Unknown {
    if (s.length() % 2 != 0) {
      throw UNKNOWN;
    }
    byte[] out = new byte[s.length() / 2];
    for (int i = 0; i < out.length; i++) {
      int hi = Character.digit(s.charAt(2 * i), 16);
      int lo = Character.digit(s.charAt(2 * i + 1), 16);
      if (hi < 0 || lo < 0) {
        throw UNKNOWN;
      }
      out[i] = (byte) (hi << 4 | lo);
    }
    return out;
  }

  /** A filter literal in the column's comparison domain ({@link Unknown} when not exact). */
  private static Object value(ColumnSpec c, Object v) throws Unknown {
    if (v == null) {
      throw UNKNOWN;
    }
    switch (c.kind) {
      case BOOL:
        if (!(v instanceof Boolean)) {
          throw UNKNOWN;
        }
        return BigDecimal.valueOf((Boolean) v ? 1 : 0);
      case INT8: case INT16: case INT32: case INT64: case DECIMAL128:
        return number(v);
      case FLOAT32: case FLOAT64: {
        if (!(v instanceof Double || v instanceof Float || v instanceof Integer
            || v instanceof Short || v instanceof Byte)) {
          throw UNKNOWN;  // a long or a decimal may not convert to a double exactly
        }
        double d = ((Number) v).doubleValue();
        if (Double.isNaN(d)) {
          throw UNKNOWN;  // NaN equals NaN and sorts above every number
        }
        return d;
      }
      case DATE32:
        if (v instanceof LocalDate) {
          return BigDecimal.valueOf(((LocalDate) v).toEpochDay());
        }
        if (v instanceof java.sql.Date) {
          return BigDecimal.valueOf(days((java.sql.Date) v));
        }
        throw UNKNOWN;
      case TIMESTAMP: {
        boolean ntz = c.sparkType == org.apache.spark.sql.types.DataTypes.TimestampNTZType;
        Instant t;
        if (!ntz && v instanceof Instant) {
          t = (Instant) v;
        } else if (!ntz && v instanceof java.sql.Timestamp) {
          return BigDecimal.valueOf(micros((java.sql.Timestamp) v));
        } else if (ntz && v instanceof LocalDateTime) {
          t = ((LocalDateTime) v).toInstant(ZoneOffset.UTC);
        } else {
          throw UNKNOWN;
        }
        return BigDecimal.valueOf(t.getEpochSecond()).scaleByPowerOfTen(6)
            .add(BigDecimal.valueOf(t.getNano()).scaleByPowerOfTen(-3));
      }
      case STRING: case LARGE_STRING:
        if (!(v instanceof String)) {
          throw UNKNOWN;
        }
        return ((String) v).getBytes(StandardCharsets.UTF_8);
      case BINARY: case LARGE_BINARY:
        if (!(v instanceof byte[])) {
          throw UNKNOWN;
        }
        return v;
      default:
        throw UNKNOWN;
    }
  }

  /** 1582-10-15, the first day of the Gregorian calendar, in days since 1970-01-01. */
  private static final int GREGORIAN_START = -141427;
  private static final long MICROS_PER_DAY = 86_400_000_000L;

  /**
   * Spark's days for a {@code java.sql.Date} literal.  Spark makes it with {@code toJavaDate},
   * in the hybrid Julian calendar, so {@code toLocalDate()} is days off before 1582-10-15; read
   * back with Spark's inverse.  Every date of 1582-10-05..15 becomes the same {@code Date}, so
   * 1582-10-15 is not known exactly.
   */
  private static int days(java.sql.Date d) throws Unknown {
    int days = exactly(d, DateTimeUtils::fromJavaDate, DateTimeUtils::toJavaDate);
    if (days == GREGORIAN_START) {
      throw UNKNOWN;
    }
    return days;
  }

  /**
   * Spark's microseconds for a {@code java.sql.Timestamp} literal, as {@link #days}: the local
   * times (JVM time zone) of 1582-10-05..15 collapse onto 1582-10-15, so a day either side of it
   * is not known exactly.
   */
  private static long micros(java.sql.Timestamp t) throws Unknown {
    long micros = exactly(t, DateTimeUtils::fromJavaTimestamp, DateTimeUtils::toJavaTimestamp);
    long day = Math.floorDiv(micros, MICROS_PER_DAY);
    if (day >= GREGORIAN_START - 1 && day <= GREGORIAN_START + 1) {
      throw UNKNOWN;
    }
    return micros;
  }

  /** {@code in(literal)}, known only when {@code out} gives {@code literal} back. */
  private static <L, V> V exactly(L literal, Function<L, V> in, Function<V, L> out)
      throws Unknown {
    V value;
    boolean back;
    try {
      value = in.apply(literal);
      back = out.apply(value).equals(literal);
    } catch (Exception e) {
      throw UNKNOWN;  // Scala may throw checked exceptions (a JVM without Spark's add-opens)
    }
    if (!back) {
      throw UNKNOWN;
    }
    return value;
  }

  private static BigDecimal number(Object v) throws Unknown {
    if (v instanceof BigDecimal) {
      return (BigDecimal) v;
    }
    if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return BigDecimal.valueOf(((Number) v).longValue());
    }
    if (v instanceof BigInteger) {
      return new BigDecimal((BigInteger) v);
    }
    if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        throw UNKNOWN;
      }
      return new BigDecimal(d);
    }
    throw UNKNOWN;
  }
}
