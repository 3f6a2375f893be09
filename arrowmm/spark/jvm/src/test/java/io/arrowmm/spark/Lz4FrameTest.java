package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.commons.compress.compressors.lz4.FramedLZ4CompressorInputStream;
import org.apache.commons.compress.compressors.lz4.FramedLZ4CompressorOutputStream;
import org.apache.commons.compress.compressors.lz4.FramedLZ4CompressorOutputStream.BlockSize;
import org.apache.commons.compress.compressors.lz4.FramedLZ4CompressorOutputStream.Parameters;
import org.apache.spark.unsafe.Platform;
import org.junit.jupiter.api.Test;

/** {@link Lz4Frame} against the LZ4 frame library's frames (src/test/resources/lz4_frames.bin,
 * made by src/test/make_test_files.py) and commons-compress's (the decoder it replaced), and
 * against damaged frames: every damage raises {@link ArrowmmException} or gives what
 * commons-compress gives, and nothing is written outside the destination. */
class Lz4FrameTest {
  private static final int GUARD = 64;

  /** make_test_files.py's {@code lz4_text()}: the bytes the resource's frames hold. */
  static byte[] text() {
    StringBuilder out = new StringBuilder();
    for (int i = 0; out.length() < 150_000; i++) {
      out.append("row ").append(i % 1500).append(" value ").append((i * 7919L) % 500)
          .append('\n');
    }
    return out.substring(0, 150_000).getBytes(StandardCharsets.US_ASCII);
  }

  /** make_test_files.py's {@code lz4_runs()}: the bytes of the resource's last frame. */
  static byte[] runs() {
    byte[] runs = new byte[70_000];  // long runs (matches at offset 1 and 2) and short ones
    for (int i = 0; i < runs.length; i++) {
      runs[i] = (byte) ((i / 3000) % 3 == 0 ? 0 : (i / 3000) % 3 == 1 ? i & 1 : i % 7);
    }
    return runs;
  }

