package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

import com.google.flatbuffers.FlatBufferBuilder;
import org.apache.arrow.flatbuf.Field;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A footer whose offsets were damaged is refused naming the file, where Arrow Java's
 * accessors read it as something else (a zeroed record batch vector: a file of no batches). */
class FlatbufferChecksTest {
  private static final String RESOURCE = "pyarrow_two_batches.arrow";

  /** The file's bytes and, in them, where its footer flatbuffer starts. */
  private static ByteBuffer file() throws IOException {
    return ByteBuffer.wrap(Files.readAllBytes(Path.of(FileFooterTest.resource(RESOURCE))))
        .order(ByteOrder.LITTLE_ENDIAN);
  }

  private static int footerStart(ByteBuffer f) {
    return f.capacity() - 10 - f.getInt(f.capacity() - 10);
  }

  /** The byte (in the file) of field {@code slot} of the table at file byte {@code table}. */
  private static int field(ByteBuffer f, int table, int slot) {
    int vt = table - f.getInt(table);
    int o = f.getShort(vt + 4 + 2 * slot);
    assertTrue(o != 0, "field " + slot + " is written");
    return table + o;
  }

  /** The file byte a uoffset at file byte {@code at} points to. */
  private static int deref(ByteBuffer f, int at) {
    return at + f.getInt(at);
  }

  private static ArrowmmException refused(Path dir, ByteBuffer f) throws IOException {
    Path p = dir.resolve("damaged.arrow");
    Files.write(p, f.array());
    ArrowmmException e = assertThrows(ArrowmmException.class, () -> FileFooterTest.footer(
        p.toString()));
    assertTrue(e.getMessage().startsWith(p + ": footer: "), e.getMessage());
    return e;
  }

  @Test
  void aZeroedOrUnalignedVectorOffsetIsRefused(@TempDir Path dir) throws IOException {
    ByteBuffer f = file();
    int footer = deref(f, footerStart(f));
    int batches = field(f, footer, 3);
    int good = f.getInt(batches);
    f.putInt(batches, 0);  // read unchecked: the offset's own 0 as the vector's length
    assertTrue(refused(dir, f).getMessage().contains("recordBatches: offset 0 at byte"));
    f.putInt(batches, good + 2);
    assertTrue(refused(dir, f).getMessage().contains("is zero, unaligned or past"));
    f.putInt(batches, good);
    Files.write(dir.resolve("good.arrow"), f.array());
    assertEquals(2, FileFooterTest.footer(dir.resolve("good.arrow").toString()).numBatches());
  }

  @Test
  void aStringWithoutItsNulOrAVectorPastTheEndIsRefused(@TempDir Path dir) throws IOException {
    ByteBuffer f = file();
    int footer = deref(f, footerStart(f));
    int schema = deref(f, field(f, footer, 1));
    int fields = deref(f, field(f, schema, 1));
    int first = deref(f, fields + 4);
    int name = deref(f, field(f, first, 0));
    assertEquals(1, f.getInt(name));  // "k"
    f.put(name + 4 + 1, (byte) 'x');
    assertTrue(refused(dir, f).getMessage().contains("without its terminating NUL"));
    f.put(name + 4 + 1, (byte) 0);
    f.putInt(fields, 1 << 28);
    assertTrue(refused(dir, f).getMessage().contains("runs past the"));
  }

  /** A schema message of one field nested {@code depth} deep (each field the only child of
   * the one above). */
  private static ByteBuffer nested(int depth) {
    FlatBufferBuilder b = new FlatBufferBuilder();
    int child = -1;
    for (int d = 0; d < depth; d++) {
      int name = b.createString("f" + d);
      int children = Field.createChildrenVector(b, child < 0 ? new int[0] : new int[] {child});
      Field.startField(b);
      Field.addName(b, name);
      Field.addChildren(b, children);
      child = Field.endField(b);
    }
    int fields = Schema.createFieldsVector(b, new int[] {child});
    Schema.startSchema(b);
    Schema.addFields(b, fields);
    int schema = Schema.endSchema(b);
    Message.startMessage(b);
    Message.addHeaderType(b, MessageHeader.Schema);
    Message.addHeader(b, schema);
    b.finish(Message.endMessage(b));
    return ByteBuffer.wrap(b.sizedByteArray()).order(ByteOrder.LITTLE_ENDIAN);
  }

  @Test
  void fieldsNestedDeeperThanTheLimitAreRefusedBeforeArrowJavaRecursesIntoThem() {
    FlatbufferChecks.message(nested(FlatbufferChecks.MAX_DEPTH), "ok");
    ArrowmmException e = assertThrows(ArrowmmException.class,
        () -> FlatbufferChecks.message(nested(FlatbufferChecks.MAX_DEPTH + 1), "deep"));
    assertTrue(e.getMessage().contains("deep: message header: fields nested deeper than 64"),
        e.getMessage());
  }
}
