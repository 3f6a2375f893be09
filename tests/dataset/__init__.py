"""Tests of arrowmm.dataset: datasets, filters, read-ahead, against pyarrow.dataset."""
