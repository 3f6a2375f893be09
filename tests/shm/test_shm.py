"""arrowmm.shm: named shared-memory segments, read zero-copy by other processes, pickled by name.

Real processes throughout: ``multiprocessing`` (spawn) workers that unpickle batches, arrays and
readers and compute on them, proving through ``/proc/self/maps`` that their numpy views lie in
their own mapping of the segment; a separate program opening the segment by name; a child that
shares while the parent polls (atomic publication); unlinking while another process has the
segment mapped; a name unlinked and made again.  pyarrow is the oracle for the file's contents.
Every test names its segments ``amm-test-<pid>-...`` and a fixture checks none of them (nor their
temporary files) is left in /dev/shm afterwards.
"""
from __future__ import annotations

import doctest
import gc
import itertools
import multiprocessing
import os
import pickle
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import shm
from arrowmm.shm import segment

pytestmark = pytest.mark.skipif(shm.SHM_DIR is None, reason="these tests inspect /dev/shm (Linux)")

PREFIX = f"amm-test-{os.getpid()}-"
_counter = itertools.count()


def _ours():
    return sorted(n for n in os.listdir("/dev/shm") if n.startswith(PREFIX))


def _temporaries():
    return {n for n in os.listdir("/dev/shm") if n.startswith(".arrowmm-share-")}


@pytest.fixture(autouse=True)
def no_leftovers():
    before, temps = _ours(), _temporaries()
    yield
    left = [n for n in _ours() if n not in before] + sorted(_temporaries() - temps)
    for n in left:  # clean up, then fail: a leak must not poison the next tests
        try:
            os.unlink(os.path.join("/dev/shm", n))
        except FileNotFoundError:  # another process's temporary, gone meanwhile
            left.remove(n)
    assert not left, f"segments left in /dev/shm: {left}"


@pytest.fixture
def name():
    return f"{PREFIX}{next(_counter)}"


@pytest.fixture(scope="module")
def pool():
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as p:
        yield p


def _table(n=200_000):
    rng = np.random.default_rng(7)
    strings = pa.array([None if i % 13 == 0 else f"s{i % 1000}" for i in range(n)])
    return pa.table({
        "v": pa.array(np.arange(n, dtype=np.int64)),
        "f": pa.array(rng.random(n)),
        "s": strings,
        "d": strings.dictionary_encode(),
        "l": pa.array([[i, i + 1] if i % 5 else None for i in range(n)], pa.list_(pa.int32())),
    })


