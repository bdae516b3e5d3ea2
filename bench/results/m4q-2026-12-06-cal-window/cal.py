#!/usr/bin/env python3
"""cal.py RAW_A ACT_A RAW_B OUT METHOD [K]
Scaled split-conformal calibration of the 80% and 95% intervals, fit on window A's raw
forecasts and actuals, applied to window B's raw forecasts; computed on sqrt values (what
data.transform "sqrt" gives the tool; the per-series z-score cancels in the ratio).
METHOD: perstep (a correction per horizon step, as attnfc does), pooled (one for all 48
steps), smooth (steps within +-K of h pooled)."""
import csv, sys, math, collections

def read(path):
    d = collections.OrderedDict()
    with open(path) as f:
        r = csv.reader(f); hdr = next(r)
        for row in r: d.setdefault(row[0], []).append(row)
    return hdr, d

def cq(e, a):
    e = sorted(e); n = len(e)
    rank = math.ceil((n + 1) * (1 - a))
    return e[min(max(rank, 1), n) - 1]

ra, aa, rb, out, method = sys.argv[1:6]
K = int(sys.argv[6]) if len(sys.argv) > 6 else 0
hdr, RA = read(ra); _, AA = read(aa); hdrb, RB = read(rb)
col = {n: i for i, n in enumerate(hdr)}
pairs = [('value-lo-80', 'value-hi-80', 0.2), ('value-lo-95', 'value-hi-95', 0.05)]
H = 48; eps = 1e-6
scores = {p[0]: [[] for _ in range(H)] for p in pairs}
for sid, rows in RA.items():
    for h, r in enumerate(rows):
        y = math.sqrt(max(float(AA[sid][h][2]), 0))
        M = math.sqrt(max(float(r[col['value']]), 0))
        for lo, hi, a in pairs:
            L = math.sqrt(max(float(r[col[lo]]), 0)); U = math.sqrt(max(float(r[col[hi]]), 0))
            scores[lo][h].append(max((L - y) / max(M - L, eps), (y - U) / max(U - M, eps)))
corr = {}
for lo, hi, a in pairs:
    c = []
    for h in range(H):
        if method == 'perstep': e = scores[lo][h]
        elif method == 'pooled': e = [s for hh in range(H) for s in scores[lo][hh]]
        else: e = [s for hh in range(max(0, h - K), min(H, h + K + 1)) for s in scores[lo][hh]]
        c.append(cq(e, a))
    corr[lo] = c
print(' '.join('%s: %.3f..%.3f mean %.3f' % (k, min(v), max(v), sum(v) / len(v)) for k, v in corr.items()), file=sys.stderr)
with open(out, 'w') as o:
    o.write(','.join(hdrb) + '\n')
    cb = {n: i for i, n in enumerate(hdrb)}
    for sid, rows in RB.items():
        for h, r in enumerate(rows):
            v = [float(x) for x in r[2:]]
            M = math.sqrt(max(float(r[cb['value']]), 0))
            new = list(r)
            for lo, hi, a in pairs:
                L = math.sqrt(max(float(r[cb[lo]]), 0)); U = math.sqrt(max(float(r[cb[hi]]), 0))
                c = corr[lo][h]
                L2 = L - c * max(M - L, eps); U2 = U + c * max(U - M, eps)
                new[cb[lo]] = '%.6g' % (max(L2, 0) ** 2); new[cb[hi]] = '%.6g' % (U2 ** 2)
            o.write(','.join(new) + '\n')
