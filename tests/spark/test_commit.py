"""The commit protocol (arrowmm/spark/commit.py, docs/commit-protocol.md) without Spark.

Real processes commit into one directory at once (spawned interpreters, as separate Spark
applications would be), and committing processes are SIGKILLed at the protocol's critical
points.  Every test reads the directory back the way the Spark reader does (``data_files_in``)
and counts every row with arrowmm; pyarrow is not needed.  The last test runs the same
functions on S3 (a moto server on loopback, ``s3_support``), with committers in threads.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
import uuid

import pytest

import arrowmm
from arrowmm.spark import commit
from arrowmm.spark.files import (LOG_DIR, MANIFEST, data_files_in, latest_manifest, log_versions,
                                 read_version)


class Written:
    """What a Spark task reports (source.WrittenFile without pyspark)."""

    def __init__(self, tmp, name, rows):
        self.tmp, self.name, self.rows = tmp, name, rows


def write_job(directory, job, values, parts=1):
    """Write a job's task files under hidden temporary names (as Spark tasks do)."""
    os.makedirs(directory, exist_ok=True)
    out = []
    for part in range(parts):
        chunk = values[part::parts]
        tmp = os.path.join(directory, f".arrowmm-{job}-part-{part:05d}-0.arrow")
        with arrowmm.new_file(tmp, arrowmm.record_batch({"v": [0]}).schema) as w:
            w.write(arrowmm.record_batch({"v": list(chunk)}))
        out.append(Written(tmp, f"part-{part:05d}-{job}.arrow", len(chunk)))
    return out


def read_values(directory):
    values = []
    for path in data_files_in(directory):
        with arrowmm.open_file(path) as reader:
            for batch in reader:
                values.extend(batch.column("v").to_pylist())
    return values


def _hidden_or_log(directory):
    return sorted(n for n in os.listdir(directory) if n.startswith(".") or n == LOG_DIR)


# -- what the spawned processes run ---------------------------------------------------------------
def _appender(directory, worker, jobs, rows, start, results):
    start.wait()
    for j in range(jobs):
        job = f"w{worker}j{j}-{uuid.uuid4().hex[:8]}"
        values = [worker * 1_000_000 + j * 1000 + i for i in range(rows)]
        os.makedirs(directory, exist_ok=True)
        doc = commit.commit_files(directory, write_job(directory, job, values, parts=2), job,
                                  overwrite=False)
        results.put(("append", job, doc["version"], values))


def _overwriter(directory, jobs, rows, start, results):
    start.wait()
    for j in range(jobs):
        job = f"ow{j}-{uuid.uuid4().hex[:8]}"
        values = [-(j * 1000 + i) - 1 for i in range(rows)]
        doc = commit.commit_files(directory, write_job(directory, job, values), job, overwrite=True)
        results.put(("overwrite", job, doc["version"], values))


def _run(targets):
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=f, args=args + (start, results)) for f, args in targets]
    for p in procs:
        p.start()
    start.set()
    results.start = start  # the event must outlive the processes' start-up
    return procs, results


def _join(procs, results, expected):
    got = [results.get(timeout=600) for _ in range(expected)]
    for p in procs:
        p.join(600)
        assert p.exitcode == 0
    return got


def test_four_processes_appending_at_once_all_land(tmp_path):
    out = str(tmp_path / "out")
    commit.ensure_log(out)
    procs, results = _run([(_appender, (out, w, 10, 5)) for w in range(4)])
    got = _join(procs, results, 40)
    versions = sorted(v for _, _, v, _ in got)
    assert versions == list(range(1, 41))  # each job took its own version, none was lost
    expected = sorted(x for *_, values in got for x in values)
    assert sorted(read_values(out)) == expected  # every job visible, every row counted once
    manifest = latest_manifest(out)
    assert manifest["version"] == 40 and len(manifest["files"]) == 80
    assert json.load(open(os.path.join(out, MANIFEST)))["files"] == manifest["files"]
    assert log_versions(out) == list(range(41))  # old versions keep their names ...
    with pytest.raises(FileNotFoundError, match="pruned"):  # ... as small tombstones
        read_version(out, 40 - commit.KEEP_VERSIONS)
    assert os.path.getsize(os.path.join(out, LOG_DIR, "00000000000000000001.json")) < 200
    assert _hidden_or_log(out) == [LOG_DIR]  # no temporary left behind


