#!/usr/bin/env python3
"""Draws docs/benchmarks.png from docs/benchmarks.json: for each charted row, each peer's time
(or size) divided by YapDB's, on a log scale. Above 1 YapDB is faster (or smaller).

Usage: chart.py RESULTS.json OUTPUT.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PEERS = [("SQLite NORMAL", "#4C72B0"), ("SQLite FULL", "#8172B2"), ("GRDB", "#55A868"), ("LMDB", "#DD8452")]


def main(source, target):
    with open(source) as f:
        results = json.load(f)
    rows = [r for r in results["table"] if r.get("charted") and "YapDB" in r["medians"] and r["kind"] != "factor"]
    rows = [r for r in rows if any(p in r["medians"] for p, _ in PEERS)]
    labels = [f'{r["workload"]} {r["label"]}' for r in rows]
    height = 0.8 / len(PEERS)
    fig, ax = plt.subplots(figsize=(13, 0.55 * len(rows) + 1.8))
    for n, (peer, colour) in enumerate(PEERS):
        ys, xs = [], []
        for i, r in enumerate(rows):
            if peer in r["medians"] and r["medians"]["YapDB"] > 0:
                ys.append(i + (n - (len(PEERS) - 1) / 2) * height)
                xs.append(r["medians"][peer] / r["medians"]["YapDB"])
        bars = ax.barh(ys, xs, height=height, color=colour, label=f"{peer} ÷ YapDB")
        for bar, x in zip(bars, xs):
            ax.text(x * 1.04, bar.get_y() + bar.get_height() / 2, f"{x:.0f}×" if x >= 10 else f"{x:.2f}×" if x >= 0.1 else f"{x:.2g}×",
                    va="center", fontsize=7)
    ax.set_xscale("log")
    ax.axvline(1, color="black", linewidth=1)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("peer ÷ YapDB (log scale): right of 1, YapDB is faster or smaller; left of 1, the peer is")
    ax.set_title(f'YapDB against SQLite, GRDB and LMDB — {results["size"]} size, {results["rows"]:,} rows, {results["date"]}')
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(target, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
