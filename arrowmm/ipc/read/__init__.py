"""Reading IPC files and streams: sources, the lazy loader, the file and stream readers,
projection, Feather V1, the indexed stream and salvage."""
