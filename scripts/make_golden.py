#!/usr/bin/python3
"""Write the PyTorch reference fixtures in tests/golden/ (format: docs/GOLDEN.md).

Run with Debian's interpreter, which has python3-torch (torch 1.13):

    /usr/bin/python3 scripts/make_golden.py [--out tests/golden]

Building and testing attnfc never runs this script: its output is committed.
Every input is drawn from a seeded torch.Generator and rounded to float32 (so the
C++ side sees exactly the same numbers); every reference is computed in float64
from those float32 values. Running the script twice gives bit-identical files.

References:
  sdpa_*   torch 1.13 has no public F.scaled_dot_product_attention; the reference is
           explicit float64 torch ops (matmul, masked softmax, matmul), and each case is
           asserted equal (1e-12) to the private torch.nn.functional._scaled_dot_product_attention
           where torch defines the result (no fully masked row).
  mha_*    torch.nn.MultiheadAttention(batch_first=True) in float64, gradients by
           torch.autograd. Cases with a fully masked query row use the explicit ops
           (torch returns NaN there; attnfc documents zeros) and check that torch agrees
           on every other row.
  linear_*, layernorm_*  torch.nn.Linear / torch.nn.LayerNorm in float64.
"""
import argparse
import math
import os
import sys

import torch
import torch.nn.functional as F

FORMAT_VERSION = 1
SEED = 20261129


class Case:
    def __init__(self, name, op):
        self.name, self.op = name, op
        self.attrs = []    # (key, int)
        self.tensors = []  # (name, tensor, is_reference)

    def attr(self, key, value):
        self.attrs.append((key, int(value)))

    def tensor(self, name, t, reference=False):
        self.tensors.append((name, t.detach().clone(), reference))

    def text(self):
        lines = [f"attnfc-golden {FORMAT_VERSION}", f"case {self.name}", f"op {self.op}"]
        for key, value in self.attrs:
            lines.append(f"attr {key} {value}")
        for name, t, reference in self.tensors:
            dims = list(t.shape)
            lines.append(f"tensor {name} {len(dims)} " + " ".join(str(d) for d in dims))
            flat = t.reshape(-1).tolist()
            # Inputs are float32 values: 9 significant digits round-trip them exactly.
            # References are float64: 17 digits.
            fmt = "{:.17g}" if reference else "{:.9g}"
            for i in range(0, len(flat), 8):
                lines.append(" ".join(fmt.format(float(v)) for v in flat[i:i + 8]))
        lines.append("end")
        return "\n".join(lines) + "\n"


def draw(gen, *shape, scale=1.0):
    """Standard normal * scale, rounded to float32, returned as float64."""
    x = torch.randn(*shape, generator=gen, dtype=torch.float64) * scale
    return x.float().double()


def draw_uniform(gen, *shape, bound):
    x = (torch.rand(*shape, generator=gen, dtype=torch.float64) * 2 - 1) * bound
    return x.float().double()


def padding_tensor(batch, lk, padded):
    """padded: {batch index: [key positions]} -> uint8-valued float tensor [B, Lk]."""
    p = torch.zeros(batch, lk, dtype=torch.float64)
    for b, keys in padded.items():
        for j in keys:
            p[b, j] = 1
    return p


def blocked(batch, lq, lk, causal, pad):
    """Boolean [B, 1, Lq, Lk], True = query i may not see key j."""
    m = torch.zeros(batch, 1, lq, lk, dtype=torch.bool)
    if causal:
        m |= torch.triu(torch.ones(lq, lk, dtype=torch.bool), diagonal=1)
    if pad is not None:
        m |= pad.bool()[:, None, None, :]
    return m


def masked_softmax(scores, block):
    """Softmax over the last axis where blocked entries weigh exactly 0 and a row
    with nothing visible is all zeros (attnfc's documented behaviour)."""
    visible = (~block).to(scores.dtype)
    safe = scores.masked_fill(block, 0.0)
    row_max = safe.masked_fill(block, -math.inf).amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    e = torch.exp(safe - row_max.detach()) * visible
    denom = e.sum(dim=-1, keepdim=True)
    denom = torch.where(denom > 0, denom, torch.ones_like(denom))
    return e / denom


def explicit_sdpa(q, k, v, block):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    w = masked_softmax(scores, block)
    return w @ v, w


