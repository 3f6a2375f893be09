package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Random;

import org.junit.jupiter.api.Test;

/** The writer's UTF-8 check: where the first bad sequence starts, against the JDK's strict
 * decoder, across the 8-byte ASCII fast path's edges. */
class Utf8Test {
  private static byte[] hex(String s) {
    return HexFormat.of().parseHex(s);
  }

  /** Where the JDK's decoder (malformed input reported) stops, or -1 when it decodes all. */
  private static int jdkInvalidAt(byte[] b) {
    CharsetDecoder d = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(b);
    CharBuffer out = CharBuffer.allocate(2 * b.length + 2);
    boolean bad = d.decode(in, out, true).isError();
    return bad ? in.position() : -1;
  }

  @Test
  void wellFormedSequencesPass() {
    for (String s : new String[] {"", "a", "abcdefgh", "abcdefghijklmnopq", "é", "€",
        "\uD834\uDD1E", "abcdefgé", "aé€\uD834\uDD1Ez",
        "\u007F\u0080\u07FF\u0800\uFFFF\uDBFF\uDFFF"}) {
      assertEquals(-1, Utf8.invalidAt(s.getBytes(StandardCharsets.UTF_8)), s);
    }
  }

  @Test
  void theFirstBadSequenceIsFound() {
    assertEquals(0, Utf8.invalidAt(hex("80")));  // a lone continuation byte
    assertEquals(0, Utf8.invalidAt(hex("c080")));  // overlong NUL
    assertEquals(0, Utf8.invalidAt(hex("e08080")));  // overlong
    assertEquals(0, Utf8.invalidAt(hex("eda080")));  // a surrogate, U+D800
    assertEquals(0, Utf8.invalidAt(hex("f4908080")));  // U+110000
    assertEquals(0, Utf8.invalidAt(hex("f5808080")));
    assertEquals(0, Utf8.invalidAt(hex("e282")));  // a truncated euro sign
    assertEquals(8, Utf8.invalidAt(hex("6162636465666768ff")));  // after one 8-byte block
    assertEquals(9, Utf8.invalidAt(hex("616263646566676869c3")));
    assertEquals(7, Utf8.invalidAt(hex("61626364656667c3616263646566676869")));
    assertEquals(5, Utf8.invalidAt(hex("c3a9e282acc3")));  // é € then a cut-off é
  }

  @Test
  void agreesWithTheJdkDecoder() {
    Random random = new Random(23);
    String[] pieces = {"a", "abcdefgh", "é", "€", "\uD834\uDD1E", "\u07FF", "\uFFFD"};
    for (int t = 0; t < 20_000; t++) {
      StringBuilder s = new StringBuilder();
      for (int k = random.nextInt(12); k > 0; k--) {
        s.append(pieces[random.nextInt(pieces.length)]);
      }
      byte[] b = s.toString().getBytes(StandardCharsets.UTF_8);
      if (b.length > 0 && random.nextBoolean()) {  // one byte changed or cut off
        if (random.nextBoolean()) {
          b[random.nextInt(b.length)] = (byte) random.nextInt(256);
        } else {
          b = java.util.Arrays.copyOf(b, random.nextInt(b.length));
        }
      }
      assertEquals(jdkInvalidAt(b), Utf8.invalidAt(b), HexFormat.of().formatHex(b));
    }
  }

  @Test
  void checkNamesTheColumnAndTheByte() {
    Utf8.Invalid e = assertThrows(Utf8.Invalid.class,
        () -> Utf8.check(hex("61626364656667686980"), "s.x"));
    assertEquals("s.x", e.column);
    assertEquals("bad sequence at byte 9 of the value (byte 0x80)", e.why);
  }

  @Test
  void boundsDecodeExactlyOrNotAtAll() {
    assertEquals("é", Utf8.decodeExactly(hex("c3a9")));
    assertNull(Utf8.decodeExactly(hex("80")));  // never U+FFFD, which sorts above 0x80
  }
}
