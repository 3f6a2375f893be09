"""Tests of arrowmm.interop: the C data interface, building arrays, interchange."""
