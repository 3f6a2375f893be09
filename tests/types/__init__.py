"""Tests of arrowmm.types: data types, fields, schemas, extension types."""
