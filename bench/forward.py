"""Forward mode's cost: a Jacobian-vector product against the forward pass it rides on.

Theory says a JVP costs a small constant times the program it differentiates
(each op's tangent is one or two ops of the same size), as a gradient does.
Three workloads, each timed per iteration:

(a) the MLP of ``engine.py`` (784-256-256-10, batch 64, float32): its forward pass
    alone, the same pass under a ``ForwardAccumulator`` watching the first weight
    matrix (a JVP along one direction), and its gradient by reverse mode;
(b) the chain of ``engine.py``, 1000 elements alternating ``y + 0.01`` and
    ``tanh(y) * 1.01`` (1500 engine ops) on an (8, 8) array: alone and under an
    accumulator, so the difference per op is forward mode's overhead per op;
(c) a Hessian-vector product of the MLP's loss (forward over reverse: the
    gradient taken inside an accumulator) against the gradient alone.

The goals: a JVP within 3x its forward pass and a Hessian-vector product within 5x
the gradient, the constant factors the theory promises (a tangent is one to three
ops per op); and at most 25 us of forward mode's own work per op, a few engine ops'
worth (``engine.py`` holds an op to 4 us): each op's tangent is its rule's ops
plus the accumulator's bookkeeping.

Run with ``python bench/forward.py`` (``make bench``); ``--quick`` for fewer repeats.
"""

from __future__ import annotations

import argparse
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # as engine.py: single-threaded BLAS

import numpy as np  # noqa: E402

import gradviz as gv  # noqa: E402
from _table import Target, print_table, print_targets  # noqa: E402
from engine import best_times  # noqa: E402

TARGET_JVP_RATIO = 3.0  # a JVP along one direction / the forward pass alone (MLP)
TARGET_HVP_RATIO = 5.0  # a Hessian-vector product / the gradient alone (MLP)
TARGET_OVERHEAD_US = 25.0  # forward mode's extra cost per engine op (chain)
CHAIN = 1000  # chain elements (1.5 engine ops each)

rng = np.random.default_rng(0)
X = gv.constant(rng.normal(size=(64, 784)).astype(np.float32))
LABELS = gv.constant(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)])
W1 = gv.Variable(rng.normal(0, 0.05, (784, 256)).astype(np.float32))
B1 = gv.Variable(np.zeros(256, np.float32))
W2 = gv.Variable(rng.normal(0, 0.05, (256, 256)).astype(np.float32))
B2 = gv.Variable(np.zeros(256, np.float32))
W3 = gv.Variable(rng.normal(0, 0.05, (256, 10)).astype(np.float32))
B3 = gv.Variable(np.zeros(10, np.float32))
PARAMS = [W1, B1, W2, B2, W3, B3]
DIRECTION = gv.constant(rng.normal(size=(784, 256)).astype(np.float32))
START = gv.constant(rng.normal(size=(8, 8)).astype(np.float32))
START_DIRECTION = gv.constant(np.ones((8, 8), np.float32))


def mlp_loss() -> gv.Tensor:
    h = gv.relu(X @ W1 + B1)
    h = gv.relu(h @ W2 + B2)
    logits = h @ W3 + B3
    return gv.reduce_mean(gv.nn.softmax_cross_entropy_with_logits(labels=LABELS,
                                                                  logits=logits))


def mlp_jvp() -> gv.Tensor:
    with gv.autodiff.ForwardAccumulator(W1, DIRECTION) as acc:
        loss = mlp_loss()
    return acc.jvp(loss)


def mlp_gradient() -> list:
    with gv.GradientTape() as tape:
        loss = mlp_loss()
    return tape.gradient(loss, PARAMS)


def mlp_hvp() -> gv.Tensor:
    with gv.autodiff.ForwardAccumulator(W1, DIRECTION) as acc:
        grads = mlp_gradient()
    return acc.jvp(grads[0])


def chain() -> gv.Tensor:
    y = START
    for k in range(CHAIN):
        y = y + 0.01 if k % 2 == 0 else gv.tanh(y) * 1.01
    return y


def chain_jvp() -> gv.Tensor:
    with gv.autodiff.ForwardAccumulator(START, START_DIRECTION) as acc:
        y = chain()
    return acc.jvp(y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    rounds = 3 if parser.parse_args().quick else 7
    t = best_times({"forward": mlp_loss, "jvp": mlp_jvp, "gradient": mlp_gradient,
                    "hvp": mlp_hvp, "chain": chain, "chain_jvp": chain_jvp}, rounds)
    ops = CHAIN * 3 // 2
    overhead_us = (t["chain_jvp"] - t["chain"]) / ops * 1e6
    print_table(["workload", "what runs", "time\n(ms per iteration)"], [
        ["mlp", "forward pass alone", f"{t['forward'] * 1e3:.2f}"],
        ["mlp", "forward pass with a JVP", f"{t['jvp'] * 1e3:.2f}"],
        ["mlp", "gradient (reverse mode)", f"{t['gradient'] * 1e3:.2f}"],
        ["mlp", "Hessian-vector product", f"{t['hvp'] * 1e3:.2f}"],
        ["chain", f"{ops} ops alone", f"{t['chain'] * 1e3:.2f}"],
        ["chain", f"{ops} ops with a JVP", f"{t['chain_jvp'] * 1e3:.2f}"],
    ], label_columns=2)
    jvp_ratio = t["jvp"] / t["forward"]
    hvp_ratio = t["hvp"] / t["gradient"]
    print_targets("forward", [
        Target("MLP, JVP / forward pass", f"{jvp_ratio:.2f}x", f"<= {TARGET_JVP_RATIO:.1f}x",
               jvp_ratio <= TARGET_JVP_RATIO),
        Target("MLP, Hessian-vector product / gradient", f"{hvp_ratio:.2f}x",
               f"<= {TARGET_HVP_RATIO:.1f}x", hvp_ratio <= TARGET_HVP_RATIO),
        Target("chain, forward mode's overhead per op", f"{overhead_us:.1f} us",
               f"<= {TARGET_OVERHEAD_US:.0f} us", overhead_us <= TARGET_OVERHEAD_US),
    ])


if __name__ == "__main__":
    main()
