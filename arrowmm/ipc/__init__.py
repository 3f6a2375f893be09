"""The IPC formats, by role: ``core`` (what reading and writing share: message framing, the
magic bytes and sinks, compression, byte order, dictionaries, statistics, object stores),
``read`` (sources, the lazy loader, the file and stream readers, projection, Feather V1, the
indexed stream, salvage), ``write`` (the encoder, the writers, and what rewrites a file:
append, footer statistics, repair) and ``tensor`` (dense and sparse tensors).

This top level is their face, with ``messages``, the message-level API (one IPC message at a
time, read and written, as ``pyarrow.ipc`` offers it).
"""
from .write.append import AppendWriter, append_file, cut_unfinished_tail
from .read.feather import FeatherV1Reader
from .write.footer_statistics import add_statistics
from .read.indexed import IndexedStreamReader, index_stream
from .messages import (Message, MessageReader, read_message, read_record_batch, read_schema,
                       serialize_batch, serialize_schema)
from .read.opening import open, open_file, open_stream  # noqa: A004
from .read.file_reader import FileReader, StreamReader
from .write.repair import RepairReport, repair
from .write.writer import FileWriter, StreamWriter, new_file, new_stream

__all__ = ["FileReader", "StreamReader", "open_file", "open_stream", "open",
           "FileWriter", "StreamWriter", "new_file", "new_stream", "append_file", "AppendWriter",
           "cut_unfinished_tail",
           "IndexedStreamReader", "index_stream", "RepairReport", "repair", "FeatherV1Reader",
           "add_statistics",
           "Message", "MessageReader", "read_message", "read_schema", "read_record_batch",
           "serialize_schema", "serialize_batch"]