# -- what runs in the workers (module level, so spawn can import it) ------------------------
def _mappings_of(path):
    """(start, end) of every mapping of ``path`` in this process, from /proc/self/maps."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].strip() in (path, path + " (deleted)"):
                start, end = (int(x, 16) for x in parts[0].split("-"))
                out.append((start, end))
    return out


def _inside(address, nbytes, ranges):
    return any(start <= address and address + nbytes <= end for start, end in ranges)


def worker_batch(payload, path):
    """Unpickle a batch, sum its 'v' column; report where the numpy view and the Region lie."""
    batch = pickle.loads(payload)
    values = batch.column("v").to_numpy()
    region = batch.column("v").buffers()[1].region
    ranges = _mappings_of(path)
    return dict(total=int(values.sum()), rows=batch.num_rows, strings=batch.column("s").to_pylist(),
                view_in_mapping=_inside(values.ctypes.data, values.nbytes, ranges),
                view_in_region=region.address <= values.ctypes.data
                and values.ctypes.data + values.nbytes <= region.address + region.size,
                region_name=region.shared_name, mappings=len(ranges))


def worker_array(payload, path):
    array = pickle.loads(payload)
    values = array.to_numpy()
    return dict(values=values.tolist(), view_in_mapping=_inside(values.ctypes.data, values.nbytes,
                                                                _mappings_of(path)))


def worker_pylist(payload):
    obj = pickle.loads(payload)
    return obj.to_pylist()


def worker_reader(payload):
    reader = pickle.loads(payload)
    return [int(b.column("v").to_numpy().sum()) for b in reader]


def worker_unpickle_error(payload):
    try:
        pickle.loads(payload)
    except arrowmm.ArrowInvalid as exc:
        return str(exc)
    return None


def worker_hold_then_sum(conn, path):
    """Map the segment via a pickled batch, say so, wait until the parent has unlinked it, sum."""
    batch = pickle.loads(conn.recv())
    values = batch.column("v").to_numpy()
    conn.send(("mapped", len(_mappings_of(path))))
    assert conn.recv() == "unlinked"
    conn.send((int(values.sum()), batch.column("s").to_pylist()[:20], not os.path.exists(path),
               _inside(values.ctypes.data, values.nbytes, _mappings_of(path))))


# -- the file itself ----------------------------------------------------------------------
def test_share_writes_an_ipc_file_pyarrow_reads(name):
    table = _table()
    with shm.share(table, name=name) as shared:
        path = f"/dev/shm/{name}"
        assert shared.name == name and shared.path == path
        assert shared.size == os.path.getsize(path)
        assert name in repr(shared) and str(shared.size) in repr(shared)
        assert pa.ipc.open_file(pa.memory_map(path)).read_all().equals(table)
        assert pa.table(shm.open_shared(name)).equals(table)
        assert pa.table(shared.open()).equals(table)
        assert oct(os.stat(path).st_mode & 0o777) == oct(0o600)
    assert not os.path.exists(path)


def test_share_accepts_batches_readers_and_c_interfaces(name, tmp_path):
    table = _table(5_000)
    batches = table.to_batches(max_chunksize=1_000)
    file_path = tmp_path / "t.arrow"
    with pa.ipc.new_file(str(file_path), table.schema) as w:
        w.write_table(table, max_chunksize=1_000)
    inputs = {
        "pyarrow table (stream)": table,
        "pyarrow batch (array)": batches[0],
        "pyarrow reader": pa.RecordBatchReader.from_batches(table.schema, batches),
        "arrowmm batch": arrowmm.record_batch(batches[1]),
        "arrowmm batch list": [arrowmm.record_batch(b) for b in batches],
        "arrowmm reader": arrowmm.open_file(file_path),
        "columns dict": {"x": [1, 2, None]},
    }
    expected = {
        "pyarrow table (stream)": table, "pyarrow batch (array)": pa.table(batches[0]),
        "pyarrow reader": table, "arrowmm batch": pa.table(batches[1]),
        "arrowmm batch list": table, "arrowmm reader": table,
        "columns dict": pa.table({"x": [1, 2, None]}),
    }
    for i, (what, data) in enumerate(inputs.items()):
        with shm.share(data, name=f"{name}-{i}") as shared:
            got = pa.ipc.open_file(pa.memory_map(shared.path)).read_all()
            assert got.equals(expected[what]), what
    for codec in ("lz4", "zstd"):
        with shm.share(table, name=f"{name}-{codec}", compression=codec) as shared:
            reader = shm.open_shared(shared.name)
            assert reader.get_batch(0).column("v").is_zero_copy is False  # decompressed
            assert pa.table(reader).equals(table)


def test_share_streams_batches_without_gathering(name):
    """A generator of batches is consumed one at a time (the writer streams them)."""
    seen = []

    def batches():
        for k in range(5):
            seen.append(k)
            yield arrowmm.record_batch({"v": np.full(1000, k, dtype=np.int64)})

    schema = arrowmm.schema([("v", arrowmm.int64())])
    with shm.share(arrowmm.RecordBatchReader.from_batches(schema, batches()), name=name) as shared:
        reader = shm.open_shared(shared.name)
        assert [int(b.column("v").to_numpy()[0]) for b in reader] == [0, 1, 2, 3, 4]
        assert seen == [0, 1, 2, 3, 4]


def test_share_unifies_dictionaries_that_differ_between_batches(name):
    """Batches whose dictionaries differ (concatenated categoricals, a stream's replacements)
    are shared with one dictionary per column (review 28: F4: share refused them, advising
    options it does not take)."""
    def batch(values, indices):
        return pa.record_batch({"d": pa.DictionaryArray.from_arrays(pa.array(indices, pa.int8()),
                                                                    pa.array(values))})
    batches = [batch(["a", "b"], [0, 1]), batch(["x"], [0, 0]), batch(["b", "y"], [1, 0])]
    inputs = {"pyarrow table": pa.Table.from_batches(batches),
              "arrowmm batch list": [arrowmm.record_batch(b) for b in batches],
              "pyarrow reader": pa.RecordBatchReader.from_batches(batches[0].schema, batches)}
    for i, (what, data) in enumerate(inputs.items()):
        with shm.share(data, name=f"{name}-{i}") as shared:
            got = pa.ipc.open_file(pa.memory_map(shared.path)).read_all().column("d")
            assert got.to_pylist() == ["a", "b", "x", "x", "y", "b"], what
            assert got.chunk(0).dictionary.to_pylist() == ["a", "b", "x", "y"], what


# -- errors and cleanup -------------------------------------------------------------------
def test_open_missing_and_not_arrow(name):
    with pytest.raises(arrowmm.ArrowInvalid, match=f"no shared-memory segment named '{name}'"):
        shm.open_shared(name)
    with open(f"/dev/shm/{name}", "wb") as f:
        f.write(b"not an arrow file at all" * 10)
    try:
        with pytest.raises(arrowmm.ArrowInvalid, match="does not start with the Arrow file magic"):
            shm.open_shared(name)
    finally:
        shm.unlink(name)
    with pytest.raises(arrowmm.ArrowInvalid, match="no shared-memory segment"):
        shm.unlink(name)
    shm.unlink(name, missing_ok=True)


@pytest.mark.parametrize("bad", ["", "a/b", ".hidden", "x" * 300, "nul\0", "é" * 128,
                                 "\ud800"])
def test_bad_names(bad):
    with pytest.raises(arrowmm.ArrowInvalid, match="invalid shared segment name"):
        shm.share(arrowmm.record_batch({"x": [1]}), name=bad)
    with pytest.raises(arrowmm.ArrowInvalid, match="invalid shared segment name"):
        shm.open_shared(bad)


@pytest.mark.parametrize("char", ["\n", "\r", "\t", "\x1b", "\x7f", "\x85", "\u200b",
                                  "\u202e", "\u2028", "\u2029", "\udcff"])
def test_names_with_characters_that_misrender_are_refused(name, char):
    """A newline (an escape, a zero-width or bidi override...) in a name would forge or hide
    lines of ``ls /dev/shm`` and ``arrowmm shm ls``: refused, naming the name and the character."""
    bad = f"{name}-a{char}b"
    for call in (lambda: shm.share(arrowmm.record_batch({"x": [1]}), name=bad),
                 lambda: shm.open_shared(bad), lambda: shm.unlink(bad)):
        with pytest.raises(arrowmm.ArrowInvalid, match="invalid shared segment name") as info:
            call()
        assert repr(bad) in str(info.value) and repr(char) in str(info.value)
        assert f"U+{ord(char):04X}" in str(info.value)
    assert not any(n.startswith(f"{name}-a") for n in os.listdir("/dev/shm"))


def test_names_are_measured_in_bytes(name):
    long_name = name + "-" + "é" * ((255 - len(name) - 1) // 2)  # 254-255 bytes, ~150 characters
    with shm.share(arrowmm.record_batch({"x": [1]}), name=long_name) as shared:
        assert os.path.exists(shared.path)
        assert shm.open_shared(long_name).get_batch(0).to_pydict() == {"x": [1]}


def test_existing_name_is_not_clobbered(name):
    with shm.share(arrowmm.record_batch({"x": [1]}), name=name):
        with pytest.raises(arrowmm.ArrowInvalid, match="already exists"):
            shm.share(arrowmm.record_batch({"x": [2]}), name=name)
        assert shm.open_shared(name).get_batch(0).to_pydict() == {"x": [1]}


def test_failure_while_writing_leaves_nothing(name):
    """An exception in the middle of writing: no segment under the name, no temporary file."""
    def batches():
        yield arrowmm.record_batch({"v": np.arange(1000)})
        raise RuntimeError("source broke")

    schema = arrowmm.schema([("v", arrowmm.int64())])
    with pytest.raises(RuntimeError, match="source broke"):
        shm.share(arrowmm.RecordBatchReader.from_batches(schema, batches()), name=name)
    assert _ours() == []
    with pytest.raises(arrowmm.ArrowInvalid):
        shm.share([], name=name)
    assert _ours() == []


def test_keep_and_idempotent_unlink(name):
    with shm.share(arrowmm.record_batch({"x": [1]}), name=name, keep=True) as shared:
        pass
    assert shared.linked and os.path.exists(shared.path)
    shared.unlink()
    shared.unlink()
    assert not shared.linked
    assert shared.open().get_batch(0).to_pydict() == {"x": [1]}  # the creator's mapping lives on


def test_pickling_unshared_data_is_refused_not_copied(tmp_path, name):
    batch = arrowmm.record_batch({"x": np.arange(10)})
    for obj in (batch, batch.column("x")):
        with pytest.raises(TypeError, match="not a shared-memory segment"):
            pickle.dumps(obj)
    path = tmp_path / "t.arrow"
    with arrowmm.new_file(path, batch.schema) as w:
        w.write(batch)
    reader = arrowmm.open_file(path)
    for obj in (reader, reader.get_batch(0), reader.get_batch(0).column(0)):
        with pytest.raises(TypeError, match="not a shared-memory segment"):
            pickle.dumps(obj)
    # a decompressed column is a copy: the array refuses, its batch goes by name
    with shm.share(batch, name=name, compression="zstd") as shared:
        got = shm.open_shared(shared.name).get_batch(0)
        with pytest.raises(TypeError, match="it is a copy"):
            pickle.dumps(got.column("x"))
        assert pickle.loads(pickle.dumps(got)).column("x").to_pylist() == list(range(10))
        closed = shared.open()
        closed.close()
        with pytest.raises(TypeError, match="closed"):
            pickle.dumps(closed)


# -- pickling by name, in this process and in workers ------------------------------------
def test_pickle_round_trip_in_process(name):
    table = _table(10_000)
    with shm.share(table, name=name) as shared:
        reader = shm.open_shared(shared.name)
        batch = reader.get_batch(0)
        for obj in (batch, batch.slice(17, 300), batch.select(["s", "v"]),
                    batch.column("d").slice(5, 50), batch.column("l"), batch.column("s")):
            back = pickle.loads(pickle.dumps(obj))
            assert back.to_pylist() == obj.to_pylist()
        again = pickle.loads(pickle.dumps(reader))
        assert pa.table(again).equals(table)
        # one mapping per segment per process: unpickled views share the reader's Region
        back = pickle.loads(pickle.dumps(batch))
        assert back.column("v").buffers()[1].region is batch.column("v").buffers()[1].region


def test_projected_readers_and_batches_pickle_as_projected(name):
    """A reader opened with columns= (and its batches, a Table.select of them) pickle by name
    and come back with the same columns, not the file's."""
    table = _table(1000)
    with shm.share(table, name=name) as shared:
        reader = shm.open_shared(shared.name)
        reader.select_columns(["f", 0])
        assert reader.projection == [1, 0]
        again = pickle.loads(pickle.dumps(reader))
        assert again.schema.names == reader.schema.names == ["f", "v"]
        assert pa.table(again).equals(table.select(["f", "v"]))
        batch = reader.get_batch(0)
        back = pickle.loads(pickle.dumps(batch))
        assert back.schema.names == batch.schema.names and back.to_pylist() == batch.to_pylist()
        picked = reader.read_all().select(["v"]).to_batches()[0]
        assert pickle.loads(pickle.dumps(picked)).to_pydict() == picked.to_pydict()


def test_unpickled_batches_do_not_keep_the_mapping(name):
    """The reader reused to rebuild unpickled batches lives only as long as they do."""
    shared = shm.share(arrowmm.record_batch({"v": np.arange(1000)}), name=name)
    payload = pickle.dumps(shared.open().get_batch(0))
    got = [pickle.loads(payload) for _ in range(3)]
    assert sum(int(b.column("v").to_numpy().sum()) for b in got) == 3 * sum(range(1000))
    region = weakref.ref(got[0].column("v").buffers()[1].region)
    shared.unlink()
    del shared, got
    gc.collect()
    assert region() is None


def test_workers_get_batches_by_name_zero_copy(name, pool):
    table = _table()
    batches = table.to_batches(max_chunksize=50_000)
    with shm.share(batches, name=name) as shared:
        reader = shm.open_shared(shared.name)
        assert reader.num_record_batches == 4
        jobs = []
        for i in range(reader.num_record_batches):
            batch = reader.get_batch(i)
            payload = pickle.dumps(batch)
            data_bytes = sum(b.size for c in batch.columns for b in c.buffers() if b is not None)
            assert len(payload) < 2_000 < data_bytes // 100, (len(payload), data_bytes)
            jobs.append(pool.apply_async(worker_batch, (payload, shared.path)))
        results = [j.get(timeout=120) for j in jobs]
    for expected, got in zip(batches, results):
        assert got["total"] == sum(expected.column("v").to_pylist())
        assert got["rows"] == expected.num_rows
        assert got["strings"] == expected.column("s").to_pylist()
        assert got["region_name"] == name
        assert got["mappings"] >= 1
        assert got["view_in_mapping"] and got["view_in_region"]


def test_workers_get_slices_arrays_and_readers(name, pool):
    table = _table(100_000)
    with shm.share(table, name=name) as shared:
        reader = shm.open_shared(shared.name)
        batch = reader.get_batch(0)
        part = batch.slice(12_345, 1_000)
        got = pool.apply(worker_batch, (pickle.dumps(part), shared.path))
        assert got["total"] == sum(range(12_345, 13_345)) and got["view_in_mapping"]

        column = batch.column("v").slice(99, 7)
        payload = pickle.dumps(column)
        assert len(payload) < 1_000
        got = pool.apply(worker_array, (payload, shared.path))
        assert got["values"] == list(range(99, 106)) and got["view_in_mapping"]

        for col in ("s", "d", "l"):
            arr = batch.column(col).slice(3, 500)
            assert pool.apply(worker_pylist, (pickle.dumps(arr),)) == arr.to_pylist()
        assert pool.apply(worker_reader, (pickle.dumps(reader),)) == [sum(range(100_000))]


def test_a_separate_program_opens_by_name(name):
    table = _table(50_000)
    code = textwrap.dedent(f"""
        import arrowmm.shm
        reader = arrowmm.shm.open_shared({name!r})
        print(sum(int(b.column("v").to_numpy().sum()) for b in reader), reader.num_record_batches)
    """)
    with shm.share(table.to_batches(max_chunksize=10_000), name=name):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, cwd=os.path.dirname(os.path.dirname(arrowmm.__file__)))
    assert out.stdout.split() == [str(sum(range(50_000))), "5"]


