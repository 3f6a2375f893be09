package io.arrowmm.spark;

import org.apache.spark.unsafe.Platform;

/**
 * Decodes one LZ4 frame (the LZ4_FRAME body compression of Arrow IPC) from memory straight into
 * memory, with no intermediate buffer: the frame's header is parsed here and each block is
 * decoded into its place in the destination.  Blocks may be linked (a match may reach back
 * into the blocks before it, as the LZ4 frame library, Arrow C++ and the {@code lz4} package
 * write them by default) because the destination holds the whole output contiguously.
 *
 * <p>Why not a library: commons-compress's stream (what Arrow Java uses) is pure Java and copies
 * every byte twice through arrays; lz4-java's JNI block decompressor cannot see a linked block's
 * prefix and its frame stream refuses linked blocks.  This decoder reads each byte once.
 *
 * <p>Every number in the frame is hostile: each read of the source and each write to the
 * destination is checked against its end before it happens, a match may reach back no further
 * than the frame's output (or, for independent blocks, the block's own start), the header
 * checksum is checked, and block and content checksums when the frame has them.  The output
 * must be exactly {@code declared} bytes: a frame that gives more or fewer raises
 * {@link ArrowmmException} naming {@code where}.  Bytes after the frame's end are ignored, as
 * the LZ4 frame library's decoder (which the Python reader calls) ignores them.
 */
final class Lz4Frame {
  static final int MAGIC = 0x184D2204;
  private static final int PRIME1 = 0x9E3779B1;
  private static final int PRIME2 = 0x85EBCA77;
  private static final int PRIME3 = 0xC2B2AE3D;
  private static final int PRIME4 = 0x27D4EB2F;
  private static final int PRIME5 = 0x165667B1;

  private Lz4Frame() {
  }

