#!/usr/bin/env python3
"""Runs `amarena calibrate --json` N times (default 2) as a user would, one
after the other on one database (a fresh temporary one), so that each run
after the first settles onto the table the one before stored
(CalibrationOptions::standing), and prints the spread (max / min - 1) of
each stored price, of each price as measured (before settling), and of each
measurement (cycles per line, operations per cycle, the DRAM rate): the
idempotence check of calibration. With --independent, every run measures
afresh (`--fresh --no-save`), as two hosts of one kind would.

    taskset -c 1 scripts/calibration_spread.py [--runs 3] [--amarena PATH]
        [--independent] [--markdown FILE]

Exits 1 when a stored price's spread is above --limit (default 0.05)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def price_rows(runs, table, lines):
    """Appends a row per price of runs[i][table]; returns the largest spread."""
    table0 = runs[0][table]
    keys = [k for k, v in table0.items()
            if isinstance(v, int) and not k.endswith("_bytes") and
            k not in ("family", "model")] + ["dram_run_bytes"]
    worst = 0.0
    for k in dict.fromkeys(keys):
        vals = [r[table][k] for r in runs]
        # What a 0 stands for (core/target.h): a band no slower than the
        # dense line, a zmm instruction priced as the ymm one.
        stand_in = ("line_dense_gl" if k.startswith("line_gl_band_") else
                    k[:-4] if k in ("fma_zmm", "load_zmm", "store_zmm")
                    else None)
        eff = [v if v or stand_in is None else r[table][stand_in]
               for v, r in zip(vals, runs)]
        spread = (max(eff) / min(eff) - 1 if min(eff) > 0 else
                  0.0 if max(eff) == 0 else float("inf"))
        worst = max(worst, spread)
        lines.append(f"| {k} | " + " | ".join(str(v) for v in vals) +
                     f" | {100 * spread:.1f} % |")
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--amarena", default="build/tools/amarena")
    ap.add_argument("--limit", type=float, default=0.05)
    ap.add_argument("--independent", action="store_true",
                    help="every run measures afresh and stores nothing")
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, AMARENA_DB=os.path.join(tmp, "calibrate.db"))
        cmd = [args.amarena, "calibrate", "--json"]
        if args.independent:
            cmd += ["--fresh", "--no-save"]
        for _ in range(args.runs):
            out = subprocess.run(cmd, check=True, capture_output=True,
                                 text=True, env=env).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
    table0 = runs[0]["table"]
    how = ("each measured afresh (`amarena calibrate --fresh --no-save "
           "--json`)" if args.independent else
           "one after the other on one fresh database (`amarena calibrate "
           "--json`: each run after the first settles onto the table the "
           "one before stored)")
    header = ("| price | " + " | ".join(f"run {i + 1}" for i in range(args.runs)) +
              " | spread |")
    lines = [f"Calibration spread on {table0['vendor']} family "
             f"{table0['family']} model {table0['model']} ({table0['name']}), "
             f"{args.runs} runs, {how} "
             "(" + ", ".join(f"{r['seconds']:.1f} s" for r in runs) + ").", "",
             "The prices stored (what the search uses):", "",
             header, "|---|" + "---|" * (args.runs + 1)]
    worst = price_rows(runs, "table", lines)
    lines += ["", f"Largest spread of a stored price: {100 * worst:.1f} % "
              f"(limit {100 * args.limit:.0f} %).", "",
              "Each run's settled fields: " +
              "; ".join(f"run {i + 1}: {r.get('settled') or 'none'}"
                        for i, r in enumerate(runs)) + ".", "",
              "The prices as measured, before settling and clamping:", "",
              header, "|---|" + "---|" * (args.runs + 1)]
    raw_worst = price_rows(runs, "measured", lines)
    lines += ["", f"Largest spread of a measured price: {100 * raw_worst:.1f} %.",
              "", "| measurement | " +
              " | ".join(f"run {i + 1}" for i in range(args.runs)) +
              " | spread |", "|---|" + "---|" * (args.runs + 1)]
    measured = [k for k, v in runs[0].items()
                if isinstance(v, float) and k not in ("seconds",) and v > 0]
    m_worst = 0.0
    for k in measured:
        vals = [r[k] for r in runs]
        spread = max(vals) / min(vals) - 1
        m_worst = max(m_worst, spread)
        lines.append(f"| {k} | " + " | ".join(f"{v:.3f}" for v in vals) +
                     f" | {100 * spread:.1f} % |")
    lines += ["", f"Largest spread of a measurement: {100 * m_worst:.1f} %."]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    return 1 if worst > args.limit else 0


if __name__ == "__main__":
    sys.exit(main())
