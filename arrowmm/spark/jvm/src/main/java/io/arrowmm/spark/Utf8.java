package io.arrowmm.spark;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * UTF-8 checks of the strings the writer copies into Arrow {@code string} columns.  A Spark
 * string is bytes ({@code cast(binary as string)} does not check them), an Arrow string must be
 * UTF-8: the writer refuses a value that is not, as the Python writer does, rather than write a
 * file that readers reject or whose statistics mislead them.
 */
final class Utf8 {
  /** 8 bytes of a {@code byte[]} read as one long: the ASCII fast path. */
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long HIGH_BITS = 0x8080808080808080L;

  private Utf8() {
  }

  /** A string value that is not UTF-8; the writer adds the row it was in. */
  static final class Invalid extends ArrowmmException {
    private static final long serialVersionUID = 1L;
    final String column;
    final String why;

    Invalid(String column, String why) {
      super("column '" + column + "': a string is not valid UTF-8: " + why);
      this.column = column;
      this.why = why;
    }
  }

  /** Throw {@link Invalid} naming {@code column} when {@code value} is not UTF-8. */
  static void check(byte[] value, String column) {
    int at = invalidAt(value);
    if (at >= 0) {
      throw new Invalid(column, String.format(
          "bad sequence at byte %d of the value (byte 0x%02x)", at, value[at] & 0xFF));
    }
  }

  /**
   * Where the first sequence of {@code b} that is not UTF-8 starts, or -1 when all of it is.
   * Well-formed is Unicode's Table 3-7: no overlong forms, no surrogates, nothing above
   * U+10FFFF (what Python's and Arrow's checks accept).
   */
  static int invalidAt(byte[] b) {
    int n = b.length;
    int i = 0;
    while (i < n) {
      if (i + 8 <= n && ((long) LONGS.get(b, i) & HIGH_BITS) == 0) {
        i += 8;  // 8 ASCII bytes
        continue;
      }
      int c = b[i] & 0xFF;
      if (c < 0x80) {
        i++;
        continue;
      }
      int end = sequenceEnd(b, i, c);
      if (end < 0) {
        return i;
      }
      i = end;
    }
    return -1;
  }

  /** The end of the multi-byte sequence that lead byte {@code c} starts at {@code i}, or -1. */
  private static int sequenceEnd(byte[] b, int i, int c) {
    int len;
    int lo = 0x80;  // the range of the second byte (narrower after E0, ED, F0, F4)
    int hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      lo = c == 0xE0 ? 0xA0 : lo;  // overlong
      hi = c == 0xED ? 0x9F : hi;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      lo = c == 0xF0 ? 0x90 : lo;  // overlong
      hi = c == 0xF4 ? 0x8F : hi;  // above U+10FFFF
    } else {
      return -1;  // a continuation byte, an overlong C0/C1 or F5..FF
    }
    if (i + len > b.length) {
      return -1;
    }
    int second = b[i + 1] & 0xFF;
    if (second < lo || second > hi) {
      return -1;
    }
    for (int k = 2; k < len; k++) {
      if ((b[i + k] & 0xC0) != 0x80) {
        return -1;
      }
    }
    return i + len;
  }

  /** {@code b} decoded, or null when it is not UTF-8 (never a lossy U+FFFD in its place). */
  static String decodeExactly(byte[] b) {
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(b)).toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }
}
