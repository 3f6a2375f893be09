"""Tests of arrowmm.cli: the arrowmm command."""
