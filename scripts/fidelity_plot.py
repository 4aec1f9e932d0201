#!/usr/bin/python3
"""Plots an `amarena fidelity --json` report: each tree's model cost against
its measured time (both on log scales), coloured by where the tree came from,
with the model's pick and the fastest tree marked, and rho and regret in the
title. A model that ranks trees perfectly puts the points on a rising curve;
a point below and left of the pick is a tree the model priced higher that ran
faster.

  /usr/bin/python3 scripts/fidelity_plot.py report.json [-o report.png]

Needs matplotlib (Debian's python3-matplotlib). docs/fidelity.md explains the
report.
"""
import argparse
import json
import sys

# One colour per origin ("random 0.5" and the like share "random").
COLORS = {"best": "black", "k-best": "tab:blue", "decision": "tab:green",
          "random": "tab:orange"}


def origin_kind(origin):
    return origin.split(" ")[0]


def fmt(v, pattern):
    return "undefined" if v is None else pattern % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", help="the JSON file amarena fidelity wrote")
    ap.add_argument("-o", "--output",
                    help="PNG to write (default: the report's name, .png)")
    args = ap.parse_args()
    with open(args.report) as f:
        r = json.load(f)
    timed = [t for t in r["trees"] if t["status"] == "ok"]
    if not timed:
        sys.exit("fidelity_plot: no timed trees in " + args.report)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("fidelity_plot: needs matplotlib (python3-matplotlib)")

    fig, ax = plt.subplots(figsize=(8, 6))
    for kind, color in COLORS.items():
        pts = [t for t in timed if origin_kind(t["origin"]) == kind]
        if pts:
            ax.scatter([t["cost"] for t in pts],
                       [t["median_ns"] / 1000 for t in pts],
                       s=18, color=color, alpha=0.7, label=kind)
    pick = r["trees"][0]
    if pick["status"] == "ok":
        ax.scatter([pick["cost"]], [pick["median_ns"] / 1000], marker="*",
                   s=220, facecolors="none", edgecolors="red",
                   label="model's pick")
    fastest = min(timed, key=lambda t: t["median_ns"])
    ax.scatter([fastest["cost"]], [fastest["median_ns"] / 1000], marker="o",
               s=140, facecolors="none", edgecolors="purple",
               label="fastest measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("model cost (1/6 cycle units)")
    ax.set_ylabel("median time per call (us)")
    ax.set_title("%s, %s, %s operands\nrho %s, rho near %s, regret %s" % (
        r["spec"], r["cpu"], r["mode"], fmt(r["rho"], "%.3f"),
        fmt(r["rho_near"], "%.3f"),
        fmt(None if r["regret"] is None else 100 * r["regret"], "%.1f %%")),
        fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    out = args.output or (args.report.rsplit(".", 1)[0] + ".png")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
