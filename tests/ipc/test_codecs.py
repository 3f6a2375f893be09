"""One codec table (``ipc.core.compression.CODEC_TABLE``): every other list of codecs agrees with it.

A codec added to the table without the rest (the format's enum, the command line, the Spark
options of both engines) fails here by name, the stand-in for an exhaustive match.
"""
import argparse
import os
import re

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pa_ipc
import pytest

import arrowmm
from arrowmm.cli import files as cli_files
from arrowmm.format import decode
from arrowmm.format._fbs import CompressionType
from arrowmm.ipc.core import compression
from arrowmm.ipc.core.compression import CODEC_NAMES, CODEC_TABLE, CODECS
from arrowmm.spark.source import _WriterOptions

JAVA = os.path.join(os.path.dirname(arrowmm.__file__), "spark", "jvm", "src", "main", "java",
                    "io", "arrowmm", "spark")


def test_the_table_is_the_formats_enum():
    assert {c.spec_code: c.name for c in CODEC_TABLE} == decode.COMPRESSION_NAMES
    enum = {k: v for k, v in vars(CompressionType.CompressionType).items() if k.isupper()}
    assert {c.spec_name: c.spec_code for c in CODEC_TABLE} == enum
    assert CODECS == tuple(c.name for c in sorted(CODEC_TABLE, key=lambda c: c.spec_code))


@pytest.mark.parametrize("codec", CODEC_TABLE, ids=lambda c: c.name)
def test_each_codec_writes_and_reads_as_pyarrow_does(codec, tmp_path):
    """Every row of the table is used by the writer and the reader, and pyarrow (its own
    codec of that name) agrees, at the default level and at both ends of the level range."""
    lo, hi = codec.levels
    assert lo <= codec.default_level <= hi
    x = np.arange(100_000, dtype=np.int64) % 7
    for level in (None, lo if lo >= -5 else -5, min(hi, 9)):
        path = str(tmp_path / f"{codec.name}{level}.arrow")
        with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int64())]),
                              compression=codec.name, compression_level=level) as w:
            w.write({"x": x})
        with arrowmm.open_file(path) as r:
            batch = r.get_batch(0)
            assert batch.compression == codec.name
            assert np.array_equal(batch.column("x").to_numpy(), x)
        assert pa_ipc.open_file(path).read_all().column("x").to_numpy().tolist() == x.tolist()
    payload = codec.compress(memoryview(x.tobytes()), codec.default_level)
    assert len(payload) * codec.max_ratio >= x.nbytes  # (the ratio bounds what it can make)


def test_unknown_codecs_are_refused_naming_the_choices():
    with pytest.raises(arrowmm.ArrowInvalid, match="one of 'lz4', 'zstd'.*got 'snappy'"):
        compression.check_codec("snappy")
    with pytest.raises(arrowmm.ArrowInvalid, match="got 'gzip'"):
        arrowmm.new_stream(pa.BufferOutputStream(), arrowmm.schema([("x", arrowmm.int64())]),
                           compression="gzip")


def test_the_command_line_offers_the_tables_codecs():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    cli_files.add_parsers(sub)
    seen = 0
    for command, sub_parser in sub.choices.items():
        for action in sub_parser._actions:
            if "--compression" in action.option_strings:
                assert set(action.choices) == {*CODECS, "none"}, command
                seen += 1
    assert seen >= 2  # (convert and append)


def test_both_spark_engines_take_the_tables_names_and_aliases(tmp_path):
    for name, codec in CODEC_NAMES.items():
        options = _WriterOptions({"compression": name.upper()}, None, [str(tmp_path)])
        assert options.compression == codec
    with pytest.raises(arrowmm.ArrowInvalid, match="none, lz4, zstd"):
        _WriterOptions({"compression": "brotli"}, None, [str(tmp_path)])
    java = open(os.path.join(JAVA, "ArrowmmDataWriter.java")).read()
    switch = java[java.index("static CompressionUtil.CodecType codec("):]
    switch = switch[:switch.index("default:")]
    cases = {}
    for names, target in re.findall(r"((?:case \"[a-z0-9_]*\":\s*)+)return CompressionUtil\."
                                    r"CodecType\.([A-Z0-9_]+);", switch):
        for name in re.findall(r"case \"([a-z0-9_]*)\":", names):
            cases[name] = target
    by_spec = {c.name: c.spec_name for c in CODEC_TABLE}
    assert {n: t for n, t in cases.items() if t != "NO_COMPRESSION"} == \
        {n: by_spec[c] for n, c in CODEC_NAMES.items()}
    reader = open(os.path.join(JAVA, "ArrowmmBatchReader.java")).read()
    for codec in CODEC_TABLE:  # the JVM reader decodes each codec of the table
        assert f"CompressionType.{codec.spec_name}" in reader, codec.name
