package io.arrowmm.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

import org.apache.arrow.flatbuf.Endianness;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The index of an Arrow IPC stream file ({@code .arrows}, or any file that starts with a stream
 * message): a stream has no footer, so planning reads every message's header once, in order,
 * and records where each record batch and dictionary batch lies (as a file's footer would), so
 * that partitions are ranges of record batches by byte offset like a file's.
 *
 * <p>Stream rules: the schema comes first; dictionary batches may come between record batches,
 * a delta appends to its id's dictionary and a non-delta one replaces it from there on, so each
 * dictionary batch records the first record batch it applies to ({@code dictBefore}).  The stream
 * ends at the end-of-stream marker or at the end of the file.  The statistics arrowmm's stream
 * writers keep in each record batch message's metadata (each with the SHA-256 of its bytes, which
 * must match) serve filter pushdown as a file's footer statistics do.  Every length is checked against
 * the file: a hostile or truncated stream raises {@link ArrowmmException} naming the message.
 */
final class StreamIndex {
  private StreamIndex() {}

  /** File names under which a pre-0.15 stream (no continuation marker) is taken as Arrow. */
  static final String[] EXTENSIONS = {".arrow", ".arrows", ".ipc", ".feather"};

  /** Whether the first 8 bytes start a stream message: the continuation marker, or (under an
   * Arrow file name) a pre-0.15 stream's bare metadata length. */
  static boolean looksLikeStream(ByteBuffer head, String path) {
    if (head.limit() < 4) {
      return false;
    }
    int first = head.getInt(0);
    if (first == -1) {
      return true;
    }
    if (first <= 0) {
      return false;
    }
    return namedArrow(path);
  }

