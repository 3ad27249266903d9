"""The words: one sentence and one formula for every step of a trace.

Every renderer (the diagram's labels and legend, the widget, the HTML report,
the notebooks) takes its wording from here, so they all say the same thing.
Everything returned is plain text; renderers escape it for their medium.

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0], name="ex_x")
>>> tr = gv.trace_gradients(x * x, x)
>>> for step in tr.steps:
...     print(describe(tr, step.index).title)
seed
Mul backward
accumulate
result for xs[0]
>>> for formula in describe(tr, 1).formula.split("; "):
...     print(formula)
dL/dex_x (as input 0) = grad * ex_x: (2,) -> (2,) = [1, 2]
dL/dex_x (as input 1) = grad * ex_x: (2,) -> (2,) = [1, 2]
>>> print(describe(tr, 2).sentence)
ex_x is used twice (ex_x*ex_x): its gradient is the sum of the 2 contributions: [1, 2] + [1, 2] = [2, 4].
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from .marks import MARKS
from ..trace import (CUT_REASONS, AccumulateStep, ArrayData, BackwardStep, CutStep, OpInfo,
                     ReduceStep, ResultStep, SeedStep, Step, TensorInfo, Trace)

__all__ = [
    "Explanation",
    "OpRule",
    "describe",
    "describe_jacobian",
    "is_jacobian",
    "jacobian_name",
    "jacobian_rows",
    "jacobian_array",
    "legend",
    "LEGEND",
    "OP_RULES",
    "display_name",
    "input_names",
    "format_shape",
    "format_number",
    "format_array",
    "preview_lines",
]


@dataclass(frozen=True)
class Explanation:
    """What one step did, in words."""

    title: str  # a short heading, e.g. "MatMul backward"
    sentence: str  # one or two plain sentences, specific to the op and shapes
    formula: str  # the maths with shapes, e.g. "dL/dX = grad @ W.T: (2,3) @ (3,2) -> (2,2)"

    def __iter__(self):
        # Unpacks as (title, sentence, formula).
        return iter((self.title, self.sentence, self.formula))


# ---------------------------------------------------------------- formatting

def format_shape(shape: tuple[int, ...] | list[int]) -> str:
    """A shape as the diagram and the sentences write it.

    >>> format_shape(()), format_shape((3,)), format_shape((2, 1))
    ('()', '(3,)', '(2,1)')
    """
    shape = tuple(shape)
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ",".join(str(d) for d in shape) + ")"


def format_number(v: Any, digits: int = 4) -> str:
    """One number, short: 4 significant digits, ``nan``/``inf`` spelled out.

    >>> format_number(12.376228), format_number(3), format_number(float("nan"))
    ('12.38', '3', 'nan')
    >>> format_number(-0.0), format_number(1e-7)
    ('0', '1e-07')
    """
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    f = float(v)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if f == 0:
        return "0"
    if f == int(f) and abs(f) < 1e6:
        return str(int(f))
    return f"{f:.{digits}g}"


def _nested(values: np.ndarray) -> str:
    if values.ndim == 0:
        return format_number(values.item())
    return "[" + ", ".join(_nested(v) for v in values) + "]"


def preview_lines(a: ArrayData | None, max_elems: int = 6, max_rows: int = 4) -> list[str]:
    """A few short lines showing an array: every value when it is small, else a summary.

    Matrices are written one row per line, so a 2x2 gradient reads like one.

    >>> preview_lines(ArrayData.of(np.array([[1.0, 2.0], [3.0, 4.0]])))
    ['[[1, 2],', ' [3, 4]]']
    >>> preview_lines(ArrayData.of(np.arange(100.0)))
    ['min 0 mean 49.5 max 99']
    """
    if a is None:
        return ["None"]
    if a.values is not None and a.size <= max_elems:
        v = a.values
        if v.ndim == 2 and 1 < v.shape[0] <= max_rows and v.shape[1] > 1:
            rows = [_nested(r) for r in v]
            return ["[" + rows[0] + ","] + [" " + r + "," for r in rows[1:-1]] + [" " + rows[-1] + "]"]
        return [_nested(v)]
    return [format_array(a, max_elems=max_elems)]


def format_array(a: ArrayData | None, max_elems: int = 6) -> str:
    """An array on one line: its values when small, else ``min .. mean .. max``.

    >>> format_array(ArrayData.of(np.array([2.0, 4.0])))
    '[2, 4]'
    >>> format_array(ArrayData.of(np.full((3, 3), 2.0)))
    'min 2 mean 2 max 2'
    """
    if a is None:
        return "None"
    if a.values is not None and a.size <= max_elems:
        return _nested(a.values)
    if a.min is None:
        return "no finite values" if a.size else "empty"
    bad = " (has nan/inf)" if a.nonfinite else ""
    return (f"min {format_number(a.min)} mean {format_number(a.mean)} "
            f"max {format_number(a.max)}{bad}")


def display_name(t: TensorInfo, scoped: bool = False) -> str:
    """A tensor's name as a student reads it: ``:0`` and (unless ``scoped``) the scope dropped.

    Inside a drawn name scope the scope is said by the cluster around the
    node; elsewhere (results, leaves drawn outside) ``scoped=True`` keeps
    ``layer1/W`` apart from ``layer2/W``.

    >>> from gradviz.trace import TensorInfo
    >>> t = TensorInfo(0, "layer1/MatMul:0", 0, "computed", "layer1", (2,), "float32",
    ...                ArrayData.of(np.zeros(2)))
    >>> display_name(t), display_name(t, scoped=True)
    ('MatMul', 'layer1/MatMul')
    """
    name = t.name
    if t.scope and not scoped and name.startswith(t.scope + "/"):
        name = name[len(t.scope) + 1:]
    if name.endswith(":0"):
        name = name[:-2]
    return name or f"tensor {t.id}"


def _sh(a: ArrayData | None) -> str:
    return "?" if a is None else format_shape(a.shape)


# ---------------------------------------------------------------- gradient rules in words


@dataclass(frozen=True)
class OpRule:
    """How an op type's gradient rule reads."""

    roles: tuple[str, ...]  # the template words for the inputs, e.g. ("a", "b")
    idea: str  # the rule in words, completing "it ...", with {role} and {role:use} to fill
    formulas: tuple[str | None, ...]  # dL/d(role) per input; None: no gradient


