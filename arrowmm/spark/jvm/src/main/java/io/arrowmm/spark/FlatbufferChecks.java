package io.arrowmm.spark;

import java.nio.ByteBuffer;

/**
 * The FlatBuffers verifier's checks, for the metadata the connector reads (a footer, a message
 * and what their headers hold), run before the generated accessors follow any offset.  Arrow
 * Java's accessors follow offsets unchecked: Java's bounds checks stop a read outside the
 * buffer, but not one inside it at the wrong place, so a zeroed offset read the offset itself
 * as an empty vector (a footer's record batches zeroed read as a file of no rows) and an
 * unaligned one read shifted values.  As FlatBuffers' verifier (which pyarrow runs) and the
 * Python readers ({@code arrowmm/format/decode.py}: {@code _check_offset}, {@code _string},
 * {@code _table_in_range}), every offset followed must be non-zero, land on a 4-byte boundary
 * and inside the buffer; a table's vtable and fields, a vector's elements and a string with
 * its terminating NUL must lie inside it; nesting deeper than {@link #MAX_DEPTH} or more
 * tables than the bytes can hold (tables shared or in a cycle) is refused.  Every refusal is
 * an {@link ArrowmmException} naming {@code where}.
 */
final class FlatbufferChecks {
  /** Nested fields a schema may have (the Python readers' {@code limits.max_nesting} is 64;
   * deeper than this also keeps Arrow Java's recursive schema reading off the stack's end). */
  static final int MAX_DEPTH = 64;

  private final ByteBuffer bb;
  private final int size;
  private final String where;
  /** Tables still allowed to be visited: each needs 4 bytes of its own. */
  private int budget;

  private FlatbufferChecks(ByteBuffer bb, String where) {
    this.bb = bb;
    this.size = bb.limit();
    this.where = where;
    this.budget = size / 4;
  }

  /** Check a Footer flatbuffer (its bytes from {@code bb}'s index 0 to its limit). */
  static void footer(ByteBuffer bb, String where) {
    FlatbufferChecks c = new FlatbufferChecks(bb, where + ": footer");
    int footer = c.root();
    c.schema(c.table(footer, 1, "schema"), 0);
    c.vector(footer, 2, 24, "dictionaries");
    c.vector(footer, 3, 24, "recordBatches");
    c.keyValues(footer, 4);
  }

  /** Check a Message flatbuffer and its header (schema, record batch or dictionary batch). */
  static void message(ByteBuffer bb, String where) {
    FlatbufferChecks c = new FlatbufferChecks(bb, where + ": message header");
    int message = c.root();
    c.keyValues(message, 4);
    int header = c.table(message, 2, "header");
    if (header == 0) {
      return;
    }
    switch (c.ubyte(message, 1)) {
      case org.apache.arrow.flatbuf.MessageHeader.Schema:
        c.schema(header, 0);
        break;
      case org.apache.arrow.flatbuf.MessageHeader.RecordBatch:
        c.recordBatch(header);
        break;
      case org.apache.arrow.flatbuf.MessageHeader.DictionaryBatch:
        c.recordBatch(c.table(header, 1, "data"));
        break;
      default:  // (a Tensor or SparseTensor: the reader refuses it by its type)
    }
  }

  private ArrowmmException damaged(String what) {
    return new ArrowmmException(where + ": " + what + " (damaged metadata)");
  }

  /** The root table. */
  private int root() {
    return checkedTable(deref(0, "the root"), "the root table");
  }

  /** The target of the uoffset at byte {@code at}: non-zero, 4-byte aligned, in the buffer. */
  private int deref(int at, String what) {
    if (at < 0 || at > size - 4) {
      throw damaged(what + ": offset at byte " + at + " lies outside the " + size
          + "-byte metadata");
    }
    long step = bb.getInt(at) & 0xffffffffL;
    if (step == 0 || (at + step) % 4 != 0 || step > size - 4 - at) {
      throw damaged(what + ": offset " + step + " at byte " + at + " is zero, unaligned or "
          + "past the " + size + "-byte metadata");
    }
    return (int) (at + step);
  }

  /** Table {@code pos} after checking its vtable and the fields it declares lie in the buffer;
   * counts against the budget of tables. */
  private int checkedTable(int pos, String what) {
    if (--budget < 0) {
      throw damaged(what + ": more tables than the " + size + "-byte metadata can hold "
          + "(tables shared or in a cycle)");
    }
    long vt = (long) pos - bb.getInt(pos);
    if (vt < 0 || vt > size - 4 || vt % 2 != 0) {
      throw damaged(what + " at byte " + pos + ": its vtable at byte " + vt + " is unaligned or "
          + "outside the " + size + "-byte metadata");
    }
    int vtSize = bb.getShort((int) vt) & 0xffff;
    int inline = bb.getShort((int) vt + 2) & 0xffff;
    if (vtSize < 4 || vtSize % 2 != 0 || vtSize > size - vt || inline < 4
        || inline > size - pos) {
      throw damaged(what + " at byte " + pos + ": a vtable of " + vtSize + " bytes for a table "
          + "of " + inline + " does not fit in the " + size + "-byte metadata");
    }
    return pos;
  }

