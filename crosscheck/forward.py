"""Forward mode beside TensorFlow's: ``autodiff.ForwardAccumulator`` case by case.

- ``op_cases``: every op's edge cases (``edges.py``) run forward: the output's
  tangent along a seeded direction, and, where the case has a second order,
  the tangent of the gradient of ``sum(y * w)`` (forward over reverse: a
  Hessian-vector product, through every gradient op's JVP);
- ``program_cases``: the random programs (``programs.py``) run forward, every
  tensor's tangent and the Hessian-vector product of the sum of their squares;
- ``cases``: what carries a tangent and what does not, nesting with tapes and
  other accumulators, structures, Variables, custom gradients;
- ``error_cases``: bad primals, tangents and targets.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import edges, programs
from .errors import _raises
from .libs import Runner, dense, prevent_gradient
from .outcome import Recording, Result

__all__ = ["cases", "error_cases", "op_cases", "program_cases"]

F32 = np.float32


def _direction(shape: tuple[int, ...], dtype: Any, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(dtype)


def run_op(lib: Any, f: Callable[..., Any], inputs: list[np.ndarray], seed: int, order: int
           ) -> list[tuple[str, Result]]:
    """y = f(*inputs) with every float input moving along a seeded direction: y, its
    tangent, and (order 2) the gradient of sum(y * w) and its tangent."""
    rec = Recording(Runner(lib))
    try:
        xs = [lib.constant(a) for a in inputs]
        floats = [(x, a) for x, a in zip(xs, inputs) if a.dtype.kind == "f"]
        primals = [x for x, _ in floats]
        tangents = [lib.constant(_direction(a.shape, a.dtype, seed + k))
                    for k, (_, a) in enumerate(floats)]
        with lib.autodiff.ForwardAccumulator(primals, tangents) as acc:
            with lib.GradientTape() as tape:
                tape.watch(primals)
                y = f(*xs)
                weighted = None
                if order == 2 and primals and y.dtype.is_floating:
                    w = np.random.default_rng(seed).uniform(0.5, 1.5, size=tuple(y.shape))
                    weighted = lib.reduce_sum(y * lib.constant(w.astype(y.numpy().dtype)))
            grads = None if weighted is None else [
                dense(lib, g) for g in tape.gradient(weighted, primals)]
        rec.add("y", y)
        rec.add("jvp y", acc.jvp(y))
        for k, g in enumerate(grads or ()):
            rec.add(f"dy/dx{k}", g)
            if g is not None:
                rec.add(f"jvp dy/dx{k}", acc.jvp(g))
        if len(primals) > 1:  # the first input alone moving: the others take no part
            with lib.autodiff.ForwardAccumulator(primals[0], tangents[0]) as alone:
                y0 = f(*xs)
            rec.add("jvp y, x0 alone", alone.jvp(y0))
    except Exception as e:  # noqa: BLE001 - compared with the other library's
        return rec.results(e)
    return rec.results()


#: of the grid of convolutions and pools, every this many cases run forward (and the
#: first of each op): TensorFlow traces a function per op and shape to take a tangent
#: through it, some 0.15 s a case, and the grid is the same geometry the reverse
#: mode's cases cover whole
NN_EVERY = 6


def op_cases() -> Iterator[tuple[str, Callable[[Any], list], float]]:
    """(name, run in a library, tolerance floor): every op's edge cases, forward."""
    grid, seen = [], set()
    for k, case in enumerate(edges._nn_cases(np.random.default_rng(1))):
        op = case[0].split()[0]
        if k % NN_EVERY == 0 or op not in seen:
            grid.append(case)
        seen.add(op)
    for name, make, inputs, order in edges._op_cases() + grid:
        seed = zlib.crc32(name.encode())
        floor = 0.0 if all(a.dtype != F32 for a in inputs) else 2e-4
        yield (name, lambda lib, make=make, inputs=inputs, seed=seed, order=order:
               run_op(lib, make(lib), inputs, seed, order), floor)


