package io.arrowmm.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.Endianness;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.MetadataVersion;
import org.apache.arrow.vector.types.pojo.Schema;

/** What an Arrow IPC file's footer says: its schema and where each record batch is. */
final class FileFooter {
  static final byte[] MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);

  final String path;
  /** Where the file is (read again for batch headers; not sent to executors). */
  transient Storage storage;
  /** The file's version when its status was taken ({@link Storage.Stat#version}), or null. */
  String version;
  final long fileSize;
  final Schema schema;
  final List<ColumnSpec> columns;
  /** Per record batch: the file offset of its message, its metadata length, its body length. */
  final long[] offsets;
  final int[] metaLengths;
  final long[] bodyLengths;
  /** Per dictionary batch (in footer order): offset, metadata length, body length. */
  final long[] dictOffsets;
  final int[] dictMetaLengths;
  final long[] dictBodyLengths;
  /** The footer's per-batch statistics (arrowmm's writers) as the footer claims them (digest,
   * version, columns, batches, each batch's recorded Block and the types of the columns
   * described, against the footer's schema, checked), before the stamp of
   * record batch 0 is; or null. */
  private final BatchStatistics claimed;
  /** Whether record batch 0 carries {@code claimed}'s id: null until asked (then kept with the
   * footer, which {@link FooterCache} keeps). */
  private Boolean bound;
  /** An IPC stream (indexed by {@link StreamIndex}): dictionaries may be replaced between
   * record batches, and each applies from its place in the stream on. */
  final boolean stream;
  /** Per dictionary batch: the index of the first record batch it applies to (files: 0). */
  final int[] dictBefore;

  /** The statistics of a file's columns and batches, from what the footer or stream holds. */
  private interface StatisticsOf {
    BatchStatistics of(List<ColumnSpec> columns, int numBatches);
  }

  private FileFooter(String path, long fileSize, Schema schema, long[] offsets, int[] metaLengths,
      long[] bodyLengths, long[][] dicts, BatchStatistics.Stored stored) {
    this(path, fileSize, schema, offsets, metaLengths, bodyLengths, dicts,
        (columns, n) -> BatchStatistics.ofFooter(stored, schema, columns, offsets, metaLengths,
            bodyLengths), false,
        new int[dicts[0].length]);
  }

  private FileFooter(String path, long fileSize, Schema schema, long[] offsets, int[] metaLengths,
      long[] bodyLengths, long[][] dicts, StatisticsOf statistics, boolean stream,
      int[] dictBefore) {
    this.stream = stream;
    this.dictBefore = dictBefore;
    this.path = path;
    this.fileSize = fileSize;
    this.schema = schema;
    this.columns = ColumnSpec.of(schema, path);
    this.offsets = offsets;
    this.metaLengths = metaLengths;
    this.bodyLengths = bodyLengths;
    this.dictOffsets = dicts[0];
    this.dictMetaLengths = new int[dicts[1].length];
    for (int i = 0; i < dicts[1].length; i++) {
      dictMetaLengths[i] = (int) dicts[1][i];
    }
    this.dictBodyLengths = dicts[2];
    this.claimed = statistics.of(columns, offsets.length);
  }

  /** The index of an IPC stream (no footer: its batches' rows and statistics from the scan,
   * {@code statisticsText} gathered from batches whose own digests matched). */
  static FileFooter ofStream(String path, long fileSize, Schema schema, long[] offsets,
      int[] metaLengths, long[] bodyLengths, long[] rows, long[][] dicts, int[] dictBefore,
      String statisticsText) {
    FileFooter f = new FileFooter(path, fileSize, schema, offsets, metaLengths, bodyLengths,
        dicts, (columns, n) -> BatchStatistics.ofStream(statisticsText, columns, n), true,
        dictBefore);
    f.batchRows = rows;
    return f;
  }

  /** The statistics as the footer claims them, not yet checked against record batch 0: what a
   * planner judges with to learn whether it would use them at all (then it asks
   * {@link #statistics()}), never what it skips or counts by. */
  BatchStatistics claimedStatistics() {
    return claimed;
  }

  /** The statistics, or null when there are none or they are not this file's: the first call
   * on a file's footer reads record batch 0's message header (one read) and checks that it
   * carries the document's id; the verdict is kept with the footer. */
  synchronized BatchStatistics statistics() {
    if (claimed == null) {
      return null;
    }
    if (bound == null) {
      bound = claimed.id == null || claimed.boundTo(batchZeroStamp());
    }
    return bound ? claimed : null;
  }

  /** The {@link BatchStatistics#ID_KEY} that record batch 0's message carries, or null (none,
   * no batch, or a header that cannot be read: then the statistics are not used). */
  private String batchZeroStamp() {
    if (offsets.length == 0 || storage == null) {
      return null;
    }
    try (Storage.Input ch = storage.openAt(path, version)) {
      if (ch.size() != fileSize) {
        return null;  // changed since its footer was read: the scan will say so
      }
      org.apache.arrow.flatbuf.Message m = message(readFully(ch, offsets[0], metaLengths[0]));
      return m != null && m.headerType() == org.apache.arrow.flatbuf.MessageHeader.RecordBatch
          ? BatchStatistics.stamp(m) : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** A remote file whose record batch 0 lies in the bytes read with its footer: its stamp is
   * checked now, at no request (planning many small files then pays none for it later). */
  private void checkStampWithin(TailWindow window) throws IOException {
    if (claimed == null || claimed.id == null || offsets.length == 0
        || !window.holds(offsets[0], metaLengths[0])) {
      return;
    }
    String stamp;
    try {
      org.apache.arrow.flatbuf.Message m = message(readFully(window, offsets[0], metaLengths[0]));
      stamp = m != null && m.headerType() == org.apache.arrow.flatbuf.MessageHeader.RecordBatch
          ? BatchStatistics.stamp(m) : null;
    } catch (RuntimeException e) {
      stamp = null;
    }
    synchronized (this) {
      bound = claimed.boundTo(stamp);
    }
  }

  /** The Message flatbuffer of an encapsulated message's first bytes (its length prefix, with
   * or without the continuation marker, then the flatbuffer), or null when they cannot hold
   * one. */
  private static org.apache.arrow.flatbuf.Message message(ByteBuffer meta) {
    meta.order(ByteOrder.LITTLE_ENDIAN);
    if (meta.limit() < 8) {
      return null;
    }
    int start = meta.getInt(0) == -1 ? 8 : 4;
    int length = meta.getInt(start - 4);
    if (length <= 0 || length > meta.limit() - start) {
      return null;
    }
    meta.position(start).limit(start + length);
    ByteBuffer fb = meta.slice().order(ByteOrder.LITTLE_ENDIAN);
    FlatbufferChecks.message(fb, "record batch header");  // (callers take a refusal as unknown)
    return org.apache.arrow.flatbuf.Message.getRootAsMessage(fb);
  }

  int numBatches() {
    return offsets.length;
  }

  long batchBytes(int i) {
    return metaLengths[i] + bodyLengths[i];
  }

  /** The rows of every record batch, from the statistics or else their headers (read, not
   * mapped), or -1 when a header cannot be read: an estimate for the optimizer; the scan
   * checks them properly. */
  long countRows() {
    long[] rows = batchRows();
    if (rows == null) {
      return -1;
    }
    long sum = 0;
    for (long r : rows) {
      sum += r;
    }
    return sum;
  }

  private long[] batchRows;

  /** Each record batch's row count (statistics first, then headers), or null when unknown. */
  synchronized long[] batchRows() {
    if (batchRows == null) {
      batchRows = readBatchRows();
    }
    return batchRows;
  }

  private long[] readBatchRows() {
    long[] rows = new long[offsets.length];
    boolean all = claimed != null;
    for (int i = 0; all && i < offsets.length; i++) {
      rows[i] = claimed.rows(i);
      all = rows[i] >= 0;
    }
    if (all && statistics() != null) {  // (the counts would be used: check they are this file's)
      return rows;
    }
    try (Storage.Input ch = storage.open(path)) {
      if (ch.size() != fileSize) {
        return null;
      }
      for (int i = 0; i < offsets.length; i++) {
        org.apache.arrow.flatbuf.Message m = message(readFully(ch, offsets[i], metaLengths[i]));
        org.apache.arrow.flatbuf.RecordBatch rb = m == null ? null
            : (org.apache.arrow.flatbuf.RecordBatch) m.header(
                new org.apache.arrow.flatbuf.RecordBatch());
        if (m == null || m.headerType() != org.apache.arrow.flatbuf.MessageHeader.RecordBatch
            || rb == null || rb.length() < 0) {
          return null;
        }
        rows[i] = rb.length();
      }
    } catch (IOException | RuntimeException e) {
      return null;
    }
    return rows;
  }

  /** Read the footer of {@code path}: only the trailing magic, the footer and its schema. */
  static FileFooter read(Storage storage, String path) {
    return read(storage, path, null);
  }

  /** {@link #read(Storage, String)} of a file whose status the caller has just taken
   * ({@code known}, or null): a remote filesystem then opens it without asking again. */
  static FileFooter read(Storage storage, String path, Storage.Stat known) {
    FileFooter f = readFrom(storage, path, known);
    f.storage = storage;
    f.version = known == null ? null : known.version;
    return f;
  }

  /** The bytes at the end of a remote file read in one request before its footer is parsed:
   * the footer (and the 8 leading bytes) of most files lie within them, so the footer costs
   * one request instead of three (head, tail, footer). */
  static final int TAIL_WINDOW = 64 * 1024;

  private static FileFooter readFrom(Storage storage, String path, Storage.Stat known) {
    try (Storage.Input opened = storage.open(path, known)) {
      Storage.Input ch = opened.local() ? opened : TailWindow.of(opened, TAIL_WINDOW);
      long size = ch.size();
      ByteBuffer head = readFully(ch, 0, (int) Math.min(size, 8)).order(ByteOrder.LITTLE_ENDIAN);
      String damaged = StreamIndex.unreadableHead(head);
      if (damaged != null) {
        throw new ArrowmmException(path + ": not an Arrow IPC file or stream: " + damaged);
      }
      if (size >= 8 && !startsWithMagic(head, 0) && StreamIndex.looksLikeStream(head, path)) {
        return StreamIndex.scan(path, ch, size);
      }
      if (size < 6 + 2 + 4 + 6) {
        throw new ArrowmmException(path + ": not an Arrow IPC file (" + size
            + " bytes, fewer than the 18 of the smallest file)");
      }
      ByteBuffer tail = readFully(ch, size - 10, 10).order(ByteOrder.LITTLE_ENDIAN);
      if (!startsWithMagic(head, 0)) {
        if (StreamIndex.looksLikeStream(head, path)) {
          return StreamIndex.scan(path, ch, size);
        }
        throw new ArrowmmException(path + ": not an Arrow IPC file or stream (no ARROW1 magic "
            + "and no stream message at the start)");
      }
      if (!startsWithMagic(tail, 4)) {
        throw new ArrowmmException(path + ": truncated or not an Arrow IPC file (no ARROW1 magic "
            + "at the end of its " + size + " bytes)");
      }
      int footerLength = tail.getInt(0);
      long footerStart = size - 10 - (long) footerLength;
      if (footerLength <= 0 || footerStart < 8) {
        throw new ArrowmmException(path + ": footer length " + footerLength
            + " does not fit in a file of " + size + " bytes");
      }
      ByteBuffer fb = readFully(ch, footerStart, footerLength).order(ByteOrder.LITTLE_ENDIAN);
      FileFooter f = parse(path, size, footerStart, fb);
      if (ch instanceof TailWindow) {
        f.checkStampWithin((TailWindow) ch);
      }
      return f;
    } catch (IOException e) {
      throw new ArrowmmException(path + ": " + e, e);
    }
  }

  private static FileFooter parse(String path, long size, long footerStart, ByteBuffer fb) {
    Schema schema;
    long[] offsets;
    int[] metas;
    long[] bodies;
    BatchStatistics.Stored statistics;
    long[][] dicts;
    try {
      FlatbufferChecks.footer(fb, path);
      Footer footer = Footer.getRootAsFooter(fb);
      checkVersion(footer.version(), path + ": footer");
      org.apache.arrow.flatbuf.Schema fs = footer.schema();
      if (fs == null) {
        throw new ArrowmmException(path + ": the footer has no schema");
      }
      if (fs.endianness() != Endianness.Little) {
        throw new ArrowmmException(path + ": a big-endian file (the JVM reader reads "
            + "little-endian files)");
      }
      schema = StreamIndex.convertSchema(fs, path);
      statistics = BatchStatistics.stored(footer);
      int n = footer.recordBatchesLength();
      if (n < 0 || (long) n * 24 > fb.capacity()) {
        throw new ArrowmmException(path + ": footer lists " + n + " record batches in "
            + fb.capacity() + " bytes");
      }
      offsets = new long[n];
      metas = new int[n];
      bodies = new long[n];
      Block b = new Block();
      for (int i = 0; i < n; i++) {
        footer.recordBatches(b, i);
        offsets[i] = b.offset();
        metas[i] = b.metaDataLength();
        bodies[i] = b.bodyLength();
        long off = offsets[i];
        if (off < 8 || metas[i] < 8 || bodies[i] < 0 || off > footerStart
            || metas[i] > footerStart - off || bodies[i] > footerStart - off - metas[i]) {
          throw new ArrowmmException(path + ": record batch " + i + ": block (offset " + off
              + ", metadata " + metas[i] + " bytes, body " + bodies[i] + " bytes) does not fit "
              + "between the magic and the footer at byte " + footerStart);
        }
      }
      int nd = footer.dictionariesLength();
      if (nd < 0 || (long) nd * 24 > fb.capacity()) {
        throw new ArrowmmException(path + ": footer lists " + nd + " dictionary batches in "
            + fb.capacity() + " bytes");
      }
      dicts = new long[3][nd];
      for (int i = 0; i < nd; i++) {
        footer.dictionaries(b, i);
        long off = b.offset();
        long meta = b.metaDataLength();
        long body = b.bodyLength();
        if (off < 8 || meta < 8 || body < 0 || off > footerStart || meta > footerStart - off
            || body > footerStart - off - meta || meta + body > Integer.MAX_VALUE) {
          throw new ArrowmmException(path + ": dictionary batch " + i + ": block (offset " + off
              + ", metadata " + meta + " bytes, body " + body + " bytes) does not fit "
              + "between the magic and the footer at byte " + footerStart + " (or is 2 GiB)");
        }
        dicts[0][i] = off;
        dicts[1][i] = meta;
        dicts[2][i] = body;
      }
    } catch (ArrowmmException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new ArrowmmException(path + ": malformed footer (" + e + ")", e);
    }
    return new FileFooter(path, size, schema, offsets, metas, bodies, dicts, statistics);
  }

  /**
   * Refuse a metadata version other than V4 and V5, naming it: an older one lays buffers out
   * otherwise, and a newer one may (a reader that does not know it cannot tell), so reading its
   * messages as V5 could give wrong rows or none.  pyarrow and arrowmm's Python readers refuse
   * the same versions.
   */
  static void checkVersion(short version, String where) {
    if (version != MetadataVersion.V4 && version != MetadataVersion.V5) {
      String name = version < 0 ? String.valueOf(version)
          : version < MetadataVersion.names.length ? "V" + (version + 1) + " (" + version + ")"
          : "V" + (version + 1) + " (" + version + ", newer than this reader knows)";
      throw new ArrowmmException(where + ": metadata version " + name + ", which the JVM "
          + "connector does not read (it reads V4 and V5)");
    }
  }

  private static boolean startsWithMagic(ByteBuffer b, int at) {
    for (int i = 0; i < MAGIC.length; i++) {
      if (b.get(at + i) != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  /** A remote file's last bytes, read once, serving the reads that fall inside them (the rest
   * go to the file); closing it leaves the file to its opener. */
  static final class TailWindow implements Storage.Input {
    private final Storage.Input in;
    private final long size;
    private final long start;
    private final ByteBuffer window;

    private TailWindow(Storage.Input in, long size, long start, ByteBuffer window) {
      this.in = in;
      this.size = size;
      this.start = start;
      this.window = window;
    }

    /** {@code in} with its last {@code bytes} (or all of it, when shorter) read in one go. */
    static TailWindow of(Storage.Input in, int bytes) throws IOException {
      long size = in.size();
      long start = Math.max(0, size - bytes);
      return new TailWindow(in, size, start, readFully(in, start, (int) (size - start)));
    }

    @Override
    public long size() {
      return size;
    }

    /** Whether bytes {@code [position, position + length)} lie in the window (no request). */
    boolean holds(long position, long length) {
      return position >= start && length >= 0 && length <= size - position;
    }

    @Override
    public int read(ByteBuffer into, long position) throws IOException {
      if (position < start || position >= size || !into.hasRemaining()) {
        return in.read(into, position);
      }
      int n = (int) Math.min(into.remaining(), size - position);
      ByteBuffer part = window.duplicate();
      part.position((int) (position - start)).limit((int) (position - start) + n);
      into.put(part);
      return n;
    }

    @Override
    public boolean local() {
      return in.local();
    }

    @Override
    public void close() {
    }
  }

  static ByteBuffer readFully(Storage.Input ch, long position, int length)
      throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(length);
    while (buf.hasRemaining()) {
      if (ch.read(buf, position + buf.position()) < 0) {
        throw new IOException("file ended at byte " + (position + buf.position()));
      }
    }
    buf.flip();
    return buf;
  }
}
