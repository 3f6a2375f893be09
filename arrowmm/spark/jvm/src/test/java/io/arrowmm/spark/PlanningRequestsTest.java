package io.arrowmm.spark;

import static io.arrowmm.spark.FooterRequestsTest.assertSameFooter;
import static io.arrowmm.spark.FooterRequestsTest.counting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What planning a folder costs a remote filesystem (FooterRequestsTest's counting storage): its
 * listing already gave every file's status, so reading the footers asks for none per file (on
 * S3 a HEAD each: 2,000 files, 2,000 HEADs before any GET).
 */
class PlanningRequestsTest {
  static final int FILES = 50;
  static final int THREADS = 4;

  /** {@code n} copies of a test resource in {@code dir}, part-000.arrow..., settled (last
   * modified a minute ago: the footer cache may keep them). */
  static List<String> folder(Path dir, int n) throws IOException {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(put(dir, String.format("part-%03d.arrow", i), "pyarrow_two_batches.arrow"));
    }
    return out;
  }

  static String put(Path dir, String name, String resource) throws IOException {
    Path to = dir.resolve(name);
    Files.copy(Path.of(FileFooterTest.resource(resource)), to, StandardCopyOption.REPLACE_EXISTING);
    Files.setLastModifiedTime(to, FileTime.fromMillis(System.currentTimeMillis() - 60_000));
    return to.toString();
  }

  /** The files of {@code dir} with their listed statuses, as planning resolves them. */
  static Map<String, Storage.Stat> resolve(Storage st, Path dir) {
    return DataFiles.resolve(List.of(dir.toString()), p -> st);
  }

  /** Their footers, read as planning reads them. */
  static List<FileFooter> readAll(Storage st, Map<String, Storage.Stat> files) {
    Storage[] stores = new Storage[files.size()];
    Arrays.fill(stores, st);
    return FooterCache.readAll(files, stores, THREADS);
  }

  static void assertFootersOf(List<String> paths, List<FileFooter> got) {
    assertEquals(paths, got.stream().map(f -> f.path).toList());
    for (int i = 0; i < paths.size(); i++) {
      assertSameFooter(FileFooter.read(LocalStorage.INSTANCE, paths.get(i)), got.get(i));
    }
  }

  @Test
  void folderIsPlannedWithoutAStatusPerFile(@TempDir Path dir) throws IOException {
    List<String> paths = folder(dir, FILES);
    FooterRequestsTest.Counts counts = new FooterRequestsTest.Counts();
    Storage st = counting(counts);
    List<FileFooter> footers = readAll(st, resolve(st, dir));
    // the folder's own status and its listing; before: a status per file too (51)
    assertEquals(1, counts.stats.get(), "statuses");
    assertEquals(FILES, counts.opens.get(), "opens");
    assertFootersOf(paths, footers);

    // planned again, unchanged: every footer from the cache, still no status per file
    counts = new FooterRequestsTest.Counts();
    st = counting(counts);
    assertFootersOf(paths, readAll(st, resolve(st, dir)));
    assertEquals(Arrays.asList(1, 0, 0), counts.all(), "again: statuses, opens, reads");

    // a file named directly keeps its own status request
    Storage direct = counting(new FooterRequestsTest.Counts());
    assertNull(DataFiles.resolve(List.of(paths.get(0)), p -> direct).get(paths.get(0)));
  }

  @Test
  void logFolderIsPlannedWithoutAStatusPerFile(@TempDir Path dir) throws IOException {
    List<String> paths = folder(dir, FILES);
    put(dir, "uncommitted.arrow", "pyarrow_two_batches.arrow");  // not in the log: not read
    Collections.reverse(paths);  // the log's order, not the listing's
    List<String> names = paths.stream().map(p -> "\"" + Path.of(p).getFileName() + "\"").toList();
    Files.createDirectory(dir.resolve(DataFiles.LOG_DIR));
    Files.write(dir.resolve(DataFiles.LOG_DIR).resolve("00000000000000000000.json"),
        ("{\"format\": \"" + DataFiles.FORMAT + "\", \"version\": 0, \"previous\": null, "
            + "\"files\": [" + String.join(", ", names) + "]}").getBytes(StandardCharsets.UTF_8));
    FooterRequestsTest.Counts counts = new FooterRequestsTest.Counts();
    Storage st = counting(counts);
    List<FileFooter> footers = readAll(st, resolve(st, dir));
    // the folder's status; the log's listing and the folder's; before: 51 statuses
    assertEquals(1, counts.stats.get(), "statuses");
    assertEquals(2, counts.lists.get(), "listings");
    assertEquals(FILES, counts.opens.get(), "opens");
    assertFootersOf(paths, footers);

    counts = new FooterRequestsTest.Counts();
    st = counting(counts);
    assertFootersOf(paths, readAll(st, resolve(st, dir)));
    assertEquals(Arrays.asList(1, 0, 0), counts.all(), "again: statuses, opens, reads");
  }

  @Test
  void fileRewrittenBetweenPlanningsIsReadAnew(@TempDir Path dir) throws IOException {
    List<String> paths = folder(dir, 3);
    Storage st = counting(new FooterRequestsTest.Counts());
    readAll(st, resolve(st, dir));
    // another file under the same name, of another length, also last modified a minute ago
    put(dir, "part-001.arrow", "arrowmm_statistics.arrow");
    FooterRequestsTest.Counts counts = new FooterRequestsTest.Counts();
    st = counting(counts);
    List<FileFooter> footers = readAll(st, resolve(st, dir));
    assertEquals(Arrays.asList(1, 1, 1), counts.all(), "statuses, opens, reads");
    assertFootersOf(paths, footers);
    assertEquals(Files.size(Path.of(paths.get(1))), footers.get(1).fileSize);
  }

  @Test
  void fileRemovedAfterListingFailsNamingIt(@TempDir Path dir) throws IOException {
    List<String> paths = folder(dir, 5);
    Storage st = counting(new FooterRequestsTest.Counts());
    Map<String, Storage.Stat> files = resolve(st, dir);
    Files.delete(Path.of(paths.get(3)));
    ArrowmmException e = assertThrows(ArrowmmException.class, () -> readAll(st, files));
    assertTrue(e.getMessage().startsWith(paths.get(3) + ": "), e.getMessage());
  }
}
