"""The IPC core both sides share: message framing, the magic bytes and sinks, compression,
byte order, dictionaries, statistics and object-store URLs."""