def sdpa_case(gen, name, B, H, Lq, Lk, D, causal=False, padded=None):
    c = Case(name, "sdpa")
    for key, value in [("batch", B), ("heads", H), ("lq", Lq), ("lk", Lk), ("head_dim", D),
                       ("causal", causal), ("key_padding", padded is not None)]:
        c.attr(key, value)
    q, k, v = draw(gen, B, H, Lq, D), draw(gen, B, H, Lk, D), draw(gen, B, H, Lk, D)
    dout = draw(gen, B, H, Lq, D)
    pad = padding_tensor(B, Lk, padded) if padded is not None else None
    c.tensor("q", q), c.tensor("k", k), c.tensor("v", v)
    if pad is not None:
        c.tensor("key_padding", pad)
    c.tensor("dout", dout)

    block = blocked(B, Lq, Lk, causal, pad)
    qg, kg, vg = (t.clone().requires_grad_(True) for t in (q, k, v))
    out, weights = explicit_sdpa(qg, kg, vg, block)
    (out * dout).sum().backward()

    fully_masked = bool(block.all(dim=-1).any())
    if not fully_masked:
        # The private torch 1.13 kernel: mask True = takes part.
        use_flag = causal and pad is None
        allowed = None if use_flag else (~block).expand(B, H, Lq, Lk)
        t_out, t_w = F._scaled_dot_product_attention(q, k, v, allowed, 0.0, True, use_flag)
        assert torch.allclose(t_out, out, rtol=0, atol=1e-12), name
        assert torch.allclose(t_w, weights, rtol=0, atol=1e-12), name
    c.tensor("out", out, True), c.tensor("weights", weights, True)
    c.tensor("dq", qg.grad, True), c.tensor("dk", kg.grad, True), c.tensor("dv", vg.grad, True)
    return c


def explicit_mha(x_q, x_kv, W_in, b_in, W_out, b_out, heads, block):
    d = x_q.shape[-1]
    B, Lq, Lk, hd = x_q.shape[0], x_q.shape[1], x_kv.shape[1], d // heads
    b_q, b_k, b_v = (None, None, None) if b_in is None else b_in.split(d)
    W_q, W_k, W_v = W_in.split(d)
    q = F.linear(x_q, W_q, b_q).view(B, Lq, heads, hd).transpose(1, 2)
    k = F.linear(x_kv, W_k, b_k).view(B, Lk, heads, hd).transpose(1, 2)
    v = F.linear(x_kv, W_v, b_v).view(B, Lk, heads, hd).transpose(1, 2)
    o, w = explicit_sdpa(q, k, v, block)
    o = o.transpose(1, 2).reshape(B, Lq, d)
    return F.linear(o, W_out, b_out), w


