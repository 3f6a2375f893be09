package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.Not;
import org.junit.jupiter.api.Test;

/**
 * Date and timestamp literals as Spark hands them to a V1 filter: {@code java.sql.Date} and
 * {@code Timestamp} made by {@code DateTimeUtils.toJavaDate} / {@code toJavaTimestamp} (hybrid
 * Julian calendar, JVM time zone), or {@code LocalDate}, {@code Instant}, {@code LocalDateTime}
 * (proleptic Gregorian, as Spark's days and microseconds).  Batch 0 holds 1000-01-01 (d, t at
 * midnight UTC, n at midnight), batch 1 holds 1582-10-15 (t and n at noon), each one row.
 */
class StatisticsCalendarTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Schema SCHEMA = new Schema(List.of(
      Field.nullable("d", new ArrowType.Date(DateUnit.DAY)),
      Field.nullable("t", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")),
      Field.nullable("n", new ArrowType.Timestamp(TimeUnit.MICROSECOND, null))));
  private static final List<ColumnSpec> SPECS = ColumnSpec.of(SCHEMA, "calendar.arrow");
  private static final LocalDateTime[] ROWS = {
      LocalDateTime.of(1000, 1, 1, 0, 0), LocalDateTime.of(1582, 10, 15, 12, 0)};
  private static final BatchStatistics STATS = statistics();

  private static long micros(LocalDateTime t) {
    return DateTimeUtils.localDateTimeToMicros(t);
  }

  private static int days(LocalDate d) {
    return (int) d.toEpochDay();
  }

  private static BatchStatistics statistics() {
    ObjectNode doc = JSON.createObjectNode();
    doc.put("version", 3);
    doc.put("id", "0123456789abcdef0123456789abcdef");
    doc.putArray("columns").add("d").add("t").add("n");
    doc.putObject("types").put("d", "date32[day]").put("t", "timestamp[us, tz=UTC]")
        .put("n", "timestamp[us]");
    ArrayNode batches = doc.putArray("batches");
    for (int i = 0; i < ROWS.length; i++) {
      ObjectNode b = batches.addObject();
      b.put("rows", 1);
      b.putArray("block").add(192 + 512 * i).add(256).add(64);
      ObjectNode c = b.putObject("columns");
      int d = days(ROWS[i].toLocalDate());
      c.putObject("d").put("nulls", 0).put("min", d).put("max", d);
      long t = micros(ROWS[i]);
      c.putObject("t").put("nulls", 0).put("min", t).put("max", t);
      c.putObject("n").put("nulls", 0).put("min", t).put("max", t);
    }
    byte[] text = doc.toString().getBytes(StandardCharsets.UTF_8);
    BatchStatistics s = BatchStatistics.ofFooter(
        new BatchStatistics.Stored(text, BatchStatistics.sha256(text)), SCHEMA, SPECS,
        new long[] {192, 704}, new int[] {256, 256}, new long[] {64, 64});
    assertNotNull(s);
    return s;
  }

  private static int verdict(Filter f, int batch) {
    Map<String, ColumnSpec> columns = new HashMap<>();
    for (ColumnSpec c : SPECS) {
      columns.put(c.name, c);
    }
    return StatisticsFilter.verdict(f, columns, STATS, batch);
  }

  /** Spark's literals for a date and a UTC wall time, as its V1 filter translation makes them. */
  private static java.sql.Date sqlDate(int year, int month, int day) {
    return DateTimeUtils.toJavaDate(days(LocalDate.of(year, month, day)));
  }

  private static java.sql.Timestamp sqlTimestamp(LocalDateTime utc) {
    return DateTimeUtils.toJavaTimestamp(micros(utc));
  }

  /** Runs {@code checks} with each of these JVM time zones (Spark's java.sql literals use it). */
  private static void inZones(Runnable checks) {
    TimeZone saved = TimeZone.getDefault();
    try {
      for (String zone : new String[] {"UTC", "America/Los_Angeles", "Asia/Kolkata"}) {
        TimeZone.setDefault(TimeZone.getTimeZone(zone));
        checks.run();
      }
    } finally {
      TimeZone.setDefault(saved);
    }
  }

  @Test
  void preGregorianLiteralsAreSparksDaysAndMicros() {
    inZones(() -> {
      // toLocalDate()/toInstant() read these 5 days late: the batch was judged NONE
      assertEquals(StatisticsFilter.ALL, verdict(new EqualTo("d", sqlDate(1000, 1, 1)), 0));
      assertEquals(StatisticsFilter.NONE, verdict(new EqualTo("d", sqlDate(1000, 1, 2)), 0));
      assertEquals(StatisticsFilter.ALL,
          verdict(new GreaterThanOrEqual("d", sqlDate(1000, 1, 1)), 0));
      assertEquals(StatisticsFilter.ALL,
          verdict(new EqualTo("t", sqlTimestamp(ROWS[0])), 0));
      assertEquals(StatisticsFilter.NONE,
          verdict(new EqualTo("t", sqlTimestamp(ROWS[0].plusSeconds(1))), 0));
      assertEquals(StatisticsFilter.NONE, verdict(new LessThan("t", sqlTimestamp(ROWS[0])), 0));
      // spark.sql.datetime.java8API.enabled: java.time values, already proleptic Gregorian
      assertEquals(StatisticsFilter.ALL,
          verdict(new EqualTo("d", LocalDate.of(1000, 1, 1)), 0));
      assertEquals(StatisticsFilter.ALL,
          verdict(new EqualTo("t", ROWS[0].toInstant(ZoneOffset.UTC)), 0));
      assertEquals(StatisticsFilter.ALL, verdict(new EqualTo("n", ROWS[0]), 0));
      assertEquals(StatisticsFilter.SOME,
          verdict(new EqualTo("n", Instant.EPOCH), 0), "an Instant is no timestamp_ntz value");
    });
  }

  @Test
  void literalsInTheGregorianGapAreNeverJudged() {
    inZones(() -> {
      // 1582-10-05..15 all become one java.sql.Date (read back as 1582-10-15)
      java.sql.Date gap = sqlDate(1582, 10, 10);
      assertEquals(StatisticsFilter.SOME, verdict(new Not(new EqualTo("d", gap)), 1));
      assertEquals(StatisticsFilter.SOME, verdict(new GreaterThan("d", gap), 1));
      assertEquals(StatisticsFilter.SOME,
          verdict(new EqualTo("d", sqlDate(1582, 10, 15)), 1));
      assertEquals(StatisticsFilter.NONE,
          verdict(new GreaterThan("d", sqlDate(1582, 10, 16)), 1));
      java.sql.Timestamp gapNoon = sqlTimestamp(LocalDateTime.of(1582, 10, 10, 12, 0));
      assertEquals(StatisticsFilter.SOME, verdict(new Not(new EqualTo("t", gapNoon)), 1));
      assertEquals(StatisticsFilter.SOME, verdict(new GreaterThan("t", gapNoon), 1));
      // java.time literals are exact there too
      assertEquals(StatisticsFilter.ALL,
          verdict(new GreaterThan("d", LocalDate.of(1582, 10, 10)), 1));
      assertEquals(StatisticsFilter.NONE,
          verdict(new EqualTo("d", LocalDate.of(1582, 10, 10)), 1));
    });
  }
}