def test_append_racing_overwrite_never_publishes_a_deleted_file(tmp_path):
    out = str(tmp_path / "out")
    commit.ensure_log(out)
    procs, results = _run([(_appender, (out, 0, 12, 3)), (_appender, (out, 1, 12, 3)),
                           (_overwriter, (out, 8, 4))])
    # read while they commit: the latest version never names a missing file
    got, checks = [], 0
    while len(got) < 32:
        doc = latest_manifest(out)
        missing = [n for n in doc["files"] if not os.path.exists(os.path.join(out, n))]
        if missing:  # fine only if a newer version replaced the one read meanwhile
            assert max(log_versions(out)) > doc["version"], (doc["version"], missing)
        checks += 1
        while not results.empty() and len(got) < 32:
            got.append(results.get())
        assert all(p.exitcode in (None, 0) for p in procs)
    got += _join(procs, results, 0)
    # the final state is the last overwrite plus every append committed after it
    last = max((v, values) for op, _, v, values in got if op == "overwrite")
    expected = sorted(last[1] + [x for op, _, v, values in got if op == "append" and v > last[0]
                                 for x in values])
    assert sorted(read_values(out)) == expected
    assert sorted(v for _, _, v, _ in got) == list(range(1, 33))
    # files the overwrites dropped are gone from the folder
    listed = set(latest_manifest(out)["files"])
    assert sorted(n for n in os.listdir(out) if n.startswith("part-")) == sorted(listed)


CRASHER = textwrap.dedent("""
    import os, signal, sys
    sys.path[:0] = [{root!r}]
    from tests.spark.test_commit import write_job
    from arrowmm.spark import commit
    directory, job, point = sys.argv[1:]
    def crash(at):
        if at == point:
            os.kill(os.getpid(), signal.SIGKILL)
    commit._crash_point = crash
    commit.ensure_log(directory)  # what the Spark writer does before its tasks write
    commit.commit_files(directory, write_job(directory, job, list(range(100, 110)), parts=3), job,
                        overwrite=False)
    print("committed")
""")


def _crash_commit(directory, job, point):
    script = CRASHER.format(root=os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir,
                                                             os.pardir)))
    proc = subprocess.run([sys.executable, "-c", script, directory, job, point],
                          capture_output=True, text=True, timeout=300, cwd=os.getcwd())
    return proc


@pytest.mark.parametrize("point", ["renamed-one", "renamed-all"])
def test_a_job_crashing_before_it_publishes_is_never_seen_nor_adopted(tmp_path, point):
    out = str(tmp_path / "new")  # a new directory: the crashed job is its first
    proc = _crash_commit(out, "crashed", point)
    assert proc.returncode == -9, proc.stderr
    renamed = [n for n in os.listdir(out) if n.startswith("part-")]
    assert renamed  # the crash left final-named files of the job behind ...
    assert read_values(out) == []  # ... which no reader sees: the directory shows no rows
    commit.commit_files(out, write_job(out, "next", [1, 2, 3]), "next", overwrite=False)
    assert sorted(read_values(out)) == [1, 2, 3]  # the next append does not adopt them
    assert all("crashed" not in n for n in latest_manifest(out)["files"])
    gone = commit.abort_job(out, "crashed")  # what Spark's abort does for the crashed job
    assert gone and not [n for n in os.listdir(out) if "crashed" in n]
    assert sorted(read_values(out)) == [1, 2, 3]


def test_a_job_crashing_after_it_publishes_is_kept_by_abort(tmp_path):
    out = str(tmp_path / "out")
    commit.commit_files(out, write_job(out, "first", [1]), "first", overwrite=False)
    proc = _crash_commit(out, "crashed", "published")
    assert proc.returncode == -9, proc.stderr
    assert sorted(read_values(out)) == [1] + list(range(100, 110))  # published: committed
    commit.abort_job(out, "crashed")  # Spark aborts: the files a version lists stay
    assert sorted(read_values(out)) == [1] + list(range(100, 110))


def test_a_slow_committer_cannot_recreate_a_pruned_version(tmp_path):
    """A committer that read version 3 and publishes only after 25 other commits must lose
    the race for version 4 (it then re-reads the latest), not re-create a pruned version 4
    that no reader would ever read."""
    out = str(tmp_path / "out")
    for j in range(25):
        commit.commit_files(out, write_job(out, f"j{j}", [j]), f"j{j}", overwrite=False)
    slow = dict(read_version(out, 25), version=4, previous=3, files=["part-00000-slow.arrow"])
    assert not commit.publish_version(out, 4, slow)
    assert latest_manifest(out)["version"] == 25 and sorted(read_values(out)) == list(range(25))


def test_streams_are_keyed_by_query_and_batch(tmp_path):
    out = str(tmp_path / "sink")
    commit.commit_files(out, write_job(out, "q1b0", [1, 2]), "q1b0", overwrite=False,
                        stream=("query-1", 0))
    commit.commit_files(out, write_job(out, "q2b0", [3]), "q2b0", overwrite=False,
                        stream=("query-2", 0))  # another query's batch 0 is new data
    commit.commit_files(out, write_job(out, "q1b0r", [1, 2]), "q1b0r", overwrite=False,
                        stream=("query-1", 0))  # a replay of query-1's batch 0
    assert sorted(read_values(out)) == [1, 2, 3]
    assert latest_manifest(out)["streams"] == {"query-1": 0, "query-2": 0}
    assert _hidden_or_log(out) == [LOG_DIR] and not [n for n in os.listdir(out) if "q1b0r" in n]


