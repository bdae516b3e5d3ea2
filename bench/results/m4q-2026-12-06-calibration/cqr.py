# Cross-fitted comparison on validation only: raw intervals vs multiplicative conformal
# scaling (per step or pooled), fitted on one half of the series, scored on the other.
import csv, math, sys
from collections import defaultdict
def load(p):
    d = defaultdict(list)
    with open(p) as f:
        r = csv.reader(f); h = next(r)
        for row in r: d[row[0]].append(row)
    return h, d
fh, fc = load(sys.argv[1]); _, act = load('val.csv'); _, hist = load('histm48.csv')
ids = sorted(fc, key=lambda s: int(s[1:]))
col = {k: i for i, k in enumerate(fh)}
def scale(s):
    y = [float(r[2]) for r in hist[s]]
    return sum(abs(y[t] - y[t - 24]) for t in range(24, len(y))) / (len(y) - 24)
sc = {s: scale(s) for s in ids}
def rows(s, lvl):
    out = []
    for r, a in zip(fc[s], act[s]):
        m = float(r[col['value']]); lo = float(r[col[f'value-lo-{lvl}']]); hi = float(r[col[f'value-hi-{lvl}']])
        out.append((m, lo, hi, float(a[2])))
    return out
def msis(series, lvl, fac):  # fac[h]: factor per step
    a = 1 - lvl / 100; tot = 0; cov = 0; n = 0
    for s in series:
        e = 0
        for h, (m, lo, hi, y) in enumerate(rows(s, lvl)):
            L = m - fac[h] * (m - lo); U = m + fac[h] * (hi - m)
            e += (U - L) + 2 / a * max(L - y, 0) + 2 / a * max(y - U, 0)
            cov += L <= y <= U; n += 1
        tot += e / 48 / sc[s]
    return tot / len(series), cov / n
def fit(series, lvl, pooled):
    a = 1 - lvl / 100; per = [[] for _ in range(48)]
    for s in series:
        for h, (m, lo, hi, y) in enumerate(rows(s, lvl)):
            per[h].append(max((m - y) / max(m - lo, 1e-9), (y - m) / max(hi - m, 1e-9)))
    def q(v):
        v = sorted(v); k = min(len(v), math.ceil((len(v) + 1) * (1 - a))); return v[k - 1]
    if pooled:
        f = q([x for p in per for x in p]); return [f] * 48
    return [q(p) for p in per]
A = ids[0::2]; B = ids[1::2]
for lvl in (80, 95):
    for name, fn in (('raw', lambda tr: [1.0] * 48), ('per-step', lambda tr: fit(tr, lvl, False)), ('pooled', lambda tr: fit(tr, lvl, True))):
        r1 = msis(B, lvl, fn(A)); r2 = msis(A, lvl, fn(B))
        print(lvl, name, 'MSIS %.3f cov %.3f' % ((r1[0] + r2[0]) / 2, (r1[1] + r2[1]) / 2))