# -- lifetime -----------------------------------------------------------------------------
def test_unlink_while_another_process_has_it_mapped(name):
    table = _table(100_000)
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    shared = shm.share(table, name=name)
    proc = ctx.Process(target=worker_hold_then_sum, args=(child, shared.path))
    proc.start()
    try:
        mine = shared.open().get_batch(0).column("v").to_numpy()
        parent.send(pickle.dumps(shared.open().get_batch(0)))
        what, mappings = parent.recv()
        assert what == "mapped" and mappings >= 1
        shared.unlink()
        assert not os.path.exists(f"/dev/shm/{name}")
        parent.send("unlinked")
        total, strings, gone, in_mapping = parent.recv()
    finally:
        proc.join(60)
        shared.unlink()
    assert proc.exitcode == 0
    assert total == sum(range(100_000)) and gone and in_mapping
    assert strings == table.column("s").to_pylist()[:20]
    assert int(mine.sum()) == sum(range(100_000))  # and in this process too


def test_name_unlinked_and_made_again(name, pool):
    with shm.share(arrowmm.record_batch({"v": [1, 2, 3], "s": ["a", "b", "c"]}), name=name) as old:
        old_batch = shm.open_shared(name).get_batch(0)
        payload = pickle.dumps(old_batch)
    with shm.share(arrowmm.record_batch({"v": [7, 8], "s": ["x", "y"]}), name=name):
        assert shm.open_shared(name).get_batch(0).to_pydict() == {"v": [7, 8], "s": ["x", "y"]}
        assert old_batch.to_pydict() == {"v": [1, 2, 3], "s": ["a", "b", "c"]}
        # here the old mapping is still alive, so the payload resolves to it...
        assert pickle.loads(payload).to_pydict() == {"v": [1, 2, 3], "s": ["a", "b", "c"]}
        # ...in a fresh process the name now means other data: refused, not misread
        message = pool.apply(worker_unpickle_error, (payload,))
        assert message is not None and "was replaced" in message
    message = pool.apply(worker_unpickle_error, (payload,))
    assert message is not None and "was unlinked" in message
    del old


