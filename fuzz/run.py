"""Run the atheris fuzz targets for a time budget each; collect findings and statistics.

    python fuzz/run.py --minutes 10 [--jobs 2] [--targets file,stream,...] [--findings DIR]

Makes the seed corpus when ``fuzz/corpus/seed`` is missing (``make_corpus.py``),
then runs each target (``fuzz.py TARGET``) with libFuzzer's ``-max_total_time``,
``--jobs`` at a time.  Interesting inputs accumulate in ``fuzz/corpus/<target>``
(so a second run continues where the first stopped); a crash, timeout or
out-of-memory input lands in ``DIR/<target>/`` and the target restarts for the rest of its
budget.  Prints a table of executions per second and coverage (libFuzzer's
``cov``: edges of instrumented Python code, ``ft``: features) per target, and
writes it with the logs to ``DIR``.  Exit code 1 when anything was found.

A finding becomes a regression: copy it to ``tests/hostile/regressions/<target>-<what>.bin``;
``tests/hostile/test_regressions.py`` runs every target over every file there.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the worktree's arrowmm
sys.path.insert(0, HERE)

from harness import TARGETS  # noqa: E402

_STATUS = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/\S+.*?exec/s: (\d+)")
_DONE = re.compile(r"^Done (\d+) runs in (\d+) second")
_ARTIFACT = re.compile(r"Test unit written to (\S+)")


def run_target(name: str, seconds: int, findings: str, corpus_root: str, seed: str, flags) -> dict:
    """Run one target until its budget is spent, restarting after each finding."""
    work = os.path.join(corpus_root, name)
    out = os.path.join(findings, name)
    os.makedirs(work, exist_ok=True)
    os.makedirs(out, exist_ok=True)
    stats = {"target": name, "runs": 0, "seconds": 0, "cov": 0, "ft": 0, "corpus": 0, "findings": []}
    deadline = time.monotonic() + seconds
    with open(os.path.join(findings, f"{name}.log"), "w") as log:
        while True:
            left = int(deadline - time.monotonic())
            if left < 5:
                break
            cmd = [sys.executable, os.path.join(HERE, "fuzz.py"), name,
                   f"-max_total_time={left}", "-timeout=20", "-rss_limit_mb=2560", "-max_len=16384",
                   f"-artifact_prefix={out}{os.sep}", "-print_final_stats=1", work, seed, *flags]
            log.write(f"$ {' '.join(cmd)}\n")
            log.flush()
            start = time.monotonic()
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    errors="replace")
            runs = 0
            for line in proc.stdout:
                log.write(line)
                m = _STATUS.match(line)
                if m:
                    runs = int(m.group(1))
                    stats["cov"], stats["ft"], stats["corpus"] = (int(m.group(k)) for k in (2, 3, 4))
                m = _DONE.match(line)
                if m:
                    runs = int(m.group(1))
                m = _ARTIFACT.search(line)
                if m:
                    stats["findings"].append(m.group(1))
            proc.wait()
            stats["runs"] += runs
            stats["seconds"] += time.monotonic() - start
            if proc.returncode == 0:
                break
    stats["exec_per_s"] = stats["runs"] / max(stats["seconds"], 1e-9)
    return stats


def table(results) -> str:
    lines = ["| target | minutes | runs | exec/s | cov | ft | corpus | findings |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        lines.append(f"| {r['target']} | {r['seconds'] / 60:.1f} | {r['runs']:,} | {r['exec_per_s']:.0f} "
                     f"| {r['cov']} | {r['ft']} | {r['corpus']} | {len(r['findings'])} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=1.0, help="time budget per target")
    p.add_argument("--jobs", type=int, default=2, help="targets run at the same time")
    p.add_argument("--targets", default=",".join(TARGETS), help="comma-separated subset")
    p.add_argument("--findings", default=os.path.join(HERE, "findings"))
    p.add_argument("--corpus", default=os.path.join(HERE, "corpus"))
    p.add_argument("libfuzzer_flags", nargs="*", help="passed on (after --), e.g. -- -seed=1")
    args = p.parse_args(argv)
    names = [n for n in args.targets.split(",") if n]
    unknown = set(names) - set(TARGETS)
    if unknown:
        p.error(f"unknown targets {sorted(unknown)}; choose from {list(TARGETS)}")
    seed = os.path.join(args.corpus, "seed")
    if not os.path.isdir(seed) or not os.listdir(seed):
        subprocess.run([sys.executable, os.path.join(HERE, "make_corpus.py"), seed], check=True)
    os.makedirs(args.findings, exist_ok=True)
    seconds = int(args.minutes * 60)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda n: run_target(n, seconds, args.findings, args.corpus, seed,
                                                     args.libfuzzer_flags), names))
    summary = table(results)
    found = [f for r in results for f in r["findings"]]
    summary += "\n\nfindings:\n" + ("\n".join(found) if found else "none") + "\n"
    with open(os.path.join(args.findings, "summary.md"), "w") as f:
        f.write(summary)
    print(summary)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
