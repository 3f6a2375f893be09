package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The footer of files pyarrow and arrowmm wrote (src/test/resources, made by
 * src/test/make_test_files.py), and files cut short, read as the driver plans a scan. */
class FileFooterTest {
  /** A test resource's path on disk (Maven copies resources to target/test-classes). */
  static String resource(String name) {
    return Path.of(System.getProperty("arrowmm.test.resources", "src/test/resources"), name)
        .toAbsolutePath().toString();
  }

  /** The one place these tests open a footer.  The reader takes a path, or (with the Storage
   * layer of issue 30, being merged) the storage to read it from and a path; either is called,
   * so these tests hold on both sides of that change.  Drop the first once it has landed. */
  static FileFooter footer(String path) {
    try {
      for (Method m : FileFooter.class.getDeclaredMethods()) {
        Class<?>[] params = m.getParameterTypes();
        if (!m.getName().equals("read") || !Modifier.isStatic(m.getModifiers())) {
          continue;
        }
        if (params.length == 1 && params[0] == String.class) {
          return (FileFooter) m.invoke(null, path);
        }
        if (params.length == 2 && params[1] == String.class) {
          Object local = Class.forName("io.arrowmm.spark.LocalStorage")
              .getDeclaredField("INSTANCE").get(null);
          return (FileFooter) m.invoke(null, local, path);
        }
      }
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof RuntimeException) {
        throw (RuntimeException) e.getCause();
      }
      throw new AssertionError(e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
    throw new AssertionError("FileFooter has no read(String) or read(Storage, String)");
  }

  @Test
  void pyarrowFileGivesSchemaAndBatches() {
    FileFooter f = footer(resource("pyarrow_two_batches.arrow"));
    assertEquals(Arrays.asList("k", "name", "x"), f.columns.stream().map(c -> c.name).toList());
    assertEquals(DataTypes.LongType, f.columns.get(0).sparkType);
    assertEquals(DataTypes.StringType, f.columns.get(1).sparkType);
    assertEquals(DataTypes.DoubleType, f.columns.get(2).sparkType);
    assertEquals(2, f.offsets.length);
    assertTrue(f.offsets[0] >= 8 && f.offsets[1] > f.offsets[0], Arrays.toString(f.offsets));
    assertFalse(f.stream);
    assertNull(f.statistics(), "pyarrow writes no arrowmm statistics");
    assertEquals(0, f.dictOffsets.length);
  }

  @Test
  void arrowmmFileCarriesStatistics() {
    FileFooter f = footer(resource("arrowmm_statistics.arrow"));
    assertNotNull(f.statistics());
    assertEquals(3, f.statistics().rows(0));
    assertEquals(3, f.statistics().rows(1));
    assertEquals(10, f.statistics().column(1, "k").get("min").asLong());
    assertEquals(12, f.statistics().column(1, "k").get("max").asLong());
  }

  @Test
  void truncatedFileIsRefusedNamingIt(@TempDir Path dir) throws IOException {
    byte[] whole = Files.readAllBytes(Path.of(resource("pyarrow_two_batches.arrow")));
    Path cut = dir.resolve("cut.arrow");
    Files.write(cut, Arrays.copyOf(whole, whole.length - 7));
    ArrowmmException e = assertThrows(ArrowmmException.class, () -> footer(cut.toString()));
    assertTrue(e.getMessage().contains("cut.arrow"), e.getMessage());
    assertTrue(e.getMessage().contains("no ARROW1 magic at the end"), e.getMessage());
  }

  @Test
  void hostileFooterLengthIsRefused(@TempDir Path dir) throws IOException {
    byte[] bytes = Files.readAllBytes(Path.of(resource("pyarrow_two_batches.arrow")));
    // the footer length (int32 little-endian before the trailing magic) made larger than the file
    int at = bytes.length - 10;
    byte[] big = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0x7f};
    System.arraycopy(big, 0, bytes, at, 4);
    Path bad = dir.resolve("bad.arrow");
    Files.write(bad, bytes);
    ArrowmmException e = assertThrows(ArrowmmException.class, () -> footer(bad.toString()));
    assertTrue(e.getMessage().contains("footer length 2147483647 does not fit"), e.getMessage());
  }

  @Test
  void readTwiceGivesTheSameOffsets() {
    String path = resource("pyarrow_two_batches.arrow");
    assertArrayEquals(footer(path).offsets, footer(path).offsets);
  }
}
