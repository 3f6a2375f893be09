package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Statistics version 3: each entry of a file document's {@code batches} records the footer
 * Block of its batch ({@code "block": [offset, metaDataLength, bodyLength]}), and a reader uses
 * the document only when entry i's block is the footer's Block i for every i.  Two swapped
 * Blocks (the batches then read in another order, each judged by the other's bounds before),
 * one number off, a block missing or not three integers, or a version 2 document: no
 * statistics at all.  The encoder records the Blocks it is given (the JVM writer's, those of
 * the footer it writes: tests/spark/test_spark_jvm_statistics_binding.py reads its files).
 */
class StatisticsBlocksTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Schema SCHEMA = new Schema(List.of(
      Field.nullable("k", new ArrowType.Int(64, true))));
  private static final List<ColumnSpec> K = ColumnSpec.of(SCHEMA, "k.arrow");
  private static final String ID = "0123456789abcdef0123456789abcdef";
  /** Two Blocks as a footer lists them (offsets, metadata lengths, body lengths). */
  private static final long[] OFFSETS = {192, 512};
  private static final int[] METAS = {256, 192};
  private static final long[] BODIES = {64, 64};

  /** A version 3 document of two batches of k (0..2 and 10..12) recording {@code blocks}
   * (null: the entry has no block), stored with its digest. */
  static BatchStatistics.Stored stored(int version, JsonNode... blocks) {
    ObjectNode doc = JSON.createObjectNode();
    doc.put("version", version);
    doc.put("id", ID);
    doc.putArray("columns").add("k");
    doc.putObject("types").put("k", "int64");
    ArrayNode batches = doc.putArray("batches");
    for (int i = 0; i < blocks.length; i++) {
      ObjectNode b = batches.addObject();
      b.put("rows", 3);
      if (blocks[i] != null) {
        b.set("block", blocks[i]);
      }
      b.putObject("columns").putObject("k").put("nulls", 0).put("min", 10 * i)
          .put("max", 10 * i + 2);
    }
    byte[] text = doc.toString().getBytes(StandardCharsets.UTF_8);
    return new BatchStatistics.Stored(text, BatchStatistics.sha256(text));
  }

  static JsonNode block(Object... values) {
    return JSON.valueToTree(Arrays.asList(values));
  }

  static BatchStatistics judged(BatchStatistics.Stored stored) {
    return BatchStatistics.ofFooter(stored, SCHEMA, K, OFFSETS, METAS, BODIES);
  }

  @Test
  void entriesRecordingTheFooterBlocksAreUsed() {
    BatchStatistics s = judged(stored(3, block(192, 256, 64), block(512, 192, 64)));
    assertNotNull(s);
    assertEquals(12, s.column(1, "k").get("max").asLong());
    assertEquals(ID, s.id);
    // large offsets (past 2 GiB) are JSON integers like any other
    long far = 5L << 32;
    assertNotNull(BatchStatistics.ofFooter(stored(3, block(far, 256, 64), block(far + 320, 192,
        64)), SCHEMA, K, new long[] {far, far + 320}, METAS, BODIES));
  }

  @Test
  void swappedBlocksAreIgnored() {
    // the writer's blocks in the other order: the footer's Block 0 is the entry 1 recorded
    assertNull(judged(stored(3, block(512, 192, 64), block(192, 256, 64))));
    // the same blocks swapped on the footer's side
    assertNull(BatchStatistics.ofFooter(stored(3, block(192, 256, 64), block(512, 192, 64)),
        SCHEMA, K, new long[] {512, 192}, new int[] {192, 256}, BODIES));
  }

  @Test
  void oneNumberOffIsIgnored() {
    assertNull(judged(stored(3, block(192, 256, 64), block(520, 192, 64))));
    assertNull(judged(stored(3, block(192, 256, 64), block(512, 200, 64))));
    assertNull(judged(stored(3, block(192, 256, 64), block(512, 192, 72))));
    assertNull(judged(stored(3, block(184, 256, 64), block(512, 192, 64))));
  }

  @Test
  void aMissingOrMalformedBlockIsIgnored() {
    JsonNode good = block(192, 256, 64);
    assertNull(judged(stored(3, good, null)), "entry 1 has no block");
    assertNull(judged(stored(3, null, null)), "no entry has one (a version 2 writer's shape)");
    assertNull(judged(stored(3, good, block(512, 192))), "two numbers");
    assertNull(judged(stored(3, good, block(512, 192, 64, 0))), "an extra element");
    assertNull(judged(stored(3, good, block(512.0, 192, 64))), "a float");
    assertNull(judged(stored(3, good, block("512", 192, 64))), "a string");
    assertNull(judged(stored(3, good, block(512, true, 64))), "a boolean");
    assertNull(judged(stored(3, good, block(512, 192, null))), "a null");
    assertNull(judged(stored(3, good, JSON.createObjectNode().put("offset", 512))), "an object");
    assertNull(judged(stored(3, good, block(new java.math.BigInteger("18446744073709552128"),
        192, 64))), "an integer past int64 (512 + 2^64)");
    // an entry per Block, no more, no fewer
    assertNull(judged(stored(3, good)));
    assertNull(judged(stored(3, good, block(512, 192, 64), block(704, 192, 64))));
  }

  @Test
  void versionTwoAndOtherVersionsAreIgnored() {
    for (int version : new int[] {1, 2, 4}) {
      assertNull(judged(stored(version, block(192, 256, 64), block(512, 192, 64))),
          "version " + version);
    }
  }

  /** The footer's offset of the 24-byte Block struct {@code (offset, metaDataLength, pad,
   * bodyLength)} in {@code file}. */
  static int blockAt(byte[] file, long offset, int meta, long body) {
    ByteBuffer b = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
    int footerStart = file.length - 10 - b.getInt(file.length - 10);
    int found = -1;
    for (int at = footerStart; at + 24 <= file.length - 10; at += 8) {
      if (b.getLong(at) == offset && b.getInt(at + 8) == meta && b.getLong(at + 16) == body) {
        assertEquals(-1, found, "one such block");
        found = at;
      }
    }
    assertTrue(found >= 0, "block (" + offset + ", " + meta + ", " + body + ") in the footer");
    return found;
  }

  @Test
  void aFileWhoseFooterBlocksAreSwappedHasNoStatistics(@TempDir Path dir) throws IOException {
    Path file = BatchStatisticsTest.written(dir);
    FileFooter f = BatchStatisticsTest.footer(file);
    assertNotNull(f.statistics());
    byte[] bytes = Files.readAllBytes(file);
    int a = blockAt(bytes, f.offsets[0], f.metaLengths[0], f.bodyLengths[0]);
    int b = blockAt(bytes, f.offsets[1], f.metaLengths[1], f.bodyLengths[1]);
    byte[] swapped = bytes.clone();
    System.arraycopy(bytes, a, swapped, b, 24);
    System.arraycopy(bytes, b, swapped, a, 24);
    FileFooter s = BatchStatisticsTest.footer(BatchStatisticsTest.write(dir, "swapped.arrow",
        swapped));
    assertArrayEquals(new long[] {f.offsets[1], f.offsets[0]}, s.offsets, "the footer's order");
    // refused from the footer alone, before any read of batch 0 (version 2 took this document,
    // then refused it only because the swap moved batch 0's stamp: a swap of two other
    // batches it used)
    assertNull(s.claimedStatistics());
    assertNull(s.statistics());
    assertEquals(6, s.countRows(), "rows from the batches' headers");
  }

  @Test
  void theEncoderRecordsTheBlocksItIsGiven() throws IOException {
    String id = BatchStatistics.newId();
    ArrayNode stats = JSON.createArrayNode();
    for (int i = 0; i < 2; i++) {
      ObjectNode b = stats.addObject();
      b.put("rows", 3);
      b.putObject("columns").putObject("k").put("nulls", 0).put("min", 10 * i)
          .put("max", 10 * i + 2);
    }
    List<ArrowBlock> blocks = List.of(new ArrowBlock(OFFSETS[0], METAS[0], BODIES[0]),
        new ArrowBlock(OFFSETS[1], METAS[1], BODIES[1]));
    Map<String, String> entries = BatchStatistics.footerEntries(id, SCHEMA, stats, blocks);
    String text = entries.get(BatchStatistics.KEY);
    assertEquals(BatchStatistics.sha256(text.getBytes(StandardCharsets.UTF_8)),
        entries.get(BatchStatistics.DIGEST_KEY));
    JsonNode doc = JSON.readTree(text);
    assertEquals(3, doc.get("version").asInt());
    assertEquals(JSON.readTree("{\"k\":\"int64\"}"), doc.get("types"));
    assertEquals(JSON.readTree("[192,256,64]"), doc.get("batches").get(0).get("block"));
    assertEquals(JSON.readTree("[512,192,64]"), doc.get("batches").get(1).get("block"));
    BatchStatistics.Stored stored = new BatchStatistics.Stored(
        text.getBytes(StandardCharsets.UTF_8), entries.get(BatchStatistics.DIGEST_KEY));
    assertNotNull(judged(stored), "the reader takes what the writer writes");
    assertNull(BatchStatistics.ofFooter(stored, SCHEMA, K, new long[] {512, 192},
        new int[] {192, 256}, BODIES), "and only for those blocks");
    assertThrows(IllegalStateException.class, () -> BatchStatistics.footerEntries(id,
        SCHEMA, stats, blocks.subList(0, 1)), "a batch without its block is a bug");
  }
}
