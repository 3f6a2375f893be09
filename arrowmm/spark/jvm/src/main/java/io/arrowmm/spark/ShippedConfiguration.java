package io.arrowmm.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;

/**
 * A Hadoop configuration shipped to the tasks once per executor, not once per task.  Spark's
 * {@code SerializableConfiguration} rebuilds the whole configuration (a thousand settings,
 * each set through Hadoop's loading and deprecation machinery) in every task that
 * deserializes it: a scan of a Hadoop filesystem paid that in each task (a fifth of a filtered
 * query's task time on HDFS, measured), where a scan of local files ships none.  Here the
 * driver writes the settings once as bytes, named by their SHA-256; an executor builds the
 * configuration the first time it meets those bytes and keeps it (the last {@link #KEPT}),
 * and each task gets its own copy of it (a copy of loaded settings parses nothing), so no task
 * sees another's changes.
 */
final class ShippedConfiguration implements Serializable {
  private static final long serialVersionUID = 1L;
  /** How many configurations an executor keeps built (a session's queries share one). */
  static final int KEPT = 8;

  private static final Map<String, Configuration> BUILT =
      new LinkedHashMap<String, Configuration>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Configuration> eldest) {
          return size() > KEPT;
        }
      };

  private final byte[] settings;
  private final String digest;

  ShippedConfiguration(Configuration conf) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      conf.write(out);
    } catch (IOException e) {
      throw new ArrowmmException("could not write the Hadoop configuration: " + e, e);
    }
    this.settings = bytes.toByteArray();
    this.digest = sha256(settings);
  }

  private static String sha256(byte[] data) {
    try {
      StringBuilder hex = new StringBuilder();
      for (byte b : MessageDigest.getInstance("SHA-256").digest(data)) {
        hex.append(String.format("%02x", b));
      }
      return hex.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JVM has no SHA-256", e);
    }
  }

  /** The settings the driver wrote, as a configuration of the task's own. */
  Configuration value() {
    Configuration built;
    synchronized (BUILT) {
      built = BUILT.get(digest);
    }
    if (built == null) {
      if (!digest.equals(sha256(settings))) {  // (never: the bytes travel inside the task)
        throw new ArrowmmException("the shipped Hadoop configuration does not match its digest");
      }
      built = new Configuration(false);
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(settings))) {
        built.readFields(in);
      } catch (IOException e) {
        throw new ArrowmmException("could not read the shipped Hadoop configuration: " + e, e);
      }
      synchronized (BUILT) {
        BUILT.put(digest, built);
      }
    }
    synchronized (built) {
      return new Configuration(built);
    }
  }

  /** How many configurations this JVM keeps built (for tests). */
  static int kept() {
    synchronized (BUILT) {
      return BUILT.size();
    }
  }
}
