"""The commands on files (``arrowmm.cli.files``): schema, head, stats, cat, convert, each on an
IPC file, an IPC stream and standard input, their ``--json`` output parsed."""
import csv
import io
import json
import subprocess
import sys

import pyarrow as pa
import pytest

import arrowmm

ROWS = [{"id": 1, "name": "ann", "score": 1.5},
        {"id": 2, "name": None, "score": -2.0},
        {"id": 3, "name": "bo, \"b\"", "score": None},
        {"id": 4, "name": "cy", "score": 0.25},
        {"id": 5, "name": "dee", "score": 9.0}]


def _run(*args, stdin=None):
    """``python -m arrowmm ARGS``: ``stdout`` bytes, ``out`` and ``err`` as text."""
    proc = subprocess.run([sys.executable, "-m", "arrowmm", *args], capture_output=True,
                          input=stdin, timeout=300)
    proc.out = proc.stdout.decode(errors="replace")
    proc.err = proc.stderr.decode()
    return proc


def _output(*args, stdin=None) -> str:
    """The text ``python -m arrowmm ARGS`` prints, once it has exited 0 (else its error)."""
    proc = _run(*args, stdin=stdin)
    assert proc.returncode == 0, proc.err[-3000:]
    return proc.out


def _write(path, fmt, *, statistics=True, compression=None):
    """ROWS in two batches (3 + 2 rows), written by arrowmm with per-batch statistics."""
    schema = arrowmm.schema([("id", arrowmm.int64()), ("name", arrowmm.string()),
                             ("score", arrowmm.float64())])
    new = arrowmm.new_file if fmt == "file" else arrowmm.new_stream
    with new(path, schema, statistics=statistics, compression=compression) as w:
        for part in (ROWS[:3], ROWS[3:]):
            w.write({k: [r[k] for r in part] for k in ("id", "name", "score")})
    return path


@pytest.fixture(params=["file", "stream", "stdin-file", "stdin-stream"])
def source(request, tmp_path):
    """(argument for PATH, bytes for stdin or None, format) for each way in."""
    fmt = request.param.rsplit("-", 1)[-1]
    path = _write(tmp_path / f"t.{'arrow' if fmt == 'file' else 'arrows'}", fmt)
    if request.param.startswith("stdin"):
        return "-", path.read_bytes(), fmt
    return str(path), None, fmt


def test_schema(source):
    path, stdin, _ = source
    out = _run("schema", path, stdin=stdin)
    assert out.returncode == 0, out.err
    assert out.out.splitlines() == ["id: int64", "name: string", "score: double"]
    doc = json.loads(_output("schema", "--json", path, stdin=stdin))
    assert doc["fields"] == [
        {"name": "id", "type": "int64", "nullable": True, "metadata": None},
        {"name": "name", "type": "string", "nullable": True, "metadata": None},
        {"name": "score", "type": "double", "nullable": True, "metadata": None}]


def test_schema_json_has_field_metadata(tmp_path):
    path = tmp_path / "m.arrow"
    schema = arrowmm.schema([arrowmm.field("x", arrowmm.int32(), nullable=False,
                                           metadata={"unit": "m"})])
    with arrowmm.new_file(path, schema) as w:
        w.write({"x": [1]})
    doc = json.loads(_output("schema", "--json", str(path)))
    assert doc["fields"] == [{"name": "x", "type": "int32", "nullable": False,
                              "metadata": {"unit": "m"}}]


def test_head(source):
    path, stdin, _ = source
    out = _run("head", "-n", "4", "--columns", "name,id", path, stdin=stdin)
    assert out.returncode == 0, out.err
    lines = out.out.splitlines()
    assert lines[0].split() == ["name", "|", "id"]
    assert [line.split(" | ")[0].strip() for line in lines[2:6]] == ["ann", "null", 'bo, "b"', "cy"]
    assert [line.split(" | ")[1].strip() for line in lines[2:6]] == ["1", "2", "3", "4"]
    assert lines[6] == "(4 rows)" and len(lines) == 7
    rows = [json.loads(line) for line in _output("head", "--json", path, stdin=stdin).splitlines()]
    assert rows == ROWS  # default -n 10: all 5