def mha_case(gen, name, B, Lq, Lk, d, heads, bias, causal=False, padded=None):
    """Lk None means self-attention (key = value = query)."""
    self_attn = Lk is None
    Lk = Lq if self_attn else Lk
    c = Case(name, "mha")
    for key, value in [("batch", B), ("lq", Lq), ("lk", Lk), ("d_model", d), ("heads", heads),
                       ("bias", bias), ("self", self_attn), ("causal", causal),
                       ("key_padding", padded is not None)]:
        c.attr(key, value)
    mha = torch.nn.MultiheadAttention(d, heads, bias=bias, batch_first=True).double()
    with torch.no_grad():
        bound = 1.0 / math.sqrt(d)
        mha.in_proj_weight.copy_(draw_uniform(gen, 3 * d, d, bound=2 * bound))
        mha.out_proj.weight.copy_(draw_uniform(gen, d, d, bound=2 * bound))
        if bias:
            mha.in_proj_bias.copy_(draw_uniform(gen, 3 * d, bound=0.5))
            mha.out_proj.bias.copy_(draw_uniform(gen, d, bound=0.5))
    x_q = draw(gen, B, Lq, d)
    x_kv = x_q if self_attn else draw(gen, B, Lk, d)
    dout = draw(gen, B, Lq, d)
    pad = padding_tensor(B, Lk, padded) if padded is not None else None

    c.tensor("query", x_q)
    if not self_attn:
        c.tensor("key_value", x_kv)
    if pad is not None:
        c.tensor("key_padding", pad)
    c.tensor("in_proj_weight", mha.in_proj_weight)
    if bias:
        c.tensor("in_proj_bias", mha.in_proj_bias)
    c.tensor("out_proj.weight", mha.out_proj.weight)
    if bias:
        c.tensor("out_proj.bias", mha.out_proj.bias)
    c.tensor("dout", dout)

    block = blocked(B, Lq, Lk, causal, pad)
    fully_masked = block.all(dim=-1)  # [B, 1, Lq]

    # torch.nn.MultiheadAttention itself.
    xq = x_q.clone().requires_grad_(True)
    xkv = xq if self_attn else x_kv.clone().requires_grad_(True)
    attn_mask = torch.triu(torch.ones(Lq, Lk, dtype=torch.bool), diagonal=1) if causal else None
    kpm = pad.bool() if pad is not None else None
    t_out, t_w = mha(xq, xkv, xkv, key_padding_mask=kpm, attn_mask=attn_mask, need_weights=True,
                     average_attn_weights=False)

    # The same computation with explicit ops (zeros for fully masked rows).
    params = [p.detach().clone().requires_grad_(True) for p in
              (mha.in_proj_weight, mha.in_proj_bias, mha.out_proj.weight, mha.out_proj.bias)
              if p is not None]
    W_in, W_out = params[0], params[2 if bias else 1]
    b_in, b_out = (params[1], params[3]) if bias else (None, None)
    eq = x_q.clone().requires_grad_(True)
    ekv = eq if self_attn else x_kv.clone().requires_grad_(True)
    e_out, e_w = explicit_mha(eq, ekv, W_in, b_in, W_out, b_out, heads, block)

    rows_ok = ~fully_masked[:, 0, :]  # [B, Lq]
    assert torch.allclose(t_out[rows_ok], e_out[rows_ok], rtol=0, atol=1e-12), name
    assert torch.allclose(t_w.transpose(1, 2)[rows_ok], e_w.transpose(1, 2)[rows_ok],
                          rtol=0, atol=1e-12), name
    if bool(fully_masked.any()):
        assert bool(torch.isnan(t_out[~rows_ok]).all()), name  # what torch 1.13 does
        (e_out * dout).sum().backward()
        out, w = e_out, e_w
        grads = [eq.grad] + ([] if self_attn else [ekv.grad]) + [p.grad for p in params]
    else:
        (t_out * dout).sum().backward()
        out, w = t_out, t_w
        grads = [xq.grad] + ([] if self_attn else [xkv.grad])
        grads += [p.grad for p in (mha.in_proj_weight, mha.in_proj_bias, mha.out_proj.weight,
                                   mha.out_proj.bias) if p is not None]
        # The explicit ops agree on the gradients too.
        (e_out * dout).sum().backward()
        e_grads = [eq.grad] + ([] if self_attn else [ekv.grad]) + [p.grad for p in params]
        for g, e in zip(grads, e_grads):
            assert torch.allclose(g, e, rtol=0, atol=1e-11), name

    c.tensor("out", out, True)
    c.tensor("weights", w, True)
    names = ["dquery"] + ([] if self_attn else ["dkey_value"]) + ["din_proj_weight"]
    names += (["din_proj_bias"] if bias else []) + ["dout_proj.weight"]
    names += ["dout_proj.bias"] if bias else []
    for n, g in zip(names, grads):
        c.tensor(n, g, True)
    return c


def linear_case(gen, name, shape, n_in, n_out, bias):
    c = Case(name, "linear")
    c.attr("in", n_in), c.attr("out", n_out), c.attr("bias", bias)
    lin = torch.nn.Linear(n_in, n_out, bias=bias).double()
    with torch.no_grad():
        lin.weight.copy_(draw_uniform(gen, n_out, n_in, bound=1.0 / math.sqrt(n_in)))
        if bias:
            lin.bias.copy_(draw_uniform(gen, n_out, bound=0.5))
    x = draw(gen, *shape, n_in).requires_grad_(True)
    dout = draw(gen, *shape, n_out)
    c.tensor("x", x), c.tensor("weight", lin.weight)
    if bias:
        c.tensor("bias", lin.bias)
    c.tensor("dout", dout)
    out = lin(x)
    (out * dout).sum().backward()
    c.tensor("out", out, True), c.tensor("dx", x.grad, True)
    c.tensor("dweight", lin.weight.grad, True)
    if bias:
        c.tensor("dbias", lin.bias.grad, True)
    return c


