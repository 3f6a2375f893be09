"""What the benchmark scripts share: the machine description, the command line, timing,
the result table and the final report."""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA_DIR = Path(__file__).resolve().parent / "data"


def machine_lines(quick: bool) -> list:
    """Mode, machine, CPUs and library versions, as markdown list items."""
    import arrowmm
    import pyarrow as pa
    cpus = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    return [f"- mode: {'quick (smoke)' if quick else 'full'}",
            f"- machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
            f"{cpus} CPUs ({usable} usable)",
            f"- python {platform.python_version()}, numpy {np.__version__}, pyarrow {pa.__version__}, "
            f"arrowmm {arrowmm.__version__}"]


# -- command line ----------------------------------------------------------------------------
def base_parser(doc: str, data_dir: Path = DATA_DIR, *, quick_help: str = "small smoke version (< 30 s)",
                data_dir_help: str = "cache folder for the data files") -> argparse.ArgumentParser:
    """--quick, --out, --data-dir, --repeats and --strict, described by the first paragraph of ``doc``."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--out", type=Path, help="also write the environment and table as markdown here")
    ap.add_argument("--data-dir", type=Path, default=data_dir, help=data_dir_help)
    ap.add_argument("--repeats", type=int, help="timed repeats per benchmark (median reported)")
    ap.add_argument("--strict", action="store_true", help="exit 1 if any benchmark misses its target")
    return ap


def settings(args, full: dict, quick: dict) -> dict:
    """A copy of the ``quick`` or ``full`` settings, with ``--repeats`` applied."""
    cfg = dict(quick if args.quick else full)
    if args.repeats:
        cfg["repeats"] = args.repeats
    return cfg


# -- timing ----------------------------------------------------------------------------------
def warm_cache(path: Path) -> None:
    """Read the whole file once so that both libraries time against a warm page cache."""
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 24):
            pass


def compare(f_amm, f_pa, repeats: int, warmup: int):
    """Median seconds of ``f_amm`` and ``f_pa``, run alternately after ``warmup`` runs of each."""
    for _ in range(warmup):
        f_amm(), f_pa()
    t_amm, t_pa = [], []
    for _ in range(repeats):
        for f, out in ((f_amm, t_amm), (f_pa, t_pa)):
            t0 = time.perf_counter()
            f()
            out.append(time.perf_counter() - t0)
    return statistics.median(t_amm), statistics.median(t_pa)


# -- results and reporting -------------------------------------------------------------------
def fmt_time(s: float, ms_digits: int = 3) -> str:
    return f"{s * 1e3:.{ms_digits}f} ms" if s < 1 else f"{s:.3f} s"


@dataclass
class Result:
    """One benchmark: arrowmm's and pyarrow's seconds; it passes when ``ratio <= target``.

    The ``*_cell`` methods format the table; a script whose results measure
    something else (bench_write's memory rows) overrides them."""
    name: str
    arrowmm_s: float
    pyarrow_s: float
    target: float
    detail: str = ""

    @property
    def ratio(self) -> float:
        return self.arrowmm_s / self.pyarrow_s

    @property
    def passed(self) -> bool:
        return self.ratio <= self.target

    def cell(self, v: float) -> str:
        return fmt_time(v)

    def ratio_cell(self) -> str:
        return "-" if self.ratio is None else f"{self.ratio:.3f}"

    def target_cell(self) -> str:
        return f"<= {self.target}"

    def result_cell(self) -> str:
        return {None: "info", True: "PASS", False: "FAIL"}[self.passed]


def print_result(r: Result) -> None:
    """The one-line summary of a finished benchmark."""
    print(f"  {r.name}: arrowmm {r.cell(r.arrowmm_s)}, pyarrow {r.cell(r.pyarrow_s)}, "
          f"ratio {r.ratio_cell()}", flush=True)


def markdown(results) -> str:
    lines = ["| benchmark | arrowmm | pyarrow | ratio | target | result | details |",
             "|---|---:|---:|---:|---:|:---:|---|"]
    for r in results:
        lines.append(f"| {r.name} | {r.cell(r.arrowmm_s)} | {r.cell(r.pyarrow_s)} | {r.ratio_cell()} "
                     f"| {r.target_cell()} | {r.result_cell()} | {r.detail} |")
    return "\n".join(lines)


def report(results, title: str, env: str, cfg: dict, out_path, strict: bool, *, note: str = "") -> int:
    """Print the table (and write it with ``env`` under ``# title`` to ``out_path``, if given);
    the exit status: 1 if ``strict`` and a benchmark missed its target, else 0.

    ``note`` says how the times were taken; by default the median of ``cfg``'s repeats."""
    table = markdown(results)
    note = note or f"median of {cfg['repeats']} repeats after {cfg['warmup']} warm-up runs"
    print(f"\n({note}; ratio = arrowmm / pyarrow, lower is better)\n\n{table}")
    if out_path:
        out_path.write_text(f"# {title}\n\n{env}\n\n{table}\n")
    return 1 if strict and not all(r.passed is not False for r in results) else 0


def compare_many(funcs, repeats: int, warmup: int) -> dict:
    """Median seconds of each of ``funcs`` (a dict name -> callable), run in turn, one call of
    each per round, after ``warmup`` such rounds: ``compare`` for any number of contenders."""
    for _ in range(warmup):
        for f in funcs.values():
            f()
    times = {name: [] for name in funcs}
    for _ in range(repeats):
        for name, f in funcs.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}
