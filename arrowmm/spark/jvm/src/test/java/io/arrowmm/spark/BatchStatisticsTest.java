package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;

import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.KeyValue;
import org.apache.arrow.flatbuf.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Footer statistics are used only when they are this file's: the footer's digest matches the
 * document's bytes and record batch 0 carries the document's id (the blocks each entry records,
 * version 3: StatisticsBlocksTest).  Files are
 * arrowmm's writer's (src/test/resources, two batches: k 0..2 and 10..12), then one thing in
 * them is changed, byte for byte (nothing moves); every change that makes the document lie
 * gives no statistics at all.
 */
class BatchStatisticsTest {
  /** A copy of arrowmm's writer's file (make_test_files.py): batch 0 holds k 0, 1, 2, batch 1
   * holds 10, 11, 12. */
  static Path written(Path dir) throws IOException {
    Path p = dir.resolve("written.arrow");
    Files.copy(Path.of(FileFooterTest.resource("arrowmm_statistics.arrow")), p);
    return p;
  }

  static FileFooter footer(Path file) {
    return FileFooter.read(LocalStorage.INSTANCE, file.toString());
  }

  /** {@code bytes} with the {@code nth} occurrence (0: first) of {@code from} replaced by
   * {@code to}, of the same length. */
  static byte[] replaced(byte[] bytes, String from, String to, int nth) {
    byte[] f = from.getBytes(StandardCharsets.UTF_8);
    byte[] t = to.getBytes(StandardCharsets.UTF_8);
    assertEquals(f.length, t.length);
    int seen = 0;
    for (int i = 0; i + f.length <= bytes.length; i++) {
      if (Arrays.equals(bytes, i, i + f.length, f, 0, f.length) && seen++ == nth) {
        byte[] out = bytes.clone();
        System.arraycopy(t, 0, out, i, t.length);
        return out;
      }
    }
    throw new AssertionError("occurrence " + nth + " of " + from + " not in the file");
  }

  /** The footer's statistics document as written, found through the footer. */
  static String document(byte[] file) {
    ByteBuffer b = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
    int length = b.getInt(file.length - 10);
    Footer footer = Footer.getRootAsFooter(
        ByteBuffer.wrap(file, file.length - 10 - length, length).slice()
            .order(ByteOrder.LITTLE_ENDIAN));
    KeyValue kv = new KeyValue();
    for (int i = 0; i < footer.customMetadataLength(); i++) {
      footer.customMetadata(kv, i);
      if (BatchStatistics.KEY.equals(kv.key())) {
        return kv.value();
      }
    }
    throw new AssertionError("no statistics in the footer");
  }

  /** The document's id (the 32 characters after {@code "id":"}). */
  static String id(String document) {
    int at = document.indexOf("\"id\":\"") + 6;
    String id = document.substring(at, at + 32);
    assertTrue(BatchStatistics.isId(id), document);
    return id;
  }

  /** {@code document} with the last digit of its last {@code "max"} changed. */
  static String flipped(String document) {
    int at = document.lastIndexOf("\"max\":") + 6;
    while (at + 1 < document.length() && Character.isDigit(document.charAt(at + 1))) {
      at++;
    }
    char d = document.charAt(at);
    assertTrue(Character.isDigit(d), document);
    return document.substring(0, at) + (d == '1' ? '0' : '1') + document.substring(at + 1);
  }

  static Path write(Path dir, String name, byte[] bytes) throws IOException {
    Path p = dir.resolve(name);
    Files.write(p, bytes);
    return p;
  }

  /** Record batch {@code i}'s Message flatbuffer. */
  static Message message(byte[] file, FileFooter f, int i) {
    ByteBuffer b = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
    int at = (int) f.offsets[i];
    assertEquals(-1, b.getInt(at));
    int length = b.getInt(at + 4);
    return Message.getRootAsMessage(
        ByteBuffer.wrap(file, at + 8, length).slice().order(ByteOrder.LITTLE_ENDIAN));
  }

  @Test
  void arrowmmsFileIsBoundAndItsStatisticsAreUsed(@TempDir Path dir) throws IOException {
    Path file = written(dir);
    byte[] bytes = Files.readAllBytes(file);
    String doc = document(bytes);
    String id = id(doc);
    // the footer's digest is the SHA-256 of the document's bytes
    String digest = BatchStatistics.sha256(doc.getBytes(StandardCharsets.UTF_8));
    assertTrue(new String(bytes, StandardCharsets.ISO_8859_1).contains(digest));
    FileFooter f = footer(file);
    assertNotNull(f.statistics());
    assertEquals(3, f.statistics().rows(1));
    assertEquals(10, f.statistics().column(1, "k").get("min").asLong());
    assertEquals(12, f.statistics().column(1, "k").get("max").asLong());
    // batch 0's message carries the id, batch 1's carries none
    assertEquals(id, BatchStatistics.stamp(message(bytes, f, 0)));
    assertNull(BatchStatistics.stamp(message(bytes, f, 1)));
    assertEquals(6, f.countRows());
  }

