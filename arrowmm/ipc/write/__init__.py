"""Writing IPC files and streams: the encoder, the writers, and what rewrites a file (append,
footer statistics, repair)."""
