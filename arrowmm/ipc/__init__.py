"""The IPC formats: message framing, the lazy loader, compression and byte order,
dictionaries and statistics, the file and stream readers and writers, repair, tensors,
the message-level API (``messages``) and Feather V1 files (``feather``).

``io`` holds what every writer shares: sinks, temporary files, fsync and the magic bytes.
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
