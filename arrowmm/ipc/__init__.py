"""The IPC formats: message framing, the lazy loader, compression and byte order,
dictionaries and statistics, the file and stream readers and writers, repair, tensors.

``io`` holds what every writer shares: sinks, temporary files, fsync and the magic bytes.
"""
from .indexed import IndexedStreamReader, index_stream
from .opening import open, open_file, open_stream  # noqa: A004
from .reader import FileReader, StreamReader
from .repair import RepairReport, repair
from .writer import FileWriter, StreamWriter, new_file, new_stream

__all__ = ["FileReader", "StreamReader", "open_file", "open_stream", "open",
           "FileWriter", "StreamWriter", "new_file", "new_stream",
           "IndexedStreamReader", "index_stream", "RepairReport", "repair"]