def layernorm_case(gen, name, shape, dim):
    c = Case(name, "layernorm")
    c.attr("dim", dim)
    ln = torch.nn.LayerNorm(dim, eps=1e-5).double()
    with torch.no_grad():
        ln.weight.copy_(draw(gen, dim, scale=0.5) + 1.0)
        ln.weight.copy_(ln.weight.float().double())
        ln.bias.copy_(draw(gen, dim, scale=0.5))
    x = (draw(gen, *shape, dim, scale=2.0) + 0.5).float().double().requires_grad_(True)
    dout = draw(gen, *shape, dim)
    c.tensor("x", x), c.tensor("weight", ln.weight), c.tensor("bias", ln.bias)
    c.tensor("dout", dout)
    out = ln(x)
    (out * dout).sum().backward()
    c.tensor("out", out, True), c.tensor("dx", x.grad, True)
    c.tensor("dweight", ln.weight.grad, True), c.tensor("dbias", ln.bias.grad, True)
    return c


def all_cases():
    gen = torch.Generator().manual_seed(SEED)
    return [
        sdpa_case(gen, "sdpa_self", 2, 3, 5, 5, 7),
        sdpa_case(gen, "sdpa_cross", 2, 2, 3, 7, 5),
        sdpa_case(gen, "sdpa_causal", 1, 2, 9, 9, 4, causal=True),
        sdpa_case(gen, "sdpa_causal_cross", 2, 1, 5, 7, 3, causal=True),
        sdpa_case(gen, "sdpa_padding", 3, 2, 6, 6, 5, padded={1: [4, 5], 2: [0, 3]}),
        sdpa_case(gen, "sdpa_causal_padding", 2, 3, 7, 7, 6, causal=True,
                  padded={0: [6], 1: [2, 5]}),
        sdpa_case(gen, "sdpa_odd", 3, 2, 11, 13, 9, padded={0: [12], 2: [1, 2, 3]}),
        sdpa_case(gen, "sdpa_fully_masked", 2, 2, 5, 5, 4, causal=True,
                  padded={0: [0, 1], 1: [4]}),
        mha_case(gen, "mha_self_bias", 2, 5, None, 12, 3, bias=True),
        mha_case(gen, "mha_self_nobias", 1, 7, None, 6, 2, bias=False),
        mha_case(gen, "mha_self_causal", 2, 6, None, 8, 4, bias=True, causal=True),
        mha_case(gen, "mha_self_padding", 3, 5, None, 9, 3, bias=True,
                 padded={1: [3, 4], 2: [0]}),
        mha_case(gen, "mha_self_causal_padding", 2, 7, None, 10, 5, bias=False, causal=True,
                 padded={0: [5, 6], 1: [3]}),
        mha_case(gen, "mha_cross_bias", 2, 3, 7, 12, 3, bias=True),
        mha_case(gen, "mha_cross_nobias_padding", 2, 5, 4, 6, 1, bias=False,
                 padded={0: [3], 1: [0, 2]}),
        mha_case(gen, "mha_cross_causal_padding", 3, 4, 6, 8, 2, bias=True, causal=True,
                 padded={0: [5], 2: [2, 3]}),
        mha_case(gen, "mha_cross_single_query", 2, 1, 5, 4, 2, bias=True, padded={1: [1]}),
        mha_case(gen, "mha_odd", 3, 11, None, 15, 5, bias=True, causal=True,
                 padded={0: [10], 1: [4, 7]}),
        mha_case(gen, "mha_fully_masked", 2, 5, None, 6, 2, bias=True, causal=True,
                 padded={0: [0], 1: [2]}),
        linear_case(gen, "linear_bias", (2, 3), 5, 7, True),
        linear_case(gen, "linear_nobias", (4,), 9, 3, False),
        layernorm_case(gen, "layernorm", (2, 3), 9),
    ]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "golden"))
    args = ap.parse_args()
    torch.set_num_threads(1)  # one summation order for float64 BLAS calls
    os.makedirs(args.out, exist_ok=True)
    cases = all_cases()
    for c in cases:
        path = os.path.join(args.out, c.name + ".txt")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(c.text())
        os.replace(tmp, path)
    print(f"wrote {len(cases)} fixtures to {os.path.normpath(args.out)} (torch {torch.__version__})",
          file=sys.stderr)


if __name__ == "__main__":
    main()
