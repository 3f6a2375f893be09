package io.arrowmm.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.google.flatbuffers.FlatBufferBuilder;
import org.apache.arrow.flatbuf.KeyValue;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * Arrow Java's file writer, but record batch 0's message carries custom metadata
 * ({@link BatchStatistics#ID_KEY}: the id of the footer's statistics document), which binds the
 * footer statistics to this file's batches, and the footer's custom metadata is made when the
 * footer is written, from the record batch Blocks it lists ({@link #end(FooterEntries)}: the
 * statistics document records each batch's Block).  Arrow Java writes no message custom
 * metadata, so batch 0's message is encoded here as {@code MessageSerializer.serialize} encodes
 * every message (continuation marker, length padded so the body starts on 8 bytes, the
 * flatbuffer, then the body), with {@code custom_metadata} added; every other batch is Arrow
 * Java's.
 */
final class StampedFileWriter extends ArrowFileWriter {
  private final Map<String, String> firstBatchMetadata;
  /** The footer's custom metadata: Arrow Java's writer holds this map and writes what it holds
   * when the footer is written. */
  private final Map<String, String> footerMetadata;
  /** Makes the footer's custom metadata of the record batch Blocks, or null (none). */
  private FooterEntries footerEntries;
  private boolean stamped;

  StampedFileWriter(VectorSchemaRoot root, WritableByteChannel out,
      Map<String, String> firstBatchMetadata, CompressionCodec.Factory factory,
      CompressionUtil.CodecType codec) {
    this(root, out, new LinkedHashMap<>(), firstBatchMetadata, factory, codec);
  }

  /** The footer's custom metadata, made of the record batch Blocks the footer lists. */
  interface FooterEntries {
    Map<String, String> of(List<ArrowBlock> blocks) throws IOException;
  }

  private StampedFileWriter(VectorSchemaRoot root, WritableByteChannel out,
      Map<String, String> footerMetadata, Map<String, String> firstBatchMetadata,
      CompressionCodec.Factory factory, CompressionUtil.CodecType codec) {
    super(root, null, out, footerMetadata, IpcOption.DEFAULT, factory, codec, Optional.empty());
    this.footerMetadata = footerMetadata;
    this.firstBatchMetadata = firstBatchMetadata;
  }

  /** Write the footer, its custom metadata made by {@code footerEntries} of the record batch
   * Blocks it lists (in footer order: the batches as written).  ({@link #end()}, as
   * {@link #close()} calls it when a task aborts, writes a footer without custom metadata.) */
  void end(FooterEntries footerEntries) throws IOException {
    this.footerEntries = footerEntries;
    end();
  }

  @Override
  protected void endInternal(WriteChannel out) throws IOException {
    if (footerEntries != null) {
      footerMetadata.putAll(footerEntries.of(List.copyOf(getRecordBlocks())));
    }
    super.endInternal(out);
  }

  @Override
  protected ArrowBlock writeRecordBatch(ArrowRecordBatch batch) throws IOException {
    if (stamped) {
      return super.writeRecordBatch(batch);
    }
    stamped = true;
    ArrowBlock block = writeStamped(batch);
    getRecordBlocks().add(block);  // (what ArrowFileWriter.writeRecordBatch records)
    return block;
  }

  private ArrowBlock writeStamped(ArrowRecordBatch batch) throws IOException {
    long start = out.getCurrentPosition();
    long bodyLength = batch.computeBodyLength();
    if (bodyLength % 8 != 0) {  // (MessageSerializer's own check)
      throw new IllegalStateException("record batch 0: a body of " + bodyLength
          + " bytes, not a multiple of 8");
    }
    FlatBufferBuilder builder = new FlatBufferBuilder();
    int header = batch.writeTo(builder);
    int[] entries = new int[firstBatchMetadata.size()];
    int k = 0;
    for (Map.Entry<String, String> e : firstBatchMetadata.entrySet()) {
      int key = builder.createString(e.getKey());
      int value = builder.createString(e.getValue());
      entries[k++] = KeyValue.createKeyValue(builder, key, value);
    }
    int metadata = Message.createCustomMetadataVector(builder, entries);
    Message.startMessage(builder);
    Message.addHeaderType(builder, batch.getMessageType());
    Message.addHeader(builder, header);
    Message.addVersion(builder, option.metadataVersion.toFlatbufID());
    Message.addBodyLength(builder, bodyLength);
    Message.addCustomMetadata(builder, metadata);
    builder.finish(Message.endMessage(builder));
    ByteBuffer message = builder.dataBuffer();
    int prefix = 8;  // the continuation marker, then the length
    int length = message.remaining();
    int padding = (int) ((start + prefix + length) % 8);
    if (padding != 0) {
      length += 8 - padding;
    }
    out.writeIntLittleEndian(MessageSerializer.IPC_CONTINUATION_TOKEN);
    out.writeIntLittleEndian(length);
    out.write(message);
    out.align();
    long written = MessageSerializer.writeBatchBuffers(out, batch);
    return new ArrowBlock(start, length + prefix, written);
  }
}
