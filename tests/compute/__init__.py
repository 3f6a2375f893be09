"""Tests of arrowmm.compute: selection, take, sort, against pyarrow.compute."""