  /** Whether the file name {@code name} says Arrow IPC (ends with one of the extensions). */
  static boolean namedArrow(String name) {
    for (String ext : EXTENSIONS) {
      if (name.endsWith(ext)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Why a source whose first bytes (at most 8) are {@code head} cannot be Arrow IPC in any form
   * (the file magic, a stream's marker or a pre-0.15 stream's metadata length), or null when
   * it may be: the Python side's {@code unreadable_head}, with its words.
   */
  static String unreadableHead(ByteBuffer head) {
    int n = head.limit();
    boolean magic = n >= 6;
    for (int i = 0; magic && i < 6; i++) {
      magic = head.get(i) == "ARROW1".charAt(i);
    }
    if (magic || n >= 4 && head.getInt(0) != 0) {
      return null;
    }
    StringBuilder hex = new StringBuilder();
    boolean zeros = true;
    for (int i = 0; i < n; i++) {
      hex.append(i == 0 ? "" : " ").append(String.format("%02x", head.get(i) & 0xff));
      zeros &= head.get(i) == 0;
    }
    if (n == 0) {
      return "it is empty (0 bytes)";
    }
    if (n < 4) {
      return "it holds only " + n + " bytes (" + hex + "), too few for an Arrow IPC file or "
          + "stream";
    }
    return "its first " + n + " bytes " + (zeros ? "are all zeros" : "start with 4 zero bytes ("
        + hex + ")") + ": neither the file magic 'ARROW1' nor a stream's first message; it is "
        + "damaged (a crash, a full disk or an interrupted copy leaves zeros or nothing at a "
        + "file's start)";
  }

  /** Scan the stream {@code path} (open as {@code ch}, {@code size} bytes) once. */
  static FileFooter scan(String path, Storage.Input ch, long size) throws IOException {
    Schema schema = null;
    int batches = 0;
    int dicts = 0;
    long[] offsets = new long[16];
    int[] metas = new int[16];
    long[] bodies = new long[16];
    long[] rows = new long[16];
    long[][] dict = new long[3][16];
    int[] dictBefore = new int[16];
    java.util.List<String> stats = new java.util.ArrayList<>();
    long at = 0;
    for (int index = 0; at < size; index++) {
      String where = path + ": stream message " + index + " at byte " + at;
      if (size - at < 4) {
        throw new ArrowmmException(where + ": truncated (" + (size - at)
            + " bytes left, fewer than a message's length prefix)");
      }
      ByteBuffer prefix = FileFooter.readFully(ch, at, (int) Math.min(8, size - at))
          .order(ByteOrder.LITTLE_ENDIAN);
      int first = prefix.getInt(0);
      int prefixLength = 4;
      long length = first;
      if (first == -1) {
        if (prefix.limit() < 8) {
          throw new ArrowmmException(where + ": truncated inside its length prefix");
        }
        prefixLength = 8;
        length = prefix.getInt(4);
      }
      if (length == 0) {
        break;  // the end-of-stream marker
      }
      if (length < 0 || length > size - at - prefixLength) {
        throw new ArrowmmException(where + ": metadata length " + length + " does not fit in "
            + "the " + (size - at - prefixLength) + " bytes after its prefix (a truncated or "
            + "malformed stream)");
      }
      ByteBuffer fb = FileFooter.readFully(ch, at + prefixLength, (int) length)
          .order(ByteOrder.LITTLE_ENDIAN);
      long metaEnd = at + prefixLength + length;
      byte type;
      long bodyLength;
      Message message;
      try {
        FlatbufferChecks.message(fb, where);
        message = Message.getRootAsMessage(fb);
        type = message.headerType();
        bodyLength = message.bodyLength();
        FileFooter.checkVersion(message.version(), where);
      } catch (ArrowmmException e) {
        throw e;
      } catch (RuntimeException e) {
        throw new ArrowmmException(where + ": malformed message header (" + e + ")", e);
      }
      if (bodyLength < 0 || bodyLength > size - metaEnd) {
        throw new ArrowmmException(where + ": body length " + bodyLength + " does not fit in "
            + "the " + (size - metaEnd) + " bytes left in the file (a truncated stream?)");
      }
      if (metaEnd - at > Integer.MAX_VALUE || bodyLength > Integer.MAX_VALUE) {
        throw new ArrowmmException(where + ": a message of 2 GiB or more");
      }
      if (schema == null) {
        if (type != MessageHeader.Schema) {
          throw new ArrowmmException(where + ": a stream starts with its schema, not a "
              + name(type) + " message");
        }
        schema = schema(message, where);
      } else if (type == MessageHeader.RecordBatch) {
        if (batches == offsets.length) {
          int n = batches * 2;
          offsets = Arrays.copyOf(offsets, n);
          metas = Arrays.copyOf(metas, n);
          bodies = Arrays.copyOf(bodies, n);
          rows = Arrays.copyOf(rows, n);
        }
        RecordBatch rb;
        try {
          rb = (RecordBatch) message.header(new RecordBatch());
        } catch (RuntimeException e) {
          throw new ArrowmmException(where + ": malformed record batch header (" + e + ")", e);
        }
        if (rb == null || rb.length() < 0) {
          throw new ArrowmmException(where + ": a record batch message without a valid header");
        }
        stats.add(BatchStatistics.ofStreamBatch(message));
        offsets[batches] = at;
        metas[batches] = (int) (metaEnd - at);
        bodies[batches] = bodyLength;
        rows[batches] = rb.length();
        batches++;
      } else if (type == MessageHeader.DictionaryBatch) {
        if (dicts == dictBefore.length) {
          int n = dicts * 2;
          for (int k = 0; k < 3; k++) {
            dict[k] = Arrays.copyOf(dict[k], n);
          }
          dictBefore = Arrays.copyOf(dictBefore, n);
        }
        dict[0][dicts] = at;
        dict[1][dicts] = metaEnd - at;
        dict[2][dicts] = bodyLength;
        dictBefore[dicts] = batches;
        dicts++;
      } else {
        throw new ArrowmmException(where + ": a " + name(type) + " message where a stream "
            + "holds record or dictionary batches");
      }
      at = metaEnd + bodyLength;
    }
    if (schema == null) {
      throw new ArrowmmException(path + ": an empty Arrow IPC stream (no schema message)");
    }
    long[][] d = {Arrays.copyOf(dict[0], dicts), Arrays.copyOf(dict[1], dicts),
        Arrays.copyOf(dict[2], dicts)};
    return FileFooter.ofStream(path, size, schema, Arrays.copyOf(offsets, batches),
        Arrays.copyOf(metas, batches), Arrays.copyOf(bodies, batches),
        Arrays.copyOf(rows, batches), d, Arrays.copyOf(dictBefore, dicts),
        statisticsDocument(schema, stats));
  }

  /** The per-batch documents gathered into the footer document a file writer keeps (so one
   * {@link BatchStatistics} reads both; each batch's own digest was checked, so the whole
   * needs none); null when no batch has one.  A batch whose document is missing, damaged, of
   * another version, without its digest, or whose {@code types} are not those the stream's
   * {@code schema} gives the columns it describes ({@link BatchStatistics#typesHold}) has no
   * statistics (every filter reads it). */
  private static String statisticsDocument(Schema schema, java.util.List<String> perBatch) {
    if (perBatch.stream().allMatch(java.util.Objects::isNull)) {
      return null;
    }
    com.fasterxml.jackson.databind.ObjectMapper json =
        new com.fasterxml.jackson.databind.ObjectMapper();
    com.fasterxml.jackson.databind.node.ObjectNode doc = json.createObjectNode();
    doc.put("version", BatchStatistics.VERSION);
    com.fasterxml.jackson.databind.node.ArrayNode names = doc.putArray("columns");
    for (org.apache.arrow.vector.types.pojo.Field f : schema.getFields()) {
      names.add(f.getName());
    }
    com.fasterxml.jackson.databind.node.ArrayNode batches = doc.putArray("batches");
    for (String text : perBatch) {
      com.fasterxml.jackson.databind.JsonNode b = null;
      try {
        b = text == null ? null : json.readTree(text);
      } catch (Exception e) {  // Jackson's checked and unchecked parse errors alike
        b = null;
      }
      if (b == null || !b.isObject() || !b.path("version").isInt()
          || b.path("version").asInt() != BatchStatistics.VERSION
          || !BatchStatistics.typesHold(b, schema, BatchStatistics.names(b.get("columns")))) {
        batches.addObject();
      } else {
        batches.add(b);
      }
    }
    return doc.toString();
  }

  private static Schema schema(Message message, String where) {
    org.apache.arrow.flatbuf.Schema fs;
    try {
      fs = (org.apache.arrow.flatbuf.Schema) message.header(new org.apache.arrow.flatbuf.Schema());
    } catch (RuntimeException e) {
      throw new ArrowmmException(where + ": malformed schema (" + e + ")", e);
    }
    if (fs == null) {
      throw new ArrowmmException(where + ": a schema message without a schema");
    }
    if (fs.endianness() != Endianness.Little) {
      throw new ArrowmmException(where + ": a big-endian stream (the JVM reader reads "
          + "little-endian data)");
    }
    return convertSchema(fs, where);
  }

  /** Arrow Java's reading of a schema; its refusal of decimal32/64 columns is named as such. */
  static Schema convertSchema(org.apache.arrow.flatbuf.Schema fs, String where) {
    try {
      return Schema.convertSchema(fs);
    } catch (RuntimeException e) {
      if (String.valueOf(e.getMessage()).contains("128-bit and 256-bit decimal")) {
        throw new ArrowmmException(where + ": a decimal32 or decimal64 column, which the JVM "
            + "connector does not read (Arrow Java reads 128- and 256-bit decimals only); "
            + "format('arrowmm_python') with option('cast', 'true') reads it", e);
      }
      throw new ArrowmmException(where + ": malformed schema (" + e + ")", e);
    }
  }

  private static String name(byte type) {
    return type >= 0 && type < MessageHeader.names.length ? MessageHeader.name(type)
        : "type-" + type;
  }
}