# ---------------------------------------------------------------- the random programs


def run_program(lib: Any, prog: programs.Program) -> list[tuple[str, Result]]:
    """``prog``'s steps with every float leaf moving along a seeded direction: each tensor
    and its tangent, then the gradient of the sum of the outputs' squares and its tangent."""
    rec = Recording(Runner(lib))
    pool = {leaf.index: programs._make_leaf(lib, leaf) for leaf in prog.leaves}
    floats = [leaf for leaf in prog.leaves if leaf.value.dtype.kind == "f"]
    seed = prog.seed[0] * 100_003 + prog.seed[1]
    try:
        primals = [pool[leaf.index] for leaf in floats]
        tangents = [lib.constant(_direction(leaf.value.shape, leaf.value.dtype, seed + k))
                    for k, leaf in enumerate(floats)]
        with lib.autodiff.ForwardAccumulator(primals, tangents) as acc:
            with lib.GradientTape() as tape:
                tape.watch(primals)
                for step in prog.steps:
                    programs._run_step(lib, prog, step, pool)
                made = [pool[i] for i in sorted(pool) if i not in {f.index for f in floats}]
                h = programs._sum_of_squares(lib, made)
            grads = [] if h is None or not primals else [
                dense(lib, g) for g in tape.gradient(h, primals)]
        for i in sorted(pool):
            rec.add(f"t{i}", pool[i])
            rec.add(f"jvp t{i}", acc.jvp(pool[i]))
        for k, g in enumerate(grads):
            rec.add(f"d/dx{k}", g)
            if g is not None:
                rec.add(f"hvp x{k}", acc.jvp(g))
    except Exception as e:  # noqa: BLE001 - compared with the other library's
        return rec.results(e)
    return rec.results()


def program_cases(seed: int, count: int) -> Iterator[tuple[str, Callable[[Any], list], float]]:
    """(name, run in a library, tolerance floor): the first ``count`` random programs,
    forward."""
    for k in range(count):
        prog = programs.program(seed, k)
        yield (f"program {k}", lambda lib, prog=prog: run_program(lib, prog),
               programs.tolerance_floor(prog))


# ---------------------------------------------------------------- what carries a tangent


def _c(lib: Any, values: Any, dtype: Any = None) -> Any:
    return lib.constant(values, dtype)


def _basic(lib: Any) -> list:
    x = _c(lib, [1.0, 2.0])
    before = x * 3.0
    with lib.autodiff.ForwardAccumulator(x, _c(lib, [1.0, 0.5])) as acc:
        y = x * x
        stopped = lib.stop_gradient(x) * 2.0
        through_int = lib.cast(lib.cast(x, lib.int32), lib.float32)
        as_int = lib.cast(x, lib.int32)
    after = x * 3.0
    return [acc.jvp(y), acc.jvp(x), acc.jvp(before), acc.jvp(after), acc.jvp(stopped),
            acc.jvp(through_int), acc.jvp(as_int),
            *acc.jvp([stopped, as_int, _c(lib, 3.0)], unconnected_gradients="zero")]


def _integer_primal(lib: Any) -> list:
    xi = _c(lib, [1, 2])
    with lib.autodiff.ForwardAccumulator(xi, _c(lib, [1, 1])) as acc:
        y = xi * 2
        z = lib.cast(xi, lib.float32) * 2.0
    return [acc.jvp(xi), acc.jvp(y), acc.jvp(z)]


def _variable(lib: Any) -> list:
    v, w = lib.Variable([1.0, 2.0]), lib.Variable([1.0, 2.0])
    frozen = lib.Variable([1.0, 2.0], trainable=False)
    with lib.autodiff.ForwardAccumulator([v, frozen], [np.array([1.0, 0.0]),
                                                       _c(lib, [0.0, 2.0])]) as acc:
        v.assign([3.0, 4.0])
        y = v * 2.0 + w * frozen
    return [acc.jvp(y), acc.jvp(v), acc.jvp(w), acc.jvp(w, unconnected_gradients="zero")]


