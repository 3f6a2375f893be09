package io.arrowmm.spark;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.KeyValue;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The per-batch statistics arrowmm's writers keep in a file footer's custom metadata under
 * {@code arrowmm:statistics} (layout: {@code arrowmm/ipc/core/statistics.py}): per record batch its
 * row count and, per supported column, {@code nulls}, {@code min}, {@code max}, {@code nan}.
 *
 * <p>The document is bound to the data it describes, so that damage or a copy never reads as
 * other rows: the footer also holds {@code arrowmm:statistics-sha256}, the SHA-256 of
 * the document's bytes as stored (a flipped digit fails it), and the document names a random
 * {@code id} that the file's record batch 0 carries in its message's custom metadata under
 * {@code arrowmm:statistics-id} (a footer copied onto other batches, as pyarrow's
 * {@code new_file(..., metadata=reader.metadata)} does, fails it).  The digest is checked when
 * the footer is read; the stamp of batch 0 costs a read of its header, so {@link FileFooter}
 * checks it only when the statistics would be used.  A stream's batches each carry their own
 * document and its digest (no id).
 *
 * <p>Version 3 also binds each entry of a file's {@code batches} to the message it describes:
 * entry i records, under {@code block}, the footer Block i its writer wrote ({@code [offset,
 * metaDataLength, bodyLength]}), and is used only while the footer's Block i is that one.
 * Footers may list blocks in any order, so two swapped Blocks read as the batches in another
 * order; without this the filter would judge each by the other's bounds.  The check costs no
 * I/O: the reader holds the footer.
 *
 * <p>Every document (a file's, and each stream batch's) also names, under {@code types}, the
 * type of every column it describes as its writer's schema had it (pyarrow's string of the
 * storage type, {@link TypeStrings}), and is used only when the schema the values are read by
 * gives each of them the same type: one damaged schema byte (an int32 read as uint32, a
 * timestamp's unit) changes what every reader takes the values for, and bounds recorded for
 * the old type would judge the new values.  Also no I/O: the reader holds the schema.
 *
 * <p>Statistics only ever let a reader skip work, so a document that is absent, malformed, of
 * another version (versions 1 and 2 lack a binding: not trusted), whose digest does not match,
 * or that does not describe this file's batches, blocks, columns and their types is ignored (no
 * statistics), never trusted and never fatal.  Kept on the driver only (planning).
 */
final class BatchStatistics {
  static final String KEY = "arrowmm:statistics";
  /** The footer's (or a stream batch's) SHA-256 of the {@link #KEY} value, lowercase hex. */
  static final String DIGEST_KEY = "arrowmm:statistics-sha256";
  /** Record batch 0's message custom metadata: the document's {@code id}. */
  static final String ID_KEY = "arrowmm:statistics-id";
  static final int VERSION = 3;
  /** Strict as Python's json.loads: bytes after the document make it no document. */
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
  private static final SecureRandom RANDOM = new SecureRandom();

  /** Per batch: its {@code columns} object (column name to statistics), or null. */
  private final JsonNode[] columns;
  /** Per batch: its row count, or -1 when unknown. */
  private final long[] rows;
  /** The id record batch 0 must carry under {@link #ID_KEY}, or null when the document needs
   * no stamp (a stream's, whose batches' own digests were checked). */
  final String id;

  private BatchStatistics(JsonNode[] columns, long[] rows, String id) {
    this.columns = columns;
    this.rows = rows;
    this.id = id;
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

  /** Whether a record batch 0 whose message carries {@code stamp} (its {@link #ID_KEY} value,
   * or null) is the one this document was written with. */
  boolean boundTo(String stamp) {
    return id == null || id.equals(stamp);
  }

  /** The SHA-256 of {@code bytes} as 64 lowercase hex characters. */
  static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {  // every Java runtime has SHA-256
      throw new IllegalStateException(e);
    }
  }

  /** A new document id: 16 random bytes as 32 lowercase hex characters. */
  static String newId() {
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  /** Whether {@code s} is an id as the writers make them (32 lowercase hex characters). */
  static boolean isId(String s) {
    if (s == null || s.length() != 32) {
      return false;
    }
    for (int i = 0; i < 32; i++) {
      char c = s.charAt(i);
      if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
        return false;
      }
    }
    return true;
  }