  @Test
  void aFlippedDigitInTheDocumentGivesNoStatistics(@TempDir Path dir) throws IOException {
    byte[] bytes = Files.readAllBytes(written(dir));
    String doc = document(bytes);
    Path bad = write(dir, "flipped.arrow", replaced(bytes, doc, flipped(doc), 0));
    assertNull(footer(bad).statistics());
    assertNull(footer(bad).claimedStatistics(), "refused before any read of batch 0");
  }

  @Test
  void aMissingOrOtherDigestGivesNoStatistics(@TempDir Path dir) throws IOException {
    byte[] bytes = Files.readAllBytes(written(dir));
    String digest = BatchStatistics.sha256(document(bytes).getBytes(StandardCharsets.UTF_8));
    Path missing = write(dir, "missing.arrow",
        replaced(bytes, BatchStatistics.DIGEST_KEY, "arrowmm:statistics-sha25x", 0));
    assertNull(footer(missing).statistics());
    String other = (digest.charAt(0) == 'a' ? "b" : "a") + digest.substring(1);
    Path wrong = write(dir, "wrong.arrow", replaced(bytes, digest, other, 0));
    assertNull(footer(wrong).statistics());
    assertTrue(digest.matches(".*[a-f].*"));
    Path upper = write(dir, "upper.arrow", replaced(bytes, digest, digest.toUpperCase(), 0));
    assertNull(footer(upper).statistics(), "the digest is lowercase hex, compared exactly");
  }

  @Test
  void batchZeroWithoutTheIdOrWithAnotherGivesNoStatistics(@TempDir Path dir) throws IOException {
    byte[] bytes = Files.readAllBytes(written(dir));
    String id = id(document(bytes));
    // the id's first occurrence is batch 0's stamp (the footer comes last)
    String other = (id.charAt(0) == '0' ? "1" : "0") + id.substring(1);
    Path wrong = write(dir, "wrong.arrow", replaced(bytes, id, other, 0));
    FileFooter f = footer(wrong);
    assertNotNull(f.claimedStatistics(), "the footer itself is intact");
    assertNull(f.statistics());
    assertEquals(6, f.countRows(), "rows from the batches' headers");
    Path missing = write(dir, "missing.arrow",
        replaced(bytes, BatchStatistics.ID_KEY, "arrowmm:statistics-ix", 0));
    assertNull(footer(missing).statistics());
  }

  @Test
  void aVersionOneOrTwoDocumentIsNotTrusted(@TempDir Path dir) throws IOException {
    byte[] bytes = Files.readAllBytes(written(dir));
    String doc = document(bytes);
    assertTrue(doc.startsWith("{\"version\":3,"), doc);
    for (int version : new int[] {1, 2}) {
      String old = "{\"version\":" + version + "," + doc.substring(13);
      byte[] changed = replaced(bytes, doc, old, 0);
      // with its digest made again: intact, bound to batch 0, its blocks the footer's, and
      // still refused for its version
      changed = replaced(changed, BatchStatistics.sha256(doc.getBytes(StandardCharsets.UTF_8)),
          BatchStatistics.sha256(old.getBytes(StandardCharsets.UTF_8)), 0);
      assertNull(footer(write(dir, "v" + version + ".arrow", changed)).statistics());
    }
  }

  @Test
  void anIdThatIsNotLowercaseHexIsNotTrusted(@TempDir Path dir) throws IOException {
    byte[] bytes = Files.readAllBytes(written(dir));
    String doc = document(bytes);
    String id = id(doc);
    String upper = "A" + id.substring(1);
    String changedDoc = doc.replace(id, upper);
    byte[] changed = replaced(replaced(bytes, id, upper, 0), doc, changedDoc, 0);
    changed = replaced(changed, BatchStatistics.sha256(doc.getBytes(StandardCharsets.UTF_8)),
        BatchStatistics.sha256(changedDoc.getBytes(StandardCharsets.UTF_8)), 0);
    FileFooter f = footer(write(dir, "upper.arrow", changed));
    assertEquals(upper, BatchStatistics.stamp(message(changed, f, 0)), "stamp and id agree");
    assertNull(f.statistics());
  }