def test_directories_of_the_old_layout_still_read_and_take_appends(tmp_path):
    out = str(tmp_path / "old")
    os.makedirs(out)
    for name, values in [("part-00000-a.arrow", [1, 2]), ("part-00000-b.arrow", [3]),
                         ("part-00000-crashed.arrow", [99])]:
        tmp = os.path.join(out, "." + name)
        with arrowmm.new_file(tmp, arrowmm.record_batch({"v": [0]}).schema) as w:
            w.write(arrowmm.record_batch({"v": values}))
        os.rename(tmp, os.path.join(out, name))
    with open(os.path.join(out, MANIFEST), "w") as f:  # what today's writer leaves
        json.dump({"version": 1, "job": "b", "files": ["part-00000-a.arrow", "part-00000-b.arrow"],
                   "batches": []}, f)
    assert sorted(read_values(out)) == [1, 2, 3]
    commit.commit_files(out, write_job(out, "c", [4]), "c", overwrite=False)
    assert sorted(read_values(out)) == [1, 2, 3, 4]  # the old list carried over, nothing adopted
    assert read_version(out, 0)["operation"] == "adopt"
    commit.commit_files(out, write_job(out, "d", [5]), "d", overwrite=True)
    assert read_values(out) == [5]
    assert sorted(n for n in os.listdir(out) if n.startswith("part-")) == ["part-00000-crashed.arrow",
                                                                           "part-00000-d.arrow"]


def test_a_glob_over_a_directory_skips_the_log_and_the_manifest(tmp_path):
    from arrowmm.spark.files import resolve_paths
    out = str(tmp_path / "out")
    commit.commit_files(out, write_job(out, "a", [1]), "a", overwrite=False)
    assert [os.path.basename(p) for p in resolve_paths([out + "/*"])] == ["part-00000-a.arrow"]


def test_hostile_manifests_are_refused(tmp_path):
    out = str(tmp_path / "out")
    commit.ensure_log(out)
    doc = dict(read_version(out, 0), version=1, files=["../outside.arrow"])
    assert commit.publish_version(out, 1, doc)
    with pytest.raises(arrowmm.ArrowInvalid, match="not a plain name"):
        data_files_in(out)
    assert not commit.publish_version(out, 1, dict(doc, files=[]))  # never replaces a version
    with open(os.path.join(out, LOG_DIR, "00000000000000000002.json"), "w") as f:
        f.write('{"format": "arrowmm-manifest/1", "version": 7, "files": []}')
    with pytest.raises(arrowmm.ArrowInvalid, match="version 2.*says version 7"):
        data_files_in(out)


# -- on S3: the same functions over FsspecStorage (a moto server, s3fs) ----------------------------
def test_committers_racing_on_s3_lose_no_job_and_never_replace_a_version(s3_server):
    """Three threads commit three jobs each into one S3 directory: data files written in place
    under attempt-unique names, versions created by conditional PUT (``If-None-Match: *``).
    Every job gets its own version, every row is read once, and a version is never replaced."""
    import threading
    from arrowmm.spark.directory import Directory
    from arrowmm.spark.files import describe_file, find_data_files
    from arrowmm.spark.storage import storage_for
    options = dict(s3_server.storage_options)
    out = f"s3a://{s3_server.new_bucket('arrowmm-commit')}/out"
    commit.ensure_log(out, storage_for(out, options))
    got, errors = [], []

    def committer(worker):
        storage = storage_for(out, options)  # (each its own client, as separate drivers)
        try:
            for j in range(3):
                job = f"w{worker}j{j}{uuid.uuid4().hex[:8]}"
                values = [worker * 1000 + j * 10 + i for i in range(3)]
                name = f"part-00000-{job}-0.arrow"
                with arrowmm.new_file(storage.sink(f"{out}/{name}"), arrowmm.record_batch(
                        {"v": [0]}).schema, **storage.writer_options()) as w:
                    w.write(arrowmm.record_batch({"v": values}))
                doc = commit.commit_files(out, [Written(None, name, 3)], job, overwrite=False,
                                          storage=storage)
                got.append((doc["version"], values))
        except Exception as exc:  # noqa: BLE001  (reported by the assertion below)
            errors.append(exc)

    threads = [threading.Thread(target=committer, args=(w,)) for w in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(v for v, _ in got) == list(range(1, 10))
    storage = storage_for(out, options)
    values = []
    for path in find_data_files([out], options):
        reader = storage.open_reader(path, describe_file(path, False, storage).format)
        values += [x for batch in reader for x in batch.column("v").to_pylist()]
    assert sorted(values) == sorted(x for _, vs in got for x in vs)
    log = Directory(storage, out)
    assert log.versions() == list(range(10))
    before = storage.read(log.version_path(9))
    assert not commit.publish_version(out, 9, dict(log.version(9), files=[]), storage)
    assert storage.read(log.version_path(9)) == before  # the conditional PUT replaced nothing
    assert json.loads(storage.read(f"{out}/{MANIFEST}"))["version"] == 9