  /** The footer entries of a file's statistics: the document ({@code columns}: the names of
   * {@code schema}'s columns; {@code types}: the type of each column an entry describes;
   * {@code batches}: per batch its {@code rows}, its footer {@code block} and its
   * {@code columns}) under {@link #KEY}, naming {@code id} (which the file's record batch 0 must
   * carry under {@link #ID_KEY}), and its digest under {@link #DIGEST_KEY}.  {@code schema} is
   * the one the file is written with, {@code batches} holds each batch's {@code rows} and
   * {@code columns}, {@code blocks} the record batch Blocks of the footer being written, in the
   * same order. */
  static Map<String, String> footerEntries(String id, Schema schema, ArrayNode batches,
      List<ArrowBlock> blocks) throws JsonProcessingException {
    if (batches.size() != blocks.size()) {
      throw new IllegalStateException(batches.size() + " batches' statistics for "
          + blocks.size() + " record batch blocks");
    }
    ObjectNode doc = JSON.createObjectNode();
    doc.put("version", VERSION);
    doc.put("id", id);
    ArrayNode names = doc.putArray("columns");
    schema.getFields().forEach(f -> names.add(f.getName()));
    Set<String> described = described(batches);
    ObjectNode types = doc.putObject("types");
    Set<String> unnamed = new java.util.HashSet<>();
    for (Field f : schema.getFields()) {
      if (described.contains(f.getName())) {
        String type = TypeStrings.of(f);
        if (type == null) {  // (no reader could check it: its statistics are left out)
          unnamed.add(f.getName());
        } else {
          types.put(f.getName(), type);
        }
      }
    }
    ArrayNode entries = doc.putArray("batches");
    for (int i = 0; i < blocks.size(); i++) {
      ArrowBlock block = blocks.get(i);
      ObjectNode entry = entries.addObject();
      entry.set("rows", batches.get(i).get("rows"));
      entry.putArray("block").add(block.getOffset()).add(block.getMetadataLength())
          .add(block.getBodyLength());
      JsonNode columns = batches.get(i).get("columns");
      if (!unnamed.isEmpty() && columns instanceof ObjectNode) {
        ((ObjectNode) columns).remove(unnamed);
      }
      entry.set("columns", columns);
    }
    String text = JSON.writeValueAsString(doc);
    Map<String, String> out = new LinkedHashMap<>();
    out.put(KEY, text);
    out.put(DIGEST_KEY, sha256(text.getBytes(StandardCharsets.UTF_8)));
    return out;
  }

  /** A document as stored: the raw bytes of its {@link #KEY} value and the {@link #DIGEST_KEY}
   * value beside it (null when absent). */
  static final class Stored {
    final byte[] text;
    final String digest;

    Stored(byte[] text, String digest) {
      this.text = text;
      this.digest = digest;
    }

    /** Whether the digest beside the document is the SHA-256 of its bytes. */
    boolean intact() {
      return text != null && digest != null && digest.equals(sha256(text));
    }
  }

