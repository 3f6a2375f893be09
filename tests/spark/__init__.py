"""Tests of arrowmm.spark: the Python data source and the JVM connector in real sessions."""
