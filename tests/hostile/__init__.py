"""Cross-cutting: hostile, damaged and fuzz-like input through every reader."""