  /** The bytes of a flatbuffers string as stored (not decoded and encoded again: a string that
   * is not UTF-8 would come back other bytes), or null. */
  private static byte[] raw(ByteBuffer b) {
    if (b == null) {
      return null;
    }
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  /** The statistics document of a footer's custom metadata and its digest, or null when there
   * is none or when a key is there twice (which of two documents was meant cannot be told). */
  static Stored stored(Footer footer) {
    return storedIn(footer.customMetadataLength(), footer::customMetadata);
  }

  /** {@link #stored} over custom metadata of {@code length} entries that {@code entry} fills
   * in (a footer's or a message's: FlatBuffers gives the two no common type). */
  private static Stored storedIn(int length, BiFunction<KeyValue, Integer, KeyValue> entry) {
    byte[] text = null;
    String digest = null;
    try {
      KeyValue kv = new KeyValue();
      for (int i = 0; i < length; i++) {
        entry.apply(kv, i);
        String key = kv.key();
        if (KEY.equals(key)) {
          if (text != null) {
            return null;
          }
          text = raw(kv.valueAsByteBuffer());
        } else if (DIGEST_KEY.equals(key)) {
          if (digest != null) {
            return null;
          }
          digest = kv.value();
        }
      }
    } catch (RuntimeException e) {
      return null;  // statistics only ever skip work: damaged ones are ignored
    }
    return text == null ? null : new Stored(text, digest);
  }

  /** The {@link #ID_KEY} of a record batch message's custom metadata, or null when it has none,
   * has it twice or cannot be read. */
  static String stamp(Message message) {
    String id = null;
    try {
      KeyValue kv = new KeyValue();
      for (int i = 0; i < message.customMetadataLength(); i++) {
        message.customMetadata(kv, i);
        if (ID_KEY.equals(kv.key())) {
          if (id != null) {
            return null;
          }
          id = kv.value();
        }
      }
    } catch (RuntimeException e) {
      return null;
    }
    return id;
  }

  /** A stream record batch message's own document (its {@link #KEY} value), or null when it has
   * none or its {@link #DIGEST_KEY} is missing or does not match its bytes. */
  static String ofStreamBatch(Message message) {
    Stored s = storedIn(message.customMetadataLength(), message::customMetadata);
    return s != null && s.intact() ? new String(s.text, StandardCharsets.UTF_8) : null;
  }

  /** A footer's statistics, or null when the document is not one this reader can trust: its
   * digest, version, id, columns, batches and their blocks (each entry's {@code block} the
   * footer's record batch Block of its index: {@code offsets}, {@code metaLengths},
   * {@code bodyLengths}) and the types of the columns they describe (those of the footer's
   * {@code schema}, {@link #typesHold}) are checked here, the stamp of batch 0 is left to
   * {@link #boundTo} (it needs a read). */
  static BatchStatistics ofFooter(Stored stored, Schema schema, List<ColumnSpec> specs,
      long[] offsets, int[] metaLengths, long[] bodyLengths) {
    if (stored == null || !stored.intact()) {
      return null;
    }
    JsonNode doc = document(stored.text);
    String id = doc == null ? null : doc.path("id").isTextual() ? doc.get("id").asText() : null;
    if (!isId(id) || !recordsBlocks(doc, offsets, metaLengths, bodyLengths)
        || !typesHold(doc, schema, described(doc.get("batches")))) {
      return null;
    }
    return parse(doc, specs, offsets.length, id);
  }

  /** The names of the columns any entry of a file document's {@code batches} describes (the
   * keys of its {@code columns} object). */
  static Set<String> described(JsonNode batches) {
    Set<String> out = new LinkedHashSet<>();
    if (batches != null && batches.isArray()) {
      for (JsonNode b : batches) {
        out.addAll(names(b == null ? null : b.get("columns")));
      }
    }
    return out;
  }

  /** The keys of a {@code columns} object (none when it is not an object). */
  static Set<String> names(JsonNode columns) {
    Set<String> out = new LinkedHashSet<>();
    if (columns != null && columns.isObject()) {
      for (Iterator<String> it = columns.fieldNames(); it.hasNext(); ) {
        out.add(it.next());
      }
    }
    return out;
  }

  /** Whether {@code doc}'s {@code types} is an object naming, for every {@code described}
   * column, the type {@code schema} (the one the values are read by) gives its one field of
   * that name: pyarrow's string ({@link TypeStrings}), exactly.  A missing {@code types}, a
   * missing name, another string, a column of a type no document names or a name the schema
   * lacks or holds twice: false. */
  static boolean typesHold(JsonNode doc, Schema schema, Set<String> described) {
    JsonNode types = doc == null ? null : doc.get("types");
    if (types == null || !types.isObject()) {
      return false;
    }
    Map<String, Field> fields = new HashMap<>();
    Set<String> twice = new java.util.HashSet<>();
    for (Field f : schema.getFields()) {
      if (fields.put(f.getName(), f) != null) {
        twice.add(f.getName());
      }
    }
    for (String name : described) {
      Field f = fields.get(name);
      JsonNode recorded = types.get(name);
      String expected = f == null || twice.contains(name) ? null : TypeStrings.of(f);
      if (expected == null || recorded == null || !recorded.isTextual()
          || !expected.equals(recorded.asText())) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code doc}'s {@code batches} has an entry per footer Block and each records, as
   * {@code block}, exactly three integers equal to its Block's offset, metadata length and body
   * length: the entry describes the message that Block points at (the footer's order is the
   * order the batches are read in, whatever the file order). */
  static boolean recordsBlocks(JsonNode doc, long[] offsets, int[] metaLengths,
      long[] bodyLengths) {
    JsonNode batches = doc == null ? null : doc.get("batches");
    if (batches == null || !batches.isArray() || batches.size() != offsets.length) {
      return false;
    }
    for (int i = 0; i < offsets.length; i++) {
      JsonNode block = batches.get(i).get("block");
      if (block == null || !block.isArray() || block.size() != 3
          || !isLong(block.get(0), offsets[i]) || !isLong(block.get(1), metaLengths[i])
          || !isLong(block.get(2), bodyLengths[i])) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code n} is a JSON integer (not a float such as {@code 8.0}, a string or a
   * boolean) of value {@code expected}. */
  private static boolean isLong(JsonNode n, long expected) {
    return n.isIntegralNumber() && n.canConvertToLong() && n.asLong() == expected;
  }

  /** The statistics a stream's index gathered from its batches' own documents (each already
   * checked against its digest, {@link #ofStreamBatch}): trusted without a stamp. */
  static BatchStatistics ofStream(String text, List<ColumnSpec> specs, int numBatches) {
    return text == null ? null
        : parse(document(text.getBytes(StandardCharsets.UTF_8)), specs, numBatches, null);
  }

  /** The JSON object of a document's bytes, or null when it is not one (or not UTF-8). */
  private static JsonNode document(byte[] text) {
    try {
      JsonNode doc = JSON.readTree(text);
      return doc != null && doc.isObject() ? doc : null;
    } catch (Exception e) {  // Jackson's checked and unchecked parse errors alike: ignore
      return null;
    }
  }

  private static BatchStatistics parse(JsonNode doc, List<ColumnSpec> specs, int numBatches,
      String id) {
    if (doc == null || !doc.path("version").isInt() || doc.path("version").asInt() != VERSION) {
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
    return new BatchStatistics(columns, rows, id);
  }
}
