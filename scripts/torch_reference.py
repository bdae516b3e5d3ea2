#!/usr/bin/python3
"""PyTorch rebuild of attnfc's PatchTransformer from docs/MODEL.md alone.

It reads attnfc checkpoints (.safetensors) with its own reader, rebuilds the
model in plain torch ops (the cross-attention decoder's attention is torch's own
multi_head_attention_forward), and checks that torch's forward matches attnfc's,
and for the decoder cases also the training loss and every parameter's gradient.

  torch_reference.py check DIR [--out JSON]
      DIR holds what `ATTNFC_TORCH_EXPORT=DIR test_model -tc="torch reference*"`
      wrote: case_<name>.safetensors (+ _data) and trajectory_*.safetensors.
      Compares every case's forward with attnfc's: the linear-head cases in
      float32 (max abs diff <= 1e-4); the cross-attention cases (their _data
      holds target, known inputs and attnfc's gradients) in float64, forward,
      loss and per-tensor gradients to 1e-5 relative (max |diff| / max |torch|).
      Then trains the trajectory model 10 AdamW steps in float64, and writes the
      reference numbers (tests/model/data/torch_reference.json) to --out.
  torch_reference.py predict CHECKPOINT CONTEXT.csv
      Forecast from the last position for each row of a CSV of context rows.
  torch_reference.py --bench [--threads 1 2] [--seconds 10] [--filter NAME]
      Training samples/s and peak RSS increase of the issue's S/M/Long/XL shapes
      in PyTorch, each case at each thread count with the default (pthread)
      OpenBLAS and, when installed, the OpenMP one, each in a fresh process. One
      JSON line per case, setting and metric in the format of bench/ programs,
      then the best setting per case ("best": true). scripts/bench.sh runs it.

Needs Debian's python3-torch and python3-numpy; attnfc's build and tests never do.
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

# ----------------------------------------------------------------- safetensors


def read_safetensors(path):
    """Returns (tensors: dict name -> np.float32 array, metadata: dict)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, e in header.items():
        if e["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} has dtype {e['dtype']}")
        b, end = e["data_offsets"]
        arr = np.frombuffer(raw[base + b:base + end], dtype="<f4").reshape(e["shape"])
        out[name] = arr.astype(np.float32)
    return out, meta


# ----------------------------------------------------------------- the model