def test_json_lines_keep_nan_and_infinity_apart_from_null(tmp_path):
    # (JSON has no NaN: it was printed as null, the same as a null value)
    path = str(tmp_path / "f.arrow")
    arrowmm.write_file(path, {"f": [float("nan"), None, float("inf"), -float("inf"), 1.5]})
    expected = [{"f": "nan"}, {"f": None}, {"f": "inf"}, {"f": "-inf"}, {"f": 1.5}]
    assert [json.loads(line) for line in _output("head", "--json", path).splitlines()] == expected
    lines = _output("cat", path, "--to", "jsonl").splitlines()
    assert [json.loads(line) for line in lines] == expected


def test_stats(source):
    path, stdin, fmt = source
    doc = json.loads(_output("stats", "--json", path, stdin=stdin))
    assert doc["format"] == fmt and doc["rows"] == 5 and doc["batches"] == 2
    if stdin is None:
        assert doc["file_bytes"] > doc["data_bytes"] > 0
    else:
        assert doc["file_bytes"] is None
    by_name = {c["name"]: c for c in doc["columns"]}
    recorded = "footer" if fmt == "file" else "messages"
    assert by_name["id"] == {"name": "id", "type": "int64", "nulls": 0, "bytes": by_name["id"]["bytes"],
                             "min": 1, "max": 5, "from": recorded}
    assert by_name["id"]["bytes"] >= 5 * 8
    assert (by_name["name"]["nulls"], by_name["name"]["min"], by_name["name"]["max"]) == \
        (1, "ann", "dee")
    assert (by_name["score"]["nulls"], by_name["score"]["min"], by_name["score"]["max"]) == (1, -2.0, 9.0)
    text = _run("stats", path, stdin=stdin)
    assert text.returncode == 0, text.err
    assert f"Arrow IPC {fmt}, 5 rows in 2 batches" in text.out
    assert any(line.split()[:3] == ["score", "double", "1"] and
               line.split()[-3:] == [recorded, "-2.0", "9.0"]
               for line in text.out.splitlines()), text.out


def test_stats_without_statistics_computes_them_unless_told_not_to(tmp_path):
    """A file without statistics gets its bounds computed (``from``: computed); with
    ``--no-compute`` nothing is decoded and the columns show only what is recorded: nothing."""
    path = _write(tmp_path / "plain.arrow", "file", statistics=False)
    doc = json.loads(_output("stats", "--json", str(path)))
    assert [(c["nulls"], c["min"], c["max"], c["from"]) for c in doc["columns"]] == \
        [(0, 1, 5, "computed"), (1, "ann", "dee", "computed"), (1, -2.0, 9.0, "computed")]
    bare = json.loads(_output("stats", "--json", "--no-compute", str(path)))
    assert bare["rows"] == 5 and bare["data_bytes"] is None
    assert [(c["nulls"], c["bytes"], c["from"]) for c in bare["columns"]] == [(None, None, None)] * 3
    assert not any("min" in c or "max" in c for c in bare["columns"])


def test_stats_reports_compression(tmp_path):
    path = tmp_path / "z.arrow"
    with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int64())]), compression="zstd") as w:
        w.write({"x": [7] * 100_000})
    doc = json.loads(_output("stats", "--json", str(path)))
    assert doc["columns"][0]["bytes"] == 800_000 and doc["file_bytes"] < 100_000
    assert doc["compression_ratio"] > 8


def test_cat(source):
    path, stdin, _ = source
    out = _run("cat", path, "--to", "csv", stdin=stdin)
    assert out.returncode == 0, out.err
    rows = list(csv.reader(io.StringIO(out.out)))
    assert rows[0] == ["id", "name", "score"]
    assert rows[1:] == [[str(r["id"]), r["name"] or "", "" if r["score"] is None else str(r["score"])]
                        for r in ROWS]
    lines = _output("cat", path, "--to", "jsonl", stdin=stdin).splitlines()
    assert [json.loads(line) for line in lines] == ROWS
    expected = pa.Table.from_pylist(ROWS)
    arrow = _run("cat", path, "--to", "arrow", stdin=stdin)
    assert pa.ipc.open_file(pa.BufferReader(arrow.stdout)).read_all().to_pylist() == ROWS
    arrows = _run("cat", path, "--to", "arrows", "--columns", "score", stdin=stdin)
    got = pa.ipc.open_stream(arrows.stdout).read_all()
    assert got.equals(expected.select(["score"]))


