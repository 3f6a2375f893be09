"""Tests of arrowmm.ipc: reading, writing, appending, compression, statistics, tensors."""