  /**
   * Decode the frame of {@code srcLength} bytes at {@code src} into exactly {@code declared}
   * bytes at {@code dst} (memory the caller owns, at least {@code declared} bytes).
   */
  static void decode(String where, long src, long srcLength, long dst, long declared) {
    long ip = src;
    long iend = src + srcLength;
    if (srcLength < 7) {
      throw new ArrowmmException(where + ": an LZ4 frame of " + srcLength + " bytes is shorter "
          + "than a frame header");
    }
    int magic = Platform.getInt(null, ip);
    if (magic != MAGIC) {
      throw new ArrowmmException(where + ": not an LZ4 frame (magic number 0x"
          + Integer.toHexString(magic) + ", not 0x" + Integer.toHexString(MAGIC) + ")");
    }
    ip += 4;
    long descriptor = ip;
    int flg = Platform.getByte(null, ip++) & 0xff;
    int bd = Platform.getByte(null, ip++) & 0xff;
    if ((flg >>> 6) != 1 || (flg & 0x02) != 0 || (bd & 0x8f) != 0 || (bd >>> 4) < 4) {
      throw new ArrowmmException(where + ": LZ4 frame descriptor FLG 0x"
          + Integer.toHexString(flg) + ", BD 0x" + Integer.toHexString(bd) + " is not version "
          + "01 with its reserved bits clear and a block size of 4 to 7");
    }
    boolean independent = (flg & 0x20) != 0;
    boolean blockChecksum = (flg & 0x10) != 0;
    boolean contentSize = (flg & 0x08) != 0;
    boolean contentChecksum = (flg & 0x04) != 0;
    boolean dictionary = (flg & 0x01) != 0;
    long blockMax = 1L << (8 + 2 * (bd >>> 4));  // 64 KiB, 256 KiB, 1 MiB, 4 MiB
    int headerRest = (contentSize ? 8 : 0) + (dictionary ? 4 : 0) + 1;
    if (iend - ip < headerRest) {
      throw new ArrowmmException(where + ": the LZ4 frame of " + srcLength + " bytes ends in "
          + "its header");
    }
    long size = contentSize ? Platform.getLong(null, ip) : -1;
    ip += headerRest - 1;
    int headerChecksum = Platform.getByte(null, ip) & 0xff;
    int expected = (xxh32(descriptor, ip - descriptor, 0) >>> 8) & 0xff;
    if (headerChecksum != expected) {
      throw new ArrowmmException(where + ": LZ4 frame header checksum 0x"
          + Integer.toHexString(headerChecksum) + ", the header's bytes give 0x"
          + Integer.toHexString(expected));
    }
    ip++;
    if (dictionary) {
      throw new ArrowmmException(where + ": the LZ4 frame needs a dictionary (Arrow IPC has "
          + "none to give it)");
    }
    if (contentSize && size != declared) {
      throw new ArrowmmException(where + ": LZ4 frame declares " + size + " bytes of content, "
          + "the prefix declares " + declared);
    }
    long op = dst;
    long oend = dst + declared;
    while (true) {
      if (iend - ip < 4) {
        throw new ArrowmmException(where + ": LZ4 frame cut short after " + (op - dst)
            + " of the declared " + declared + " bytes (no end mark)");
      }
      int word = Platform.getInt(null, ip);
      ip += 4;
      if (word == 0) {
        break;
      }
      boolean stored = word < 0;
      long length = word & 0x7fffffffL;
      if (length > blockMax || length > iend - ip - (blockChecksum ? 4 : 0)) {
        throw new ArrowmmException(where + ": LZ4 block of " + length + " bytes at frame byte "
            + (ip - 4 - src) + " is larger than the frame's " + blockMax + "-byte blocks or "
            + "the " + (iend - ip) + " bytes left");
      }
      if (blockChecksum) {
        int sum = Platform.getInt(null, ip + length);
        if (sum != xxh32(ip, length, 0)) {
          throw new ArrowmmException(where + ": LZ4 block at frame byte " + (ip - 4 - src)
              + " fails its checksum");
        }
      }
      long blockStart = op;
      if (stored) {
        if (length > oend - op) {
          throw tooLong(where, declared);
        }
        Platform.copyMemory(null, ip, null, op, length);
        op += length;
      } else {
        op = block(where, ip, ip + length, independent ? op : dst, op,
            Math.min(oend, op + blockMax), oend, declared);
      }
      if (op - blockStart > blockMax) {
        throw new ArrowmmException(where + ": LZ4 block gave " + (op - blockStart)
            + " bytes, more than the frame's " + blockMax + "-byte blocks");
      }
      ip += length + (blockChecksum ? 4 : 0);
    }
    if (op != oend) {
      throw new ArrowmmException(where + ": LZ4 frame gave " + (op - dst) + " bytes, the "
          + "prefix declares " + declared);
    }
    if (contentChecksum) {
      if (iend - ip < 4) {
        throw new ArrowmmException(where + ": LZ4 frame ends before its content checksum");
      }
      if (Platform.getInt(null, ip) != xxh32(dst, declared, 0)) {
        throw new ArrowmmException(where + ": LZ4 frame fails its content checksum");
      }
    }
  }

  private static ArrowmmException tooLong(String where, long declared) {
    return new ArrowmmException(where + ": LZ4 frame holds more than the " + declared
        + " bytes its prefix declares");
  }

