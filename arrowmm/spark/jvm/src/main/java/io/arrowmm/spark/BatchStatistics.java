package io.arrowmm.spark;

import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.KeyValue;

/**
 * The per-batch statistics arrowmm's writers keep in a file footer's custom metadata under
 * {@code arrowmm:statistics} (layout: {@code arrowmm/ipc/core/statistics.py}): per record batch its
 * row count and, per supported column, {@code nulls}, {@code min}, {@code max}, {@code nan}.
 * Statistics only ever let a reader skip work, so a document that is absent, malformed, of
 * another version or that does not describe this file's batches and columns is ignored (no
 * statistics), never trusted and never fatal.  Kept on the driver only (planning).
 */
final class BatchStatistics {
  static final String KEY = "arrowmm:statistics";
  static final int VERSION = 1;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Per batch: its {@code columns} object (column name to statistics), or null. */
  private final JsonNode[] columns;
  /** Per batch: its row count, or -1 when unknown. */
  private final long[] rows;

  private BatchStatistics(JsonNode[] columns, long[] rows) {
    this.columns = columns;
    this.rows = rows;
  }

  /** Row count of batch {@code i}, or -1 when the statistics do not say. */
  long rows(int i) {
    return rows[i];
  }

  /** The statistics of column {@code name} in batch {@code i}, or null. */
  JsonNode column(int i, String name) {
    JsonNode c = columns[i];
    if (c == null) {
      return null;
    }
    JsonNode s = c.get(name);
    return s != null && s.isObject() ? s : null;
  }

  /** The statistics document of a footer's custom metadata, or null. */
  static String text(Footer footer) {
    String text = null;
    try {
      KeyValue kv = new KeyValue();
      for (int i = 0; i < footer.customMetadataLength(); i++) {
        footer.customMetadata(kv, i);
        if (KEY.equals(kv.key())) {
          text = kv.value();
        }
      }
    } catch (RuntimeException e) {
      return null;
    }
    return text;
  }

  /** The statistics, or null when the document is not one this reader can trust. */
  static BatchStatistics parse(String text, List<ColumnSpec> specs, int numBatches) {
    JsonNode doc;
    try {
      doc = JSON.readTree(text);
    } catch (Exception e) {  // Jackson's checked and unchecked parse errors alike: ignore
      return null;
    }
    if (doc == null || !doc.isObject() || !doc.path("version").isInt()
        || doc.path("version").asInt() != VERSION) {
      return null;
    }
    JsonNode names = doc.get("columns");
    JsonNode batches = doc.get("batches");
    if (names == null || !names.isArray() || names.size() != specs.size()
        || batches == null || !batches.isArray() || batches.size() != numBatches) {
      return null;  // written for another schema or another set of batches: not this file's
    }
    for (int i = 0; i < specs.size(); i++) {
      if (!specs.get(i).name.equals(names.get(i).asText(null))) {
        return null;
      }
    }
    JsonNode[] columns = new JsonNode[numBatches];
    long[] rows = new long[numBatches];
    for (int i = 0; i < numBatches; i++) {
      JsonNode b = batches.get(i);
      JsonNode r = b == null ? null : b.get("rows");
      rows[i] = r != null && r.canConvertToLong() && r.isIntegralNumber() && r.asLong() >= 0
          ? r.asLong() : -1;
      JsonNode c = b == null ? null : b.get("columns");
      columns[i] = c != null && c.isObject() ? c : null;
    }
    return new BatchStatistics(columns, rows);
  }
}
