#!/usr/bin/python3
# Ad hoc validation script of 2026-12-05 (night), kept as the record of docs/RESULTS.md
# "M4 Hourly: what else was tried on validation"; it ran in /tmp/m4v.
# Post-hoc study: per series, choose between the model and seasonal naive (season 24) by
# their MASE on window A (the 48 hours before window B), then write window B's forecast:
# the model's rows, or sNaive's point with the model's intervals shifted onto it.
# usage: select.py hist_to_A.csv fcA.csv actualA.csv hist_to_B.csv fcB.csv out.csv [margin]
import csv, sys
from collections import defaultdict

def read(path):
    rows = defaultdict(list)
    with open(path) as f:
        r = csv.reader(f)
        header = next(r)
        for row in r:
            rows[row[0]].append(row)
    return header, rows

def snaive(hist_rows, H, m=24):
    vals = [float(r[2]) for r in hist_rows]
    last = vals[-m:]
    return [last[h % m] for h in range(H)]

def mase_scale(hist_rows, m=24):
    v = [float(r[2]) for r in hist_rows]
    d = [abs(v[i] - v[i - m]) for i in range(m, len(v))]
    return sum(d) / len(d) if d else 1.0

hA, histA = read(sys.argv[1])
hf, fcA = read(sys.argv[2])
_, actA = read(sys.argv[3])
_, histB = read(sys.argv[4])
_, fcB = read(sys.argv[5])
margin = float(sys.argv[7]) if len(sys.argv) > 7 else 1.0
weight = float(sys.argv[8]) if len(sys.argv) > 8 else 1.0
chosen = 0
with open(sys.argv[6], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(hf)
    for sid, rows in fcB.items():
        H = len(rows)
        a = [float(r[2]) for r in actA[sid]]
        sc = mase_scale(histA[sid])
        model_err = sum(abs(float(r[2]) - x) for r, x in zip(fcA[sid], a)) / H / sc
        sn = snaive(histA[sid], H)
        sn_err = sum(abs(p - x) for p, x in zip(sn, a)) / H / sc
        if sn_err * margin < model_err:
            chosen += 1
            snB = snaive(histB[sid], H)
            for r, p in zip(rows, snB):
                shift = weight * (p - float(r[2]))
                w.writerow([r[0], r[1]] + [f"{float(v) + shift:.4f}" for v in r[2:]])
        else:
            for r in rows:
                w.writerow(r)
print(f"sNaive chosen for {chosen} of {len(fcB)} series", file=sys.stderr)