  /** make_test_files.py's {@code lz4_doubles()}: a float64 column, the last frame's bytes. */
  static byte[] doubles() {
    byte[] doubles = new byte[8 * 9_000];
    ByteBuffer d = ByteBuffer.wrap(doubles).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < 9_000; i++) {
      d.putDouble(i % 100 == 0 ? i * 1.7 : i % 1000 * 0.25);
    }
    return doubles;
  }

  static List<byte[]> libraryFrames() throws IOException {
    ByteBuffer all = ByteBuffer.wrap(Files.readAllBytes(Path.of(
        FileFooterTest.resource("lz4_frames.bin")))).order(ByteOrder.LITTLE_ENDIAN);
    List<byte[]> frames = new ArrayList<>();
    while (all.hasRemaining()) {
      byte[] frame = new byte[(int) all.getLong()];
      all.get(frame);
      frames.add(frame);
    }
    return frames;
  }

  static byte[] commonsFrame(byte[] data, BlockSize size, boolean contentChecksum,
      boolean blockChecksum, boolean linked) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (FramedLZ4CompressorOutputStream lz4 = new FramedLZ4CompressorOutputStream(out,
        new Parameters(size, contentChecksum, blockChecksum, linked))) {
      lz4.write(data);
    }
    return out.toByteArray();
  }

  /** Decode {@code frame} with a declared length into guarded memory; the guards must hold
   * whatever happens. */
  static byte[] decode(byte[] frame, long declared) {
    long src = Platform.allocateMemory(Math.max(1, frame.length));
    long block = Platform.allocateMemory(declared + 2 * GUARD);
    try {
      Platform.copyMemory(frame, Platform.BYTE_ARRAY_OFFSET, null, src, frame.length);
      Platform.setMemory(block, (byte) 0xA5, declared + 2 * GUARD);
      try {
        Lz4Frame.decode("test buffer", src, frame.length, block + GUARD, declared);
      } finally {
        for (long i = 0; i < GUARD; i++) {
          assertEquals((byte) 0xA5, Platform.getByte(null, block + i), "written before");
          assertEquals((byte) 0xA5, Platform.getByte(null, block + GUARD + declared + i),
              "written after");
        }
      }
      byte[] out = new byte[(int) declared];
      Platform.copyMemory(null, block + GUARD, out, Platform.BYTE_ARRAY_OFFSET, declared);
      return out;
    } finally {
      Platform.freeMemory(src);
      Platform.freeMemory(block);
    }
  }

  /** What commons-compress decodes from {@code frame} (one frame), or null when it fails. */
  static byte[] reference(byte[] frame) {
    try (InputStream in = new FramedLZ4CompressorInputStream(new ByteArrayInputStream(frame))) {
      return in.readAllBytes();
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  static List<byte[]> inputs() {
    Random random = new Random(34);
    // just over one 64 KiB block each (commons-compress's compressor is slow on big inputs)
    byte[] noise = new byte[70_000];
    random.nextBytes(noise);
    List<byte[]> out = new ArrayList<>();
    out.add(noise);
    for (int n : new int[] {1, 7, 15, 16, 17, 64, 65_536, 65_537}) {
      byte[] small = new byte[n];
      System.arraycopy(text(), 0, small, 0, n);
      out.add(small);
    }
    return out;
  }

  @Test
  void decodesTheLibrarysFrames() throws IOException {
    byte[] text = text();
    List<byte[]> frames = libraryFrames();
    assertEquals(6, frames.size());
    for (byte[] frame : frames.subList(0, 4)) {
      assertTrue(frame.length < text.length / 4, "the text compresses");
      assertArrayEquals(text, decode(frame, text.length));
    }
    byte[] runs = runs();
    assertTrue(frames.get(4).length < runs.length / 20, "the runs compress");
    assertArrayEquals(runs, decode(frames.get(4), runs.length));
    byte[] doubles = doubles();
    assertTrue(frames.get(5).length < doubles.length / 2, "the doubles compress");
    assertArrayEquals(doubles, decode(frames.get(5), doubles.length));
  }

  @Test
  void decodesWhatCommonsCompressWrites() throws IOException {
    // (commons-compress's compressor takes seconds on compressible data: linked blocks with
    // both checksums and independent ones without, on small and incompressible inputs; the
    // library's frames cover compressible ones)
    for (byte[] data : inputs()) {
      for (boolean linked : new boolean[] {true, false}) {
        byte[] frame = commonsFrame(data, BlockSize.K64, linked, linked, linked);
        assertArrayEquals(data, decode(frame, data.length), data.length + " bytes, linked "
            + linked);
      }
    }
    byte[] noise = inputs().get(0);
    assertArrayEquals(noise, decode(commonsFrame(noise, BlockSize.M4, false, true, true),
        noise.length));
  }

  @Test
  void aFrameGivingMoreOrFewerBytesThanDeclaredRaises() throws IOException {
    byte[] text = text();
    for (byte[] frame : libraryFrames().subList(0, 4)) {
      ArrowmmException fewer = assertThrows(ArrowmmException.class,
          () -> decode(frame, text.length + 1));
      assertTrue(fewer.getMessage().startsWith("test buffer: "), fewer.getMessage());
      assertTrue(fewer.getMessage().contains("declare"), fewer.getMessage());
      ArrowmmException more = assertThrows(ArrowmmException.class,
          () -> decode(frame, text.length - 1));
      assertTrue(more.getMessage().contains("declare"), more.getMessage());
    }
  }

  @Test
  void everyCutFrameRaises() throws IOException {
    List<byte[]> frames = new ArrayList<>(libraryFrames());
    frames.add(commonsFrame(inputs().get(0), BlockSize.K64, false, false, true));
    for (byte[] frame : frames) {
      byte[] whole = reference(frame);
      for (int cut = 0; cut < frame.length; cut += cut < 64 ? 1 : 97) {
        byte[] part = java.util.Arrays.copyOf(frame, cut);
        assertThrows(ArrowmmException.class, () -> decode(part, whole.length), "cut at " + cut);
      }
    }
  }

  @Test
  void damagedFramesRaiseOrDecodeAsCommonsCompressDoes() throws IOException {
    Random random = new Random(30);
    List<byte[]> frames = new ArrayList<>(libraryFrames());
    List<byte[]> data = inputs();
    frames.add(commonsFrame(data.get(0), BlockSize.K64, true, true, true));
    frames.add(commonsFrame(data.get(0), BlockSize.K64, false, false, false));
    int raised = 0;
    int decoded = 0;
    for (byte[] frame : frames) {
      int declared = reference(frame).length;
      for (int trial = 0; trial < 150; trial++) {
        byte[] bad = frame.clone();
        for (int flips = 1 + random.nextInt(3); flips > 0; flips--) {
          int at = random.nextInt(bad.length);
          bad[at] = trial % 2 == 0 ? (byte) random.nextInt(256) : (byte) (bad[at] ^ 0x80);
        }
        byte[] got;
        try {
          got = decode(bad, declared);
        } catch (ArrowmmException e) {
          raised++;
          continue;
        } catch (RuntimeException e) {
          fail("a damaged frame raised " + e);
          return;
        }
        decoded++;
        byte[] expected = reference(bad);
        if (expected != null && expected.length == declared) {
          assertArrayEquals(expected, got, "trial " + trial);
        }
      }
    }
    assertTrue(raised > 0 && decoded > 0, raised + " raised, " + decoded + " decoded");
  }

  @Test
  void refusesWhatIsNotAnLz4Frame() {
    byte[] zstd = {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd, 0, 0, 0, 0};
    ArrowmmException e = assertThrows(ArrowmmException.class, () -> decode(zstd, 10));
    assertTrue(e.getMessage().contains("not an LZ4 frame"), e.getMessage());
  }

  @Test
  void xxh32MatchesTheReferenceValues() {
    // XXH32 test vectors (seed 0): "" and "abc"
    long empty = Platform.allocateMemory(8);
    try {
      assertEquals(0x02CC5D05, Lz4Frame.xxh32(empty, 0, 0));
      Platform.putByte(null, empty, (byte) 'a');
      Platform.putByte(null, empty + 1, (byte) 'b');
      Platform.putByte(null, empty + 2, (byte) 'c');
      assertEquals(0x32D153FF, Lz4Frame.xxh32(empty, 3, 0));
    } finally {
      Platform.freeMemory(empty);
    }
  }
}
