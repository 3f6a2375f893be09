package io.arrowmm.spark.testing;

import java.io.File;
import java.io.IOException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * A real HDFS for the Python suite (tests/support/hdfs_support.py): a NameNode and one DataNode in
 * this JVM, on 127.0.0.1 and ports the system picks, storing under the folder given as the
 * only argument (blocks of 1 MiB: files span several, as in a cluster).  Prints
 * {@code HDFS hdfs://127.0.0.1:<port> http://127.0.0.1:<port>} (the NameNode's RPC and HTTP,
 * WebHDFS, addresses) on stdout once both are up, then runs until its stdin closes (the test
 * process stopped it, ended or died: no orphan) and shuts the cluster down.  Test-only: never
 * in the connector's jar.
 */
public final class MiniHdfs {
  private MiniHdfs() {
  }

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: MiniHdfs BASE_DIR");
      System.exit(2);
    }
    File base = new File(args[0]).getAbsoluteFile();
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getPath());
    conf.set("dfs.namenode.rpc-bind-host", "127.0.0.1");
    conf.set("dfs.namenode.http-address", "127.0.0.1:0");
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.setBoolean("dfs.permissions.enabled", false);  // the tests write as any user
    conf.setInt("dfs.replication", 1);
    conf.setLong("dfs.blocksize", 1 << 20);
    conf.setInt("dfs.namenode.fs-limits.min-block-size", 1 << 16);
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf)
        .numDataNodes(1)
        .nameNodePort(0)
        .format(true)
        .build();
    int status = 0;
    try {
      cluster.waitActive();
      System.out.println("HDFS hdfs://127.0.0.1:" + cluster.getNameNodePort() + " http://"
          + cluster.getNameNode().getHttpAddress().getHostString() + ":"
          + cluster.getNameNode().getHttpAddress().getPort());
      System.out.flush();
      while (System.in.read() != -1) {
        // run until stdin closes
      }
    } catch (IOException e) {
      e.printStackTrace();
      status = 1;
    } finally {
      cluster.shutdown(true);
    }
    System.exit(status);  // Hadoop leaves non-daemon threads behind
  }
}
