#!/usr/bin/env python3
"""Runs `amarena calibrate --no-save --json` N times (default 2) and prints
the spread (max / min - 1) of each measurement (cycles per line, operations
per cycle, the DRAM rate) and of each price made of them: the idempotence
check of calibration. Prices are whole units of 1/6 cycle, so a small one
moves by a whole unit (7 % of 14) when its measurement moves by 1 %; the
measurements are what should agree within the limit.

    taskset -c 1 scripts/calibration_spread.py [--runs 3] [--amarena PATH]
        [--markdown FILE]

Exits 1 when a measurement's spread is above --limit (default 0.05)."""
import argparse
import json
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--amarena", default="build/tools/amarena")
    ap.add_argument("--limit", type=float, default=0.05)
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()
    runs = []
    for _ in range(args.runs):
        out = subprocess.run([args.amarena, "calibrate", "--no-save", "--json"],
                             check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    table0 = runs[0]["table"]
    keys = [k for k, v in table0.items()
            if isinstance(v, int) and not k.endswith("_bytes") and
            k not in ("family", "model")] + ["dram_run_bytes"]
    lines = [f"Calibration spread on {table0['vendor']} family "
             f"{table0['family']} model {table0['model']} ({table0['name']}), "
             f"{args.runs} runs of `amarena calibrate --no-save --json` "
             "(" + ", ".join(f"{r['seconds']:.1f} s" for r in runs) + ").", "",
             "| price | " + " | ".join(f"run {i + 1}" for i in range(args.runs)) +
             " | spread |", "|---|" + "---|" * (args.runs + 1)]
    worst = 0.0
    for k in dict.fromkeys(keys):
        vals = [r["table"][k] for r in runs]
        # What a 0 stands for (core/target.h): a band no slower than the
        # dense line, a zmm instruction priced as the ymm one.
        stand_in = ("line_dense_gl" if k.startswith("line_gl_band_") else
                    k[:-4] if k in ("fma_zmm", "load_zmm", "store_zmm")
                    else None)
        eff = [v if v or stand_in is None else r["table"][stand_in]
               for v, r in zip(vals, runs)]
        spread = (max(eff) / min(eff) - 1 if min(eff) > 0 else
                  0.0 if max(eff) == 0 else float("inf"))
        worst = max(worst, spread)
        lines.append(f"| {k} | " + " | ".join(str(v) for v in vals) +
                     f" | {100 * spread:.1f} % |")
    lines += ["", f"Largest spread of a price: {100 * worst:.1f} %.", "",
              "| measurement | " +
              " | ".join(f"run {i + 1}" for i in range(args.runs)) +
              " | spread |", "|---|" + "---|" * (args.runs + 1)]
    measured = [k for k, v in runs[0].items()
                if isinstance(v, float) and k not in ("seconds",) and v > 0]
    worst = 0.0
    for k in measured:
        vals = [r[k] for r in runs]
        spread = max(vals) / min(vals) - 1
        worst = max(worst, spread)
        lines.append(f"| {k} | " + " | ".join(f"{v:.3f}" for v in vals) +
                     f" | {100 * spread:.1f} % |")
    lines += ["", f"Largest spread of a measurement: {100 * worst:.1f} % "
              f"(limit {100 * args.limit:.0f} %)."]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    return 1 if worst > args.limit else 0


if __name__ == "__main__":
    sys.exit(main())