  /**
   * Decode one compressed block, {@code [ip, iend)}, to {@code op}: matches reach back no
   * further than {@code low}, output stops at {@code limit} (the block's largest size or the
   * declared end); returns the new output position.
   */
  private static long block(String where, long ip, long iend, long low, long op, long limit,
      long oend, long declared) {
    while (true) {
      if (ip >= iend) {
        throw new ArrowmmException(where + ": LZ4 block ends inside a sequence");
      }
      int token = Platform.getByte(null, ip++) & 0xff;
      long literals = token >>> 4;
      if (literals == 15) {
        int b;
        do {
          if (ip >= iend) {
            throw new ArrowmmException(where + ": LZ4 block ends inside a literal length");
          }
          b = Platform.getByte(null, ip++) & 0xff;
          literals += b;
        } while (b == 255);
      }
      if (literals > iend - ip) {
        throw new ArrowmmException(where + ": LZ4 block's " + literals + " literals run past "
            + "the block's end");
      }
      if (literals > limit - op) {
        throw limit == oend ? tooLong(where, declared) : new ArrowmmException(where
            + ": LZ4 block gives more than the frame's block size");
      }
      if (literals <= 16 && iend - ip >= 16 && limit - op >= 16) {
        Platform.putLong(null, op, Platform.getLong(null, ip));
        Platform.putLong(null, op + 8, Platform.getLong(null, ip + 8));
      } else {
        Platform.copyMemory(null, ip, null, op, literals);
      }
      ip += literals;
      op += literals;
      if (ip == iend) {
        return op;  // the last sequence: literals only
      }
      if (iend - ip < 2) {
        throw new ArrowmmException(where + ": LZ4 block ends inside a match offset");
      }
      int offset = Platform.getShort(null, ip) & 0xffff;
      ip += 2;
      if (offset == 0 || offset > op - low) {
        throw new ArrowmmException(where + ": LZ4 match offset " + offset + " reaches before "
            + "the start of the frame's output (or of an independent block): " + (op - low)
            + " bytes back");
      }
      long match = (token & 15);
      if (match == 15) {
        int b;
        do {
          if (ip >= iend) {
            throw new ArrowmmException(where + ": LZ4 block ends inside a match length");
          }
          b = Platform.getByte(null, ip++) & 0xff;
          match += b;
        } while (b == 255);
      }
      match += 4;
      if (match > limit - op) {
        throw limit == oend ? tooLong(where, declared) : new ArrowmmException(where
            + ": LZ4 block gives more than the frame's block size");
      }
      long from = op - offset;
      if (offset >= 8 && limit - op >= match + 8) {
        // 8 bytes at a time (each read lies wholly before where it is written); the last copy
        // may write up to 7 bytes past the match, inside the block, where later output lands
        for (long k = 0; k < match; k += 8) {
          Platform.putLong(null, op + k, Platform.getLong(null, from + k));
        }
      } else if (offset == 1) {
        Platform.setMemory(op, Platform.getByte(null, from), match);
      } else {
        for (long k = 0; k < match; k++) {
          Platform.putByte(null, op + k, Platform.getByte(null, from + k));
        }
      }
      op += match;
    }
  }

  /** XXH32 of {@code length} bytes at {@code address} (the frame format's checksums). */
  static int xxh32(long address, long length, int seed) {
    long p = address;
    long end = address + length;
    int h;
    if (length >= 16) {
      int v1 = seed + PRIME1 + PRIME2;
      int v2 = seed + PRIME2;
      int v3 = seed;
      int v4 = seed - PRIME1;
      for (long stop = end - 16; p <= stop; p += 16) {
        v1 = Integer.rotateLeft(v1 + Platform.getInt(null, p) * PRIME2, 13) * PRIME1;
        v2 = Integer.rotateLeft(v2 + Platform.getInt(null, p + 4) * PRIME2, 13) * PRIME1;
        v3 = Integer.rotateLeft(v3 + Platform.getInt(null, p + 8) * PRIME2, 13) * PRIME1;
        v4 = Integer.rotateLeft(v4 + Platform.getInt(null, p + 12) * PRIME2, 13) * PRIME1;
      }
      h = Integer.rotateLeft(v1, 1) + Integer.rotateLeft(v2, 7) + Integer.rotateLeft(v3, 12)
          + Integer.rotateLeft(v4, 18);
    } else {
      h = seed + PRIME5;
    }
    h += (int) length;
    for (; end - p >= 4; p += 4) {
      h = Integer.rotateLeft(h + Platform.getInt(null, p) * PRIME3, 17) * PRIME4;
    }
    for (; p < end; p++) {
      h = Integer.rotateLeft(h + (Platform.getByte(null, p) & 0xff) * PRIME5, 11) * PRIME1;
    }
    h ^= h >>> 15;
    h *= PRIME2;
    h ^= h >>> 13;
    h *= PRIME3;
    h ^= h >>> 16;
    return h;
  }
}
