#!/usr/bin/env python3
"""bycut.py SEED: raw 95%/80% coverage of the v96 model's forecasts per origin (cut = rows
removed from the history's end), and the 95% scaled conformal score's (1-a) quantile of
that origin's 414 x 48 scores (on sqrt values, as ../m4cal/cal.py)."""
import csv, sys, math, collections
seed = sys.argv[1]
hist = collections.defaultdict(list)
with open('/work/runs/m4v/hist.csv') as f:
    r = csv.reader(f); next(r)
    for row in r: hist[row[0]].append(float(row[2]))
def scores(cut):
    out = {'lo-95': [], 'lo-80': []}; cov = {'lo-95': 0, 'lo-80': 0}; n = 0
    with open(f's{seed}/raw_{cut}.csv') as f:
        r = csv.reader(f); hdr = next(r); col = {k: i for i, k in enumerate(hdr)}
        step = collections.Counter()
        for row in r:
            sid = row[0]; h = step[sid]; step[sid] += 1
            y = hist[sid][len(hist[sid]) - cut + h]
            ys = math.sqrt(max(y, 0)); M = math.sqrt(max(float(row[col['value']]), 0))
            n += 1
            for a in ('95', '80'):
                lo = float(row[col['value-lo-' + a]]); hi = float(row[col['value-hi-' + a]])
                cov['lo-' + a] += lo <= y <= hi
                L = math.sqrt(max(lo, 0)); U = math.sqrt(max(hi, 0))
                out['lo-' + a].append(max((L - ys) / max(M - L, 1e-6), (ys - U) / max(U - M, 1e-6)))
    return {k: v / n for k, v in cov.items()}, out
def q(e, a):
    e = sorted(e); return e[min(max(math.ceil((len(e) + 1) * (1 - a)), 1), len(e)) - 1]
print('cut,cov95,cov80,q95,q80')
for cut in [48] + list(range(96, 145)):
    cov, sc = scores(cut)
    print('%d,%.4f,%.4f,%.4f,%.4f' % (cut, cov['lo-95'], cov['lo-80'], q(sc['lo-95'], .05), q(sc['lo-80'], .2)))