#: Op type -> how its gradient rule reads.  ``grad`` is the upstream gradient
#: (dL/dy for the op's output y); MatMul is written out per transpose case below.
#: The formulas are templates: describe() writes each role, and ``y`` where no
#: input is called y, as the name of the step's own tensor ("grad * b" for
#: X * W reads "grad * X"), so a letter never poses as a user's tensor.  The
#: ideas name them the same way, as ``{a}`` (and ``{y}``); ``{a:use}``, where an
#: idea says which input a gradient goes to, adds "(as input i)" when one tensor
#: is several of the inputs, as the formulas do: x - x "passes the upstream
#: gradient unchanged to x (as input 0) and its negative to x (as input 1)".
OP_RULES: dict[str, OpRule] = {
    "Add": OpRule(("a", "b"), "passes the upstream gradient unchanged to {a:use} and {b:use}",
                  ("grad", "grad")),
    "AddV2": OpRule(("a", "b"), "passes the upstream gradient unchanged to {a:use} and "
                    "{b:use}",
                    ("grad", "grad")),
    "AddN": OpRule(("a",), "passes the upstream gradient unchanged to every input",
                   ("grad",)),
    "Sub": OpRule(("a", "b"), "passes the upstream gradient unchanged to {a:use} and its "
                  "negative to {b:use}",
                  ("grad", "-grad")),
    "Mul": OpRule(("a", "b"), "multiplies the upstream gradient by the other input",
                  ("grad * b", "grad * a")),
    "RealDiv": OpRule(("a", "b"), "uses d({a}/{b})/d{a:use} = 1/{b} and "
                      "d({a}/{b})/d{b:use} = -{a}/{b}**2",
                      ("grad / b", "-grad * a / b**2")),
    "Neg": OpRule(("x",), "negates the upstream gradient", ("-grad",)),
    "Pow": OpRule(("a", "b"), "uses d({a}**{b})/d{a:use} = {b} * {a}**({b}-1) and, for "
                  "the exponent {b:use}, {a}**{b} * log({a})",
                  ("grad * b * a**(b-1)", "grad * a**b * log(a)")),
    "Square": OpRule(("x",), "uses d({x}**2)/d{x} = 2 * {x}", ("grad * 2 * x",)),
    "Sqrt": OpRule(("x",), "uses d(sqrt {x})/d{x} = 1 / (2 sqrt {x}) = 0.5 / {y}",
                   ("grad * 0.5 / y",)),
    "Exp": OpRule(("x",), "uses d(exp {x})/d{x} = exp {x}, which is its own output {y}",
                  ("grad * y",)),
    "Log": OpRule(("x",), "uses d(log {x})/d{x} = 1/{x}", ("grad / x",)),
    "Abs": OpRule(("x",), "uses d|{x}|/d{x} = sign({x})", ("grad * sign(x)",)),
    "Sign": OpRule(("x",), "is flat almost everywhere, so it passes zeros", ("zeros_like(x)",)),
    "Tanh": OpRule(("x",), "uses d(tanh {x})/d{x} = 1 - tanh({x})**2 = 1 - {y}**2",
                   ("grad * (1 - y**2)",)),
    "Sigmoid": OpRule(("x",), "uses d(sigmoid {x})/d{x} = {y} * (1 - {y}), {y} being its "
                      "output",
                      ("grad * y * (1 - y)",)),
    "Relu": OpRule(("x",), "passes the gradient where {x} > 0 and blocks it elsewhere",
                   ("grad * (x > 0)",)),
    "Maximum": OpRule(("a", "b"), "routes the gradient to whichever input was larger",
                      ("grad * (a >= b)", "grad * (a < b)")),
    "Minimum": OpRule(("a", "b"), "routes the gradient to whichever input was smaller",
                      ("grad * (a <= b)", "grad * (a > b)")),
    "SelectV2": OpRule(("condition", "a", "b"),
                       "routes the gradient to {a:use} where {condition} held and to {b:use} "
                       "elsewhere",
                       (None, "where(condition, grad, 0)", "where(condition, 0, grad)")),
    "MatMul": OpRule(("a", "b"), "multiplies the upstream gradient by the other factor, "
                     "transposed", ("grad @ b.T", "a.T @ grad")),
    "Sum": OpRule(("x",), "copies the gradient back to every summed position",
                  ("broadcast_to(grad, shape(x))",)),
    "Mean": OpRule(("x",), "copies the gradient back to every averaged position, divided by "
                   "how many were averaged", ("broadcast_to(grad, shape(x)) / n",)),
    "Max": OpRule(("x",), "sends the gradient to the position(s) of the maximum, shared "
                  "equally among ties", ("grad at argmax(x), 0 elsewhere",)),
    "Reshape": OpRule(("x",), "reshapes the gradient back to the shape of {x}",
                      ("reshape(grad, shape(x))",)),
    "Transpose": OpRule(("x",), "transposes the gradient back with the inverse permutation",
                        ("transpose(grad, inverse(perm))",)),
    "BroadcastTo": OpRule(("x",), "sums the gradient back over the axes it broadcast",
                          ("sum(grad over the broadcast axes)",)),
    "ConcatV2": OpRule(("a",), "cuts the gradient into the pieces each input contributed "
                       "along the axis", ("the slice of grad where that input sits",)),
    "Split": OpRule(("x",), "joins the gradients of the pieces back together along the "
                    "axis (zeros for unused pieces)", ("concat(grads of the pieces, axis)",)),
    "Pack": OpRule(("a",), "unstacks the gradient along the new axis",
                   ("unstack(grad, axis)[i]",)),
    "Unpack": OpRule(("x",), "stacks the gradients of the pieces along the axis",
                     ("stack(grads of the pieces, axis)",)),
    "StridedSlice": OpRule(("x",), "writes the gradient into the sliced positions of a "
                           "zero array shaped like {x}",
                           ("zeros_like(x) with grad in the slice",)),
    "StridedSliceGrad": OpRule(("grad_in",), "slices the gradient the same way",
                               ("grad[slice]",)),
    "Cast": OpRule(("x",), "casts the gradient back to the dtype of {x}",
                   ("cast(grad, dtype(x))",)),
    "Identity": OpRule(("x",), "passes the gradient through unchanged", ("grad",)),
    "StopGradient": OpRule(("x",), "passes no gradient at all: it is a deliberate cut",
                           (None,)),
    "OnesLike": OpRule(("x",), "gives no gradient: its output does not depend on the values "
                       "of {x}",
                       (None,)),
    "ZerosLike": OpRule(("x",), "gives no gradient: its output does not depend on the values "
                        "of {x}",
                        (None,)),
    "Softmax": OpRule(("x",), "uses the softmax Jacobian diag({y}) - {y} {y}^T along the axis",
                      ("y * (grad - sum(grad * y, axis, keepdims=True))",)),
    "LogSoftmax": OpRule(("x",), "uses d(log_softmax {x})/d{x} = I - softmax({x}) along the "
                         "axis",
                         ("grad - softmax(x) * sum(grad, axis, keepdims=True)",)),
    "SigmoidCrossEntropyWithLogits": OpRule(
        ("labels", "logits"), "uses d(loss)/d{logits:use} = sigmoid({logits}) - {labels}",
        ("-grad * logits", "grad * (sigmoid(logits) - labels)")),
    "SoftmaxCrossEntropyWithLogits": OpRule(
        ("labels", "logits"), "uses d(loss)/d{logits:use} = softmax({logits}) - {labels}",
        ("-grad * log_softmax(logits)", "grad * (softmax(logits) - labels)")),
    "TanhGrad": OpRule(("y", "dy"), "is the backward of Tanh, {dy} * (1 - {y}**2), "
                       "differentiated again", ("grad * dy * -2 * y", "grad * (1 - y**2)")),
    "SigmoidGrad": OpRule(("y", "dy"), "is the backward of Sigmoid, {dy} * {y} * (1 - {y}), "
                          "differentiated again",
                          ("grad * dy * (1 - 2 * y)", "grad * y * (1 - y)")),
    "ReluGrad": OpRule(("dy", "x"), "is the backward of Relu, which only masks {dy}",
                       ("grad * (x > 0)", None)),
    "SqrtGrad": OpRule(("y", "dy"), "is the backward of Sqrt, {dy} * 0.5 / {y}, "
                       "differentiated again", ("-grad * dy * 0.5 / y**2", "grad * 0.5 / y")),
}
#: Op types taking any number of inputs: their formulas name each input alone.
_VARIADIC = ("AddN", "ConcatV2", "Pack")

