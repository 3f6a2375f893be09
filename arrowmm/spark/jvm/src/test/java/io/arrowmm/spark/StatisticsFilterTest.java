package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;
import org.junit.jupiter.api.Test;

/** Batch verdicts from the statistics arrowmm's writer put in a footer: batch 0 holds k 0..2,
 * batch 1 holds k 10..12 (src/test/resources/arrowmm_statistics.arrow). */
class StatisticsFilterTest {
  private final FileFooter footer =
      FileFooterTest.footer(FileFooterTest.resource("arrowmm_statistics.arrow"));

  private int verdict(Filter f, int batch) {
    Map<String, ColumnSpec> columns = new HashMap<>();
    for (ColumnSpec c : footer.columns) {
      columns.put(c.name, c);
    }
    return StatisticsFilter.verdict(f, columns, footer.statistics(), batch);
  }

  @Test
  void comparisonsSkipBatchesOutsideMinMax() {
    Filter gt5 = new GreaterThan("k", 5L);
    assertEquals(StatisticsFilter.NONE, verdict(gt5, 0));
    assertEquals(StatisticsFilter.ALL, verdict(gt5, 1));
    Filter le11 = new LessThanOrEqual("k", 11L);
    assertEquals(StatisticsFilter.ALL, verdict(le11, 0));
    assertEquals(StatisticsFilter.SOME, verdict(le11, 1));
    assertEquals(StatisticsFilter.NONE, verdict(new EqualTo("k", 7L), 0));
    assertEquals(StatisticsFilter.NONE, verdict(new EqualTo("k", 7L), 1));
    assertEquals(StatisticsFilter.SOME, verdict(new EqualTo("k", 11L), 1));
  }

  @Test
  void nullsAndLogic() {
    assertEquals(StatisticsFilter.NONE, verdict(new IsNull("k"), 0));
    Filter either = new Or(new EqualTo("k", 1L), new EqualTo("k", 11L));
    assertEquals(StatisticsFilter.SOME, verdict(either, 0));
    Filter both = new And(new GreaterThan("k", 5L), new EqualTo("k", 1L));
    assertEquals(StatisticsFilter.NONE, verdict(both, 0));
    assertEquals(StatisticsFilter.NONE, verdict(both, 1));
    // NOT of a batch where every row matches matches none
    assertEquals(StatisticsFilter.NONE, verdict(new Not(new GreaterThan("k", 5L)), 1));
  }

  @Test
  void unknownColumnsAndValuesNeverSkip() {
    Map<String, ColumnSpec> columns = new HashMap<>();
    for (ColumnSpec c : footer.columns) {
      columns.put(c.name, c);
    }
    assertFalse(StatisticsFilter.usable(new GreaterThan("other", 1L), columns));
    assertTrue(StatisticsFilter.usable(new GreaterThan("k", 1L), columns));
    assertEquals(StatisticsFilter.SOME, verdict(new GreaterThan("other", 100L), 0));
    // a value of another type than the column's is not compared (the rows decide)
    assertEquals(StatisticsFilter.SOME, verdict(new GreaterThan("k", "zzz"), 0));
  }

  @Test
  void attributesAreSparkMultipartNames() {
    // Spark back-quotes a top-level name that is not a plain identifier; an unquoted dot
    // separates a struct column from its nested field
    assertEquals("k", StatisticsFilter.topLevelColumn("k"));
    assertEquals("s.a", StatisticsFilter.topLevelColumn("`s.a`"));
    assertEquals("a`b", StatisticsFilter.topLevelColumn("`a``b`"));
    assertEquals("", StatisticsFilter.topLevelColumn("``"));
    assertNull(StatisticsFilter.topLevelColumn("s.a"));
    assertNull(StatisticsFilter.topLevelColumn("`s`.a"));
    assertNull(StatisticsFilter.topLevelColumn("`s.a`.b"));
    assertNull(StatisticsFilter.topLevelColumn("`s"));
    assertNull(StatisticsFilter.topLevelColumn("a`b"));
    assertEquals(StatisticsFilter.NONE, verdict(new GreaterThan("`k`", 5L), 0));
  }

  @Test
  void aNestedFieldIsNotJudgedByAColumnNamedLikeIt() {
    // a top-level column named "k.x" (here k's statistics, 0..2 in batch 0) does not describe
    // field x of a struct k: the filter k.x > 5 names that field
    Map<String, ColumnSpec> columns = new HashMap<>();
    for (ColumnSpec c : footer.columns) {
      columns.put(c.name + ".x", c);
    }
    Filter nested = new GreaterThan("k.x", 5L);
    assertFalse(StatisticsFilter.usable(nested, columns));
    assertEquals(StatisticsFilter.SOME,
        StatisticsFilter.verdict(nested, columns, footer.statistics(), 0));
    assertEquals(StatisticsFilter.NONE,
        StatisticsFilter.verdict(new GreaterThan("`k.x`", 5L), columns, footer.statistics(), 0));
  }

  @Test
  void collatedStringsAreNotJudgedByTheirBytes() {
    // under UTF8_LCASE 'a0' = 'A0', though 'a0' is above a batch's byte-wise bounds ['A0', 'B']
    List<ColumnSpec> columns = ColumnSpec.of(new Schema(List.of(
        new Field("c", new FieldType(true, ArrowType.Utf8.INSTANCE, null,
            Map.of(ColumnSpec.COLLATION_KEY, "UTF8_LCASE")), null),
        new Field("p", FieldType.nullable(ArrowType.Utf8.INSTANCE), null))), "t.arrow");
    assertFalse(StatisticsFilter.prunable(columns.get(0)));
    assertTrue(StatisticsFilter.prunable(columns.get(1)));
  }
}