  /** The byte of field {@code slot} of table {@code t}, or 0 when absent; a field the vtable
   * places past the end of the buffer is refused. */
  private int field(int t, int slot, int width) {
    int vt = t - bb.getInt(t);
    int vtSize = bb.getShort(vt) & 0xffff;
    if (4 + 2 * slot + 2 > vtSize) {
      return 0;
    }
    int o = bb.getShort(vt + 4 + 2 * slot) & 0xffff;
    if (o == 0) {
      return 0;
    }
    if (o > size - width - t) {
      throw damaged("table at byte " + t + ": field " + slot + " at " + o + " lies past the "
          + size + "-byte metadata");
    }
    return t + o;
  }

  private int ubyte(int t, int slot) {
    int at = field(t, slot, 1);
    return at == 0 ? 0 : bb.get(at) & 0xff;
  }

  /** The table of (offset) field {@code slot}, checked, or 0 when absent. */
  private int table(int t, int slot, String what) {
    int at = field(t, slot, 4);
    return at == 0 ? 0 : checkedTable(deref(at, what), what);
  }

  /** The vector of field {@code slot} (its length word's byte, 0 when absent), whose
   * {@code elem}-byte elements must lie in the buffer; its length is returned by
   * {@link #length}. */
  private int vector(int t, int slot, int elem, String what) {
    int at = field(t, slot, 4);
    if (at == 0) {
      return 0;
    }
    int v = deref(at, what);
    long n = bb.getInt(v) & 0xffffffffL;
    if (n * elem > size - 4 - v) {
      throw damaged(what + ": a vector of " + n + " elements of " + elem + " bytes at byte " + v
          + " runs past the " + size + "-byte metadata");
    }
    return v;
  }

  private int length(int v) {
    return v == 0 ? 0 : bb.getInt(v);
  }

  /** The string of field {@code slot}: its bytes and terminating NUL in the buffer. */
  private void string(int t, int slot, String what) {
    int v = vector(t, slot, 1, what);
    if (v != 0 && (length(v) > size - 5 - v || bb.get(v + 4 + length(v)) != 0)) {
      throw damaged(what + ": a string of " + length(v) + " bytes at byte " + v
          + " without its terminating NUL inside the metadata");
    }
  }

  /** Each table of the vector of tables of field {@code slot}, checked by {@code each}. */
  private void tables(int t, int slot, String what, java.util.function.IntConsumer each) {
    int v = vector(t, slot, 4, what);
    for (int i = 0, n = length(v); i < n; i++) {
      each.accept(checkedTable(deref(v + 4 + 4 * i, what + " " + i), what + " " + i));
    }
  }

  private void keyValues(int t, int slot) {
    tables(t, slot, "custom metadata", kv -> {
      string(kv, 0, "custom metadata key");
      string(kv, 1, "custom metadata value");
    });
  }

  private void schema(int schema, int depth) {
    if (schema == 0) {
      return;
    }
    tables(schema, 1, "schema field", f -> schemaField(f, depth + 1));
    keyValues(schema, 2);
    vector(schema, 3, 8, "schema features");
  }

  private void schemaField(int f, int depth) {
    if (depth > MAX_DEPTH) {
      throw damaged("fields nested deeper than " + MAX_DEPTH);
    }
    string(f, 0, "field name");
    int type = table(f, 3, "field type");
    if (type != 0) {
      switch (ubyte(f, 2)) {
        case org.apache.arrow.flatbuf.Type.Timestamp:
          string(type, 1, "timestamp time zone");
          break;
        case org.apache.arrow.flatbuf.Type.Union:
          vector(type, 1, 4, "union type ids");
          break;
        default:
      }
    }
    int dictionary = table(f, 4, "field dictionary");
    if (dictionary != 0) {
      table(dictionary, 1, "dictionary index type");
    }
    tables(f, 5, "field child", child -> schemaField(child, depth + 1));
    keyValues(f, 6);
  }

  private void recordBatch(int rb) {
    if (rb == 0) {
      return;
    }
    vector(rb, 1, 16, "record batch nodes");
    vector(rb, 2, 16, "record batch buffers");
    table(rb, 3, "record batch compression");
    vector(rb, 4, 8, "record batch variadic buffer counts");
  }
}
