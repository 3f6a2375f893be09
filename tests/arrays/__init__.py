"""Tests of arrowmm.arrays: arrays, batches, tables, and their conversions (numpy, pandas)."""
