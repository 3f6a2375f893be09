package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Statistics version 3's {@code types}: a document is used only when it names, for every column
 * an entry describes, the type the schema the values are read by gives it (pyarrow's string,
 * {@link TypeStrings}).  A missing {@code types}, a missing name, another string (one damaged
 * schema byte: an int32 read as uint32, a timestamp's unit) give no statistics: the bounds
 * were recorded for other values.  Documents built here, then arrowmm's writer's file and stream
 * (src/test/resources) with one byte of their schema or of their {@code types} changed.
 */
class StatisticsTypesTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ID = "0123456789abcdef0123456789abcdef";
  /** k int32, t a timestamp in ms at Paris, s a string (described), n of nulls (never). */
  private static final Schema SCHEMA = new Schema(List.of(
      Field.nullable("k", new ArrowType.Int(32, true)),
      Field.nullable("t", new ArrowType.Timestamp(TimeUnit.MILLISECOND, "Europe/Paris")),
      Field.nullable("s", ArrowType.Utf8.INSTANCE),
      Field.nullable("n", ArrowType.Null.INSTANCE)));
  private static final List<ColumnSpec> SPECS = ColumnSpec.of(SCHEMA, "kts.arrow");
  private static final String GOOD =
      "{\"k\":\"int32\",\"t\":\"timestamp[ms, tz=Europe/Paris]\",\"s\":\"string\"}";

  /** A file document of two batches (one Block each, 192/512) describing k and t in both and s
   * in batch 1 only, with {@code types} (null: none), stored with its digest. */
  static BatchStatistics.Stored stored(JsonNode types) {
    ObjectNode doc = JSON.createObjectNode();
    doc.put("version", 3);
    doc.put("id", ID);
    doc.putArray("columns").add("k").add("t").add("s").add("n");
    if (types != null) {
      doc.set("types", types);
    }
    ArrayNode batches = doc.putArray("batches");
    for (int i = 0; i < 2; i++) {
      ObjectNode b = batches.addObject();
      b.put("rows", 3);
      b.putArray("block").add(i == 0 ? 192 : 512).add(256).add(64);
      ObjectNode c = b.putObject("columns");
      c.putObject("k").put("nulls", 0).put("min", 10 * i).put("max", 10 * i + 2);
      c.putObject("t").put("nulls", 3);
      if (i == 1) {
        c.putObject("s").put("nulls", 0).put("min", "a").put("max", "b");
      }
    }
    byte[] text = doc.toString().getBytes(StandardCharsets.UTF_8);
    return new BatchStatistics.Stored(text, BatchStatistics.sha256(text));
  }

  static BatchStatistics judged(String types) throws IOException {
    return judged(stored(types == null ? null : JSON.readTree(types)), SCHEMA);
  }

  static BatchStatistics judged(BatchStatistics.Stored stored, Schema schema) {
    return BatchStatistics.ofFooter(stored, schema, SPECS, new long[] {192, 512},
        new int[] {256, 256}, new long[] {64, 64});
  }

  @Test
  void theTypesOfTheReadersSchemaAreUsed() throws IOException {
    BatchStatistics s = judged(GOOD);
    assertNotNull(s);
    assertEquals(12, s.column(1, "k").get("max").asLong());
    // a name no entry describes may be there or not (n: nulls, never described)
    assertNotNull(judged("{\"k\":\"int32\",\"t\":\"timestamp[ms, tz=Europe/Paris]\","
        + "\"s\":\"string\",\"n\":\"anything\"}"));
  }

  @Test
  void missingTypesAreIgnored() throws IOException {
    assertNull(judged(null), "no types (a version 3 writer's of earlier today)");
    assertNull(judged("[\"int32\"]"), "not an object");
    assertNull(judged("\"int32\""), "a string");
    assertNull(judged("{}"), "no name");
    // s is described by batch 1 only: still needed
    assertNull(judged("{\"k\":\"int32\",\"t\":\"timestamp[ms, tz=Europe/Paris]\"}"));
    assertNull(judged("{\"k\":\"int32\",\"s\":\"string\"}"));
  }

  @Test
  void anyOtherStringIsIgnored() throws IOException {
    for (String[] wrong : new String[][] {{"int32", "uint32"}, {"int32", "int64"},
        {"int32", "Int32"}, {"int32", "int32 "}, {"tz=Europe/Paris", "tz=UTC"},
        {"[ms,", "[us,"}, {", tz=Europe/Paris", ""}, {"\"string\"", "\"large_string\""},
        {"\"string\"", "\"utf8\""}, {"\"int32\"", "32"}, {"\"int32\"", "null"},
        {"\"int32\"", "[\"int32\"]"}}) {
      String types = GOOD.replace(wrong[0], wrong[1]);
      assertTrue(!types.equals(GOOD), wrong[0]);
      assertNull(judged(types), types);
    }
  }

  @Test
  void theSchemaIsWhatTheStringsAreComparedWith() throws IOException {
    BatchStatistics.Stored good = stored(JSON.readTree(GOOD));
    // the same document against a schema whose k reads as uint32 (one byte of a footer)
    Schema unsigned = new Schema(List.of(Field.nullable("k", new ArrowType.Int(32, false)),
        SCHEMA.getFields().get(1), SCHEMA.getFields().get(2), SCHEMA.getFields().get(3)));
    assertNull(judged(good, unsigned));
    // t in another unit
    Schema micros = new Schema(List.of(SCHEMA.getFields().get(0),
        Field.nullable("t", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "Europe/Paris")),
        SCHEMA.getFields().get(2), SCHEMA.getFields().get(3)));
    assertNull(judged(good, micros));
    // a described name the schema lacks
    Schema renamed = new Schema(List.of(SCHEMA.getFields().get(0), SCHEMA.getFields().get(1),
        Field.nullable("z", ArrowType.Utf8.INSTANCE), SCHEMA.getFields().get(3)));
    assertNull(judged(good, renamed));
    assertNotNull(judged(good, SCHEMA));
  }

  @Test
  void theEncoderWritesTheTypesOfTheColumnsItDescribes() throws IOException {
    ArrayNode stats = JSON.createArrayNode();
    for (int i = 0; i < 2; i++) {
      ObjectNode b = stats.addObject();
      b.put("rows", 3);
      ObjectNode c = b.putObject("columns");
      c.putObject("k").put("nulls", 0).put("min", 10 * i).put("max", 10 * i + 2);
      if (i == 1) {
        c.putObject("s").put("nulls", 3);
      }
    }
    String text = BatchStatistics.footerEntries(ID, SCHEMA, stats, List.of(
        new org.apache.arrow.vector.ipc.message.ArrowBlock(192, 256, 64),
        new org.apache.arrow.vector.ipc.message.ArrowBlock(512, 256, 64)))
        .get(BatchStatistics.KEY);
    // t (no entry) and n (nulls) are not named
    assertEquals(JSON.readTree("{\"k\":\"int32\",\"s\":\"string\"}"),
        JSON.readTree(text).get("types"));
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    assertNotNull(judged(new BatchStatistics.Stored(bytes, BatchStatistics.sha256(bytes)),
        SCHEMA), "the reader takes what the writer writes");
  }

  /** arrowmm's writer's file with the footer schema's byte that makes k (int64) read as uint64
   * set (Int.is_signed 1 to 0): the only such byte, found as the review's test finds it. */
  static byte[] signednessFlipped(Path dir, byte[] file) throws IOException {
    int footerStart = file.length - 10 - java.nio.ByteBuffer.wrap(file)
        .order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(file.length - 10);
    byte[] found = null;
    for (int at = footerStart; at < file.length - 10; at++) {
      if (file[at] != 1) {
        continue;
      }
      byte[] m = file.clone();
      m[at] = 0;
      try {
        FileFooter f = BatchStatisticsTest.footer(BatchStatisticsTest.write(dir, "m.arrow", m));
        if (f.schema.getFields().size() == 1
            && new ArrowType.Int(64, false).equals(f.schema.getFields().get(0).getType())) {
          assertNull(found, "one such byte");
          found = m;
        }
      } catch (RuntimeException e) {
        // another byte: the footer no longer reads
      }
    }
    assertNotNull(found, "a byte of the footer makes k uint64");
    return found;
  }

  @Test
  void aFileWhoseSchemaReadsKUnsignedHasNoStatistics(@TempDir Path dir) throws IOException {
    Path file = BatchStatisticsTest.written(dir);
    assertNotNull(BatchStatisticsTest.footer(file).statistics());
    byte[] flipped = signednessFlipped(dir, Files.readAllBytes(file));
    FileFooter f = BatchStatisticsTest.footer(BatchStatisticsTest.write(dir, "uint64.arrow",
        flipped));
    assertEquals(ColumnSpec.Kind.UINT64, f.columns.get(0).kind);
    assertNull(f.claimedStatistics(), "refused from the footer alone");
    assertNull(f.statistics());
    assertEquals(6, f.countRows(), "rows from the batches' headers");
  }

  @Test
  void aFileDocumentNamingAnotherTypeHasNoStatistics(@TempDir Path dir) throws IOException {
    byte[] bytes = Files.readAllBytes(BatchStatisticsTest.written(dir));
    String doc = BatchStatisticsTest.document(bytes);
    assertTrue(doc.contains("\"types\":{\"k\":\"int64\"}"), doc);
    // the document says int32 and its digest is that document's: only the type is wrong
    String other = doc.replace("\"k\":\"int64\"", "\"k\":\"int32\"");
    byte[] changed = BatchStatisticsTest.replaced(BatchStatisticsTest.replaced(bytes, doc, other,
        0), BatchStatistics.sha256(doc.getBytes(StandardCharsets.UTF_8)),
        BatchStatistics.sha256(other.getBytes(StandardCharsets.UTF_8)), 0);
    FileFooter f = BatchStatisticsTest.footer(BatchStatisticsTest.write(dir, "int32.arrow",
        changed));
    assertNull(f.claimedStatistics());
    assertNull(f.statistics());
  }

  @Test
  void aStreamBatchNamingAnotherTypeHasNoStatistics(@TempDir Path dir) throws IOException {
    Path good = Path.of(FileFooterTest.resource("arrowmm_statistics.arrows"));
    byte[] bytes = Files.readAllBytes(good);
    String s = new String(bytes, StandardCharsets.ISO_8859_1);
    int at = s.lastIndexOf("{\"version\":3,");
    String doc = s.substring(at, s.indexOf("}}}", at) + 3);
    assertTrue(doc.contains("\"types\":{\"k\":\"int64\"}"), doc);
    // batch 1's document (its digest made again) names k int32: batch 1 has no statistics,
    // batch 0 keeps its own
    String other = doc.replace("\"k\":\"int64\"", "\"k\":\"int32\"");
    byte[] changed = BatchStatisticsTest.replaced(BatchStatisticsTest.replaced(bytes, doc, other,
        0), BatchStatistics.sha256(doc.getBytes(StandardCharsets.UTF_8)),
        BatchStatistics.sha256(other.getBytes(StandardCharsets.UTF_8)), 0);
    FileFooter f = BatchStatisticsTest.footer(BatchStatisticsTest.write(dir, "uint64.arrows",
        changed));
    assertNull(f.statistics().column(1, "k"));
    assertEquals(-1, f.statistics().rows(1));
    assertEquals(2, f.statistics().column(0, "k").get("max").asLong());
    // the same for a batch whose document has no types at all
    String none = doc.replace("\"types\":{\"k\":\"int64\"},", "");
    none = none + " ".repeat(doc.length() - none.length());  // (JSON allows trailing spaces)
    FileFooter g = BatchStatisticsTest.footer(BatchStatisticsTest.write(dir, "none.arrows",
        BatchStatisticsTest.replaced(BatchStatisticsTest.replaced(bytes, doc, none, 0),
            BatchStatistics.sha256(doc.getBytes(StandardCharsets.UTF_8)),
            BatchStatistics.sha256(none.getBytes(StandardCharsets.UTF_8)), 0)));
    assertNull(g.statistics().column(1, "k"));
    assertEquals(2, g.statistics().column(0, "k").get("max").asLong());
    assertEquals(12, BatchStatisticsTest.footer(good).statistics().column(1, "k").get("max")
        .asLong(), "the file as written: both batches'");
  }
}
