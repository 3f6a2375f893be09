package io.arrowmm.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import com.github.luben.zstd.Zstd;
import org.apache.arrow.flatbuf.BodyCompression;
import org.apache.arrow.flatbuf.BodyCompressionMethod;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.CompressionType;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.Platform;

/**
 * Reads one partition's record batches: each batch's header is read and parsed, and every
 * buffer of the selected columns is checked against the message body and then read with a
 * positioned read into memory the task owns (only the selected columns' bytes: a projection
 * reads what it selects), so a malformed file raises {@link ArrowmmException} and nothing
 * reads outside what was read.  Compressed buffers (LZ4_FRAME, ZSTD) are decompressed into
 * such memory, each to exactly the length its prefix declares.  The previous batch's memory is
 * released at the next {@link #next()} (Spark's contract for columnar readers), everything at
 * {@link #close()}.
 *
 * <p>Why positioned reads and not a mapping: Spark reads a batch's values in its own generated
 * code, after {@link #next()} returned.  Over a mapped file that another process truncates, such
 * a read faults (SIGBUS), and HotSpot turns the fault into an asynchronous
 * {@code InternalError} ("a fault occurred in a recent unsafe memory access") thrown in
 * Spark's frames, where no code of ours can catch it; Spark takes it as fatal and ends the
 * executor (measured: issue 29).  A positioned read of a truncated file returns short, so the
 * task fails with an {@link IOException} naming the file, Spark retries or reports it, and the
 * executor lives.  What the copy costs is measured in the README's JVM connector section.
 */
final class ArrowmmBatchReader implements PartitionReader<ColumnarBatch> {
  /** The largest buffer a compressed buffer may declare (Spark's vectors are int-indexed). */
  static final long MAX_DECOMPRESSED = Integer.MAX_VALUE - 64;
  /** The most one positioned read asks for (a direct buffer's capacity is an int). */
  private static final int READ_CHUNK = 1 << 30;
  /** Where an empty buffer points: a few zero bytes that live as long as the class. */
  private static final long EMPTY = Platform.allocateMemory(64);

  static {
    Platform.setMemory(EMPTY, (byte) 0, 64);
  }

  private final ArrowmmPartition partition;
  private final ColumnSpec[] columns;
  private final int[] selected;
  private final boolean[] wanted;
  /** Whether every column is selected (then a remote batch is read whole: see
   * {@link #readBlockAhead}). */
  private final boolean allWanted;
  /** The {@code batchLog} option (as the Python source's: "name, batch index, rows" lines). */
  private final String batchLog;

  private int rangeIndex = 0;
  private int batchIndex = -1;
  /** The Hadoop configuration for files not local (null when all are). */
  private final org.apache.hadoop.conf.Configuration conf;
  private Storage.Input channel;
  private ArrowmmPartition.Range open;  // the range whose file channel is open
  /** The current batch's selected buffers, read ahead in few ranges when reads cost a request
   * each (a Hadoop filesystem): {start in file, length, address} per range, -1 start: none. */
  private final List<long[]> segments = new ArrayList<>();
  private ByteBuffer metaBuffer = ByteBuffer.allocate(1 << 12);  // reused for batch headers
  /** Where the next batch's metadata block starts in the file and its length (-1: no next
   * batch in the range), and whether its body has the current body's length (then its
   * buffers likely lie where the current batch's do: see {@link #readAhead}). */
  private long nextMetaAt = -1;
  private int nextMetaLength;
  private boolean nextSameShape;
  /** Bytes read ahead with the current batch for the next one (its metadata block, and the
   * selected buffers predicted to follow it), {start in file, length, address}, or null: in
   * memory of its own, which the next batch adopts as a segment (see {@link #freeOwned}). */
  private long[] carry;
  private final List<long[]> owned = new ArrayList<>();  // {address} of the batch's buffers
  /** The current batch's buffers are cut from one block reused from batch to batch (fresh
   * memory for every batch would cost a page fault per 4 KiB); a buffer that does not fit is
   * allocated alone, and the block grows to the batch's need at the next batch. */
  private long arena;
  private long arenaCapacity;
  private long arenaUsed;
  private long batchNeed;
  /** The current file's dictionaries (by id) and the memory that holds them. */
  private java.util.Map<Long, DictionaryVector.Values> dictionaries;
  /** The selected columns' dictionary ids, and how many of the file's dictionary batches have
   * been applied (a stream's apply from their place on: see {@link StreamIndex}). */
  private java.util.Map<Long, ColumnSpec> wantedIds;
  private int dictCursor;
  private final List<long[]> dictOwned = new ArrayList<>();
  private List<long[]> sink = owned;  // where buffer() records decompressed memory
  private ColumnarBatch current;

  /** The variadic data buffers of the view column being decoded (set by decode). */
  private int viewBuffers;

  // the buffer the last call to buffer() resolved
  private long bufAddress;
  private long bufLength;

