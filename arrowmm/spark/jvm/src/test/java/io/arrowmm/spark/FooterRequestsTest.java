package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.Footer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What reading a footer costs a remote filesystem, where each status and each read is a
 * request (a NameNode call, an object store's HEAD or GET): the planning of many small files
 * is that cost times the files.  The storage here serves local files but says it is remote
 * and counts the calls it gets.
 */
class FooterRequestsTest {
  /** Calls a storage got: statuses taken, files opened, positioned reads (and listings). */
  static final class Counts {
    final AtomicInteger stats = new AtomicInteger();
    final AtomicInteger opens = new AtomicInteger();
    final AtomicInteger reads = new AtomicInteger();
    final AtomicInteger lists = new AtomicInteger();

    List<Integer> all() {
      return Arrays.asList(stats.get(), opens.get(), reads.get());
    }
  }

  /** A storage over local files that says its reads are remote and counts its calls; its
   * listing gives each entry's length and time, as a remote filesystem's does. */
  static Storage counting(Counts counts) {
    Storage local = LocalStorage.INSTANCE;
    return (Storage) Proxy.newProxyInstance(Storage.class.getClassLoader(),
        new Class<?>[] {Storage.class}, (proxy, method, args) -> {
          if (method.getName().equals("stat")) {
            counts.stats.incrementAndGet();
          }
          if (method.getName().equals("list")) {
            counts.lists.incrementAndGet();
            List<Storage.Stat> entries = local.list((String) args[0]);
            if (entries == null) {
              return null;
            }
            List<Storage.Stat> out = new ArrayList<>();
            for (Storage.Stat c : entries) {
              Storage.Stat s = local.stat(c.path);
              if (s != null) {
                out.add(s);
              }
            }
            return out;
          }
          if (method.getName().equals("open")) {
            counts.opens.incrementAndGet();
            return remote(local.open((String) args[0]), counts);
          }
          try {
            return method.invoke(local, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  static Storage.Input remote(Storage.Input in, Counts counts) {
    return new Storage.Input() {
      @Override
      public long size() throws IOException {
        return in.size();
      }

      @Override
      public int read(ByteBuffer into, long position) throws IOException {
        counts.reads.incrementAndGet();
        return in.read(into, position);
      }

      @Override
      public boolean local() {
        return false;
      }

      @Override
      public void close() throws IOException {
        in.close();
      }
    };
  }

  /** A copy of a test resource under a path of its own (the footer cache keys by path),
   * last modified a minute ago (settled: the cache may keep it). */
  static String copy(Path dir, String resource) throws IOException {
    Path to = dir.resolve(resource);
    Files.copy(Path.of(FileFooterTest.resource(resource)), to, StandardCopyOption.REPLACE_EXISTING);
    Files.setLastModifiedTime(to, FileTime.fromMillis(System.currentTimeMillis() - 60_000));
    return to.toString();
  }

  /** A copy of a test resource with {@code pad} zero bytes after its leading magic (bytes no
   * block names: a reader skips them), its footer's block offsets moved to match. */
  static Path padded(Path dir, String resource, int pad) throws IOException {
    byte[] file = Files.readAllBytes(Path.of(FileFooterTest.resource(resource)));
    int footerLength = ByteBuffer.wrap(file, file.length - 10, 4)
        .order(ByteOrder.LITTLE_ENDIAN).getInt();
    ByteBuffer footer = ByteBuffer.wrap(file, file.length - 10 - footerLength, footerLength)
        .slice().order(ByteOrder.LITTLE_ENDIAN);
    Footer f = Footer.getRootAsFooter(footer);
    Block b = new Block();
    for (int i = 0; i < f.recordBatchesLength(); i++) {
      f.recordBatches(b, i);
      int at;  // where the struct lies in the footer's buffer
      try {
        java.lang.reflect.Field pos = com.google.flatbuffers.Struct.class.getDeclaredField("bb_pos");
        pos.setAccessible(true);
        at = pos.getInt(b);
      } catch (ReflectiveOperationException e) {
        throw new AssertionError(e);
      }
      footer.putLong(at, b.offset() + pad);  // Block: offset (long) first
    }
    Path to = dir.resolve("padded-" + resource);
    try (java.io.OutputStream out = Files.newOutputStream(to)) {
      out.write(file, 0, 8);
      out.write(new byte[pad]);
      out.write(file, 8, file.length - 8);
    }
    return to;
  }

  static void assertSameFooter(FileFooter expected, FileFooter got) {
    assertEquals(expected.columns.stream().map(c -> c.name).toList(),
        got.columns.stream().map(c -> c.name).toList());
    assertArrayEquals(expected.offsets, got.offsets);
    assertEquals(expected.fileSize, got.fileSize);
  }

  @Test
  void smallFileFooterIsOneStatusAndOneRead(@TempDir Path dir) throws IOException {
    for (String name : new String[] {"pyarrow_two_batches.arrow", "arrowmm_statistics.arrow"}) {
      String path = copy(dir, name);
      Counts counts = new Counts();
      FileFooter f = FooterCache.read(counting(counts), path);
      // before: a status for the cache key, head, tail and footer reads, a status after
      assertEquals(Arrays.asList(1, 1, 1), counts.all(), name + ": statuses, opens, reads");
      assertSameFooter(FileFooter.read(LocalStorage.INSTANCE, path), f);
      // read again, unchanged: from the cache, one status and no read
      FooterCache.read(counting(counts), path);
      assertEquals(Arrays.asList(2, 1, 1), counts.all(), name + ": again, from the cache");
    }
  }

  @Test
  void bigFileFooterIsTheTailAndTheHead(@TempDir Path dir) throws IOException {
    Path big = padded(dir, "pyarrow_two_batches.arrow", 3 * FileFooter.TAIL_WINDOW);
    Files.setLastModifiedTime(big, FileTime.fromMillis(System.currentTimeMillis() - 60_000));
    Counts counts = new Counts();
    FileFooter f = FooterCache.read(counting(counts), big.toString());
    assertEquals(Arrays.asList(1, 1, 2), counts.all(), "statuses, opens, reads (tail, head)");
    assertSameFooter(FileFooter.read(LocalStorage.INSTANCE, big.toString()), f);
    assertEquals(2, f.offsets.length);
    assertEquals(FileFooter.read(LocalStorage.INSTANCE, FileFooterTest.resource(
        "pyarrow_two_batches.arrow")).offsets[0] + 3 * FileFooter.TAIL_WINDOW, f.offsets[0]);
  }

  @Test
  void tailWindowServesEveryRangeAsTheFileDoes() throws IOException {
    String path = FileFooterTest.resource("pyarrow_two_batches.arrow");
    byte[] file = Files.readAllBytes(Path.of(path));
    try (Storage.Input in = LocalStorage.INSTANCE.open(path)) {
      for (int window : new int[] {0, 1, 10, 100, file.length, file.length + 5}) {
        Storage.Input w = FileFooter.TailWindow.of(in, window);
        for (int at = 0; at < file.length; at += 7) {
          for (int len : new int[] {1, 9, 64, file.length - at}) {
            len = Math.min(len, file.length - at);
            ByteBuffer got = FileFooter.readFully(w, at, len);
            assertArrayEquals(Arrays.copyOfRange(file, at, at + len), got.array(),
                "window " + window + ", bytes " + at + "+" + len);
          }
        }
      }
    }
  }
}