  @Test
  void theStampIsCheckedOnlyWhenAskedAndOnce(@TempDir Path dir) throws IOException {
    Path file = written(dir);
    FooterRequestsTest.Counts counts = new FooterRequestsTest.Counts();
    FileFooter f = FileFooter.read(FooterRequestsTest.counting(counts), file.toString());
    assertEquals(Arrays.asList(0, 1, 1), counts.all(), "the footer: one open, one read");
    // a small remote file: batch 0 lay in the bytes read with the footer, checked at no cost
    assertNotNull(f.statistics());
    assertEquals(Arrays.asList(0, 1, 1), counts.all());
    FileFooter local = footer(file);
    Files.write(file, replaced(Files.readAllBytes(file), BatchStatistics.ID_KEY,
        "arrowmm:statistics-ix", 0));
    // a local footer reads batch 0 when first asked: here after the file changed (to the same
    // size), so it finds no stamp; the verdict is taken once and kept
    assertNull(local.statistics());
    Files.copy(Path.of(FileFooterTest.resource("arrowmm_statistics.arrow")), file,
        StandardCopyOption.REPLACE_EXISTING);
    assertNull(local.statistics());
    assertNotNull(footer(file).statistics());
  }

  /** A copy of arrowmm's writer's file with {@code pad} zero bytes before its footer: every
   * Block (and so the document's record of them) stays where it was, far from the footer. */
  static Path paddedBeforeFooter(Path dir, int pad) throws IOException {
    byte[] file = Files.readAllBytes(written(dir));
    int footerLength = ByteBuffer.wrap(file, file.length - 10, 4)
        .order(ByteOrder.LITTLE_ENDIAN).getInt();
    int footerStart = file.length - 10 - footerLength;
    Path to = dir.resolve("padded.arrow");
    try (java.io.OutputStream out = Files.newOutputStream(to)) {
      out.write(file, 0, footerStart);
      out.write(new byte[pad]);
      out.write(file, footerStart, file.length - footerStart);
    }
    return to;
  }

  @Test
  void aHadoopFileFarFromItsFooterIsCheckedThroughHadoop(@TempDir Path dir) throws IOException {
    // batch 0 lies 3 tail windows before the footer: its stamp is read when first asked
    Path big = paddedBeforeFooter(dir, 3 * FileFooter.TAIL_WINDOW);
    Storage hadoop = new HadoopStorage(new org.apache.hadoop.conf.Configuration());
    FileFooter f = FileFooter.read(hadoop, big.toUri().toString());
    assertTrue(f.fileSize - f.offsets[0] > 3 * FileFooter.TAIL_WINDOW);
    assertNotNull(f.claimedStatistics());
    assertNotNull(f.statistics());
    assertEquals(12, f.statistics().column(1, "k").get("max").asLong());
    String id = id(document(Files.readAllBytes(big)));
    Path other = write(dir, "other.arrow", replaced(Files.readAllBytes(big), id,
        (id.charAt(0) == '0' ? "1" : "0") + id.substring(1), 0));
    FileFooter copied = FileFooter.read(hadoop, other.toUri().toString());
    assertNotNull(copied.claimedStatistics());
    assertNull(copied.statistics());
    assertEquals(6, copied.countRows());
  }

  @Test
  void aStreamBatchIsJudgedByItsOwnDigest(@TempDir Path dir) throws IOException {
    Path good = Path.of(FileFooterTest.resource("arrowmm_statistics.arrows"));
    FileFooter f = footer(good);
    assertTrue(f.stream);
    assertEquals(12, f.statistics().column(1, "k").get("max").asLong());
    assertEquals(2, f.statistics().column(0, "k").get("max").asLong());
    byte[] bytes = Files.readAllBytes(good);
    String s = new String(bytes, StandardCharsets.ISO_8859_1);
    int at = s.lastIndexOf("{\"version\":3,");
    String doc = s.substring(at, s.indexOf("}}}", at) + 3);
    // batch 1's document damaged: batch 1 has no statistics, batch 0 keeps its own
    FileFooter flipped = footer(write(dir, "flipped.arrows",
        replaced(bytes, doc, flipped(doc), 0)));
    assertNull(flipped.statistics().column(1, "k"));
    assertEquals(-1, flipped.statistics().rows(1));
    assertEquals(2, flipped.statistics().column(0, "k").get("max").asLong());
    // no digest beside batch 1's (the last) document: the same
    int last = s.lastIndexOf(BatchStatistics.DIGEST_KEY);
    byte[] undigested = bytes.clone();
    undigested[last + BatchStatistics.DIGEST_KEY.length() - 1] = 'x';
    FileFooter missing = footer(write(dir, "missing.arrows", undigested));
    assertNull(missing.statistics().column(1, "k"));
    assertEquals(2, missing.statistics().column(0, "k").get("max").asLong());
  }
}