# -- atomic publication -------------------------------------------------------------------
def test_a_polling_reader_never_sees_a_partial_segment(name):
    """A child shares ~128 MiB batch by batch while the parent polls open_shared: each poll
    finds no segment or the complete file; the temporary file shows the write was in flight."""
    code = textwrap.dedent(f"""
        import sys, numpy as np, arrowmm, arrowmm.shm
        schema = arrowmm.schema([("v", arrowmm.int64())])
        def batches():
            for k in range(32):
                yield arrowmm.record_batch({{"v": np.full(1 << 19, k, dtype=np.int64)}})
        print("start", flush=True)
        shared = arrowmm.shm.share(arrowmm.RecordBatchReader.from_batches(schema, batches()),
                                   name={name!r})
        print("done", flush=True)
        sys.stdin.readline()
        shared.unlink()
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True,
                            cwd=os.path.dirname(os.path.dirname(arrowmm.__file__)))
    try:
        assert proc.stdout.readline() == "start\n"
        missing = saw_tmp = 0
        while True:
            try:
                reader = shm.open_shared(name)
                break
            except arrowmm.ArrowInvalid as exc:
                assert "no shared-memory segment named" in str(exc), str(exc)
                missing += 1
                saw_tmp += any(n.startswith(".arrowmm-share-") and f"-{proc.pid}-" in n
                               for n in os.listdir("/dev/shm"))
        assert reader.num_record_batches == 32
        assert [int(b.column("v").to_numpy()[-1]) for b in reader] == list(range(32))
        assert missing > 0 and saw_tmp > 0, (missing, saw_tmp)
        assert proc.stdout.readline() == "done\n"
        del reader
    finally:
        proc.communicate("\n", timeout=60)
        shm.unlink(name, missing_ok=True)
    assert proc.returncode == 0
    assert not [n for n in os.listdir("/dev/shm") if n.startswith(name) or f"-{proc.pid}-" in n]


# -- producers that die, and cleanup ----------------------------------------------------------
PRODUCER = textwrap.dedent("""
    import sys, numpy as np, arrowmm, arrowmm.shm
    name, where, keep = sys.argv[1], sys.argv[2], sys.argv[3] == "keep"
    schema = arrowmm.schema([("v", arrowmm.int64())])
    def batches():
        yield arrowmm.record_batch({"v": np.arange(1 << 16)})
        if where == "during":
            print("writing", flush=True)
            sys.stdin.readline()  # killed here, inside share()
        yield arrowmm.record_batch({"v": np.arange(10)})
    with arrowmm.shm.share(arrowmm.RecordBatchReader.from_batches(schema, batches()), name=name,
                           keep=keep):
        print("shared", flush=True)
        sys.stdin.readline()  # killed here, inside the with block
""")


def _producer(name, where, keep=False):
    return subprocess.Popen([sys.executable, "-c", PRODUCER, name, where, "keep" if keep else "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            cwd=os.path.dirname(os.path.dirname(arrowmm.__file__)))


def _kill(proc):
    proc.kill()
    proc.communicate(timeout=60)
    assert proc.returncode == -9


def test_cleanup_removes_the_segment_of_a_producer_killed_inside_share(name):
    proc = _producer(name, "inside")
    assert proc.stdout.readline() == "shared\n"
    mine = shm.share(arrowmm.record_batch({"x": [1]}), name=name + "-alive")
    try:
        info = {i.name: i for i in shm.segments()}
        assert info[name].alive is True and info[name].creator["pid"] == proc.pid
        assert name not in shm.cleanup(dry_run=True)  # its creator runs: not stale
        _kill(proc)
        assert os.path.exists(f"/dev/shm/{name}")  # SIGKILL leaked it ...
        assert {i.name: i for i in shm.segments()}[name].stale
        removed = shm.cleanup()
        assert name in removed and not os.path.exists(f"/dev/shm/{name}")  # ... cleanup frees it
        assert name + "-alive" not in removed and mine.linked  # a live creator's stays
    finally:
        mine.unlink()


def test_cleanup_keeps_segments_shared_with_keep(name):
    proc = _producer(name, "inside", keep=True)
    assert proc.stdout.readline() == "shared\n"
    _kill(proc)
    try:
        info = {i.name: i for i in shm.segments()}[name]
        assert info.alive is False and info.keep and not info.stale
        assert name not in shm.cleanup()
        assert shm.open_shared(name).num_record_batches == 2
    finally:
        shm.unlink(name)


def test_a_producer_killed_during_share_leaves_only_a_hidden_temporary(name):
    proc = _producer(name, "during")
    assert proc.stdout.readline() == "writing\n"
    _kill(proc)
    assert not os.path.exists(f"/dev/shm/{name}")
    assert not [n for n in os.listdir("/dev/shm") if ".tmp" in n and not n.startswith(".")]
    temps = [i for i in shm.segments() if i.kind == "temporary" and i.creator["pid"] == proc.pid]
    assert len(temps) == 1 and temps[0].name.startswith(".") and temps[0].stale
    assert temps[0].size > (1 << 19)  # the batch written before the kill
    assert temps[0].name in shm.cleanup()
    assert not os.path.exists(os.path.join("/dev/shm", temps[0].name))


def test_cli_lists_and_removes(name, capsys):
    from arrowmm.cli import main
    with shm.share(arrowmm.record_batch({"x": [1]}), name=name) as shared:
        assert main(["shm", "ls"]) == 0
        line = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith(name + " ")]
        assert len(line) == 1 and str(os.getpid()) in line[0] and "running" in line[0]
        assert main(["shm", "rm", name]) == 0
        assert not shared.linked
        assert main(["shm", "rm", name]) == 1
        assert "no shared-memory segment named" in capsys.readouterr().err
        assert main(["shm", "rm", "--stale", "--dry-run"]) == 0


# -- nothing under a name is trusted ---------------------------------------------------------
def test_a_creator_record_nested_too_deep_is_no_record(name):
    # (json.loads of 100,000 brackets raises RecursionError: segments() raised it, raw)
    path = f"/dev/shm/{name}"
    with arrowmm.new_file(path, arrowmm.schema([("x", arrowmm.int64())]),
                          metadata={segment.CREATOR_KEY: "[" * 100_000}) as writer:
        writer.write({"x": [1]})
    try:
        assert name not in [i.name for i in shm.segments()]  # (no creator: not one of ours)
    finally:
        os.unlink(path)


def test_a_fifo_is_refused_without_blocking(name):
    os.mkfifo(f"/dev/shm/{name}", 0o600)
    try:
        with pytest.raises(arrowmm.ArrowInvalid, match="is a FIFO, not a regular file"):
            shm.open_shared(name)
        key = (name, 0, 0, 0)  # unpickling reports the real cause, not "was unlinked"
        with pytest.raises(arrowmm.ArrowInvalid, match="cannot unpickle.*FIFO"):
            segment._region_for(key)
    finally:
        os.unlink(f"/dev/shm/{name}")


def test_a_symbolic_link_is_refused(name, tmp_path):
    with shm.share(arrowmm.record_batch({"x": [1]}), name=name + "-real") as real:
        os.symlink(real.path, f"/dev/shm/{name}")
        try:
            with pytest.raises(arrowmm.ArrowInvalid, match="symbolic link"):
                shm.open_shared(name)
        finally:
            os.unlink(f"/dev/shm/{name}")


def test_another_users_file_is_refused_unless_trusted(name):
    if os.geteuid() != 0:
        pytest.skip("needs root to give a segment to another uid (chown to 65534)")
    with shm.share(arrowmm.record_batch({"x": [7]}), name=name, keep=True) as shared:
        os.chown(shared.path, 65534, 65534)
        try:
            with pytest.raises(arrowmm.ArrowInvalid, match="owned by uid 65534.*owner=65534"):
                shm.open_shared(name)
            assert shm.open_shared(name, owner=65534).get_batch(0).to_pydict() == {"x": [7]}
            assert shm.open_shared(name, owner=[0, 65534]).num_record_batches == 1
            assert shm.open_shared(name, owner="*").num_record_batches == 1
            assert name not in [i.name for i in shm.segments()]  # not ours: never cleaned up
            with pytest.raises(arrowmm.ArrowInvalid, match="no such user"):
                shm.open_shared(name, owner="no-such-user-arrowmm")
        finally:
            shm.unlink(name)


# -- without /dev/shm -----------------------------------------------------------------------
def test_shm_open_fallback(name, monkeypatch):
    """The backend for systems without /dev/shm (shm_open, no atomic publication), run here
    by hiding /dev/shm from the module: same files, same pickling."""
    monkeypatch.setattr(segment, "SHM_DIR", None)
    table = _table(10_000)
    with shm.share(table, name=name) as shared:
        assert shared.path is None
        assert os.path.exists(f"/dev/shm/{name}")  # on Linux shm_open names live there too
        assert pa.table(shm.open_shared(name)).equals(table)
        batch = shm.open_shared(name).get_batch(0)
        assert pickle.loads(pickle.dumps(batch.slice(5, 10))).to_pydict() == \
            batch.slice(5, 10).to_pydict()
        with pytest.raises(arrowmm.ArrowInvalid, match="already exists"):
            shm.share(table, name=name)
    with pytest.raises(arrowmm.ArrowInvalid, match="no shared-memory segment named"):
        shm.open_shared(name)


def test_file_end_ignores_page_padding():
    data = bytearray(b"ARROW1\0\0" + b"x" * 30 + b"ARROW1")
    padded = bytes(data) + bytes(4096 - len(data))
    assert segment._file_end(padded, len(padded)) == len(data)
    assert segment._file_end(b"abc" + bytes(10), 13) == 13  # not an Arrow file: left whole


def test_docstring_examples():
    result = doctest.testmod(segment, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