@pytest.mark.parametrize("out_fmt", ["file", "stream"])
def test_convert(source, tmp_path, out_fmt):
    path, stdin, _ = source
    dst = tmp_path / "out.bin"
    out = _run("convert", path, str(dst), "--compression", "lz4", "--columns", "id,score",
               "--format", out_fmt, "--batch-rows", "2", stdin=stdin)
    assert out.returncode == 0, out.err
    assert out.out == "" and f"wrote {dst}" in out.err
    if out_fmt == "file":
        opened = pa.ipc.open_file(dst)
        batches = [opened.get_batch(i) for i in range(opened.num_record_batches)]
    else:
        batches = list(pa.ipc.open_stream(dst))
    assert [b.num_rows for b in batches] == [2, 1, 2]  # 3 + 2 rows cut into at most 2
    table = pa.Table.from_batches(batches)
    assert table.column_names == ["id", "score"]
    assert table.to_pylist() == [{"id": r["id"], "score": r["score"]} for r in ROWS]


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
def test_convert_compression(tmp_path, codec):
    """--compression compresses the buffers (checked by reading with copies refused), and
    --compression none (the default) writes them plain again."""
    src = tmp_path / "big.arrow"
    with arrowmm.new_file(src, arrowmm.schema([("x", arrowmm.int64())])) as w:
        w.write({"x": [7] * 50_000})
    packed, plain = tmp_path / "packed.arrows", tmp_path / "plain.arrow"
    assert _run("convert", str(src), str(packed), "--compression", codec).returncode == 0
    assert _compressed(packed, "stream") and packed.stat().st_size < src.stat().st_size // 10
    assert _run("convert", str(packed), str(plain)).returncode == 0
    assert not _compressed(plain, "file") and plain.read_bytes() == src.read_bytes()


def _compressed(path, fmt) -> bool:
    """Whether the columns of ``path`` are compressed (they then cannot be read zero-copy)."""
    opener = arrowmm.open_file if fmt == "file" else arrowmm.open_stream
    with opener(str(path), allow_copies=False) as reader:
        try:
            for batch in reader:
                batch.column(0).to_pylist()
        except arrowmm.ArrowInvalid as exc:
            assert "compress" in str(exc), exc
            return True
    return False


def test_convert_format_from_extension_and_to_stdout(tmp_path):
    src = _write(tmp_path / "a.arrow", "file")
    dst = tmp_path / "b.arrows"
    assert _run("convert", str(src), str(dst)).returncode == 0
    assert pa.ipc.open_stream(dst).read_all().to_pylist() == ROWS
    out = _run("convert", str(src), "-", "--format", "stream")
    assert out.returncode == 0, out.err
    assert pa.ipc.open_stream(out.stdout).read_all().to_pylist() == ROWS


def _one_line_error(proc, *needles):
    assert proc.returncode == 1, (proc.out, proc.err)
    lines = proc.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.err, proc.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.mark.parametrize("args", [["schema"], ["head"], ["stats"], ["cat", "--to", "csv"],
                                  ["convert", "OUT"]])
def test_bad_input_is_one_line(args, tmp_path):
    cmd, rest = args[0], args[1:]
    out_path = str(tmp_path / "out.arrow")
    rest = [out_path if a == "OUT" else a for a in rest]
    missing = str(tmp_path / "missing.arrow")
    _one_line_error(_run(cmd, missing, *rest), f"arrowmm {cmd}: ", "missing.arrow",
                    "No such file or directory")
    csv_path = tmp_path / "data.csv"
    csv_path.write_text("id,name\n1,a\n")
    _one_line_error(_run(cmd, str(csv_path), *rest), "data.csv", "CSV")
    _one_line_error(_run(cmd, "-", *rest, stdin=b"not arrow at all, just some text\n"), "<stdin>")
    good = _write(tmp_path / "t.arrows", "stream")
    cut = tmp_path / "cut.arrows"
    cut.write_bytes(good.read_bytes()[:-150])
    if cmd != "schema":  # (the schema comes first and is whole)
        _one_line_error(_run(cmd, str(cut), *rest), f"arrowmm {cmd}: ")
    assert not (tmp_path / "out.arrow").exists()