class PatchTransformer:
    """docs/MODEL.md, section by section. Parameters live in self.p by attnfc name."""

    def __init__(self, cfg, tensors, dtype=torch.float32):
        self.cfg = cfg
        self.dtype = dtype
        self.p = {k: torch.tensor(v, dtype=dtype, requires_grad=True)
                  for k, v in tensors.items() if not k.startswith("optim.")}
        self.P = cfg["patch_len"]
        self.L = cfg["context_length"]
        # MODEL.md notation: stride S (patch_stride, 0 = P), token n ends before E(n) = nS + P.
        self.S = cfg.get("patch_stride", 0) or self.P
        self.N = (self.L - self.P) // self.S + 1
        self.E = np.arange(self.N) * self.S + self.P
        self.H = cfg["horizon"]
        self.C = cfg["channels"] if cfg["channel_mode"] == "mixed" else 1
        self.d = cfg["d_model"]
        # MODEL.md 4b: one query per horizon step reads the encoder (forecast origin only).
        self.cross = cfg.get("decoder", "linear") == "cross_attention"
        self.train_dropout = 0.0  # MODEL.md's dropout; only the benchmark turns it on
        self.pos = sinusoidal(self.N, self.d).to(dtype)  # once, not in every forward

    # --- non-differentiable inputs (MODEL.md "Normalisation and tokens"), in float64
    def prepare(self, ctx, obs, last_only=False):
        """ctx, obs: [B, L, C] arrays. Returns features [B,N,2PC], scale, offset [B,n,1,C] and
        the linear shortcut's inputs [B,n,K] (None when model.linear_lookback is 0)."""
        cfg, P, N, C, L, S, E = self.cfg, self.P, self.N, self.C, self.L, self.S, self.E
        B = ctx.shape[0]
        m = obs.reshape(B, L, C) != 0
        x = np.where(m, ctx.reshape(B, L, C).astype(np.float64), 0.0)
        # Sums over the observed values of steps 0..E(n)-1 (causal) or of all L, [B, N, C].
        upto = lambda a: np.cumsum(a, axis=1)[:, E - 1, :]
        s, ss, k = upto(x), upto(x * x), upto(m.astype(np.float64))
        if cfg["norm"] == "instance":  # the whole context, for every n
            s, ss, k = (np.broadcast_to(a[:, -1:, :], (B, N, C)) for a in (s, ss, k))
        if cfg["norm"] == "none":
            mu, sigma = np.zeros((B, N, C)), np.ones((B, N, C))
        else:
            safe = np.maximum(k, 1.0)
            mu = np.where(k > 0, s / safe, 0.0)
            var = np.maximum(0.0, ss / safe - mu * mu)
            sigma = np.where(k > 0, np.sqrt(var + cfg["norm_eps"]), 1.0)
        # Last observed value at or before the end of each patch (mu if none).
        t = np.arange(L)[None, :, None]
        last_idx = np.maximum.accumulate(np.where(m, t, -1), axis=1)[:, E - 1, :]  # [B, N, C]
        last = np.take_along_axis(x, np.maximum(last_idx, 0), axis=1)
        base = np.where((last_idx >= 0) & (cfg["target"] == "delta"), last, mu)
        steps = np.arange(N)[:, None] * S + np.arange(P)[None, :]  # token n's steps, [N, P]
        xv, mv = x[:, steps, :], m[:, steps, :]  # [B, N, P, C]
        val = np.where(mv, (xv - mu[:, :, None, :]) / sigma[:, :, None, :], 0.0)
        val = val.astype(np.float32).reshape(B, N, P * C)
        feats = np.concatenate([val, mv.astype(np.float32).reshape(B, N, P * C)], axis=2)
        sel = slice(N - 1, N) if last_only else slice(0, N)
        scale = sigma[:, sel, None, :].astype(np.float32)
        offset = base[:, sel, None, :].astype(np.float32)
        t = lambda a: torch.tensor(np.ascontiguousarray(a), dtype=self.dtype)
        K = cfg.get("linear_lookback", 0)
        if K == 0:
            return t(feats), t(scale), t(offset), None
        # MODEL.md 4: step E(n) - K + k for k = 0..K-1, as (x - base) / sigma; 0 before
        # the window start and where unobserved. C == 1 (the config forbids mixed).
        idx = E[:, None] - K + np.arange(K)[None, :]  # [N, K]
        ok = (idx >= 0)[None] & m[:, np.maximum(idx, 0), 0]  # [B, N, K]
        xs = x[:, np.maximum(idx, 0), 0]
        look = np.where(ok, (xs - base[:, :, 0:1]) / sigma[:, :, 0:1], 0.0)[:, sel, :]
        return t(feats), t(scale), t(offset), t(look.astype(np.float32))

    def linear(self, x, name, act=None):
        y = F.linear(x, self.p[name + ".weight"], self.p[name + ".bias"])
        return F.gelu(y, approximate="tanh") if act == "gelu" else y

    def layernorm(self, x, name):
        return F.layer_norm(x, (self.d,), self.p[name + ".weight"], self.p[name + ".bias"],
                            self.cfg["layernorm_eps"])

    def attention(self, x, name):
        B, N, d = x.shape
        h = self.cfg["n_heads"]
        qkv = F.linear(x, self.p[name + ".in_proj_weight"], self.p[name + ".in_proj_bias"])
        q, k, v = (t.reshape(B, N, h, d // h).transpose(1, 2) for t in qkv.split(d, dim=-1))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // h)
        causal = torch.triu(torch.ones(N, N, dtype=torch.bool), diagonal=1)
        w = torch.softmax(scores.masked_fill(causal, float("-inf")), dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, N, d)
        return F.linear(out, self.p[name + ".out_proj.weight"], self.p[name + ".out_proj.bias"])

    def encode(self, feats):
        """MODEL.md 4 up to the final LayerNorm: features [B, N, 2PC] -> [B, N, d]."""
        cfg = self.cfg
        if cfg["embedding"] == "linear":
            x = self.linear(feats, "embed")
        else:
            x = self.linear(self.linear(feats, "embed.hidden", "gelu"), "embed.output") + \
                self.linear(feats, "embed.skip")
        if cfg["positional"] == "learned":
            x = x + self.p["pos_embedding"]
        elif cfg["positional"] == "sinusoidal":
            x = x + self.pos
        drop = self.dropout_fn()
        x = drop(x)
        for i in range(cfg["n_layers"]):
            b = f"blocks.{i}."
            x = x + drop(self.attention(self.layernorm(x, b + "norm1"), b + "attn"))
            x = x + drop(self.feed_forward(self.layernorm(x, b + "norm2"), b))
        return self.layernorm(x, "final_norm")

    def dropout_fn(self):
        p = self.train_dropout
        return (lambda t: F.dropout(t, p, training=True)) if p > 0 else (lambda t: t)

    def feed_forward(self, x, prefix):
        return self.linear(self.linear(x, prefix + "ff_in", "gelu"), prefix + "ff_out")

    def forward(self, feats, scale, offset, last_only=False, lookback=None, known=None):
        """Returns pred [B, n, H, C]: n = N, or 1 when last_only or with the cross-attention
        decoder (whose scale, offset and lookback must then be position N-1's)."""
        x = self.encode(feats)
        if self.cross:
            raw = self.decode(x, known)  # [B, 1, H*C]
        else:
            if last_only:
                x = x[:, -1:, :]
            raw = self.linear(x, "head")  # [B, n, H*C]
        if lookback is not None:  # linear shortcut, [B, n, K] -> [B, n, H]; bias after
            raw = raw + F.linear(lookback, self.p["linear_skip.weight"])
        raw = raw.reshape(raw.shape[0], raw.shape[1], self.H, self.C)
        pred = raw * scale + offset  # [B, n, H, C]
        if lookback is not None:
            pred = pred + self.p["linear_skip.bias"][None, None, :, None]
        return pred

    # --- MODEL.md 4b, the cross-attention decoder
    def queries(self, known, B):
        """known = (u [B, H, K] or None, a [B, S] or None, g [B, G] int64 or None) -> [B, H, d]."""
        cfg, p = self.cfg, self.p
        u, a, g = known if known is not None else (None, None, None)
        q = p["decoder.step_embedding"].expand(B, self.H, self.d)
        if cfg.get("known_features", 0) > 0:
            q = q + self.linear(u, "decoder.known_proj")
        if cfg.get("static_numeric", 0) > 0:
            q = q + self.linear(a, "decoder.static_proj")[:, None, :]  # the same for every h
        for k in range(len(cfg.get("static_categories", []))):
            q = q + p[f"decoder.static_embedding.{k}"][g[:, k]][:, None, :]  # row g[b, k]
        return q

    def cross_attention(self, q, E, name):
        """torch's own nn.MultiheadAttention math: Q from q [B, H, d], K and V from E [B, N, d],
        no mask. Its packed in_proj split (rows 0..d-1 Q, d..2d-1 K, 2d..3d-1 V) is MODEL.md's."""
        p = self.p
        out, _ = F.multi_head_attention_forward(
            q.transpose(0, 1), E.transpose(0, 1), E.transpose(0, 1), self.d, self.cfg["n_heads"],
            p[name + ".in_proj_weight"], p[name + ".in_proj_bias"], None, None, False, 0.0,
            p[name + ".out_proj.weight"], p[name + ".out_proj.bias"], training=False,
            need_weights=False)
        return out.transpose(0, 1)  # [B, H, d]

    def decode(self, E, known):
        """E [B, N, d] (after final_norm) -> r [B, 1, H*C]."""
        B = E.shape[0]
        q = self.queries(known, B)
        drop = self.dropout_fn()
        for j in range(self.cfg.get("decoder_layers", 1)):
            b = f"decoder.blocks.{j}."
            q = q + drop(self.cross_attention(self.layernorm(q, b + "norm1"), E, b + "cross_attn"))
            q = q + drop(self.feed_forward(self.layernorm(q, b + "norm2"), b))
        r = self.linear(self.layernorm(q, "decoder.final_norm"), "head")  # [B, H, C]
        return r.reshape(B, 1, self.H * self.C)

    def loss(self, window, observed=None, known=None):
        """window [B, L+H, C], observed likewise (None = all observed), known as for queries():
        MODEL.md "Training loss"."""
        cfg, P, L, H = self.cfg, self.P, self.L, self.H
        if observed is None:
            observed = np.ones_like(window)
        last_only = cfg["loss_positions"] == "last"
        feats, scale, offset, look = self.prepare(window[:, :L], observed[:, :L], last_only)
        pred = self.forward(feats, scale, offset, last_only, look, known)
        ns = [self.N - 1] if last_only else range(self.N)
        E = self.E
        tgt = np.stack([window[:, E[n]:E[n] + H] for n in ns], axis=1)
        msk = np.stack([observed[:, E[n]:E[n] + H] for n in ns], axis=1)
        T = cfg.get("target_channels", 0)
        if T > 0:  # a past covariate (channel >= T) is an input only, never a target
            msk = msk.copy()
            msk[..., T:] = 0
        tgt = torch.tensor(tgt, dtype=self.dtype)
        msk = torch.tensor(msk, dtype=self.dtype)
        d = pred - tgt
        if cfg["loss"] == "mse":
            e = d * d
        elif cfg["loss"] == "mae":
            e = d.abs()
        else:
            a = cfg["huber_delta"]
            e = torch.where(d.abs() <= a, 0.5 * d * d, a * (d.abs() - 0.5 * a))
        return (e * msk).sum() / msk.sum()


def sinusoidal(N, d):
    pe = torch.zeros(N, d, dtype=torch.float64)
    for i in range(0, d, 2):
        freq = 10000.0 ** (-i / d)
        pos = torch.arange(N, dtype=torch.float64)
        pe[:, i] = torch.sin(pos * freq)
        if i + 1 < d:
            pe[:, i + 1] = torch.cos(pos * freq)
    return pe.float()


def load_model(path, dtype=torch.float32):
    tensors, meta = read_safetensors(path)
    if meta.get("format") != "attnfc.patch_transformer" or meta.get("format_version") != "1":
        raise SystemExit(f"{path}: not an attnfc checkpoint of format version 1")
    return PatchTransformer(json.loads(meta["model_config"]), tensors, dtype)


def as_blc(a, C):
    return a.reshape(a.shape[0], a.shape[1], C) if a.ndim == 2 else a


# ----------------------------------------------------------------- commands


FORWARD_ABS = 1e-4  # float32 torch against float32 attnfc, the linear-head cases
FORWARD_REL = 1e-5  # float64 torch against attnfc: max |diff| / max |torch| over a case
GRAD_REL = 1e-5     # per tensor: max |g_torch - g_attnfc| / max |g_torch|


def known_inputs(model, data):
    """The decoder's inputs of a _data file: (u [B,H,K], a [B,S], g [B,G] int64), None if absent."""
    t = lambda a: torch.tensor(a, dtype=model.dtype)
    u = t(data["known"]) if "known" in data else None
    a = t(data["static_numeric"]) if "static_numeric" in data else None
    g = torch.tensor(data["static_codes"].astype(np.int64)) if "static_codes" in data else None
    return u, a, g


def rel_diff(ref, other):
    """max |ref - other| / max |ref| (0 when both vanish)."""
    ref, other = np.asarray(ref, np.float64), np.asarray(other, np.float64)
    scale = float(np.abs(ref).max())
    worst = float(np.abs(ref - other).max())
    return worst / scale if scale > 0 else (0.0 if worst == 0 else math.inf)


def check_decoder_case(name, path, data):
    """A cross-attention case (MODEL.md 4b) in float64: forward, loss and every parameter's
    gradient against attnfc's. Returns (reference entry, worst forward, worst gradient)."""
    model = load_model(path, torch.float64)
    known = known_inputs(model, data)
    feats, scale, offset, look = model.prepare(data["context"], data["observed"], True)
    with torch.no_grad():
        y = model.forward(feats, scale, offset, True, look, known).reshape(-1).numpy()
    fwd = rel_diff(y, data["forward"])
    # The training loss on the same windows: context, then target, each with its mask.
    window = np.concatenate([data["context"], data["target"]], axis=1).astype(np.float64)
    observed = np.concatenate([data["observed"], data["target_observed"]], axis=1)
    loss = model.loss(window, observed, known)
    loss.backward()
    entry = {"forward": [float(v) for v in y], "loss": float(loss), "grad": {}}
    worst_grad, worst_name = 0.0, ""
    for pname, tensor in model.p.items():
        g = tensor.grad.reshape(-1).numpy()
        r = rel_diff(g, data["grad." + pname])
        if r >= worst_grad:
            worst_grad, worst_name = r, pname
        entry["grad"][pname] = [float(v) for v in g]
    loss_rel = abs(float(loss) - float(data["loss"][0])) / abs(float(loss))
    print(f"case {name:24s} forward max|diff|/max|torch| = {fwd:.3e}, loss {loss_rel:.1e}, "
          f"gradient worst {worst_grad:.3e} ({worst_name}, {len(model.p)} tensors)")
    return entry, max(fwd, loss_rel), worst_grad


def dump_reference(result, path):
    """indent=1 like before, but each gradient tensor on one line (thousands of numbers)."""
    grads = {}
    for name, case in result["cases"].items():
        for pname, g in case.get("grad", {}).items():
            key = f"@@{len(grads)}@@"
            grads[key] = json.dumps(g)
            case["grad"][pname] = key
    text = json.dumps(result, indent=1)
    for key, line in grads.items():
        text = text.replace(f'"{key}"', line)
    with open(path, "w") as f:
        f.write(text + "\n")


def check_cases(d, result):
    """Every case_<name> in d. Returns (worst linear forward abs, worst decoder forward rel,
    worst decoder gradient rel)."""
    worst_abs = worst_fwd = worst_grad = 0.0
    for f in sorted(os.listdir(d)):
        if not (f.startswith("case_") and f.endswith(".safetensors")) or f.endswith("_data.safetensors"):
            continue
        name = f[len("case_"):-len(".safetensors")]
        data, _ = read_safetensors(os.path.join(d, f"case_{name}_data.safetensors"))
        if "target" in data:
            entry, fwd, grad = check_decoder_case(name, os.path.join(d, f), data)
            result["cases"][name] = entry
            worst_fwd, worst_grad = max(worst_fwd, fwd), max(worst_grad, grad)
            continue
        model = load_model(os.path.join(d, f))
        feats, scale, offset, look = model.prepare(data["context"], data["observed"])
        with torch.no_grad():
            y = model.forward(feats, scale, offset, False, look).reshape(-1).numpy()
        worst = float(np.abs(y - data["forward"]).max())
        worst_abs = max(worst_abs, worst)
        print(f"case {name:24s} max |torch - attnfc| = {worst:.3e}")
        result["cases"][name] = {"forward": [float(v) for v in y]}
    return worst_abs, worst_fwd, worst_grad


def cmd_check(args):
    d = args.dir
    result = {"cases": {}, "trajectory": []}
    worst_abs, worst_fwd, worst_grad = check_cases(d, result)
    # Trajectory: float64 so the pinned numbers carry no float32 rounding of their own.
    model = load_model(os.path.join(d, "trajectory_init.safetensors"), torch.float64)
    batches, _ = read_safetensors(os.path.join(d, "trajectory_batches.safetensors"))
    params = list(model.p.values())
    opt = torch.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    for s in range(len(batches)):
        w = batches[f"batch.{s}"].astype(np.float64)
        opt.zero_grad()
        loss = model.loss(as_blc(w, 1))
        loss.backward()
        opt.step()
        result["trajectory"].append(float(loss))
        print(f"step {s}: loss {float(loss):.8f}")
    if args.out:
        dump_reference(result, args.out)
    failed = [f"linear-head forward {worst_abs:.3e} > {FORWARD_ABS}"] * (worst_abs > FORWARD_ABS)
    failed += [f"decoder forward/loss {worst_fwd:.3e} > {FORWARD_REL}"] * (worst_fwd > FORWARD_REL)
    failed += [f"decoder gradients {worst_grad:.3e} > {GRAD_REL}"] * (worst_grad > GRAD_REL)
    if failed:
        print("FAIL: torch and attnfc differ: " + "; ".join(failed))
        return 1
    print(f"OK: linear-head forwards match to {worst_abs:.1e} (<= {FORWARD_ABS}), decoder "
          f"forwards to {worst_fwd:.1e} and gradients to {worst_grad:.1e} relative")
    return 0


def cmd_predict(args):
    model = load_model(args.checkpoint)
    cfg = model.cfg
    if cfg.get("known_features", 0) or cfg.get("static_numeric", 0) or cfg.get("static_categories"):
        raise SystemExit(f"{args.checkpoint}: the decoder reads known or static inputs, "
                         "which a CSV of contexts does not carry")
    rows = np.loadtxt(args.context, delimiter=",", ndmin=2).astype(np.float32)
    ctx = rows[:, -model.L:][:, :, None]
    feats, scale, offset, look = model.prepare(ctx, np.ones_like(ctx), last_only=True)
    with torch.no_grad():
        y = model.forward(feats, scale, offset, True, look)[:, 0, :, 0].numpy()
    np.savetxt(sys.stdout, y, delimiter=",", fmt="%.7g")
    return 0


BENCH_CASES = {  # name: (P, L, d, heads, layers, H, batch); S and M have 336 / 16 = 21 patches
    "S": (16, 336, 64, 4, 2, 96, 32),
    "M": (16, 336, 128, 8, 3, 96, 32),
    "Long": (1, 512, 64, 4, 2, 1, 32),
    "XL": (1, 2048, 64, 4, 1, 1, 4),
}
# Debian's torch calls BLAS through libblas.so.3, which is the pthread OpenBLAS by default.
# Its threads compete with torch's own OpenMP pool; the OpenMP build shares that pool.
OPENMP_BLAS_DIR = "/usr/lib/x86_64-linux-gnu/openblas-openmp"


def status_kb(field):
    """A 'VmRSS:'-style field of /proc/self/status, in kB (None off Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def openblas_coretype():
    """OpenBLAS's CPU detection fails on this VM ("Intel Xeon Processor") and falls back to its
    Prescott (SSE3) kernels, about 8x slower; name the kernels the CPU can run instead, as
    bench/bench_gemm.cpp does. A user's OPENBLAS_CORETYPE wins."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l.split() for l in f if l.startswith("flags")), [])
    except OSError:
        return None
    return "SkylakeX" if "avx512f" in flags else "Haswell" if "avx2" in flags else None


def openblas_corename():
    try:
        import ctypes
        get = ctypes.CDLL("libopenblas.so.0").openblas_get_corename
        get.restype = ctypes.c_char_p
        return get().decode()
    except (OSError, AttributeError):
        return "unknown"


def loaded_blas():
    """Which libblas this process really mapped: 'openmp', 'pthread' or 'other'."""
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        return "unknown"
    for kind in ("openmp", "pthread", "serial"):
        if f"openblas-{kind}/" in maps:
            return kind
    return "other"


def emit(obj):
    """One compact JSON line, as bench/ programs print them (scripts/bench.sh parses it)."""
    print(json.dumps(obj, separators=(",", ":")), flush=True)


def bench_one(args):
    """One case at one setting in this (fresh) process: samples/s and peak RSS increase."""
    import resource
    threads = args.threads[0]
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    rng = np.random.default_rng(1)
    P, L, d, h, n, H, B = BENCH_CASES[args.case]
    cfg = dict(patch_len=P, context_length=L, horizon=H, channel_mode="independent",
               channels=1, norm="causal", norm_eps=1e-5, target="delta", embedding="linear",
               positional="sinusoidal", d_model=d, n_heads=h, n_layers=n, ff_mult=4,
               dropout=args.dropout, layernorm_eps=1e-5, loss_positions="all", loss="mse")
    randn = lambda *shape: (rng.standard_normal(shape) * 0.1).astype(np.float32)
    tensors = {"embed.weight": randn(d, 2 * P), "embed.bias": np.zeros(d, np.float32),
               "final_norm.weight": np.ones(d, np.float32), "final_norm.bias": np.zeros(d, np.float32),
               "head.weight": randn(H, d), "head.bias": np.zeros(H, np.float32)}
    for i in range(n):
        b = f"blocks.{i}."
        for ln in ("norm1", "norm2"):
            tensors[b + ln + ".weight"] = np.ones(d, np.float32)
            tensors[b + ln + ".bias"] = np.zeros(d, np.float32)
        tensors[b + "attn.in_proj_weight"] = randn(3 * d, d)
        tensors[b + "attn.in_proj_bias"] = np.zeros(3 * d, np.float32)
        tensors[b + "attn.out_proj.weight"] = randn(d, d)
        tensors[b + "attn.out_proj.bias"] = np.zeros(d, np.float32)
        tensors[b + "ff_in.weight"] = randn(4 * d, d)
        tensors[b + "ff_in.bias"] = np.zeros(4 * d, np.float32)
        tensors[b + "ff_out.weight"] = randn(d, 4 * d)
        tensors[b + "ff_out.bias"] = np.zeros(d, np.float32)
    model = PatchTransformer(cfg, tensors)
    model.train_dropout = args.dropout  # the same three sites as attnfc (MODEL.md section 4)
    opt = torch.optim.AdamW(list(model.p.values()), lr=1e-4)
    window = rng.standard_normal((B, L + H, 1)).astype(np.float32)
    # Inputs are prepared once: the benchmark measures the network, not numpy loops.
    feats, scale, offset, _ = model.prepare(window[:, :L], np.ones((B, L, 1)))
    tgt = torch.randn(B, L // P, H, 1)

    # Memory: the peak RSS during training minus the RSS after model construction (weights
    # and inputs in place; gradients, AdamW moments and activations come after). Resetting
    # the kernel's high-water mark (clear_refs 5) makes the peak this run's own.
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        peak_source = "VmHWM"
    except OSError:
        peak_source = "ru_maxrss"
    baseline_kb = status_kb("VmRSS")

    def step():
        opt.zero_grad()
        loss = ((model.forward(feats, scale, offset) - tgt) ** 2).mean()
        loss.backward()
        opt.step()

    for _ in range(args.warmup):
        step()
    times, start = [], time.perf_counter()
    while len(times) < 3 or time.perf_counter() - start < args.seconds:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    peak_kb = status_kb("VmHWM") if peak_source == "VmHWM" else None
    if peak_kb is None:
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux
    common = {"bench": "model_train", "case": args.case, "impl": "torch", "threads": threads,
              "blas": loaded_blas(), "openblas_core": openblas_corename(),
              "torch": torch.__version__}
    emit({**common, "metric": "samples/s",
          "value": round(B / float(np.median(times)), 3), "steps": len(times),
          "warmup": args.warmup, "dropout": args.dropout})
    emit({**common, "metric": "peak RSS MB",
          "value": round((peak_kb - baseline_kb) * 1024 / 1e6, 1),
          "baseline_MB": round(baseline_kb * 1024 / 1e6, 1), "peak_source": peak_source})
    return 0


def cmd_bench(args):
    """Every case at every setting, each in a fresh process; then torch's best per case."""
    if args.case:
        return bench_one(args)
    settings = [(t, "pthread") for t in args.threads]
    if os.path.isdir(OPENMP_BLAS_DIR):
        settings += [(t, "openmp") for t in args.threads]
    else:
        print(f"torch bench: {OPENMP_BLAS_DIR} not found (Debian libopenblas0-openmp); "
              "measuring the default BLAS only", file=sys.stderr)
    coretype = os.environ.get("OPENBLAS_CORETYPE") or openblas_coretype()
    failed = 0
    for name in BENCH_CASES:
        if args.filter and args.filter not in name:
            continue
        runs = []
        for threads, blas in settings:
            env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
            if coretype:
                env["OPENBLAS_CORETYPE"] = coretype
            if blas == "openmp":
                env["LD_LIBRARY_PATH"] = ":".join(
                    p for p in (OPENMP_BLAS_DIR, os.environ.get("LD_LIBRARY_PATH")) if p)
            cmd = [sys.executable, os.path.abspath(__file__), "--bench", "--case", name,
                   "--threads", str(threads), "--seconds", str(args.seconds),
                   "--warmup", str(args.warmup), "--dropout", str(args.dropout)]
            print(f"torch bench: {name} threads={threads} blas={blas}", file=sys.stderr)
            proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
            lines = [json.loads(l) for l in proc.stdout.splitlines() if l.startswith("{")]
            if proc.returncode != 0 or len(lines) != 2:
                print(f"torch bench: {name} threads={threads} blas={blas} failed", file=sys.stderr)
                failed = 1
                continue
            for line in lines:
                line["setting"] = f"{threads}t {blas}"
                emit(line)
            runs.append(lines)
        if runs:
            speed, memory = max(runs, key=lambda r: r[0]["value"])
            for line in (speed, memory):
                emit({**line, "best": True})
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                    help="bench: thread counts to try (default 1 2)")
    ap.add_argument("--seconds", type=float, default=10.0, help="bench: timed seconds per setting")
    ap.add_argument("--warmup", type=int, default=3, help="bench: untimed steps first")
    ap.add_argument("--dropout", type=float, default=0.1, help="bench: dropout (bench_model uses 0.1)")
    ap.add_argument("--filter", default="", help="bench: only cases whose name contains this")
    ap.add_argument("--case", choices=sorted(BENCH_CASES), help=argparse.SUPPRESS)
    sub = ap.add_subparsers(dest="cmd")
    c = sub.add_parser("check")
    c.add_argument("dir")
    c.add_argument("--out")
    p = sub.add_parser("predict")
    p.add_argument("checkpoint")
    p.add_argument("context")
    args = ap.parse_args()
    if args.bench:
        return cmd_bench(args)
    if args.cmd == "check":
        return cmd_check(args)
    if args.cmd == "predict":
        return cmd_predict(args)
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