def _hessian_vector_product(lib: Any) -> list:
    v = lib.Variable([1.0, 2.0])
    with lib.autodiff.ForwardAccumulator(v, _c(lib, [1.0, 0.0])) as acc:
        with lib.GradientTape() as tape:
            y = lib.reduce_sum(v ** 3.0)
        backward = tape.gradient(y, v)
    return [backward, acc.jvp(backward)]


def _network_hvp(lib: Any) -> list:
    rng = np.random.default_rng(3)
    x = _c(lib, rng.normal(size=(4, 3)).astype(F32))
    w = lib.Variable(rng.normal(size=(3, 2)).astype(F32))
    labels = _c(lib, np.eye(2, dtype=F32)[[0, 1, 1, 0]])
    with lib.autodiff.ForwardAccumulator(w, _c(lib, rng.normal(size=(3, 2)).astype(F32))) as acc:
        with lib.GradientTape() as tape:
            logits = lib.tanh(lib.matmul(x, w))
            loss = lib.reduce_mean(lib.nn.softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
        grad = tape.gradient(loss, w)
    return [loss, acc.jvp(loss), grad, acc.jvp(grad)]


def _nested(lib: Any) -> list:
    primal = _c(lib, 1.1)
    with lib.autodiff.ForwardAccumulator(primal, _c(lib, 1.0)) as outer:
        with lib.autodiff.ForwardAccumulator(primal, _c(lib, 1.0)) as inner:
            primal_out = primal ** _c(lib, 3.5)
    inner_jvp = inner.jvp(primal_out)
    return [inner_jvp, outer.jvp(inner_jvp), inner.jvp(outer.jvp(primal_out))]


def _two_directions(lib: Any) -> list:
    x = _c(lib, [1.0, 2.0])
    with lib.autodiff.ForwardAccumulator(x, _c(lib, [1.0, 0.0])) as a1:
        with lib.autodiff.ForwardAccumulator(x, _c(lib, [0.0, 1.0])) as a2:
            y = lib.sin(x) * x
    return [a1.jvp(y), a2.jvp(y), a1.jvp(a2.jvp(y)), a2.jvp(a1.jvp(y))]


def _tape_outside(lib: Any) -> list:
    x = _c(lib, [1.0, 2.0])
    with lib.GradientTape() as tape:
        tape.watch(x)
        with lib.autodiff.ForwardAccumulator(x, _c(lib, [1.0, 0.5])) as acc:
            y = x * x * x
        j = acc.jvp(y)
    return [j, tape.gradient(j, x)]


def _tape_inside(lib: Any) -> list:
    x = _c(lib, [1.0, 2.0])
    with lib.autodiff.ForwardAccumulator(x, _c(lib, [1.0, 0.5])) as acc:
        with lib.GradientTape() as tape:
            tape.watch(x)
            j = acc.jvp(x * x * x)
    return [j, tape.gradient(j, x)]


def _gradient_of_the_tangent(lib: Any) -> list:
    x, t = _c(lib, [0.0, 2.0]), _c(lib, [1.0, 0.5])
    with lib.GradientTape() as tape:
        tape.watch(t)
        with lib.autodiff.ForwardAccumulator(x, t) as acc:
            y = lib.sin(x)
        j = acc.jvp(y)
    return [j, tape.gradient(j, t)]


def _structures(lib: Any) -> list:
    a, b = _c(lib, [1.0, 2.0]), _c(lib, 3.0)
    with lib.autodiff.ForwardAccumulator({"a": a, "b": [b]},
                                         {"a": _c(lib, [1.0, 0.0]), "b": [2.0]}) as acc:
        y = a * b
    got = acc.jvp({"k": [y, a], "j": (b,)})
    return [got["k"][0], got["k"][1], got["j"][0], *acc.jvp([])]


def _entered_twice(lib: Any) -> list:
    x = _c(lib, [1.0, 2.0])
    acc = lib.autodiff.ForwardAccumulator(x, _c(lib, [1.0, 0.5]))
    with acc:
        z = x * 3.0
    between = z * 3.0
    with acc:
        w = z * 3.0
    return [acc.jvp(w), acc.jvp(between)]


def _tangent_not_carried(lib: Any) -> list:
    x = _c(lib, [1.0, 2.0])
    with lib.autodiff.ForwardAccumulator(x, _c(lib, [1.0, 0.5])) as acc:
        j = acc.jvp(x * 2.0)
        z = j * 3.0
    return [j, acc.jvp(z)]


def _custom(lib: Any) -> list:
    @lib.custom_gradient
    def scaled_identity(x: Any) -> Any:
        def grad_fn(dy: Any) -> Any:
            return dy * 3.0
        return lib.identity(x * 1.0), grad_fn

    @lib.custom_gradient
    def sine_outside(x: Any) -> Any:  # computed in NumPy: its result has no tangent
        def grad_fn(dy: Any) -> Any:
            return dy * lib.cos(x)
        return lib.constant(np.sin(x.numpy())), grad_fn

    @lib.custom_gradient
    def one_of_each(x: Any) -> Any:  # one result with a tangent of its own, one without
        def grad_fn(da: Any, db: Any) -> Any:
            return da * 3.0 + db * 5.0
        return [lib.identity(x), lib.constant(np.sin(x.numpy()))], grad_fn

    x = _c(lib, [1.0, 2.0])
    with lib.autodiff.ForwardAccumulator(x, _c(lib, [1.0, 0.5])) as acc:
        y = scaled_identity(x) * x
        z = sine_outside(x)
        a, b = one_of_each(x)
    return [acc.jvp(y), acc.jvp(z), acc.jvp(a), acc.jvp(b)]


def _float64_and_casts(lib: Any) -> list:
    x = _c(lib, [1.0, 2.0], lib.float64)
    with lib.autodiff.ForwardAccumulator(x, _c(lib, [0.5, 0.25], lib.float64)) as acc:
        y = lib.cast(x, lib.float32) * 2.0
        z = lib.cast(lib.exp(x), lib.float16)
    return [acc.jvp(y), acc.jvp(z)]


def _sign_and_friends(lib: Any) -> list:
    x = _c(lib, [-1.0, 0.0, 2.0])
    with lib.autodiff.ForwardAccumulator(x, _c(lib, [1.0, 1.0, 1.0])) as acc:
        s = lib.sign(x)
        z = lib.zeros_like(x)
        o = lib.ones_like(x)
        m = lib.maximum(x, _c(lib, [0.0, 0.0, 0.0]))
        r = lib.nn.relu(x)
        a = lib.abs(x)
    return [acc.jvp(t) for t in (s, z, o, m, r, a)]


_CASES: list[tuple[str, Callable[[Any], list]]] = [
    ("what carries a tangent", _basic),
    ("an integer primal", _integer_primal),
    ("Variables as primals", _variable),
    ("the Hessian-vector product of the documentation", _hessian_vector_product),
    ("a Hessian-vector product through a small network", _network_hvp),
    ("nested accumulators", _nested),
    ("two directions", _two_directions),
    ("reverse over forward, the tape outside", _tape_outside),
    ("a tape entered inside the accumulator", _tape_inside),
    ("the gradient of a tangent with respect to the tangent", _gradient_of_the_tangent),
    ("structures of primals, tangents and targets", _structures),
    ("an accumulator entered twice", _entered_twice),
    ("a tangent is not itself carried", _tangent_not_carried),
    ("a custom gradient: its own ops' tangents, else its grad_fn's", _custom),
    ("float64 primals and casts", _float64_and_casts),
    ("sign, zeros_like and the kinks", _sign_and_friends),
]


def cases() -> Iterator[tuple[str, Callable[[Any], list], float]]:
    """(name, run in a library, tolerance floor) for what forward mode carries."""
    for name, f in _CASES:
        yield name, lambda lib, f=f: edges._tape_run(lib, f), 2e-4


# ---------------------------------------------------------------- bad input


def _acc(lib: Any, primals: Any, tangents: Any) -> Any:
    return lib.autodiff.ForwardAccumulator(primals, tangents)


def _reenter(lib: Any) -> None:
    acc = _acc(lib, _c(lib, [1.0, 2.0]), _c(lib, [1.0, 1.0]))
    with acc:
        with acc:
            pass


_ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("a tangent of another length",
     lambda lib: _acc(lib, _c(lib, [1.0, 2.0]), _c(lib, [1.0, 0.5, 2.0]))),
    ("a tangent of another length, used",
     lambda lib: _used(lib, _c(lib, [1.0, 0.5, 2.0]))),
    ("a scalar tangent for a vector", lambda lib: _used(lib, _c(lib, 1.0))),
    ("a tangent of another rank", lambda lib: _used(lib, _c(lib, [[1.0, 0.5], [1.0, 1.0]]))),
    ("a tangent of another dtype",
     lambda lib: _acc(lib, _c(lib, [1.0, 2.0]), _c(lib, [1.0, 0.5], lib.float64))),
    ("an integer tangent for a float primal",
     lambda lib: _acc(lib, _c(lib, [1.0, 2.0]), _c(lib, [1, 2]))),
    ("a list as the tangent of a tensor", lambda lib: _acc(lib, _c(lib, [1.0, 2.0]), [1, 2])),
    ("None as a tangent", lambda lib: _acc(lib, _c(lib, [1.0, 2.0]), None)),
    ("a list of primals, a tuple of tangents",
     lambda lib: _acc(lib, [_c(lib, [1.0, 2.0])], (_c(lib, [1.0, 1.0]),))),
    ("more tangents than primals",
     lambda lib: _acc(lib, [_c(lib, [1.0, 2.0])], [_c(lib, [1.0, 1.0]), _c(lib, 1.0)])),
    ("other dict keys",
     lambda lib: _acc(lib, {"a": _c(lib, [1.0, 2.0])}, {"b": _c(lib, [1.0, 1.0])})),
    ("a primal given twice", lambda lib: _twice(lib)),
    ("prevent_gradient under an accumulator", lambda lib: _prevented(lib)),
    ("a number as a primal", lambda lib: _acc(lib, 1.0, 1.0)),
    ("entered inside its own block", _reenter),
    ("jvp of a number", lambda lib: _acc(lib, _c(lib, 1.0), _c(lib, 1.0)).jvp(3.0)),
    ("jvp of None", lambda lib: _acc(lib, _c(lib, 1.0), _c(lib, 1.0)).jvp([_c(lib, 1.0), None])),
    ("jvp with a bad unconnected_gradients",
     lambda lib: _acc(lib, _c(lib, 1.0), _c(lib, 1.0)).jvp(_c(lib, 1.0),
                                                             unconnected_gradients="bad")),
]


def _prevented(lib: Any) -> Any:
    """A tangent asked through prevent_gradient: forward mode runs its gradient rule."""
    x = _c(lib, [1.0, 2.0])
    with _acc(lib, x, _c(lib, [1.0, 0.0])) as acc:
        y = prevent_gradient(lib, x * 2.0, "no tangent here")
    return acc.jvp(y)


def _twice(lib: Any) -> Any:
    x = _c(lib, [1.0, 2.0])
    return _acc(lib, [x, x], [x, x])


def _used(lib: Any, tangent: Any) -> Any:
    x = _c(lib, [1.0, 2.0])
    with _acc(lib, x, tangent) as acc:
        y = lib.reduce_sum(x * x)
    return acc.jvp(y)


def error_cases() -> Iterator[tuple[str, Callable[[Any], list], float]]:
    """(name, run in a library, tolerance floor) for every bad argument to forward mode."""
    for name, call in _ERRORS:
        yield name, lambda lib, call=call: _raises(lambda: call(lib)), 0.0