@pytest.mark.parametrize("args", [["head", "--columns", "nope"], ["head", "-n", "-1"],
                                  ["convert", "--batch-rows", "0", "OUT"]])
def test_bad_options_are_one_line(args, tmp_path):
    path = _write(tmp_path / "t.arrow", "file")
    args = [str(tmp_path / "o.arrow") if a == "OUT" else a for a in args]
    _one_line_error(_run(args[0], str(path), *args[1:]), f"arrowmm {args[0]}: ")


@pytest.mark.parametrize("command", ["schema", "head", "stats", "cat", "convert"])
def test_help_has_an_example(command):
    out = _run(command, "--help")
    assert out.returncode == 0
    assert f"example: arrowmm {command} " in out.out


@pytest.mark.parametrize("to", ["jsonl", "csv", "arrows"])
def test_cat_into_a_closed_pipe_ends_quietly(tmp_path, to):
    """``arrowmm cat big.arrow --to jsonl | head -1``: exit 0 and nothing on stderr when the
    reader stops early (the output is far larger than a pipe's buffer)."""
    path = tmp_path / "big.arrow"
    with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int64())])) as w:
        for _ in range(4):
            w.write({"x": list(range(100_000))})
    proc = subprocess.Popen([sys.executable, "-m", "arrowmm", "cat", str(path), "--to", to],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.read(64)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 0, err
    assert err == b"" and len(first) == 64


# a stream's dictionary that grows (sent as deltas) or is replaced between batches
_CHANGING = {"grew": ([["a", "b"], ["a", "b", "c"]], {"emit_dictionary_deltas": True}),
             "replaced": ([["a", "b"], ["x"]], {})}


@pytest.mark.parametrize("change", list(_CHANGING))
def test_convert_of_a_stream_whose_dictionary_changes_to_a_file(tmp_path, change):
    """A file holds one dictionary per id: convert says which of its options writes one
    (the writer's advice named Python keyword arguments), and they do."""
    words, options = _CHANGING[change]
    batches = [pa.record_batch([pa.DictionaryArray.from_arrays(pa.array([len(w) - 1, 0], pa.int8()),
                                                               pa.array(w))], names=["d"])
               for w in words]
    src = tmp_path / "in.arrows"
    with pa.ipc.new_stream(src, batches[0].schema, options=pa.ipc.IpcWriteOptions(**options)) as w:
        for b in batches:
            w.write_batch(b)
    expected = pa.Table.from_batches(batches).column("d").to_pylist()
    dst = tmp_path / "out.arrow"
    refused = _run("convert", str(src), str(dst))
    _one_line_error(refused, "field 'd'", "--unify-dictionaries", "--format stream")
    assert ("--deltas" in refused.err) == (change == "grew")
    assert "unify_dictionaries=" not in refused.err and "emit_dictionary_deltas=" not in refused.err
    assert not dst.exists()
    for flag in ("--unify-dictionaries", "--deltas") if change == "grew" else ("--unify-dictionaries",):
        out = _run("convert", str(src), str(dst), flag)
        assert out.returncode == 0, out.err
        assert pa.ipc.open_file(dst).read_all().column("d").to_pylist() == expected, flag


def test_convert_in_place(tmp_path):
    """OUT may be IN: the new file replaces the old one whole (written beside it, then renamed)."""
    path = _write(tmp_path / "same.arrow", "file")
    before = path.read_bytes()
    out = _run("convert", str(path), str(path), "--columns", "name", "--format", "stream")
    assert out.returncode == 0, out.err
    assert path.read_bytes() != before and [p.name for p in tmp_path.iterdir()] == ["same.arrow"]
    assert pa.ipc.open_stream(path).read_all().to_pylist() == [{"name": r["name"]} for r in ROWS]
