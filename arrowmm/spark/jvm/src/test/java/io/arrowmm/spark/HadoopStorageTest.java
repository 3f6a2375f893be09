package io.arrowmm.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.EtagSource;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.protocol.HdfsFileStatus;
import org.junit.jupiter.api.Test;

/**
 * What {@link HadoopStorage} makes of names and statuses without a filesystem: a file's path
 * from its name, and the version that planning records and a task checks (the Python suite's
 * tests/spark/test_spark_jvm_hdfs.py and test_spark_jvm_s3.py do it on HDFS and S3).
 */
class HadoopStorageTest {
  /** A status with an ETag, as S3A's. */
  static final class Tagged extends FileStatus implements EtagSource {
    private static final long serialVersionUID = 1L;
    private final String etag;

    Tagged(String etag) {
      super(10, false, 1, 1, 1000, new Path("s3a://b/t.arrow"));
      this.etag = etag;
    }

    @Override
    public String getEtag() {
      return etag;
    }
  }

  /** A status as HDFS's listing gives it (an HdfsNamedFileStatus). */
  static FileStatus hdfsStatus(long fileId) {
    HdfsFileStatus s = new HdfsFileStatus.Builder().length(10).mtime(1000).fileId(fileId)
        .path("t.arrow".getBytes(StandardCharsets.UTF_8)).build();
    s.setPath(new Path("hdfs://nn:8020/d/t.arrow"));
    return (FileStatus) s;
  }

  @Test
  void childOfANameWithAColonIsAPathInTheFolder() {
    HadoopStorage st = new HadoopStorage(new Configuration());
    // Hadoop's Path("a:b.arrow") is scheme "a": the folder's listing failed planning
    assertEquals("s3a://b/n/a:b.arrow", st.child("s3a://b/n", "a:b.arrow"));
    assertEquals("s3a://b/n/events-2026-11-27T21:00:00.arrow",
        st.child("s3a://b/n", "events-2026-11-27T21:00:00.arrow"));
    assertEquals("a:b.arrow", st.name(st.child("s3a://b/n", "a:b.arrow")));
    assertEquals("hdfs://nn:8020/d/a b", st.child("hdfs://nn:8020/d", "a b"));
    assertEquals("hdfs://nn:8020/d/sub/x.arrow", st.child("hdfs://nn:8020/d/", "sub/x.arrow"));
  }

  @Test
  void versionIsTheETagElseTheHdfsInodeElseNone() {
    assertEquals("\"5e02\"", HadoopStorage.version(new Tagged("\"5e02\"")));
    assertEquals("inode:16387", HadoopStorage.version(hdfsStatus(16387)));
    // a filesystem with neither (file:, a status without an ETag): no version, as before
    assertNull(HadoopStorage.version(new Tagged("")));
    assertNull(HadoopStorage.version(
        new FileStatus(10, false, 1, 1, 1000, new Path("file:/t.arrow"))));
  }

  @Test
  void aRuntimeErrorOfAStorageNamesThePath() {
    Storage failing = (Storage) Proxy.newProxyInstance(Storage.class.getClassLoader(),
        new Class<?>[] {Storage.class}, (proxy, method, args) -> {
          throw new IllegalStateException("Relative path in absolute URI: a:b.arrow");
        });
    ArrowmmException e = assertThrows(ArrowmmException.class,
        () -> DataFiles.resolve(List.of("s3a://b/n"), p -> failing));
    assertTrue(e.getMessage().startsWith("path 's3a://b/n': java.lang.IllegalStateException: "
        + "Relative path in absolute URI: a:b.arrow"), e.getMessage());
  }
}