# Comparisons are piecewise constant: no gradient flows through them.
for _t in ("Equal", "Greater", "GreaterEqual", "Less", "LessEqual"):
    OP_RULES[_t] = OpRule(("a", "b"), "is a comparison: its bool output has no gradient",
                          (None, None))

# One formula per input of a MatMul, per (transpose_a, transpose_b), with the
# operands of each product so the shapes can be written out:
#   c = a @ b  =>  dL/da = grad @ b.T,  dL/db = a.T @ grad   (TensorFlow's _MatMulGrad)
_MATMUL = {
    (False, False): (("grad", "b.T"), ("a.T", "grad")),
    (False, True): (("grad", "b"), ("grad.T", "a")),
    (True, False): (("b", "grad.T"), ("a", "grad")),
    (True, True): (("b.T", "grad.T"), ("grad.T", "a.T")),
}


def _t(shape: tuple[int, ...]) -> tuple[int, ...]:
    return shape[:-2] + (shape[-1], shape[-2]) if len(shape) >= 2 else shape


def _matmul_formulas(trace: Trace, op: OpInfo, step: BackwardStep,
                     names: dict[str, str], lhs: list[str]) -> list[str]:
    ta = bool(op.attrs.get("transpose_a", False))
    tb = bool(op.attrs.get("transpose_b", False))
    shapes = {"a": trace.tensors[op.inputs[0]].shape, "b": trace.tensors[op.inputs[1]].shape,
              "grad": step.upstream[0].shape if step.upstream and step.upstream[0] is not None
              else trace.tensors[op.outputs[0]].shape}
    out = []
    for i, (left, right) in enumerate(_MATMUL[(ta, tb)]):
        if i >= len(step.grads) or step.grads[i] is None:
            continue
        ls = _operand_shape(left, shapes)
        rs = _operand_shape(right, shapes)
        res = _sh(step.grads[i])
        out.append(f"{lhs[i]} = {_fill(left, names)} @ {_fill(right, names)}: "
                   f"{format_shape(ls)} @ {format_shape(rs)} -> {res}")
    return out


