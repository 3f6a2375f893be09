"""Draw the benchmark tables as bar charts: each row's ratio against its target.

    python tools/plot_benchmarks.py [TABLES.md ...] [--out DIR]

Reads the Markdown tables a benchmark writes with ``--out FILE.md`` (or the tables of
``docs/benchmarks.md``, the default): every table with a ``ratio`` and a ``target`` column
becomes ``DIR/<section>-<n>.svg`` (default ``docs/_static/benchmarks``), one horizontal bar per
row, its target marked, the title naming the table and the machine line under it when the file
has one.  The scripts print Markdown, not JSON, so this parses Markdown; SVG without dates or
random ids, so a plot changes only when its numbers do.
"""
from __future__ import annotations

import argparse
import re
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "benchmarks.md"
OUT = ROOT / "docs" / "_static" / "benchmarks"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables(text: str) -> list[dict]:
    """Every table with a ratio and a target column: its section, number in the section,
    title (its first header cell), and rows of (name, ratio, target, direction)."""
    found, section, count = [], "benchmarks", {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            section = re.sub(r"[^a-z0-9]+", "-", line.lstrip("#").strip().lower()).strip("-")
        if line.startswith("|") and i + 1 < len(lines) and set(lines[i + 1]) <= set("|-: "):
            header = [h.lower() for h in _cells(line)]
            body = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                body.append(_cells(lines[i]))
                i += 1
            if "ratio" in header and "target" in header:
                r, t = header.index("ratio"), header.index("target")
                rows = []
                for cells in body:
                    ratio, target = NUMBER.search(cells[r]), NUMBER.search(cells[t])
                    if ratio and target and "%" not in cells[r]:  # (a share: another scale)
                        higher = cells[t].lstrip().startswith(("≥", ">"))
                        rows.append((re.sub(r"[`*]", "", cells[0]), float(ratio.group()),
                                     float(target.group()), "higher" if higher else "lower"))
                if rows:
                    count[section] = count.get(section, 0) + 1
                    found.append({"section": section, "n": count[section],
                                  "title": _cells(line)[0], "rows": rows})
            continue
        i += 1
    return found


def machine(text: str) -> str:
    """The machine line of a ``--out`` file, or the page's "The machine" sentence."""
    m = re.search(r"^- machine: (.*)$", text, re.M)
    if m:
        return m.group(1)
    m = re.search(r"development machine: (.*?CPython [\d.]*\d)", " ".join(text.split()))
    return m.group(1) if m else ""


def plot(table: dict, where: str, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "arrowmm"  # stable ids
    matplotlib.rcParams["svg.fonttype"] = "none"     # text as text: small files
    import matplotlib.pyplot as plt

    rows = table["rows"]
    names = [name if len(name) <= 60 else name[:57] + "..." for name, *_ in rows]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.6))
    ys = range(len(rows))
    colors = ["tab:green" if (r <= t if d == "lower" else r >= t) else "tab:red"
              for _, r, t, d in rows]
    ax.barh(list(ys), [r for _, r, _, _ in rows], color=colors, height=0.6)
    ax.scatter([t for _, _, t, _ in rows], list(ys), marker="|", s=400, color="black",
               label="target", zorder=3)
    ax.set_yticks(list(ys), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ratio (green: meets its target)")
    ax.set_title(table["title"], fontsize=10)
    if where:
        fig.text(0.01, 0.005, "\n".join(textwrap.wrap(where, 110)), fontsize=7, va="bottom")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout(rect=(0, 0.06 if where else 0, 1, 1))
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def main(argv=None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, default=[PAGE])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    for source in args.files:
        text = source.read_text(encoding="utf-8")
        for table in tables(text):
            path = args.out / f"{table['section']}-{table['n']}.svg"
            plot(table, machine(text), path)
            written.append(path)
    for path in written:
        print(path)
    return written


if __name__ == "__main__":
    main()