  ArrowmmBatchReader(ArrowmmPartition partition, ColumnSpec[] columns, int[] selected,
      String batchLog, org.apache.hadoop.conf.Configuration conf) {
    this.batchLog = batchLog;
    this.conf = conf;
    if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
      throw new ArrowmmException("the JVM reader runs on little-endian machines only");
    }
    this.partition = partition;
    this.columns = columns;
    this.selected = selected;
    this.wanted = new boolean[columns.length];
    for (int s : selected) {
      wanted[s] = true;
    }
    boolean all = true;
    for (boolean w : wanted) {
      all &= w;
    }
    this.allWanted = all;
  }

  @Override
  public boolean next() throws IOException {
    current = null;
    freeOwned();
    try {
      while (rangeIndex < partition.ranges.length) {
        ArrowmmPartition.Range r = partition.ranges[rangeIndex];
        batchIndex++;
        if (batchIndex < r.offsets.length) {
          current = read(r, batchIndex);
          if (batchLog != null) {
            logRead(r, batchIndex);
          }
          return true;
        }
        rangeIndex++;
        batchIndex = -1;
        closeFile();
      }
    } catch (ArrowmmException e) {
      // a task's failure reaches the driver serialized: as a JDK class, it deserializes there
      // whatever class loader holds this jar (a jar added by ADD JAR is not the driver's)
      throw new IllegalArgumentException(e.getMessage());
    }
    return false;
  }

  /** Append one line per batch read to the {@code batchLog} file (lets tests count reads). */
  private void logRead(ArrowmmPartition.Range r, int i) throws IOException {
    String line = r.path.substring(r.path.lastIndexOf('/') + 1) + "\t" + (r.first + i) + "\t"
        + current.numRows() + "\n";
    java.nio.file.Files.write(Path.of(batchLog),
        line.getBytes(java.nio.charset.StandardCharsets.UTF_8), StandardOpenOption.CREATE,
        StandardOpenOption.APPEND, StandardOpenOption.WRITE);
  }

  @Override
  public ColumnarBatch get() {
    return current;
  }

  @Override
  public void close() throws IOException {
    current = null;
    batchNeed = 0;  // (no block to grow)
    dropCarry();
    freeOwned();
    freeArena();
    closeFile();
  }

  private void closeFile() throws IOException {
    dropCarry();
    dictionaries = null;
    for (long[] a : dictOwned) {
      Platform.freeMemory(a[0]);
    }
    dictOwned.clear();
    open = null;
    if (channel != null) {
      Storage.Input c = channel;
      channel = null;
      c.close();
    }
  }

  private void freeOwned() {
    segments.clear();
    for (long[] a : owned) {
      Platform.freeMemory(a[0]);
    }
    owned.clear();
    if (carry != null) {  // read with the batch before for this one: freed with this batch
      segments.add(carry);
      owned.add(new long[] {carry[2]});
      carry = null;
    }
    if (batchNeed > arenaCapacity) {
      freeArena();
      arena = Platform.allocateMemory(batchNeed);
      arenaCapacity = batchNeed;
    }
    arenaUsed = 0;
    batchNeed = 0;
  }

  private void dropCarry() {
    if (carry != null) {
      Platform.freeMemory(carry[2]);
      carry = null;
    }
  }

  private void freeArena() {
    if (arena != 0) {
      Platform.freeMemory(arena);
    }
    arena = 0;
    arenaCapacity = 0;
  }

  /** {@code length} bytes (more than 0) that live until the batch is released, or, while
   * dictionaries load, until the file is done. */
  private long allocate(long length) {
    if (sink == owned) {
      long aligned = (length + 63) & ~63L;
      batchNeed += aligned;
      if (aligned <= arenaCapacity - arenaUsed) {
        long address = arena + arenaUsed;
        arenaUsed += aligned;
        return address;
      }
    }
    long address = Platform.allocateMemory(length);
    sink.add(new long[] {address});
    return address;
  }

  /** Open range {@code r}'s file (once per range) and check that it is the size planned. */
  private void openFile(ArrowmmPartition.Range r) throws IOException {
    if (channel != null) {
      return;
    }
    channel = Storage.of(r.path, conf).openAt(r.path, r.version);
    open = r;
    long size = channel.size();
    if (size != r.fileSize) {
      throw new ArrowmmException(r.path + ": changed since the query was planned (" + size
          + " bytes, " + r.fileSize + " when planned)");
    }
  }

  /** Read {@code length} bytes at {@code position} of the open file to {@code address}. */
  private void readInto(long address, long length, long position, String where)
      throws IOException {
    for (long done = 0; done < length; ) {
      ByteBuffer into = MemoryUtil.directBuffer(address + done,
          (int) Math.min(length - done, READ_CHUNK));
      readFully(into, position + done, where);
      done += into.capacity();
    }
  }

  /** Fill {@code into} from {@code position} of the open file: a file that ends first was cut
   * while the query ran (the plan checked its size), an {@link IOException} naming it. */
  private void readFully(ByteBuffer into, long position, String where) throws IOException {
    while (into.hasRemaining()) {
      long at = position + into.position();
      if (channel.read(into, at) < 0) {
        long now;
        try {
          now = channel.size();
        } catch (IOException e) {
          now = -1;
        }
        throw new IOException(where + ": the file ends at byte " + at + ": truncated while the "
            + "query read it (" + now + " bytes now, " + open.fileSize + " when planned)");
      }
    }
  }

  /**
   * The FlatBuffers message of the metadata block of {@code metaLength} bytes at
   * {@code offset} (read into a buffer reused from batch to batch), its metadata version
   * checked.
   */
  private Message message(long offset, int metaLength, String where) throws IOException {
    if (metaBuffer.capacity() < metaLength) {
      metaBuffer = ByteBuffer.allocate(Math.max(metaLength, 2 * metaBuffer.capacity()));
    }
    metaBuffer.clear().limit(metaLength);
    long ahead = readAheadAddress(offset, metaLength);
    if (ahead != 0) {
      // read with the batch before (see readAhead) or with its body (see readBlockAhead)
      Platform.copyMemory(null, ahead, metaBuffer.array(), Platform.BYTE_ARRAY_OFFSET,
          metaLength);
      metaBuffer.position(metaLength);
    } else {
      readFully(metaBuffer, offset, where);
    }
    ByteBuffer meta = metaBuffer.duplicate().flip().slice().order(ByteOrder.LITTLE_ENDIAN);
    int first = meta.getInt(0);
    int fbStart = first == -1 ? 8 : 4;
    int fbLength = first == -1 ? meta.getInt(4) : first;
    if (fbLength <= 0 || fbLength > metaLength - fbStart) {
      throw new ArrowmmException(where + ": message length " + fbLength + " does not fit in "
          + "its " + metaLength + "-byte metadata block");
    }
    meta.position(fbStart).limit(fbStart + fbLength);
    try {
      ByteBuffer fb = meta.slice().order(ByteOrder.LITTLE_ENDIAN);
      FlatbufferChecks.message(fb, where);
      Message message = Message.getRootAsMessage(fb);
      FileFooter.checkVersion(message.version(), where);
      return message;
    } catch (ArrowmmException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new ArrowmmException(where + ": malformed message header (" + e + ")", e);
    }
  }

  private ColumnarBatch read(ArrowmmPartition.Range r, int i) throws IOException {
    loadDictionaries(r, r.first + i);
    openFile(r);
    String where = r.path + ": record batch " + (r.first + i);
    int metaLength = r.metaLengths[i];
    long blockBody = r.bodyLengths[i];
    if (!channel.local()) {
      readBlockAhead(r, i, where);
    }
    Message message = message(r.offsets[i], metaLength, where);
    long body = r.offsets[i] + metaLength;  // the body's place in the file
    try {
      if (message.headerType() != MessageHeader.RecordBatch) {
        throw new ArrowmmException(where + ": the footer points at a "
            + headerName(message.headerType()) + " message, not a RecordBatch");
      }
      long bodyLength = message.bodyLength();
      if (bodyLength < 0 || bodyLength > blockBody) {
        throw new ArrowmmException(where + ": body length " + bodyLength + " is larger than "
            + "the " + blockBody + " bytes the footer gives it");
      }
      RecordBatch rb = (RecordBatch) message.header(new RecordBatch());
      if (rb == null) {
        throw new ArrowmmException(where + ": the message has no RecordBatch header");
      }
      // the next batch's metadata block, if it follows in this range (see readAhead)
      boolean last = i + 1 >= r.offsets.length;
      nextMetaAt = last ? -1 : r.offsets[i + 1];
      nextMetaLength = last ? 0 : r.metaLengths[i + 1];
      nextSameShape = !last && r.metaLengths[i + 1] == metaLength
          && r.bodyLengths[i + 1] == blockBody;
      return decode(r.columns, rb, where, body, bodyLength);
    } catch (ArrowmmException e) {
      freeOwned();
      throw e;
    } catch (RuntimeException e) {
      freeOwned();
      throw new ArrowmmException(where + ": malformed message header (" + e + ")", e);
    }
  }

  /** Ranges of the file closer than this are read as one (the gap read and dropped): a
   * request to HDFS or an object store costs about as much as reading a few hundred KiB (a
   * round trip of 1-20 ms against 100-200 MB/s per stream), so gaps below 256 KiB cost less
   * read than asked for; wider ones (another column of a big batch: 1 MiB per 131,072
   * doubles) are skipped, so a projection still reads only what it selects. */
  static final long COALESCE_GAP = 256 << 10;
  /** The most one coalesced range holds (a single larger buffer is its own range). */
  static final long COALESCE_MAX = 64L << 20;

  /** What a range {@link #readAhead} reads holds: the current batch's buffers, the next
   * batch's metadata block, or buffers predicted for the next batch. */
  private static final int CURRENT = 0;
  private static final int NEXT_META = 1;
  private static final int PREDICTED = 2;

  /**
   * Read the selected columns' buffers of the batch whose body starts at byte {@code body} in
   * few positioned reads: the buffers (checked to lie in the body: anything else is left to
   * {@link #buffer}, which names it) sorted by offset, merged across gaps up to
   * {@link #COALESCE_GAP}; {@link #buffer} then finds them in {@link #segments}.
   *
   * <p>The next batch's metadata block is read with them, and when only some columns are
   * selected, so are the next batch's selected buffers as far as they follow that block
   * closely, predicted at the current batch's places (batches of one shape, as equal row
   * counts of fixed-width columns give): a projection then costs one request per batch, not
   * two (its header, then its buffers).  The next batch takes those bytes as read ahead
   * ({@link #carry}); a wrong prediction only costs bytes read for nothing, since the next
   * batch reads what its own header says is missing.
   */
  private void readAhead(ColumnSpec[] columns, RecordBatch rb, Buffer buf, long body,
      long bodyLength, String where) throws IOException {
    // (segments holds at most this batch's block, read whole by readBlockAhead, and what the
    // batch before read ahead for it: the ranges they cover are not asked for again)
    List<long[]> ranges = new ArrayList<>();  // {offset from body, length, what it holds}
    long nextBody = nextMetaAt + nextMetaLength - body;  // (the next body, from this one)
    boolean predict = !allWanted && nextSameShape && nextMetaAt >= 0 && nextMetaLength > 0
        && nextMetaAt - body >= bodyLength && bodyLength <= open.fileSize - nextMetaAt
            - nextMetaLength;
    int buffers = rb.buffersLength();
    int cursor = 0;
    int variadic = 0;
    for (int c = 0; c < columns.length && cursor <= buffers; c++) {
      int need = columns[c].bufferCount();
      if (columns[c].kind.isView()) {
        if (variadic >= rb.variadicBufferCountsLength()) {
          break;
        }
        long count = rb.variadicBufferCounts(variadic++);
        if (count < 0 || count > buffers) {
          break;
        }
        need += (int) count;
      }
      for (int k = cursor; wanted[c] && k < cursor + need && k < buffers; k++) {
        rb.buffers(buf, k);
        long off = buf.offset();
        long len = buf.length();
        if (len > 0 && off >= 0 && off <= bodyLength && len <= bodyLength - off) {
          if (readAheadAddress(body + off, len) == 0) {
            ranges.add(new long[] {off, len, CURRENT});
          }
          if (predict) {
            ranges.add(new long[] {nextBody + off, len, PREDICTED});
          }
        }
      }
      cursor += need;
    }
    // The next batch's metadata block usually starts where this body ends, after the last
    // column's buffers: read with them, it saves the next batch a request of its own (on S3
    // a GET: a full scan then costs one GET per batch, not two or three).  Only a block that
    // lies after this body and inside the planned file is asked for.
    boolean nextMeta = nextMetaAt >= 0 && nextMetaLength > 0 && nextMetaAt - body >= bodyLength
        && nextMetaLength <= open.fileSize - nextMetaAt
        && readAheadAddress(nextMetaAt, nextMetaLength) == 0;
    if (nextMeta) {
      ranges.add(new long[] {nextMetaAt - body, nextMetaLength, NEXT_META});
    }
    ranges.sort((x, y) -> Long.compare(x[0], y[0]));
    long start = -1;
    long end = -1;
    boolean forNext = false;  // whether the run holds the next batch's metadata block
    for (long[] r : ranges) {
      boolean joins = start >= 0 && r[0] - end <= COALESCE_GAP
          && Math.max(end, r[0] + r[1]) - start <= COALESCE_MAX;
      if (r[2] == PREDICTED && !(joins && forNext)) {
        continue;  // (a prediction rides along with the next metadata block, or not at all)
      }
      if (joins) {
        end = Math.max(end, r[0] + r[1]);
        forNext |= r[2] == NEXT_META;
        continue;
      }
      if (start >= 0) {
        run(body, start, end, forNext, where);
      }
      start = r[0];
      end = r[0] + r[1];
      forNext = r[2] == NEXT_META;
    }
    if (start >= 0) {
      run(body, start, end, forNext, where);
    }
    if (carry == null && nextMetaAt >= 0 && nextMetaLength > 0
        && readAheadAddress(nextMetaAt, nextMetaLength) != 0) {
      keep(nextMetaAt, nextMetaLength);  // (read whole with this batch: see readBlockAhead)
    }
  }

  /** Read one coalesced run of {@link #readAhead} (offsets from {@code body}): the current
   * batch finds it in {@link #segments}; a run that holds the next batch's metadata block is
   * kept for that batch ({@link #carry}) in memory of its own: whole when it begins with the
   * block, else its part from there on, copied (this batch's part is in the reused block). */
  private void run(long body, long start, long end, boolean forNext, String where)
      throws IOException {
    long from = nextMetaAt;
    if (forNext && body + start == from) {
      carry = ownRead(from, end - start, where);
      segments.add(carry);
      return;
    }
    segment(body + start, end - start, where);
    if (forNext) {
      keep(from, body + end - from);
    }
  }

  /** {@code length} bytes at {@code position} of the open file, read into memory of their own
   * (freed here if the read fails): {start in file, length, address}. */
  private long[] ownRead(long position, long length, String where) throws IOException {
    long address = Platform.allocateMemory(length);
    try {
      readInto(address, length, position, where + " (bytes " + position + " to "
          + (position + length) + ")");
    } catch (IOException | RuntimeException e) {
      Platform.freeMemory(address);
      throw e;
    }
    return new long[] {position, length, address};
  }

  /** Keep bytes {@code [position, position + length)}, read with the current batch, for the
   * next batch ({@link #carry}): copied out of the block reused from batch to batch. */
  private void keep(long position, long length) {
    long address = Platform.allocateMemory(length);
    Platform.copyMemory(null, readAheadAddress(position, length), null, address, length);
    carry = new long[] {position, length, address};
  }

  /**
   * On a remote filesystem, read batch {@code i} of range {@code r} whole (its metadata block
   * and body, and the next batch's metadata block when it follows) in one request, when its
   * metadata block was not read with the batch before (the first batch of a task's run) and
   * every column is selected (the body would be read all but whole anyway): the header and
   * then the body took two requests, a round trip each (a DataNode's, an object store's GET).
   * Only a block that lies inside the file as planned, and within {@link #COALESCE_MAX}, is
   * asked for; anything else is left to the reads that name it.
   */
  private void readBlockAhead(ArrowmmPartition.Range r, int i, String where) throws IOException {
    long at = r.offsets[i];
    if (!allWanted || readAheadAddress(at, r.metaLengths[i]) != 0) {
      return;
    }
    long meta = r.metaLengths[i];
    long body = r.bodyLengths[i];
    if (at < 0 || meta <= 0 || body < 0 || at > open.fileSize
        || body > open.fileSize - at) {  // (numbers from the footer: checked before any sum)
      return;
    }
    long span = meta + body;
    if (i + 1 < r.offsets.length && r.metaLengths[i + 1] > 0 && r.offsets[i + 1] == at + span) {
      span += r.metaLengths[i + 1];
    }
    if (span > open.fileSize - at || span > COALESCE_MAX) {
      return;
    }
    segment(at, span, where);
  }

  private void segment(long position, long length, String where) throws IOException {
    long address = allocate(length);
    readInto(address, length, position, where + " (bytes " + position + " to "
        + (position + length) + ")");
    segments.add(new long[] {position, length, address});
  }

  /** Where bytes {@code [position, position + length)} were read ahead, or 0. */
  private long readAheadAddress(long position, long length) {
    for (long[] s : segments) {
      if (position >= s[0] && length <= s[1] - (position - s[0])) {
        return s[2] + (position - s[0]);
      }
    }
    return 0;
  }

  private static String headerName(byte type) {
    return type >= 0 && type < MessageHeader.names.length ? MessageHeader.name(type)
        : "type-" + type;
  }

  private ColumnarBatch decode(ColumnSpec[] columns, RecordBatch rb, String where, long body,
      long bodyLength)
      throws IOException {
    long rows = rb.length();
    if (rows < 0 || rows > Integer.MAX_VALUE) {
      throw new ArrowmmException(where + ": length " + rows + " is not 0 to 2^31-1 rows");
    }
    int n = (int) rows;
    int codec = codec(rb, where);
    int nodes = rb.nodesLength();
    int buffers = rb.buffersLength();
    ColumnVector[] built = new ColumnVector[columns.length];
    Buffer buf = new Buffer();
    checkBufferOrder(rb, buf, where);
    if (!channel.local()) {
      readAhead(columns, rb, buf, body, bodyLength, where);
    }
    int nodeCursor = 0;
    int bufferCursor = 0;
    int variadic = 0;  // the next of the batch's variadic buffer counts (one per view column)
    for (int c = 0; c < columns.length; c++) {
      ColumnSpec spec = columns[c];
      int needNodes = spec.nodeCount();
      int needBuffers = spec.bufferCount();
      viewBuffers = 0;
      if (spec.kind.isView()) {  // (views are top-level columns only: see ColumnSpec)
        if (variadic >= rb.variadicBufferCountsLength()) {
          throw new ArrowmmException(where + ": column '" + spec.name + "' is a view column "
              + "without a variadic buffer count (the batch has "
              + rb.variadicBufferCountsLength() + ")");
        }
        long count = rb.variadicBufferCounts(variadic++);
        if (count < 0 || count > buffers) {
          throw new ArrowmmException(where + ": column '" + spec.name + "': " + count
              + " variadic buffers, not 0 to the batch's " + buffers + " buffers");
        }
        viewBuffers = (int) count;
        needBuffers += viewBuffers;
      }
      if (nodeCursor + needNodes > nodes || bufferCursor + needBuffers > buffers) {
        throw new ArrowmmException(where + ": column '" + spec.name + "' (field " + c
            + ") has no field node or buffers: the batch has " + nodes + " nodes and "
            + buffers + " buffers");
      }
      if (wanted[c]) {
        built[c] = column(rb, buf, spec, nodeCursor, bufferCursor, n, true, codec, body,
            bodyLength, where + ", column '" + spec.name + "'");
      }
      nodeCursor += needNodes;
      bufferCursor += needBuffers;
    }
    ColumnVector[] out = new ColumnVector[selected.length];
    for (int k = 0; k < selected.length; k++) {
      out[k] = built[selected[k]];
    }
    return new ColumnarBatch(out, n);
  }

  /**
   * The vector of one column (or nested child) whose field node is {@code nodeIndex} and whose
   * first buffer is {@code b}.  A top-level column ({@code exact}) has exactly the batch's
   * {@code rows}; a child has at least the {@code rows} its parent addresses (Arrow allows
   * more), and its own node length is its length.
   */
  /**
   * Every buffer of a batch, selected column's or not (once per batch: cheap), in the order the
   * IPC format writes them: a body holds its buffers end to end, in order, so a non-empty
   * buffer that starts before the non-empty one before it ends means a damaged header, which
   * read as it says would show other bytes of the body as its values.  The Python readers'
   * check ({@code _overlap} in arrowmm/ipc/read/_batch_walk.pyx), with their words.  And every
   * buffer, empty or not, starts at a multiple of 8 bytes (the format pads each one; pyarrow
   * and the Python readers refuse the rest): an offset moved by damage would read shifted
   * values.
   */
  static void checkBufferOrder(RecordBatch rb, Buffer buf, String where) {
    long end = 0;
    int before = -1;
    for (int i = 0, n = rb.buffersLength(); i < n; i++) {
      rb.buffers(buf, i);
      long offset = buf.offset();
      long length = buf.length();
      if ((offset & 7) != 0) {
        throw new ArrowmmException(where + ": buffer " + i + " starts at body offset " + offset
            + ", not a multiple of 8 as the IPC format puts every buffer (damaged metadata?)");
      }
      if (length == 0) {
        continue;
      }
      if (offset < end || length < 0 || offset > Long.MAX_VALUE - length) {
        throw new ArrowmmException(where + ": buffer " + i + " (offset " + offset + ", length "
            + length + ") starts before the buffer before it ends"
            + (before >= 0 ? " (buffer " + before + ", at body byte " + end + ")" : "")
            + ": a body holds its buffers end to end, in order (a damaged message header?)");
      }
      end = offset + length;
      before = i;
    }
  }

  /** The batch's compression codec, -1 when uncompressed. */
  private static int codec(RecordBatch rb, String where) {
    BodyCompression compression = rb.compression();
    if (compression == null) {
      return -1;
    }
    if (compression.method() != BodyCompressionMethod.BUFFER) {
      throw new ArrowmmException(where + ": compression method " + compression.method()
          + " is not BUFFER");
    }
    int codec = compression.codec();
    if (codec != CompressionType.LZ4_FRAME && codec != CompressionType.ZSTD) {
      throw new ArrowmmException(where + ": unknown compression codec " + codec);
    }
    return codec;
  }

  /** The dictionary-encoded columns (at any depth) of the selected columns, by id. */
  private java.util.Map<Long, ColumnSpec> wantedDictionaries(ColumnSpec[] columns) {
    java.util.Map<Long, ColumnSpec> out = new java.util.HashMap<>();
    java.util.ArrayDeque<ColumnSpec> todo = new java.util.ArrayDeque<>();
    for (int c = 0; c < columns.length; c++) {
      if (wanted[c]) {
        todo.add(columns[c]);
      }
    }
    while (!todo.isEmpty()) {
      ColumnSpec s = todo.poll();
      if (s.kind == ColumnSpec.Kind.DICTIONARY) {
        out.put(s.dictionaryId, s);
      }
      todo.addAll(java.util.Arrays.asList(s.children));
    }
    return out;
  }

  /**
   * Apply the dictionary batches that the selected columns use and that come before record batch
   * {@code batch} (a file's all hold for all of its record batches: a first batch per id, then
   * deltas appended to it, no replacements; a stream's apply from their place in it on, and a
   * non-delta one replaces its id's dictionary), read into memory the reader owns until the
   * file is done.  Vectors made earlier keep the dictionary they were made with.
   */
  private void loadDictionaries(ArrowmmPartition.Range r, int batch) throws IOException {
    if (dictionaries == null) {
      dictionaries = new java.util.HashMap<>();
      wantedIds = wantedDictionaries(r.columns);
      dictCursor = 0;
    }
    java.util.Map<Long, ColumnSpec> want = wantedIds;
    if (want.isEmpty() || dictCursor >= r.dictOffsets.length
        || r.dictBefore[dictCursor] > batch) {
      return;
    }
    openFile(r);
    sink = dictOwned;
    try {
      for (; dictCursor < r.dictOffsets.length && r.dictBefore[dictCursor] <= batch;
          dictCursor++) {
        int d = dictCursor;
        String where = r.path + ": dictionary batch " + d;
        int metaLength = r.dictMetaLengths[d];
        Message message = message(r.dictOffsets[d], metaLength, where);
        long body = r.dictOffsets[d] + metaLength;  // the body's place in the file
        try {
          if (message.headerType() != MessageHeader.DictionaryBatch) {
            throw new ArrowmmException(where + ": the index points at a "
                + headerName(message.headerType()) + " message, not a DictionaryBatch");
          }
          long bodyLength = message.bodyLength();
          if (bodyLength < 0 || bodyLength > r.dictBodyLengths[d]) {
            throw new ArrowmmException(where + ": body length " + bodyLength + " is larger "
                + "than the " + r.dictBodyLengths[d] + " bytes the footer gives it");
          }
          org.apache.arrow.flatbuf.DictionaryBatch db = (org.apache.arrow.flatbuf.DictionaryBatch)
              message.header(new org.apache.arrow.flatbuf.DictionaryBatch());
          RecordBatch data = db == null ? null : db.data();
          if (data == null) {
            throw new ArrowmmException(where + ": the message has no dictionary data");
          }
          ColumnSpec spec = want.get(db.id());
          if (spec == null) {
            continue;  // a dictionary no selected column uses
          }
          where += " (id " + db.id() + ", column '" + spec.name + "')";
          DictionaryVector.Values values = dictionaries.get(db.id());
          if (values != null && !db.isDelta()) {
            if (!r.stream) {
              throw new ArrowmmException(where + ": a second dictionary for the id that is not "
                  + "a delta (the IPC file format has no dictionary replacement)");
            }
            values = null;  // a stream's replacement: later batches use the new one
          }
          if (values == null && db.isDelta()) {
            throw new ArrowmmException(where + ": a delta before the id's first dictionary");
          }
          long rows = data.length();
          if (rows < 0 || rows > Integer.MAX_VALUE) {
            throw new ArrowmmException(where + ": length " + rows + " is not 0 to 2^31-1");
          }
          if (data.nodesLength() < spec.values.nodeCount()
              || data.buffersLength() < spec.values.bufferCount()) {
            throw new ArrowmmException(where + ": the batch has " + data.nodesLength()
                + " nodes and " + data.buffersLength() + " buffers, fewer than its values need");
          }
          checkBufferOrder(data, new Buffer(), where);
          ColumnVector v = column(data, new Buffer(), spec.values, 0, 0, rows, true,
              codec(data, where), body, bodyLength, where);
          if (values == null) {
            values = new DictionaryVector.Values();
            dictionaries.put(db.id(), values);  // (a replaced one's memory lives to closeFile)
          }
          values.add(v, (int) rows);
        } catch (ArrowmmException e) {
          throw e;
        } catch (RuntimeException e) {
          throw new ArrowmmException(where + ": malformed message header (" + e + ")", e);
        }
      }
    } finally {
      sink = owned;
    }
  }

  private ColumnVector column(RecordBatch rb, Buffer buf, ColumnSpec spec, int nodeIndex,
      int b, long rows, boolean exact, int codec, long body, long bodyLength, String where)
      throws IOException {
    DataType type = spec.sparkType;
    FieldNode node = rb.nodes(new FieldNode(), nodeIndex);
    long length = node.length();
    if (exact ? length != rows : length < rows || length > Integer.MAX_VALUE) {
      throw new ArrowmmException(where + ": field node length " + length
          + (exact ? " is not the batch's " + rows + " rows"
              : " is not " + rows + " (the values its parent addresses) to 2^31-1"));
    }
    int n = (int) length;
    long nc = node.nullCount();
    if (nc < 0 || nc > n) {
      throw new ArrowmmException(where + ": null count " + nc + " is not 0 to " + n);
    }
    int nulls = (int) nc;
    if (spec.kind == ColumnSpec.Kind.NULL) {
      return new MappedVector.Nulls(type, n);
    }
    long validity = 0;
    boolean allNull = false;
    if (nulls > 0) {
      buffer(rb, buf, b, codec, body, bodyLength, where + ", validity buffer");
      if (bufLength == 0 && nulls == n) {
        allNull = true;
      } else {
        need(where + ", validity buffer", bufLength, (n + 7L) / 8);
        validity = bufAddress;
      }
    }
    if (spec.kind == ColumnSpec.Kind.DICTIONARY) {
      DictionaryVector.Values values = dictionaries == null ? null
          : dictionaries.get(spec.dictionaryId);
      if (values == null) {
        throw new ArrowmmException(where + ": the file has no dictionary batch for id "
            + spec.dictionaryId);
      }
      buffer(rb, buf, b + 1, codec, body, bodyLength, where + ", indices buffer");
      need(where + ", indices buffer", bufLength, (long) n * spec.listSize);
      return new DictionaryVector(type, n, validity, allNull, bufAddress, spec.listSize,
          spec.unsignedIndex, values, where);
    }
    switch (spec.kind) {
      case STRUCT:
      case LIST:
      case LARGE_LIST:
      case FIXED_SIZE_LIST:
      case MAP:
        return nested(rb, buf, spec, nodeIndex, b, n, nulls, validity, allNull, codec, body,
            bodyLength, where);
      default:
        break;
    }
    buffer(rb, buf, b + 1, codec, body, bodyLength, where + ", buffer 1");
    long a1 = bufAddress;
    long l1 = bufLength;
    switch (spec.kind) {
      case BOOL:
        need(where + ", data buffer", l1, (n + 7L) / 8);
        return new MappedVector.Bools(type, n, nulls, validity, allNull, a1);
      case STRING_VIEW:
      case BINARY_VIEW:
        return view(rb, buf, spec, b, n, validity, nulls, allNull, a1, l1, codec, body,
            bodyLength, where);
      case STRING:
      case BINARY:
      case LARGE_STRING:
      case LARGE_BINARY: {
        boolean large = spec.kind == ColumnSpec.Kind.LARGE_STRING
            || spec.kind == ColumnSpec.Kind.LARGE_BINARY;
        buffer(rb, buf, b + 2, codec, body, bodyLength, where + ", data buffer");
        long a2 = bufAddress;
        long l2 = bufLength;
        // Offsets are checked, the bytes are not checked for UTF-8: a string that is not
        // UTF-8 reads as its bytes (Spark keeps them as they are), as with Spark's own file
        // sources, the Python source, and pyarrow's and arrowmm's reads short of full validation
        // (issue 29's decision; tests/spark/test_spark_jvm_damage.py pins it).
        if (n > 0) {
          checkOffsets(where, a1, l1, n, large, l2);
        }
        return large ? new MappedVector.Var64(type, n, nulls, validity, allNull, a1, a2)
            : new MappedVector.Var32(type, n, nulls, validity, allNull, a1, a2);
      }
      case FIXED_BINARY:
        need(where + ", data buffer", l1, (long) n * spec.listSize);
        return new WideVector.FixedBinary(type, n, nulls, validity, allNull, a1, spec.listSize);
      default:
        break;
    }
    need(where + ", data buffer", l1, (long) n * spec.kind.width);
    switch (spec.kind) {
      case INT8:
        return new MappedVector.Int8(type, n, nulls, validity, allNull, a1);
      case INT16:
        return new MappedVector.Int16(type, n, nulls, validity, allNull, a1);
      case INT32:
      case DATE32:
        return new MappedVector.Int32(type, n, nulls, validity, allNull, a1);
      case INT64:
        return new MappedVector.Int64(type, n, nulls, validity, allNull, a1);
      case FLOAT32:
        return new MappedVector.Float32(type, n, nulls, validity, allNull, a1);
      case FLOAT64:
        return new MappedVector.Float64(type, n, nulls, validity, allNull, a1);
      case DECIMAL128:
        return new MappedVector.Decimal128(type, n, nulls, validity, allNull, a1);
      case UINT8:
        return new WideVector.UInt8(type, n, nulls, validity, allNull, a1);
      case UINT16:
        return new WideVector.UInt16(type, n, nulls, validity, allNull, a1);
      case UINT32:
        return new WideVector.UInt32(type, n, nulls, validity, allNull, a1);
      case UINT64:
        return new WideVector.UInt64(type, n, nulls, validity, allNull, a1);
      case FLOAT16:
        return new WideVector.Float16(type, n, nulls, validity, allNull, a1);
      case DECIMAL32:
      case DECIMAL64:
      case DECIMAL256:
        return new WideVector.OtherDecimal(type, n, nulls, validity, allNull, a1,
            spec.kind.width);
      case DATE64:
        return new MappedVector.Date64(type, n, nulls, validity, allNull, a1);
      case TIMESTAMP:
      case DURATION:
        switch (spec.unit) {
          case MICROSECOND:
            return new MappedVector.Int64(type, n, nulls, validity, allNull, a1);
          case SECOND:
            return new MappedVector.ScaledTimestamp(type, n, nulls, validity, allNull, a1,
                1_000_000L, 1);
          case MILLISECOND:
            return new MappedVector.ScaledTimestamp(type, n, nulls, validity, allNull, a1,
                1_000L, 1);
          default:
            return new MappedVector.ScaledTimestamp(type, n, nulls, validity, allNull, a1, 1,
                1_000L);
        }
      default:
        throw new ArrowmmException(where + ": kind " + spec.kind + " has no reader");
    }
  }

  /** A struct, list or map column: offsets checked, then its children built recursively. */
  private ColumnVector nested(RecordBatch rb, Buffer buf, ColumnSpec spec, int nodeIndex, int b,
      int n, int nulls, long validity, boolean allNull, int codec, long body, long bodyLength,
      String where) throws IOException {
    DataType type = spec.sparkType;
    long offsets = 0;
    int width = 0;
    long childRows;
    switch (spec.kind) {
      case STRUCT:
        childRows = n;
        break;
      case FIXED_SIZE_LIST:
        childRows = (long) n * spec.listSize;
        if (childRows > Integer.MAX_VALUE) {
          throw new ArrowmmException(where + ": " + n + " lists of " + spec.listSize
              + " values are more than 2^31-1 values");
        }
        break;
      default: {
        width = spec.kind == ColumnSpec.Kind.LARGE_LIST ? 8 : 4;
        buffer(rb, buf, b + 1, codec, body, bodyLength, where + ", offsets buffer");
        offsets = bufAddress;
        childRows = n == 0 ? 0
            : checkOffsets(where, bufAddress, bufLength, n, width == 8, Integer.MAX_VALUE);
        break;
      }
    }
    ColumnVector[] kids = new ColumnVector[spec.children.length];
    int childNode = nodeIndex + 1;
    int childBuffer = b + spec.kind.buffers;
    for (int k = 0; k < kids.length; k++) {
      ColumnSpec child = spec.children[k];
      kids[k] = column(rb, buf, child, childNode, childBuffer, childRows, false, codec, body,
          bodyLength, where + ", child '" + child.name + "'");
      childNode += child.nodeCount();
      childBuffer += child.bufferCount();
    }
    if (spec.kind == ColumnSpec.Kind.STRUCT) {
      return new NestedVector.Struct(type, n, nulls, validity, allNull, kids);
    }
    ColumnVector keys = null;
    ColumnVector items = null;
    if (spec.kind == ColumnSpec.Kind.MAP) {
      keys = kids[0].getChild(0);
      items = kids[0].getChild(1);
      if (kids[0].hasNull() || keys.hasNull()) {
        throw new ArrowmmException(where + ": a map with null entries or null keys ("
            + kids[0].numNulls() + " null entries, " + keys.numNulls() + " null keys); Spark "
            + "maps have no null keys");
      }
    }
    return new NestedVector.Lists(type, n, nulls, validity, allNull, offsets, width,
        spec.listSize, kids[0], keys, items);
  }

  /** A string_view or binary_view column: its 16-byte views and {@link #viewBuffers} data
   * buffers; every valid view's length, buffer index and range are checked before a vector is
   * made over them (null rows' views are never read). */
  private ColumnVector view(RecordBatch rb, Buffer buf, ColumnSpec spec, int b, int n,
      long validity, int nulls, boolean allNull, long views, long viewsLength, int codec,
      long body, long bodyLength, String where) throws IOException {
    need(where + ", views buffer", viewsLength, 16L * n);
    int count = viewBuffers;
    long[] addresses = new long[count];
    long[] lengths = new long[count];
    for (int k = 0; k < count; k++) {
      buffer(rb, buf, b + 2 + k, codec, body, bodyLength, where + ", data buffer " + k);
      addresses[k] = bufAddress;
      lengths[k] = bufLength;
    }
    for (int i = 0; i < n && !allNull; i++) {
      if (validity != 0
          && (Platform.getByte(null, validity + (i >> 3)) & (1 << (i & 7))) == 0) {
        continue;
      }
      long at = views + 16L * i;
      int length = Platform.getInt(null, at);
      if (length < 0) {
        throw new ArrowmmException(where + ", views buffer: value " + i + " has length "
            + length);
      }
      if (length > 12) {
        int index = Platform.getInt(null, at + 8);
        int offset = Platform.getInt(null, at + 12);
        if (index < 0 || index >= count || offset < 0 || length > lengths[index] - offset) {
          throw new ArrowmmException(where + ", views buffer: value " + i + " (" + length
              + " bytes at offset " + offset + " of data buffer " + index + ") is outside the "
              + count + " data buffers");
        }
      }
    }
    return new WideVector.Views(spec.sparkType, n, nulls, validity, allNull, views, addresses);
  }

  private static void need(String where, long have, long need) {
    if (have < need) {
      throw new ArrowmmException(where + ": " + have + " bytes, fewer than the " + need
          + " its rows need");
    }
  }

  /** Offsets must start at 0 or more, never decrease, and end inside the data buffer; then
   * every value lies inside it. */
  private static long checkOffsets(String where, long address, long length, int n,
      boolean large, long dataLength) {
    int width = large ? 8 : 4;
    need(where + ", offsets buffer", length, (n + 1L) * width);
    long prev = large ? Platform.getLong(null, address) : Platform.getInt(null, address);
    if (prev < 0) {
      throw new ArrowmmException(where + ", offsets buffer: offset 0 is " + prev);
    }
    for (int i = 1; i <= n; i++) {
      long o = large ? Platform.getLong(null, address + 8L * i)
          : Platform.getInt(null, address + 4L * i);
      if (o < prev) {
        throw new ArrowmmException(where + ", offsets buffer: offset " + i + " is " + o
            + ", less than offset " + (i - 1) + " (" + prev + ")");
      }
      if (large && o - prev > Integer.MAX_VALUE) {
        throw new ArrowmmException(where + ": value " + (i - 1) + " is " + (o - prev)
            + " bytes; Spark holds values under 2 GiB");
      }
      prev = o;
    }
    if (prev > dataLength) {
      throw new ArrowmmException(where + ", offsets buffer: the last offset " + prev
          + " is past the " + dataLength + "-byte data buffer");
    }
    return prev;
  }

  /** Resolve buffer {@code k} into (bufAddress, bufLength): checked against the body (which
   * starts at byte {@code body} of the file), read into owned memory and decompressed there
   * when the batch is compressed. */
  private void buffer(RecordBatch rb, Buffer buf, int k, int codec, long body, long bodyLength,
      String where) throws IOException {
    rb.buffers(buf, k);
    long off = buf.offset();
    long len = buf.length();
    if (off < 0 || len < 0 || off > bodyLength || len > bodyLength - off) {
      throw new ArrowmmException(where + " (buffer " + k + "): offset " + off + " and length "
          + len + " do not fit in the " + bodyLength + "-byte message body");
    }
    bufAddress = EMPTY;
    bufLength = 0;
    if (len == 0) {
      return;
    }
    if (codec >= 0 && len < 8) {
      throw new ArrowmmException(where + " (buffer " + k + "): a compressed buffer of " + len
          + " bytes, fewer than its 8-byte length prefix");
    }
    long address = readAheadAddress(body + off, len);
    if (address == 0) {
      address = allocate(len);
      readInto(address, len, body + off, where + " (buffer " + k + ")");
    }
    if (codec < 0) {
      bufAddress = address;
      bufLength = len;
      return;
    }
    long declared = Platform.getLong(null, address);
    if (declared == -1) {  // stored uncompressed
      bufAddress = address + 8;
      bufLength = len - 8;
      return;
    }
    if (declared < 0 || declared > MAX_DECOMPRESSED) {
      throw new ArrowmmException(where + " (buffer " + k + "): decompressed length " + declared
          + " is not 0 to " + MAX_DECOMPRESSED);
    }
    if (declared == 0) {
      return;
    }
    long dst = allocate(declared);
    if (codec == CompressionType.ZSTD) {
      long got = Zstd.decompressUnsafe(dst, declared, address + 8, len - 8);
      if (Zstd.isError(got)) {
        throw new ArrowmmException(where + " (buffer " + k + "): ZSTD: "
            + Zstd.getErrorName(got));
      }
      if (got != declared) {
        throw new ArrowmmException(where + " (buffer " + k + "): ZSTD gave " + got
            + " bytes, the prefix declares " + declared);
      }
    } else {
      Lz4Frame.decode(where + " (buffer " + k + ")", address + 8, len - 8, dst, declared);
    }
    bufAddress = dst;
    bufLength = declared;
  }
}
