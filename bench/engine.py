"""Engine speed: forward + backward against hand-written NumPy, and peers if installed.

Four workloads, each timed per iteration (forward and backward together):

(a) an MLP 784-256-256-10, batch 64, ReLU, softmax cross-entropy, float32,
    gradients for the six parameters;
(b) a chain of 1000 elementwise ops on an (8, 8) array, alternating
    ``y + 0.01`` and ``tanh(y) * 1.01``;
(c) a CNN on a batch of 32 28x28x1 images, float32: conv 3x3x8 SAME with a
    bias, ReLU, max-pool 2x2 stride 2, dense to 10, softmax cross-entropy,
    gradients for the four parameters.  By hand it is the fastest NumPy we
    could write: im2col a tap at a time and one matrix product, the pool as four
    strided taps, sums over rows as products with ones;
(d) a transformer block, batch 8, sequence 16, width 32, one head: an embedding
    of 50 tokens, Q, K and V, attention scaled by 1/sqrt(32) and softmaxed, a
    residual and a layer norm, a dense layer to the 50 tokens and softmax
    cross-entropy, gradients for the eight parameters (the embedding's sparse).

Each is written by hand in NumPy (the floor), with gradviz (tracing off and
on), and, when installed, with PyTorch (CPU) and HIPS autograd.  PyTorch runs
the block twice: as one would write it for PyTorch (its fused layer norm), and
as gradviz's graph has it, op for op, so that the two engines' costs per op
compare on the same work.  Run with
``python bench/engine.py`` (``make bench``); ``--quick`` for fewer repeats.

How it measures, so the ratios compare engines and nothing else:

- every contender runs single-threaded: NumPy's BLAS (set below, before NumPy
  loads) as PyTorch (``torch.set_num_threads(1)``), so matrix products do not
  depend on how many idle cores a thread pool happens to find;
- times are the best of several rounds with the cyclic garbage collector
  paused, as :mod:`timeit` does, for every contender alike;
- the chain's overhead is counted per engine op: ``y + 0.01`` is one op (Add),
  ``tanh(y) * 1.01`` two (Tanh, Mul), so the 1000-element chain runs 1500 ops;
  the overhead per chain element (1.5 ops) is printed as well;
- what recording each op's line of code costs (``gv.record_source``, on by
  default) is the chain's forward pass with it on less the same with it off,
  per engine op: a few percent of the time, so the two are measured on their
  own, taking turns for three times the rounds (the forward pass alone: the
  backward pass's ops record nothing of their own, and its time would only
  add noise).  ``bench/instructions.py`` counts the same in instructions.
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit
from collections.abc import Callable

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy loads its BLAS (see the docstring)

import numpy as np  # noqa: E402

import gradviz as gv  # noqa: E402
from _table import Target, print_table, print_targets  # noqa: E402

TARGET_MLP_RATIO = 1.3  # gradviz / hand-written NumPy, tracing off
TARGET_OVERHEAD_US = 4.0  # engine overhead per engine op, tracing off
TARGET_TRACE_RATIO = 1.5  # tracing on / tracing off
TARGET_SOURCE_US = 0.3  # what recording each op's line of code costs per engine op
TARGET_CNN_RATIO = 1.3  # gradviz / hand-written NumPy, tracing off
TARGET_BLOCK_RATIO = 1.5  # gradviz / hand-written NumPy, tracing off
CHAIN_OPS = 1000  # chain elements, as counted by the workload's definition

rng = np.random.default_rng(0)


def best_times(fns: dict[str, Callable[[], object]], rounds: int,
               round_seconds: float = 0.02) -> dict[str, float]:
    """Seconds per call of each function: the best of ``rounds`` rounds.

    The rounds take turns (one round of each function, then the next), so a
    burst of load from elsewhere on a small machine slows all contenders'
    rounds alike instead of one contender's whole measurement; the best
    round is the least disturbed.  The collector is paused, as in timeit.
    """
    timers, numbers = {}, {}
    for key, fn in fns.items():
        fn()  # warm up
        timers[key] = timeit.Timer(fn)
        once = min(timers[key].repeat(repeat=3, number=1))
        numbers[key] = max(1, int(round_seconds / max(once, 1e-9)))
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for key, timer in timers.items():
            best[key] = min(best[key], timer.timeit(numbers[key]) / numbers[key])
    return best


# ---------------------------------------------------------------- (a) the MLP

SIZES = [784, 256, 256, 10]
BATCH = 64
X = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
LABELS = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], BATCH)]
PARAMS = []
for n_in, n_out in zip(SIZES, SIZES[1:]):
    PARAMS.append((rng.standard_normal((n_in, n_out)) * np.sqrt(2 / n_in)).astype(np.float32))
    PARAMS.append(np.zeros(n_out, np.float32))


def mlp_numpy() -> list[np.ndarray]:
    w1, b1, w2, b2, w3, b3 = PARAMS
    z1 = X @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    logits = h2 @ w3 + b3
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -(LABELS * log_p).sum(axis=1).mean()
    # backward: d loss / d logits = (softmax - labels) / batch
    g = (np.exp(log_p) - LABELS) / BATCH
    gw3, gb3 = h2.T @ g, g.sum(axis=0)
    g = (g @ w3.T) * (z2 > 0)
    gw2, gb2 = h1.T @ g, g.sum(axis=0)
    g = (g @ w2.T) * (z1 > 0)
    gw1, gb1 = X.T @ g, g.sum(axis=0)
    del loss
    return [gw1, gb1, gw2, gb2, gw3, gb3]


GV_PARAMS = [gv.Variable(p, name=f"p{i}") for i, p in enumerate(PARAMS)]
GV_X, GV_LABELS = gv.constant(X), gv.constant(LABELS)


def mlp_gradviz_loss() -> gv.Tensor:
    w1, b1, w2, b2, w3, b3 = GV_PARAMS
    h1 = gv.relu(GV_X @ w1 + b1)
    h2 = gv.relu(h1 @ w2 + b2)
    logits = h2 @ w3 + b3
    return gv.reduce_mean(gv.softmax_cross_entropy_with_logits(labels=GV_LABELS, logits=logits))


def mlp_gradviz() -> list:
    return gv.gradients(mlp_gradviz_loss(), GV_PARAMS)


def mlp_gradviz_traced() -> gv.Trace:
    return gv.trace_gradients(mlp_gradviz_loss(), GV_PARAMS)


# ---------------------------------------------------------------- (b) the chain

CHAIN_X = rng.standard_normal((8, 8)).astype(np.float32)
HALF = CHAIN_OPS // 2
ENGINE_OPS = HALF * 3  # the chain's ops: an Add, a Tanh and a Mul per pair of elements


def chain_numpy() -> np.ndarray:
    y, tanhs = CHAIN_X, []
    step, scale = np.float32(0.01), np.float32(1.01)
    for _ in range(HALF):
        y = y + step
        t = np.tanh(y)
        tanhs.append(t)
        y = t * scale
    g = np.ones_like(y)
    for t in reversed(tanhs):
        g = (g * scale) * (1 - t * t)  # d(tanh(y) * 1.01)/dy
    return g


def chain_gradviz_loss() -> tuple[gv.Tensor, gv.Tensor]:
    x = gv.constant(CHAIN_X)
    y = x
    for _ in range(HALF):
        y = y + 0.01
        y = gv.tanh(y) * 1.01
    return y, x


def chain_gradviz() -> list:
    y, x = chain_gradviz_loss()
    return gv.gradients(y, x)


def chain_gradviz_unsourced() -> list:
    with gv.record_source(False):
        return chain_gradviz()


def chain_forward_unsourced() -> tuple[gv.Tensor, gv.Tensor]:
    with gv.record_source(False):
        return chain_gradviz_loss()


def chain_gradviz_traced() -> gv.Trace:
    y, x = chain_gradviz_loss()
    return gv.trace_gradients(y, x)


# ---------------------------------------------------------------- (c) the CNN

CNN_BATCH, SIDE, CHANNELS, CLASSES = 32, 28, 8, 10
IMAGES = rng.standard_normal((CNN_BATCH, SIDE, SIDE, 1)).astype(np.float32)
CNN_LABELS = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, CNN_BATCH)]
FLAT = (SIDE // 2) * (SIDE // 2) * CHANNELS
CNN_PARAMS = [(rng.standard_normal((3, 3, 1, CHANNELS)) / 3).astype(np.float32),
              np.full(CHANNELS, 0.01, np.float32),
              (rng.standard_normal((FLAT, CLASSES)) * np.sqrt(2 / FLAT)).astype(np.float32),
              np.zeros(CLASSES, np.float32)]


def cnn_numpy() -> list[np.ndarray]:
    w, b, w2, b2 = CNN_PARAMS
    n, side, half = CNN_BATCH, SIDE, SIDE // 2
    padded = np.pad(IMAGES, ((0, 0), (1, 1), (1, 1), (0, 0)))
    # im2col one kernel tap at a time (one channel: a row per tap), then one product
    taps = np.empty((9, n, side, side), np.float32)
    for t in range(9):
        taps[t] = padded[:, t // 3: t // 3 + side, t % 3: t % 3 + side, 0]
    cols = taps.reshape(9, -1)
    z = cols.T @ w.reshape(9, CHANNELS) + b  # (n * side * side, channels)
    h = np.maximum(z, 0).reshape(n, side, side, CHANNELS)
    taps = [h[:, i::2, j::2] for i in (0, 1) for j in (0, 1)]  # each (n, half, half, c)
    pooled = np.maximum(np.maximum(taps[0], taps[1]), np.maximum(taps[2], taps[3]))
    flat = pooled.reshape(n, FLAT)
    logits = flat @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    # backward
    g = (np.exp(log_p) - CNN_LABELS) / n
    gw2, gb2 = flat.T @ g, np.ones(n, np.float32) @ g
    g = (g @ w2.T).reshape(n, half, half, CHANNELS)
    # to each window's maximum (a tie can only be among ReLU's zeros, which get nothing)
    dh = np.empty_like(h)
    for k, (i, j) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
        np.multiply(taps[k] == pooled, g, out=dh[:, i::2, j::2])
    g = dh.reshape(-1, CHANNELS) * (z > 0)
    # (a sum over the rows as a product with ones: BLAS, 20 times faster than g.sum(0))
    return [(cols @ g).reshape(w.shape), np.ones(len(g), np.float32) @ g, gw2, gb2]


GV_CNN_PARAMS = [gv.Variable(p, name=f"c{i}") for i, p in enumerate(CNN_PARAMS)]
GV_IMAGES, GV_CNN_LABELS = gv.constant(IMAGES), gv.constant(CNN_LABELS)


def cnn_gradviz_loss() -> gv.Tensor:
    w, b, w2, b2 = GV_CNN_PARAMS
    h = gv.nn.relu(gv.nn.bias_add(gv.nn.conv2d(GV_IMAGES, w, 1, "SAME"), b))
    pooled = gv.nn.max_pool2d(h, 2, 2, "VALID")
    logits = gv.reshape(pooled, [CNN_BATCH, FLAT]) @ w2 + b2
    return gv.reduce_mean(gv.nn.softmax_cross_entropy_with_logits(labels=GV_CNN_LABELS,
                                                                  logits=logits))


def cnn_gradviz() -> list:
    return gv.gradients(cnn_gradviz_loss(), GV_CNN_PARAMS)


def cnn_gradviz_traced() -> gv.Trace:
    return gv.trace_gradients(cnn_gradviz_loss(), GV_CNN_PARAMS)


# ---------------------------------------------------------------- (d) a transformer block

BLOCK_BATCH, SEQ, WIDTH, VOCAB = 8, 16, 32, 50
EPSILON = 1e-3
TOKENS = rng.integers(0, VOCAB, (BLOCK_BATCH, SEQ)).astype(np.int32)
TARGETS = np.eye(VOCAB, dtype=np.float32)[rng.integers(0, VOCAB, (BLOCK_BATCH, SEQ))]
BLOCK_PARAMS = {
    "E": rng.standard_normal((VOCAB, WIDTH)).astype(np.float32),
    **{w: (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
       for w in ("Wq", "Wk", "Wv")},
    "gamma": np.ones(WIDTH, np.float32), "beta": np.zeros(WIDTH, np.float32),
    "Wo": (rng.standard_normal((WIDTH, VOCAB)) / np.sqrt(WIDTH)).astype(np.float32),
    "bo": np.zeros(VOCAB, np.float32),
}
SCALE = float(1.0 / np.sqrt(WIDTH))


def block_numpy() -> list[np.ndarray]:
    """One attention head with its embedding, residual and layer norm, then a dense layer
    and softmax cross-entropy: forward and backward by hand."""
    p = BLOCK_PARAMS
    x = p["E"][TOKENS]
    q, k, v = x @ p["Wq"], x @ p["Wk"], x @ p["Wv"]
    s = q @ k.transpose(0, 2, 1) * np.float32(SCALE)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    attn = e / e.sum(axis=-1, keepdims=True)
    r = x + attn @ v
    mean = r.mean(axis=-1, keepdims=True)
    centred = r - mean
    inv = 1 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + np.float32(EPSILON))
    n = centred * inv
    h = n * p["gamma"] + p["beta"]
    logits = h @ p["Wo"] + p["bo"]
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    rows = BLOCK_BATCH * SEQ
    dlogits = ((z / z.sum(axis=-1, keepdims=True) - TARGETS) / np.float32(rows)).reshape(rows, -1)
    h2 = h.reshape(rows, WIDTH)
    d_wo, d_bo = h2.T @ dlogits, dlogits.sum(axis=0)
    dh = (dlogits @ p["Wo"].T).reshape(h.shape)
    d_gamma, d_beta = (dh * n).reshape(rows, WIDTH).sum(axis=0), dh.reshape(rows, WIDTH).sum(0)
    dn = dh * p["gamma"]
    dr = inv * (dn - dn.mean(axis=-1, keepdims=True)
                - n * (dn * n).mean(axis=-1, keepdims=True))
    d_attn = dr @ v.transpose(0, 2, 1)
    dv = attn.transpose(0, 2, 1) @ dr
    ds = attn * (d_attn - (d_attn * attn).sum(axis=-1, keepdims=True)) * np.float32(SCALE)
    dq, dk = ds @ k, ds.transpose(0, 2, 1) @ q
    x2 = x.reshape(rows, WIDTH)
    grads = {w: x2.T @ d.reshape(rows, WIDTH) for w, d in (("Wq", dq), ("Wk", dk), ("Wv", dv))}
    dx = dr + dq @ p["Wq"].T + dk @ p["Wk"].T + dv @ p["Wv"].T
    d_e = np.zeros_like(p["E"])
    np.add.at(d_e, TOKENS.reshape(-1), dx.reshape(rows, WIDTH))
    return [d_e, grads["Wq"], grads["Wk"], grads["Wv"], d_gamma, d_beta, d_wo, d_bo]


GV_BLOCK = {k: gv.Variable(v, name=k) for k, v in BLOCK_PARAMS.items()}
GV_TOKENS, GV_TARGETS = gv.constant(TOKENS, name="tokens"), gv.constant(TARGETS, name="targets")


def block_gradviz_loss() -> gv.Tensor:
    p = GV_BLOCK
    x = gv.nn.embedding_lookup(p["E"], GV_TOKENS)
    with gv.name_scope("attention"):
        q, k, v = x @ p["Wq"], x @ p["Wk"], x @ p["Wv"]
        scores = gv.einsum("bqd,bkd->bqk", q, k) * SCALE
        attended = gv.softmax(scores) @ v
    h = gv.nn.layer_norm(x + attended, scale=p["gamma"], offset=p["beta"], epsilon=EPSILON)
    logits = h @ p["Wo"] + p["bo"]
    return gv.reduce_mean(gv.nn.softmax_cross_entropy_with_logits(labels=GV_TARGETS,
                                                                   logits=logits))


def block_gradviz() -> list:
    return gv.gradients(block_gradviz_loss(), list(GV_BLOCK.values()))


def block_gradviz_traced() -> gv.Trace:
    return gv.trace_gradients(block_gradviz_loss(), list(GV_BLOCK.values()))


# ---------------------------------------------------------------- peers


def peers() -> dict[str, dict[str, Callable[[], object]]]:
    found: dict[str, dict[str, Callable[[], object]]] = {}
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        tx, tl = torch.from_numpy(X), torch.from_numpy(LABELS)
        tp = [torch.tensor(p, requires_grad=True) for p in PARAMS]
        tc = torch.from_numpy(CHAIN_X)

        def mlp_torch() -> object:
            w1, b1, w2, b2, w3, b3 = tp
            h1 = torch.relu(tx @ w1 + b1)
            h2 = torch.relu(h1 @ w2 + b2)
            logits = h2 @ w3 + b3
            loss = -(tl * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            return torch.autograd.grad(loss, tp)

        def chain_torch() -> object:
            x = tc.clone().requires_grad_(True)
            y = x
            for _ in range(HALF):
                y = y + 0.01
                y = torch.tanh(y) * 1.01
            return torch.autograd.grad(y, x, torch.ones_like(y))

        images = torch.from_numpy(IMAGES.transpose(0, 3, 1, 2).copy())  # NCHW, its layout
        cnn_labels = torch.from_numpy(CNN_LABELS)
        cp = [torch.tensor(CNN_PARAMS[0].transpose(3, 2, 0, 1).copy(), requires_grad=True),
              *(torch.tensor(p, requires_grad=True) for p in CNN_PARAMS[1:])]
        functional = torch.nn.functional

        def cnn_torch() -> object:
            w, b, w2, b2 = cp
            h = torch.relu(functional.conv2d(images, w, b, padding=1))
            pooled = functional.max_pool2d(h, 2, 2).permute(0, 2, 3, 1).reshape(CNN_BATCH, FLAT)
            logits = pooled @ w2 + b2
            loss = -(cnn_labels * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            return torch.autograd.grad(loss, cp)

        tokens = torch.from_numpy(TOKENS.astype(np.int64))
        targets = torch.from_numpy(TARGETS)
        bp = {k: torch.tensor(v, requires_grad=True) for k, v in BLOCK_PARAMS.items()}

        def block_torch() -> object:
            x = bp["E"][tokens]
            q, k, v = x @ bp["Wq"], x @ bp["Wk"], x @ bp["Wv"]
            attn = torch.softmax(q @ k.transpose(1, 2) * SCALE, dim=-1)
            h = functional.layer_norm(x + attn @ v, (WIDTH,), bp["gamma"], bp["beta"], EPSILON)
            logits = h @ bp["Wo"] + bp["bo"]
            loss = -(targets * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()
            return torch.autograd.grad(loss, list(bp.values()))

        def block_torch_as_gradviz() -> object:
            # the block as gradviz's graph has it, one PyTorch op for each of gradviz's: the
            # layer norm as moments and batch normalisation, the loss as log_softmax, times,
            # sum and mean; so the two engines compare on the same ops
            x = functional.embedding(tokens, bp["E"]).clone()  # (the lookup's Identity)
            q, k, v = x @ bp["Wq"], x @ bp["Wk"], x @ bp["Wv"]
            attended = torch.softmax(torch.einsum("bqd,bkd->bqk", q, k) * SCALE, dim=-1) @ v
            r = x + attended
            mean = r.mean(dim=-1, keepdim=True)
            variance = ((r - mean.detach()) ** 2).mean(dim=-1, keepdim=True)
            inv = torch.rsqrt(variance + EPSILON) * bp["gamma"]
            h = r * inv + (bp["beta"] - mean * inv)
            logits = h @ bp["Wo"] + bp["bo"]
            loss = (-(targets * torch.log_softmax(logits, dim=-1)).sum(dim=-1)).mean()
            return torch.autograd.grad(loss, list(bp.values()))

        found["PyTorch (CPU)"] = {"mlp": mlp_torch, "chain": chain_torch, "cnn": cnn_torch,
                                  "block": block_torch}
        found["PyTorch (CPU), gradviz's ops"] = {"block": block_torch_as_gradviz}
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        autograd = None
    if autograd is not None:
        def mlp_loss(params: list) -> object:
            w1, b1, w2, b2, w3, b3 = params
            h1 = anp.maximum(anp.dot(X, w1) + b1, 0)
            h2 = anp.maximum(anp.dot(h1, w2) + b2, 0)
            logits = anp.dot(h2, w3) + b3
            shifted = logits - anp.max(logits, axis=1, keepdims=True)
            log_p = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
            return -anp.mean(anp.sum(LABELS * log_p, axis=1))

        def chain_fn(x: object) -> object:
            y = x
            for _ in range(HALF):
                y = y + np.float32(0.01)
                y = anp.tanh(y) * np.float32(1.01)
            return anp.sum(y)

        mlp_grad, chain_grad = autograd.grad(mlp_loss), autograd.grad(chain_fn)
        found["HIPS autograd"] = {"mlp": lambda: mlp_grad(PARAMS),
                                  "chain": lambda: chain_grad(CHAIN_X)}
    return found


# ---------------------------------------------------------------- checks and report


def check_correctness() -> None:
    """The benchmark is only worth reading if every contender computes the same thing."""
    for got, want in zip(mlp_gradviz(), mlp_numpy()):
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-4, atol=1e-6)
    np.testing.assert_allclose(chain_gradviz()[0].numpy(), chain_numpy(), rtol=1e-4, atol=1e-6)
    for got, want in zip(cnn_gradviz(), cnn_numpy()):
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-4, atol=1e-6)
    for got, want in zip(block_gradviz(), block_numpy()):  # (E's is sparse: made dense)
        np.testing.assert_allclose(gv.convert_to_tensor(got).numpy(), want, rtol=2e-3,
                                   atol=2e-5)


def check_peers(found: dict[str, dict[str, Callable[[], object]]]) -> None:
    """PyTorch's transformer blocks compute the hand-written block's gradients too."""
    for name, fns in found.items():
        if name.startswith("PyTorch") and "block" in fns:
            for got, want in zip(fns["block"](), block_numpy()):
                np.testing.assert_allclose(got.numpy(), want, rtol=2e-3, atol=2e-5,
                                           err_msg=f"{name}, transformer block")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    args = parser.parse_args(argv)
    rounds = 5 if args.quick else 25
    check_correctness()

    contenders: dict[str, Callable[[], object]] = {}
    rows = []
    for case, numpy_fn, off_fn, on_fn in (
            ("mlp", mlp_numpy, mlp_gradviz, mlp_gradviz_traced),
            ("chain", chain_numpy, chain_gradviz, chain_gradviz_traced),
            ("cnn", cnn_numpy, cnn_gradviz, cnn_gradviz_traced),
            ("block", block_numpy, block_gradviz, block_gradviz_traced)):
        contenders |= {f"{case} numpy": numpy_fn, f"{case} off": off_fn, f"{case} on": on_fn,
                       f"{case} on+read": lambda f=on_fn: f().to_json()}
        rows += [(case, "hand-written NumPy", "numpy"), (case, "gradviz, tracing off", "off"),
                 (case, "gradviz, tracing on", "on"),
                 (case, "gradviz, traced + to_json", "on+read")]
    contenders["chain unsourced"] = chain_gradviz_unsourced
    rows.insert(rows.index(("chain", "gradviz, tracing off", "off")) + 1,
                ("chain", "gradviz, tracing off, no lines of code", "unsourced"))
    found = peers()
    check_peers(found)
    for name, fns in found.items():
        for case in fns:
            contenders[f"{case} {name}"] = fns[case]
            rows.append((case, name, name))
    best = best_times(contenders, rounds)
    t = {(case, key): best[f"{case} {key}"] for case, _, key in rows}

    print(f"gradviz engine benchmark: Python {sys.version.split()[0]}, NumPy {np.__version__}, "
          f"best of {rounds} rounds taken in turns, one thread each")
    print_table(["workload", "implementation", "time\n(ms per iteration)", "time\n/ NumPy's"],
                [[case, name, f"{t[case, key] * 1e3:.3f}", f"{t[case, key] / t[case, 'numpy']:.2f}"]
                 for case, name, key in rows], label_columns=2)

    def overhead_us(key: str, per: int) -> float:
        return (t["chain", key] - t["chain", "numpy"]) / per * 1e6

    mlp_ratio = t["mlp", "off"] / t["mlp", "numpy"]
    cnn_ratio = t["cnn", "off"] / t["cnn", "numpy"]
    block_ratio = t["block", "off"] / t["block", "numpy"]
    overhead = overhead_us("off", ENGINE_OPS)
    # a difference of a few percent of the chain's time: measured again, longer, the two
    # taking turns, on the forward pass alone (its ops are the ones that record a line:
    # a backward pass's take the line that began it), so that the machine's drift
    # between the two, against less time, does not decide it
    again = best_times({"on": chain_gradviz_loss, "off": chain_forward_unsourced}, 3 * rounds,
                       round_seconds=0.05)
    sourcing = (again["on"] - again["off"]) / ENGINE_OPS * 1e6
    trace_ratios = {c: t[c, "on"] / t[c, "off"] for c in ("mlp", "chain", "cnn", "block")}
    print()
    print_table(["engine overhead on the chain", "microseconds\nper engine op",
                 "microseconds\nper chain element"],
                [[name, f"{overhead_us(key, ENGINE_OPS):.2f}", f"{overhead_us(key, CHAIN_OPS):.2f}"]
                 for name, key in [("gradviz, tracing off", "off"),
                                   ("gradviz, tracing off, no lines of code", "unsourced")]
                 + [(name, name) for name, fns in found.items() if "chain" in fns]])
    print()
    print_targets("engine", [
        Target("(a) MLP time, gradviz (tracing off) / NumPy", f"{mlp_ratio:.2f}x",
               f"<= {TARGET_MLP_RATIO:.2f}x", mlp_ratio <= TARGET_MLP_RATIO),
        Target(f"(b) chain overhead per engine op ({ENGINE_OPS} ops), tracing off",
               f"{overhead:.2f} us", f"<= {TARGET_OVERHEAD_US:.1f} us",
               overhead <= TARGET_OVERHEAD_US),
        Target("(b) recording each op's line of code, per engine op (record_source)",
               f"{sourcing:.2f} us", f"<= {TARGET_SOURCE_US:.1f} us",
               sourcing <= TARGET_SOURCE_US),
        Target("(c) CNN time, gradviz (tracing off) / NumPy", f"{cnn_ratio:.2f}x",
               f"<= {TARGET_CNN_RATIO:.2f}x", cnn_ratio <= TARGET_CNN_RATIO),
        Target("(d) transformer block time, gradviz (tracing off) / NumPy",
               f"{block_ratio:.2f}x", f"<= {TARGET_BLOCK_RATIO:.2f}x",
               block_ratio <= TARGET_BLOCK_RATIO),
        Target("tracing on / off, MLP", f"{trace_ratios['mlp']:.2f}x",
               f"<= {TARGET_TRACE_RATIO:.2f}x", trace_ratios["mlp"] <= TARGET_TRACE_RATIO),
        Target("tracing on / off, chain", f"{trace_ratios['chain']:.2f}x",
               f"<= {TARGET_TRACE_RATIO:.2f}x", trace_ratios["chain"] <= TARGET_TRACE_RATIO),
        Target("tracing on / off, CNN", f"{trace_ratios['cnn']:.2f}x",
               f"<= {TARGET_TRACE_RATIO:.2f}x", trace_ratios["cnn"] <= TARGET_TRACE_RATIO),
    ])
    blocks = [name for name, fns in found.items() if "block" in fns]
    if blocks:  # what another engine's per-op cost makes of the same block
        print()
        print_table(["(d) transformer block", "time / NumPy's", "gradviz's time / its"],
                    [[name, f"{t['block', name] / t['block', 'numpy']:.2f}",
                      f"{t['block', 'off'] / t['block', name]:.2f}"] for name in blocks])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