def _operand_shape(token: str, shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    base, _, t = token.partition(".")
    s = shapes[base]
    return _t(s) if t == "T" else s


# ---------------------------------------------------------------- tensors in formulas

#: A name longer than this is cut in a formula, as the diagram's labels cut it.
_FORMULA_NAME_MAX = 28
# A word of a formula: "grad", "b" in "b.T" or "a**(b-1)", but not "T" in "b.T".
_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_PLAIN = re.compile(r"[A-Za-z_]\w*")


def _fill(template: str, names: dict[str, str]) -> str:
    """The template with each of its words that ``names`` knows replaced by its name."""
    return _WORD.sub(lambda m: names.get(m.group(), m.group()), template)


def _formula_names(trace: Trace, tids: list[int], taken: set[str]) -> dict[int, str]:
    """How a formula writes each of the tensors ``tids``: tensor id -> text.

    As the sentences write them (:func:`display_name`: no ``:0``, no scope),
    with the scope put back where two would read the same (``layer1/W`` and
    ``layer2/W``), cut after ``_FORMULA_NAME_MAX`` characters like the
    diagram's labels (unless that makes two read the same), and quoted when
    the name is not one plain word or is a word the formula already uses
    (a tensor called ``grad``).
    """
    tids = list(dict.fromkeys(tids))
    values = {t: _number(trace.tensors[t]) for t in tids}
    values = {t: v for t, v in values.items() if v is not None}
    full = {t: _name(trace, t) for t in tids if t not in values}
    same = Counter(full.values())
    full = {t: display_name(trace.tensors[t], scoped=True) if same[n] > 1 else n
            for t, n in full.items()}

    def spell(n: str, cut: bool) -> str:
        quote = not _PLAIN.fullmatch(n) or n in taken
        if cut and len(n) > _FORMULA_NAME_MAX:
            n = n[:_FORMULA_NAME_MAX - 1] + "\u2026"
        return f"'{n}'" if quote else n

    short = {t: spell(n, True) for t, n in full.items()}
    same = Counter(short.values())
    return {t: values[t] if t in values else spell(full[t], same[short[t]] == 1) for t in tids}


#: The engine's own name for a constant made from a Python number (`0.5 * x`).
_AUTO_CONST = re.compile(r"Const(_\d+)?")


def _number(t: TensorInfo) -> str | None:
    """A Python-number constant by its value, e.g. ``2`` in ``Sub**(2-1)``; else None."""
    if t.kind != "constant" or t.shape != () or not _AUTO_CONST.fullmatch(display_name(t)):
        return None
    text = format_number(t.value.values.item())
    return f"({text})" if text.startswith("-") else text


# ---------------------------------------------------------------- describe


def _name(trace: Trace, tid: int) -> str:
    return display_name(trace.tensors[tid])


def _pass_note(trace: Trace, step: Step) -> str:
    if trace.passes > 1:
        return f" (pass {step.pass_index + 1} of {trace.passes})"
    return ""


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def describe(trace: Trace, step: int | Step) -> Explanation:
    """Title, sentence and formula for one step (an index into ``trace.steps`` or a step).

    >>> import gradviz as gv
    >>> X = gv.constant([[1.0, 2.0], [3.0, 4.0]], name="mm_X")
    >>> W = gv.constant([[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]], name="mm_W")
    >>> tr = gv.trace_gradients(gv.matmul(X, W), X)
    >>> print(describe(tr, 1).formula)
    dL/dmm_X = grad @ mm_W.T: (2,3) @ (3,2) -> (2,2) = [[21, 30], [21, 30]]
    """
    if isinstance(step, (int, np.integer)) and not isinstance(step, bool):
        n = len(trace.steps)
        if not -n <= int(step) < n:
            raise ValueError(f"step {int(step)} out of range: the trace has {n} steps "
                             f"(0..{n - 1})")
        step = trace.steps[int(step)]
    if isinstance(step, SeedStep):
        return _seed(trace, step)
    if isinstance(step, BackwardStep):
        return _backward(trace, step)
    if isinstance(step, ReduceStep):
        return _reduce(trace, step)
    if isinstance(step, AccumulateStep):
        return _accumulate(trace, step)
    if isinstance(step, CutStep):
        return _cut(trace, step)
    if isinstance(step, ResultStep):
        return _result(trace, step)
    raise TypeError(f"describe: expected a step index or a trace step, got {type(step).__name__}")


def _seed(trace: Trace, s: SeedStep) -> Explanation:
    y = _name(trace, s.tensor)
    shape = format_shape(s.grad.shape)
    scalar = not s.grad.shape
    if s.given:
        what = f"{y} gets the given seed grad_ys[{s.y_index}] of shape {shape}"
        formula = f"dL/d{y} = grad_ys[{s.y_index}] = {format_array(s.grad)}"
    else:
        what = f"{y} gets the default seed: ones of shape {shape}"
        formula = f"dL/d{y} = ones({shape}) = {format_array(s.grad)}"
    if trace.method == "tape.jacobian" and s.given:
        row = s.pass_index + 1
        what = (f"pass {row} of {trace.passes} seeds {y} with a one-hot vector "
                f"{format_array(s.grad)}: this pass computes row {row} of the Jacobian "
                f"(one backward pass per element of {y})")
        formula = f"dL/d{y} = e_{row} = {format_array(s.grad)}"
    elif s.num_ys > 1:
        what += (f". It is y number {s.y_index + 1} of {s.num_ys} ys: their gradients are "
                 "summed, so every x gets the sum over all ys")
        formula += f"   (L = the sum over the {s.num_ys} ys of sum(grad_y * y))"
    elif s.given:
        what += (": it weights each element of the output, so the pass computes the "
                 "vector-Jacobian product grad_ys * dy/dx")
    elif scalar:
        what += f", i.e. d{y}/d{y} = 1"
    else:
        what += (": the pass computes the gradient of sum(y), so a non-scalar y is "
                 "implicitly summed")
    return Explanation("seed" + _pass_note(trace, s), what + ".", formula)


def _rule(trace: Trace, s: BackwardStep) -> OpRule | None:
    """The step's rule, if its op has the inputs the rule speaks of (a trace loaded
    from JSON may not: it then gets the generic sentence, never a crash)."""
    rule = OP_RULES.get(s.op_type)
    if rule is None or s.op_type in _VARIADIC or len(trace.ops[s.op].inputs) == len(rule.roles):
        return rule
    return None


def _backward(trace: Trace, s: BackwardStep) -> Explanation:
    op = trace.ops[s.op]
    spell = _spelling(trace, s)
    rule = spell.rule
    outs = [o for k, o in enumerate(op.outputs)
            if k < len(s.upstream) and s.upstream[k] is not None]
    up = s.upstream[0] if len(s.upstream) == 1 else None
    up_txt = (f"grad, the gradient arriving at its output {_name(trace, op.outputs[0])} "
              f"(shape {_sh(up)}),"
              if len(op.outputs) == 1
              else f"the gradients arriving at its outputs "
                   f"{', '.join(_name(trace, o) for o in outs)},")
    # The inputs by name and shape, "X (2,1) and W ()", as the formulas write them.
    inputs = _and([f"{spell.names[t]} {format_shape(trace.tensors[t].shape)}"
                   for t in op.inputs])
    got = [i for i, g in enumerate(s.grads) if g is not None and i < len(op.inputs)]
    skipped = [i for i, g in enumerate(s.grads) if g is None and i < len(op.inputs)]
    if rule is None:
        sentence = (f"{s.op_type} '{op.name}' has the gradient function {s.rule}, which turns "
                    f"{up_txt} into a gradient for each of its inputs, {inputs}.")
    else:
        sentence = (f"{s.op_type} of {inputs} gets {up_txt} and "
                    f"{_fill_idea(rule, spell)}.")
    formulas = _backward_formulas(trace, s, rule, spell, got)
    if skipped:
        # "the constant 2", not a bare "2", where the input is a Python number
        names = ", ".join(("the constant " if _number(trace.tensors[op.inputs[i]]) else "")
                          + spell.names[op.inputs[i]] for i in skipped)
        names = names.replace("the", "The", 1) if names.startswith("the ") else names
        why = []
        for i in skipped:
            t = trace.tensors[op.inputs[i]]
            if i < len(s.needed) and not s.needed[i]:
                why.append("leads to none of the xs")
            elif rule is not None and rule.formulas[min(i, len(rule.formulas) - 1)] is None:
                why.append(f"{s.op_type} passes none by design")
            elif t.dtype and np.dtype(t.dtype).kind not in "fc":
                why.append("is an integer tensor")
            else:
                why.append("gets none from this rule")
        reasons = sorted(set(why))
        sentence += (f" {names} {'needs' if len(skipped) == 1 else 'need'} no gradient "
                     f"({' / '.join(reasons)}).")
    if s.nonfinite:
        sentence += " Warning: a gradient produced here holds NaN or Inf."
    # Small results are worth reading in full: "... -> () = 0.5".
    formulas = [f + (f" = {format_array(s.grads[i])}" if _small(s.grads[i]) else "")
                for f, i in zip(formulas, got)]
    formula = "; ".join(formulas) if formulas else "no input needs a gradient"
    return Explanation(f"{s.op_type} backward" + _pass_note(trace, s), sentence, formula)


def _and(items: list[str]) -> str:
    """A list as a sentence says it: "X, W and b"."""
    if len(items) < 2:
        return items[0] if items else "no inputs"
    return ", ".join(items[:-1]) + " and " + items[-1]


@dataclass(frozen=True)
class _Spelling:
    """How one backward step writes its op's tensors, in the sentence and the formulas alike."""

    templates: list[str]  # the formula template per input, e.g. "grad * b"
    by_word: dict[str, str]  # template word -> the tensor's name, e.g. {"a": "X", "b": "W"}
    names: dict[int, str]  # tensor id -> its name, e.g. "W", "'grad'", "layer1/W"
    uses: list[str]  # per input: its name, plus " (as input i)" when the tensor is two inputs
    index: set[str]  # words the formula numbers per input: Pack's "[i]"
    rule: OpRule | None  # the step's rule (see _rule), None for the generic wording


def _spelling(trace: Trace, s: BackwardStep) -> _Spelling:
    """The step's spelling, worked out once per step of a trace.

    Its sentence (describe) and its arrays' labels (input_names) both need it.
    """
    cache = trace.__dict__.setdefault("_gv_spellings", {})
    spell = cache.get(s.index)
    if spell is None:
        spell = _spell(trace, s)
        # A step object from another trace is spelt, never cached under this one.
        if s.index < len(trace.steps) and trace.steps[s.index] is s:
            cache[s.index] = spell
    return spell


def _spell(trace: Trace, s: BackwardStep) -> _Spelling:
    op = trace.ops[s.op]
    rule = _rule(trace, s)
    if rule is None:
        templates = [f"{s.rule}(op, grad)[{i}]" for i in range(len(op.inputs))]
        words: dict[str, int] = {}
    else:
        templates = [rule.formulas[min(i, len(rule.formulas) - 1)] or "grad"
                     for i in range(len(op.inputs))]
        words = {} if s.op_type in _VARIADIC else dict(zip(rule.roles, op.inputs))
        if "y" not in words and len(op.outputs) == 1:
            words["y"] = op.outputs[0]  # the op's output, e.g. Exp: grad * y
    # A tensor called like a word the formula keeps ("grad") is quoted.
    index = {"i"} if s.op_type in _VARIADIC else set()  # Pack: unstack(grad, axis)[i]
    taken = {w for f in templates for w in _WORD.findall(f)} - set(words) - index
    names = _formula_names(trace, [*op.inputs, *words.values()], taken | {"grad", "L"})
    # x * x: both inputs are x, so say which use each gradient is for.
    count = Counter(op.inputs)
    uses = [names[t] + (f" (as input {i})" if count[t] > 1 else "")
            for i, t in enumerate(op.inputs)]
    return _Spelling(templates, {w: names[t] for w, t in words.items()}, names, uses, index,
                     rule)


# A place in an idea for an input: "{a}", or "{a:use}" where a gradient goes to it.
_PLACE = re.compile(r"\{(\w+)(:use)?\}")


def _fill_idea(rule: OpRule, spell: _Spelling) -> str:
    """The rule's idea with each place for an input filled with that input's name."""
    def fill(m: re.Match) -> str:
        role, use = m.group(1), m.group(2)
        i = rule.roles.index(role) if role in rule.roles else None
        if use and i is not None and i < len(spell.uses):
            return spell.uses[i]
        if role in spell.by_word:
            return spell.by_word[role]
        return "its output" if i is None else f"input {i}"  # a trace missing the tensor
    return _PLACE.sub(fill, rule.idea)


def input_names(trace: Trace, step: int | BackwardStep) -> list[str]:
    """How a backward step names each input of its op, as its sentence and formulas do.

    The name the sentences use (:func:`display_name`), with the formulas'
    conventions: the scope put back where two would read the same, long names
    cut, odd ones quoted, and "(as input i)" when one tensor is two inputs.

    >>> import gradviz as gv
    >>> X = gv.constant([[2.0], [3.0]], name="in_X")
    >>> W = gv.Variable(1.5, name="in_W")
    >>> tr = gv.trace_gradients(X * W, W)
    >>> input_names(tr, 1)
    ['in_X', 'in_W']
    >>> tr = gv.trace_gradients(X * X, X)
    >>> input_names(tr, 1)
    ['in_X (as input 0)', 'in_X (as input 1)']
    """
    if isinstance(step, (int, np.integer)) and not isinstance(step, bool):
        step = trace.steps[int(step)]
    if not isinstance(step, BackwardStep):
        raise TypeError(f"input_names: expected a backward step, got a "
                        f"{getattr(step, 'kind', type(step).__name__)} step")
    return list(_spelling(trace, step).uses)


def _backward_formulas(trace: Trace, s: BackwardStep, rule: OpRule | None,
                       spell: _Spelling, got: list[int]) -> list[str]:
    """The formula for each input in ``got``, in the op's own tensors, not the rule's letters.

    For pred = X*W + b, Mul's reads "dL/dW = grad * X", never "dL/db = grad * a".
    """
    op = trace.ops[s.op]
    lhs = [f"dL/d{u}" for u in spell.uses]
    if rule is not None and s.op_type == "MatMul":
        return _matmul_formulas(trace, op, s, spell.by_word, lhs)
    out = []
    for i in got:
        rhs = _fill(spell.templates[i], spell.by_word | dict.fromkeys(spell.index, str(i)))
        out.append(f"{lhs[i]} = {rhs}: {_up_shapes(s)} -> {_sh(s.grads[i])}")
    return out


def _small(a: ArrayData | None) -> bool:
    return a is not None and a.values is not None and a.size <= 4


def _up_shapes(s: BackwardStep) -> str:
    shapes = [_sh(u) for u in s.upstream if u is not None]
    return ", ".join(shapes) if shapes else "()"


def _reduce(trace: Trace, s: ReduceStep) -> Explanation:
    x = _name(trace, s.tensor)
    before, after = format_shape(s.shape_before), format_shape(s.shape_after)
    axes = tuple(s.axes)
    kept = tuple(d for i, d in enumerate(s.shape_before) if i not in axes)
    if kept == tuple(s.shape_after):
        how = f"sum(grad, axis={axes})"
    elif len(s.shape_after) == len(s.shape_before):
        how = f"sum(grad, axis={axes}, keepdims=True)"
    else:
        how = f"reshape(sum(grad, axis={axes}), {after})"
    op = trace.ops[s.op]
    sentence = (f"{x} was broadcast from {after} to {before} in the forward pass (input "
                f"{s.input_index} of {op.type}), so its gradient is summed over axes {axes}: "
                f"{before} -> {after}.")
    formula = f"dL/d{x} = {how}: {before} -> {after} = {format_array(s.grad)}"
    return Explanation("broadcast reduction" + _pass_note(trace, s), sentence, formula)


def _accumulate(trace: Trace, s: AccumulateStep) -> Explanation:
    x = _name(trace, s.tensor)
    n = len(s.contributions)
    uses = []
    for c in s.contributions:
        if c.source == "seed" or c.op is None:
            uses.append("a y (its seed)")
        else:
            uses.append(f"{trace.ops[c.op].type} input {c.input_index}")
    # x*x: the same op uses the tensor for both of its inputs.
    same_op = {c.op for c in s.contributions if c.op is not None}
    how = ""
    if len(same_op) == 1 and n > 1 and all(c.op is not None for c in s.contributions):
        op = trace.ops[next(iter(same_op))]
        sym = {"Mul": "*", "Add": "+", "AddV2": "+", "Sub": "-", "RealDiv": "/", "MatMul": "@",
               "Pow": "**", "Maximum": "max", "Minimum": "min"}.get(op.type)
        if sym is not None and n == 2:
            how = f" ({x}{sym}{x})" if len(sym) <= 2 else f" ({sym}({x}, {x}))"
        else:
            how = f" (all by {op.type})"
    else:
        how = f" (by {', '.join(uses)})"
    small = all(c.grad.values is not None and c.grad.size <= 6 for c in s.contributions)
    if small and s.total.values is not None:
        sum_txt = " + ".join(format_array(c.grad) for c in s.contributions)
        sentence = (f"{x} is used {_times(n)}{how}: its gradient is the sum of the {n} "
                    f"contributions: {sum_txt} = {format_array(s.total)}.")
    else:
        sentence = (f"{x} is used {_times(n)}{how}: its gradient is the sum of the {n} "
                    f"contributions, each of shape {_sh(s.total)}.")
    terms = " + ".join(f"g{k + 1}" for k in range(n))
    formula = f"dL/d{x} = {terms}: {' + '.join(_sh(c.grad) for c in s.contributions)} -> {_sh(s.total)}"
    if small and _small(s.total):
        formula += f" = {format_array(s.total)}"
    return Explanation("accumulate" + _pass_note(trace, s), sentence, formula)


def _cut(trace: Trace, s: CutStep) -> Explanation:
    x = _name(trace, s.tensor)
    reason = CUT_REASONS.get(s.reason, s.reason)
    op = trace.ops[s.op] if s.op is not None else None
    if s.reason == "stop_gradient":
        sentence = f"The flow stops at {op.type if op else 'StopGradient'}: {reason}, so {x} gets nothing this way."
        formula = f"dL/d{x} through StopGradient = none (cut)"
    elif s.reason == "stop_gradients":
        via = f" to the inputs of {op.type}" if op else ""
        sentence = (f"{x} is in stop_gradients: its gradient arrives but does not flow through "
                    f"it{via}. It is held constant (a partial, not a total, derivative).")
        formula = f"dL/d{x} is kept; d{x}/d(inputs) treated as 0 (cut)"
    elif s.reason == "integer":
        dtype = trace.tensors[s.tensor].dtype
        where = f" at {op.type}" if op else ""
        sentence = f"The flow stops{where}: {x} has dtype {dtype}, and {reason}."
        formula = f"dL/d{x} = none ({dtype} is not differentiable)"
    elif s.reason == "not_watched":
        where = f"{op.type} " if op else ""
        sentence = f"The flow stops at {where}{x}: {reason}."
        formula = f"dL/d{x} = none (not recorded by the tape)"
    else:
        where = f"{op.type} input {s.input_index}" if op is not None else x
        sentence = f"The flow stops at {where}: {reason}."
        formula = f"dL/d{x} = none (cut)"
    return Explanation(f"cut: {s.reason}" + _pass_note(trace, s), sentence, formula)


def jacobian_rows(trace: Trace, x_index: int) -> list[ResultStep]:
    """The result steps of xs[x_index], one per pass: in a Jacobian trace, row k is pass k.

    Found once per trace, not once per call.
    """
    by_x = trace.__dict__.get("_gv_result_rows")
    if by_x is None:
        by_x = {}
        for s in trace.steps:
            if isinstance(s, ResultStep):
                by_x.setdefault(s.x_index, []).append(s)
        trace.__dict__["_gv_result_rows"] = by_x
    return list(by_x.get(x_index, ()))


def jacobian_array(trace: Trace, x_index: int) -> ArrayData | None:
    """The whole Jacobian dy/dx of xs[x_index]: the passes' rows stacked, shaped y.shape + x.shape.

    None when some row is missing or kept only its summary (a large x).

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="ja_x")
    >>> with gv.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> jacobian_array(tape.trace_jacobian(y, x), 0).values.tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    # Stacked once per x: the steps, their words and the results all show it.
    cache = trace.__dict__.setdefault("_gv_jacobians", {})
    if x_index not in cache:
        cache[x_index] = _stack_rows(trace, jacobian_rows(trace, x_index))
    return cache[x_index]


def _stack_rows(trace: Trace, rows: list[ResultStep]) -> ArrayData | None:
    if not rows or any(r.grad is None or r.grad.values is None for r in rows):
        return None
    stacked = np.stack([np.asarray(r.grad.values) for r in rows])
    y_shape = trace.tensors[trace.ys[0]].shape if len(trace.ys) == 1 else None
    if y_shape is not None and math.prod(y_shape) == len(rows):
        stacked = stacked.reshape(tuple(y_shape) + stacked.shape[1:])
    return ArrayData.of(stacked)


def is_jacobian(trace: Trace) -> bool:
    """Whether the trace is a Jacobian of several passes, one row per pass."""
    return trace.method == "tape.jacobian" and trace.passes > 1


def jacobian_name(trace: Trace, x: str) -> str:
    """The Jacobian of the ys with respect to x, spelt as given: "dy/dx", "dy1/dy2/dx"."""
    ys = "/".join(_name(trace, y) for y in trace.ys)
    return f"d{ys}/d{x}"


def describe_jacobian(trace: Trace, x_index: int) -> Explanation:
    """The final result of a Jacobian trace for xs[x_index]: the whole Jacobian, one row per pass.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="dj_x")
    >>> with gv.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = x * x
    >>> print(describe_jacobian(tape.trace_jacobian(y, x), 0).sentence)  # doctest: +ELLIPSIS
    The Jacobian dMul.../ddj_x for xs[0] = dj_x (2,) is complete: 2 passes, one row each, make a (2,2) matrix: [[2, 0], [0, 4]].
    """
    rows = jacobian_rows(trace, x_index)
    if not rows:
        raise ValueError(f"x_index {x_index} has no result in this trace "
                         f"(it has {len(trace.xs)} xs)")
    t = trace.tensors[rows[-1].tensor]
    x = display_name(t, scoped=True)
    jname = jacobian_name(trace, x)
    full = jacobian_array(trace, x_index)
    dims = tuple(full.shape) if full is not None else (len(rows), *t.shape)
    shape = format_shape(dims)
    n = len(rows)
    if any(r.grad is None for r in rows):
        sentence = (f"xs[{x_index}] = {x} gets None in {sum(r.grad is None for r in rows)} "
                    f"of the {n} passes, so its Jacobian {jname} has no value.")
        return Explanation(f"Jacobian for xs[{x_index}]", sentence, f"{jname} = None")
    kind = "matrix" if len(dims) == 2 else "array"
    sentence = (f"The Jacobian {jname} for xs[{x_index}] = {x} {format_shape(t.shape)} is "
                f"complete: {n} passes, one row each, make a {shape} {kind}")
    # Small enough to read in full: "... make a (2,2) matrix: [[2, 0], [0, 4]]."
    sentence += f": {format_array(full)}." if full is not None and full.size <= 6 else "."
    if any(r.nonfinite for r in rows):
        sentence += " Warning: it holds NaN or Inf."
    formula = f"{jname} = {format_array(full)}" if full is not None else f"{jname}: {shape}"
    return Explanation(f"Jacobian for xs[{x_index}]", sentence, formula)


def _result(trace: Trace, s: ResultStep) -> Explanation:
    x = display_name(trace.tensors[s.tensor], scoped=True)
    shape = format_shape(trace.tensors[s.tensor].shape)
    if s.status == "connected" and is_jacobian(trace):
        row = s.pass_index + 1
        jname = jacobian_name(trace, x)
        sentence = f"Row {row} of the Jacobian {jname} (xs[{s.x_index}] = {x} {shape}) is ready"
        sentence += f": {format_array(s.grad)}." if _small(s.grad) else "."
        formula = f"row {row} of {jname} = {format_array(s.grad)}"
        if s.pass_index == trace.passes - 1:
            whole = describe_jacobian(trace, s.x_index)
            sentence += " It is the last row: " + whole.sentence[0].lower() + whole.sentence[1:]
            formula = whole.formula
        elif s.nonfinite:
            sentence += " Warning: it holds NaN or Inf."
        return Explanation(f"result for xs[{s.x_index}]" + _pass_note(trace, s), sentence,
                           formula)
    if s.status == "connected":
        sentence = f"The final gradient for xs[{s.x_index}] = {x} {shape} is ready"
        sentence += f": {format_array(s.grad)}." if _small(s.grad) else "."
        if s.nonfinite:
            sentence += " Warning: it holds NaN or Inf."
        formula = f"dL/d{x} = {format_array(s.grad)}"
    else:
        reason = s.reason.rstrip(".") if s.reason else (
            "no y depends on it" if s.status == "unconnected" else "it is an integer tensor")
        if s.status == "integer":
            mode = ""
        elif s.grad is None:
            mode = " (unconnected_gradients='none' gives None)"
        else:
            mode = " (unconnected_gradients='zero' gives zeros shaped like x)"
        if s.grad is None:
            sentence = f"xs[{s.x_index}] = {x} gets None: {reason}{mode}."
            formula = f"dL/d{x} = None"
        else:
            sentence = f"xs[{s.x_index}] = {x} gets zeros of shape {shape}: {reason}{mode}."
            formula = f"dL/d{x} = zeros({shape}) = {format_array(s.grad)}"
    return Explanation(f"result for xs[{s.x_index}]" + _pass_note(trace, s), sentence, formula)


# ---------------------------------------------------------------- legend

#: Every mark the diagram can draw, with what it means (from the mark table,
#: static/marks.json, in legend order).
LEGEND: dict[str, str] = {name: m.meaning for name, m in MARKS.items()}


def legend(marks: list[str] | None = None) -> list[tuple[str, str]]:
    """(mark, meaning) pairs, for the given marks or for all of them.

    >>> legend(["seed", "cut"])
    [('seed', "seed (orange pentagon): a y's first gradient, ones or grad_ys"), ('cut', 'cut (red octagon, dashed edge): the flow stops, with why')]
    """
    keys = list(LEGEND) if marks is None else list(marks)
    unknown = [k for k in keys if k not in LEGEND]
    if unknown:
        raise ValueError(f"unknown legend mark {unknown[0]!r} (must be one of "
                         f"{', '.join(LEGEND)})")
    return [(k, LEGEND[k]) for k in keys]
