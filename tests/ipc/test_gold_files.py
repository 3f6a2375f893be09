"""Conformance of arrowmm's reader with Apache Arrow's gold integration files.

For each case of ``<repo root>/../shared/arrow-testing/cpp-21.0.0`` (written by
Arrow C++ 21.0.0) and both IPC formats, arrowmm must read exactly the values
that the case's integration JSON describes.  The expectation comes from
tests/support/integration_json.py, a stdlib-only reader of that JSON, itself checked
against pyarrow in tests/ipc/test_integration_json.py.

arrowmm API exercised here (its public contract):

* ``arrowmm.open_file(path)`` -> reader with ``schema``,
  ``num_record_batches`` and ``get_batch(i)``;
* ``arrowmm.open_stream(path)`` -> reader with ``schema``, iterable over its
  record batches;
* batch: ``num_columns``, ``num_rows``, ``schema.names``, ``column(j)``;
* schema: ``len(schema)``, ``names``, ``metadata`` (dict str -> str or None),
  ``field(j).metadata`` (same);
* array: ``to_pylist(temporal="int")`` (values in the convention documented
  in tests/support/integration_json.py), ``StructArray.field(k)`` (the k-th child,
  already sliced).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import integration_json as ij

import arrowmm

FORMATS = ("file", "stream")
PARAMS = [pytest.param(case, fmt, id=f"{case}-{fmt}") for case in ij.GOLD_CASES for fmt in FORMATS]


@pytest.fixture(scope="module")
def gold_dir() -> Path:
    if not ij.GOLD_DIR.is_dir():
        pytest.skip(f"gold files folder is absent: {ij.GOLD_DIR}")
    return ij.GOLD_DIR


@pytest.fixture(scope="module")
def expected_files(gold_dir):
    """case -> IntegrationFile, parsed once per module."""
    cache: dict[str, ij.IntegrationFile] = {}

    def get(case: str) -> ij.IntegrationFile:
        if case not in cache:
            cache[case] = ij.load(ij.gold_path(case, "json.gz", gold_dir))
        return cache[case]

    return get


def _close(reader) -> None:
    close = getattr(reader, "close", None)
    if close is not None:
        close()


def _read(gold_dir: Path, case: str, fmt: str):
    """(reader, [batch]) for the case's .arrow_file or .stream."""
    if fmt == "file":
        reader = arrowmm.open_file(str(ij.gold_path(case, "arrow_file", gold_dir)))
        return reader, [reader.get_batch(i) for i in range(reader.num_record_batches)]
    reader = arrowmm.open_stream(str(ij.gold_path(case, "stream", gold_dir)))
    return reader, list(reader)


def _norm_metadata(md) -> dict[str, str] | None:
    """None and {} both mean "no metadata"."""
    if not md:
        return None
    return dict(md)


def check_column(array, col: ij.JsonColumn, where: str) -> None:
    if isinstance(array, arrowmm.ExtensionArray):  # the JSON holds storage values
        array = array.storage
    if col.values is not None:
        got = array.to_pylist(temporal="int")
        diff = ij.first_difference(col.values, got, where)
        assert diff is None, diff
        return
    # Only a struct with duplicate child names (duplicate_fieldnames) has no
    # plain value (a dict cannot hold two "" keys): compare its children,
    # each with its own validity, through StructArray.field(k).
    assert col.field.type_name == "struct" and col.field.dictionary is None, (
        f"{where}: no expected values for a {col.field.type}"
    )
    for k, child in enumerate(col.children):
        check_column(array.field(k), child, f"{where}.field({k})")


@pytest.mark.parametrize("case, fmt", PARAMS)
def test_schema(gold_dir, expected_files, case, fmt):
    expected = expected_files(case)
    reader, _ = _read(gold_dir, case, fmt)
    try:
        schema = reader.schema
        assert len(schema) == len(expected.schema)
        assert list(schema.names) == expected.names
        # Only custom_metadata has schema / field metadata, and extension
        # carries the ARROW:extension:* keys (arrowmm keeps them in the field's
        # storage_metadata; a recognised extension is Field.type and leaves them
        # out of Field.metadata, as pyarrow does).  Everywhere else the
        # JSON has none and arrowmm must report none (None or {}).
        assert _norm_metadata(schema.metadata) == expected.schema_metadata
        for j, jf in enumerate(expected.schema):
            got = _norm_metadata(schema.field(j).storage_metadata)
            assert got == jf.metadata, f"field {j} ({jf.name}): metadata {got!r} != {jf.metadata!r}"
    finally:
        _close(reader)


@pytest.mark.parametrize("case, fmt", PARAMS)
def test_batches(gold_dir, expected_files, case, fmt):
    # col.values is exactly what ij.expected_pylists() returns for the column;
    # the JsonColumn also carries the children for the duplicate-name struct.
    expected = expected_files(case)
    reader, batches = _read(gold_dir, case, fmt)
    try:
        if fmt == "file":
            assert reader.num_record_batches == len(expected.batches)
        assert len(batches) == len(expected.batches)
        for b, (batch, columns) in enumerate(zip(batches, expected.batches)):
            assert batch.num_rows == expected.batch_lengths[b], f"batch {b}: num_rows"
            assert batch.num_columns == len(columns), f"batch {b}: num_columns"
            assert list(batch.schema.names) == expected.names, f"batch {b}: schema names"
            for j, col in enumerate(columns):
                check_column(batch.column(j), col, f"batch {b} column {j} ({col.name})")
    finally:
        _close(reader)
