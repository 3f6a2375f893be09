"""Tests of arrowmm.format: the FlatBuffers metadata read and written."""
