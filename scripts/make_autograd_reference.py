#!/usr/bin/env python3
"""Reference loss trajectories for tests/autograd/test_reference_fixture.cpp.

Two tiny MLPs, written out by hand in plain Python (IEEE double precision, no
numpy/torch needed), so the numbers are independent of attnfc's engine:

  sine_sgd:  1 -> 16 -> 1, tanh, MSE, SGD with momentum 0.9 (PyTorch semantics)
  xor_adam:  2 -> 8 -> 1, tanh, MSE, Adam (PyTorch semantics, bias-corrected)

Inputs and initial parameters are rounded to float32 before use and written to
the fixture, so the C++ test starts from exactly the same values. The fixture
stores every step's loss (computed before that step's update).

Usage: scripts/make_autograd_reference.py > tests/autograd/reference_trajectories.json
"""
import json
import math
import random
import struct
import sys


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def init(rng, n, bound):
    return [f32(rng.uniform(-bound, bound)) for _ in range(n)]


def mlp_loss_and_grads(p, xs, ys, n_in, hidden):
    """Forward + backward of out = w2 . tanh(W1 x + b1) + b2 with MSE."""
    w1, b1, w2, b2 = p["w1"], p["b1"], p["w2"], p["b2"]
    g = {k: [0.0] * len(v) for k, v in p.items()}
    n = len(ys)
    loss = 0.0
    for s in range(n):
        x = xs[s * n_in:(s + 1) * n_in]
        h = [math.tanh(sum(w1[j * n_in + i] * x[i] for i in range(n_in)) + b1[j])
             for j in range(hidden)]
        out = sum(w2[j] * h[j] for j in range(hidden)) + b2[0]
        d = out - ys[s]
        loss += d * d / n
        dout = 2.0 * d / n
        g["b2"][0] += dout
        for j in range(hidden):
            g["w2"][j] += dout * h[j]
            dz = dout * w2[j] * (1.0 - h[j] * h[j])
            g["b1"][j] += dz
            for i in range(n_in):
                g["w1"][j * n_in + i] += dz * x[i]
    return loss, g


def sine_sgd(steps=10, lr=0.1, momentum=0.9):
    rng = random.Random(2024)
    n, hidden = 32, 16
    xs = [f32(-math.pi + 2.0 * math.pi * i / (n - 1)) for i in range(n)]
    ys = [f32(math.sin(x)) for x in xs]
    p = {"w1": init(rng, hidden, 1.0), "b1": init(rng, hidden, 1.0),
         "w2": init(rng, hidden, 0.25), "b2": init(rng, 1, 0.25)}
    fixture = {"lr": lr, "momentum": momentum, "n_in": 1, "hidden": hidden, "x": xs, "y": ys,
               "params": {k: list(v) for k, v in p.items()}}
    vel = {k: [0.0] * len(v) for k, v in p.items()}
    losses = []
    for _ in range(steps):
        loss, g = mlp_loss_and_grads(p, xs, ys, 1, hidden)
        losses.append(loss)
        for k in p:
            for i in range(len(p[k])):
                vel[k][i] = momentum * vel[k][i] + g[k][i]
                p[k][i] -= lr * vel[k][i]
    fixture["losses"] = losses
    return fixture


def xor_adam(steps=10, lr=0.05, b1=0.9, b2=0.999, eps=1e-8):
    rng = random.Random(7)
    hidden = 8
    xs = [0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    ys = [0.0, 1.0, 1.0, 0.0]
    p = {"w1": init(rng, 2 * hidden, 0.7), "b1": init(rng, hidden, 0.7),
         "w2": init(rng, hidden, 0.35), "b2": init(rng, 1, 0.35)}
    fixture = {"lr": lr, "beta1": b1, "beta2": b2, "eps": eps, "n_in": 2, "hidden": hidden,
               "x": xs, "y": ys, "params": {k: list(v) for k, v in p.items()}}
    m = {k: [0.0] * len(v) for k, v in p.items()}
    v = {k: [0.0] * len(v) for k, v in p.items()}
    losses = []
    for t in range(1, steps + 1):
        loss, g = mlp_loss_and_grads(p, xs, ys, 2, hidden)
        losses.append(loss)
        for k in p:
            for i in range(len(p[k])):
                m[k][i] = b1 * m[k][i] + (1 - b1) * g[k][i]
                v[k][i] = b2 * v[k][i] + (1 - b2) * g[k][i] ** 2
                mhat = m[k][i] / (1 - b1 ** t)
                vhat = v[k][i] / (1 - b2 ** t)
                p[k][i] -= lr * mhat / (math.sqrt(vhat) + eps)
    fixture["losses"] = losses
    return fixture


def main():
    out = {"generator": "scripts/make_autograd_reference.py",
           "sine_sgd": sine_sgd(), "xor_adam": xor_adam()}
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
