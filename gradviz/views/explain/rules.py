"""Each op type's gradient rule in words: the idea, and a formula template per input.

A new op gets its entry in :data:`OP_RULES` here (``tests/test_explain.py``
fails for an op without one), or, if it is elementwise, its words in its entry of
the engine's table (:mod:`gradviz.engine.elementwise`), which are read in here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...engine.elementwise import TABLE
from ...trace import BackwardStep, OpInfo, Trace
from .windows import window_shapes

__all__ = ["OpRule", "OP_RULES"]


@dataclass(frozen=True)
class OpRule:
    """How an op type's gradient rule reads."""

    roles: tuple[str, ...]  # the template words for the inputs, e.g. ("a", "b")
    idea: str  # the rule in words, completing "it ...", with {role} and {role:use} to fill
    formulas: tuple[str | None, ...]  # dL/d(role) per input; None: no gradient


# One formula per input of a MatMul, per (transpose_a, transpose_b), with the
# operands of each product so the shapes can be written out:
#   c = a @ b  =>  dL/da = grad @ b.T,  dL/db = a.T @ grad   (TensorFlow's _MatMulGrad)
_MATMUL = {
    (False, False): (("grad", "b.T"), ("a.T", "grad")),
    (False, True): (("grad", "b"), ("grad.T", "a")),
    (True, False): (("b", "grad.T"), ("a", "grad")),
    (True, True): (("b.T", "grad.T"), ("grad.T", "a.T")),
}

# MatMul's idea per (transpose_a, transpose_b), saying what _MATMUL's formulas do:
# an operand is "transposed" in words exactly where its formula writes ".T".
_MATMUL_IDEAS = {
    (False, False): "multiplies the upstream gradient by the other factor, transposed: "
                    "{a:use} gets the upstream gradient times {b} transposed, and {b:use} gets "
                    "{a} transposed times the upstream gradient",
    (False, True): "multiplies the upstream gradient by the other factor; the forward pass "
                   "used {b} transposed (transpose_b), so {a:use} gets the upstream gradient "
                   "times {b} as it is, and {b:use} gets the upstream gradient transposed times "
                   "{a}",
    (True, False): "multiplies the upstream gradient by the other factor; the forward pass "
                   "used {a} transposed (transpose_a), so {a:use} gets {b} times the upstream "
                   "gradient transposed, and {b:use} gets {a} as it is times the upstream "
                   "gradient",
    (True, True): "multiplies the upstream gradient by the other factor; the forward pass "
                  "used both {a} and {b} transposed (transpose_a and transpose_b), so {a:use} "
                  "gets {b} transposed times the upstream gradient transposed, and {b:use} "
                  "gets the upstream gradient transposed times {a} transposed",
}

#: Op type -> how its gradient rule reads.  ``grad`` is the upstream gradient
#: (dL/dy for the op's output y); MatMul is written out per transpose case above.
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
                      ("grad / b", "grad * (-a / b / b)")),
    "Neg": OpRule(("x",), "negates the upstream gradient", ("-grad",)),
    "Pow": OpRule(("a", "b"), "uses d({a}**{b})/d{a:use} = {b} * {a}**({b}-1) and, for "
                  "the exponent {b:use}, {a}**{b} * log({a}) (log({a}) taken as 0 for {a} <= 0, "
                  "as TensorFlow takes it)",
                  ("grad * b * a**(b-1)", "grad * {dpow}")),
    "Square": OpRule(("x",), "uses d({x}**2)/d{x} = 2 * {x}", ("grad * 2 * x",)),
    "Sqrt": OpRule(("x",), "uses d(sqrt {x})/d{x} = 1 / (2 sqrt {x}) = 0.5 / {y} (and gives 0 "
                   "where the upstream gradient is 0, even at {y} = 0)",
                   ("where(grad == 0, 0, grad * 0.5 / y)",)),
    "Exp": OpRule(("x",), "uses d(exp {x})/d{x} = exp {x}, which is its own output {y}",
                  ("grad * y",)),
    "Log": OpRule(("x",), "uses d(log {x})/d{x} = 1/{x}", ("grad / x",)),
    "Abs": OpRule(("x",), "uses d|{x}|/d{x} = sign({x})", ("grad * sign(x)",)),
    "Sign": OpRule(("x",), "is flat everywhere but at 0, so its gradient is zero (taken as "
                   "0 at {x} = 0 too): zeros reach {x:use}, not None",
                   ("0 * grad",)),
    "Tanh": OpRule(("x",), "uses d(tanh {x})/d{x} = 1 - tanh({x})**2 = 1 - {y}**2",
                   ("grad * (1 - y**2)",)),
    "Sigmoid": OpRule(("x",), "uses d(sigmoid {x})/d{x} = {y} * (1 - {y}), {y} being its "
                      "output",
                      ("grad * y * (1 - y)",)),
    "Relu": OpRule(("x",), "passes the gradient where {x} > 0 and blocks it elsewhere",
                   ("grad * (x > 0)",)),
    "Maximum": OpRule(("a", "b"), "routes the gradient to whichever input was larger",
                      ("where(a >= b, grad, 0)", "where(a >= b, 0, grad)")),
    "Minimum": OpRule(("a", "b"), "routes the gradient to whichever input was smaller",
                      ("where(a <= b, grad, 0)", "where(a <= b, 0, grad)")),
    "SelectV2": OpRule(("condition", "a", "b"),
                       "routes the gradient to {a:use} where {condition} held and to {b:use} "
                       "elsewhere",
                       (None, "where(condition, grad, 0)", "where(condition, 0, grad)")),
    # Its plain case; _rule gives a step its transpose case's idea (_MATMUL_IDEAS).
    "MatMul": OpRule(("a", "b"), _MATMUL_IDEAS[(False, False)], ("grad @ b.T", "a.T @ grad")),
    "Sum": OpRule(("x",), "copies the gradient back to every summed position",
                  ("broadcast_to({grad}, shape(x))",)),
    "Mean": OpRule(("x",), "copies the gradient back to every averaged position, divided by "
                   "n, how many were averaged", ("broadcast_to({grad}, shape(x)) / n",)),
    "Max": OpRule(("x",), "sends the gradient to the position(s) of the maximum, shared "
                  "equally among ties",
                  ("{grad} * (x == {y}) / sum(x == {y}, axis={axis}, keepdims=True)",)),
    "Reshape": OpRule(("x",), "reshapes the gradient back to the shape of {x}",
                      ("reshape(grad, shape(x))",)),
    "Transpose": OpRule(("x",), "transposes the gradient back with the inverse permutation",
                        ("transpose(grad, {inverse})",)),
    # The backward step's words add, for a gradient still in the broadcast shape, that
    # the broadcast reduction that follows sums it to the input's shape.
    "BroadcastTo": OpRule(("x",), "passes the gradient on in the broadcast shape",
                          ("grad",)),
    "ConcatV2": OpRule(("a",), "cuts the gradient into the pieces each input contributed "
                       "along the axis", ("grad[{piece}]",)),
    "Split": OpRule(("x",), "joins the gradients of the pieces back together along the "
                    "axis (zeros for unused pieces)", ("concatenate([{pieces}], axis={axis})",)),
    "Pack": OpRule(("a",), "unstacks the gradient along the new axis", ("grad[{piece}]",)),
    "Unpack": OpRule(("x",), "stacks the gradients of the pieces along the axis (zeros for "
                     "unused pieces)", ("stack([{pieces}], axis={axis})",)),
    "StridedSlice": OpRule(("x",), "writes the gradient into the sliced positions of a "
                           "zero array shaped like {x}",
                           ("put(zeros_like(x), s_[{index}], grad)",)),
    "StridedSliceGrad": OpRule(("grad_in",), "slices the gradient the same way",
                               ("grad[{index}]",)),
    "Cast": OpRule(("x",), "casts the gradient back to the dtype of {x}",
                   ("grad.astype({dtype})",)),
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
                      ("y * (grad - sum(grad * y, axis={axis}, keepdims=True))",)),
    "LogSoftmax": OpRule(("x",), "uses d(log_softmax {x})/d{x} = I - softmax({x}) along the "
                         "axis",
                         ("grad - softmax(x, axis={axis}) * sum(grad, axis={axis}, "
                          "keepdims=True)",)),
    "SigmoidCrossEntropyWithLogits": OpRule(
        ("labels", "logits"), "uses d(loss)/d{logits:use} = sigmoid({logits}) - {labels}",
        ("-grad * logits", "grad * (sigmoid(logits) - labels)")),
    "SoftmaxCrossEntropyWithLogits": OpRule(
        ("labels", "logits"), "uses, row by row, d(loss)/d{logits:use} = softmax({logits}) - "
        "{labels} (for rows of {labels} that sum to 1), each row times that row's own upstream "
        "gradient: grad[i] scales row i",
        ("-{grad} * log_softmax(logits, axis={axis})", "{grad} * ({p} - labels)")),
    "TanhGrad": OpRule(("y", "dy"), "is the backward of Tanh, {dy} * (1 - {y}**2), "
                       "differentiated again", ("grad * dy * -2 * y", "grad * (1 - y**2)")),
    "SigmoidGrad": OpRule(("y", "dy"), "is the backward of Sigmoid, {dy} * {y} * (1 - {y}), "
                          "differentiated again",
                          ("grad * dy * (1 - 2 * y)", "grad * y * (1 - y)")),
    "ReluGrad": OpRule(("dy", "x"), "is the backward of Relu, which only masks {dy}: the "
                       "mask is flat in {x:use}, so zeros go there",
                       ("grad * (x > 0)", "0 * grad")),
    "SqrtGrad": OpRule(("y", "dy"), "is the backward of Sqrt, {dy} * 0.5 / {y}, "
                       "differentiated again", ("-grad * dy * 0.5 / y**2", "grad * 0.5 / y")),
    # Convolution and pooling: {win} is the window's arguments as the formula helpers
    # take them (", strides=(2, 2), padding='SAME'"), {k} the kernel size, {spread}
    # the upstream gradient dilated by the stride and padded so that a plain
    # convolution with the flipped kernel gives the input's gradient.
    "Conv2D": OpRule(
        ("x", "w"), "sends the upstream gradient back through the same windows: the "
        "gradient for {x:use} is a convolution of the upstream gradient with {w} "
        "flipped top to bottom and left to right (its in and out channels swapped), "
        "and the gradient for {w:use} sums, for each weight, the input values it "
        "multiplied times the upstream gradient where it was used",
        ("conv2d({spread}, w[::-1, ::-1].swapaxes(2, 3){dil})",
         "einsum('nyxijc,nyxo->ijco', windows(x, {k}{win}), grad)")),
    "Conv2DBackpropInput": OpRule(
        ("w", "dy"), "is the backward of Conv2D for its input, linear in {w} and in {dy}, "
        "differentiated again: for {w:use}, the windows of the upstream gradient times "
        "{dy}; for {dy:use}, the upstream gradient convolved with {w}",
        ("einsum('nyxijc,nyxo->ijco', windows(grad, {k}{win}), dy)", "conv2d(grad, w{win})")),
    "Conv2DBackpropFilter": OpRule(
        ("x", "dy"), "is the backward of Conv2D for its kernel, linear in {x} and in {dy}, "
        "differentiated again: for {x:use}, {dy} convolved with the upstream gradient "
        "flipped (it has the kernel's shape); for {dy:use}, {x} convolved with the upstream "
        "gradient",
        ("conv2d({spread}, grad[::-1, ::-1].swapaxes(2, 3){dil})", "conv2d(x, grad{win})")),
    "MaxPool": OpRule(
        ("x",), "sends each window's gradient to the element of {x} that won it, the "
        "window's maximum (the first one, reading row by row, when several tie), and "
        "nothing to the others; an element that won several windows collects each one's",
        ("unwindows(first_max(windows(x, {k}{win}, fill=-inf)) * grad[:, :, :, None, None, "
         ":], shape(x){win})",)),
    "MaxPoolGrad": OpRule(
        ("x", "pooled", "dy"), "is the backward of MaxPool, differentiated again: which "
        "element wins does not move with {x}, so {x:use} and {pooled:use} get zeros, and "
        "{dy:use} each window's value of the upstream gradient at its winner",
        ("0 * x", "0 * pooled",
         "sum(first_max(windows(x, {k}{win}, fill=-inf)) * windows(grad, {k}{win}"
         "), axis=(3, 4))")),
    "MaxPoolGradGrad": OpRule(
        ("x", "pooled", "dx"), "picks each window's winner; its backward sends each "
        "window's gradient back to that winner, as MaxPool's does ({x:use} and "
        "{pooled:use} get zeros: the winner does not move with them)",
        ("0 * x", "0 * pooled",
         "unwindows(first_max(windows(x, {k}{win}, fill=-inf)) * grad[:, :, :, "
         "None, None, :], shape(x){win})")),
    "AvgPool": OpRule(
        ("x",), "shares each window's gradient equally among the elements of {x} in it "
        "(padding is not counted), and an element in several windows collects a share "
        "from each",
        ("unwindows(ones({k1}) * (grad / {n})[:, :, :, None, None, :], shape(x){win})",)),
    "AvgPoolGrad": OpRule(
        ("dy",), "is the backward of AvgPool, linear in {dy}: its backward is an average "
        "pool of the upstream gradient with the same windows",
        ("sum(windows(grad, {k}{win}), axis=(3, 4)) / {n}",)),
    "BiasAdd": OpRule(
        ("value", "bias"), "passes the upstream gradient unchanged to {value:use} and to "
        "{bias:use}",
        ("grad", "grad")),
    # the ops of a transformer block
    "Softplus": OpRule(("x",), "uses d(log(1 + exp {x}))/d{x} = sigmoid({x})",
                       ("grad * sigmoid(x)",)),
    "LeakyRelu": OpRule(("x",), "passes the gradient where {x} > 0 and scales it by alpha "
                        "elsewhere", ("where(x > 0, grad, {alpha} * grad)",)),
    "LeakyReluGrad": OpRule(("dy", "x"), "is the backward of LeakyRelu, which only scales "
                            "{dy}: the scale is flat in {x:use}, so zeros go there",
                            ("where(x > 0, grad, {alpha} * grad)", "0 * grad")),
    "Min": OpRule(("x",), "sends the gradient to the position(s) of the minimum, shared "
                  "equally among ties",
                  ("{grad} * (x == {y}) / sum(x == {y}, axis={axis}, keepdims=True)",)),
    "Prod": OpRule(("x",), "gives each element the upstream gradient times the product of "
                   "the others it was multiplied with (worked out without dividing by it, so a "
                   "zero in {x} is no trouble)",
                   ("{grad} * product_of_others(x, axis={axis})",)),
    "Cumsum": OpRule(("x",), "gives each element of {x} the sum of the upstream gradients of "
                     "every running sum it went into: a running sum of the gradient, taken "
                     "the other way", ("running_sum(grad, axis={axis}{flags_back})",)),
    "Cumprod": OpRule(("x",), "gives each element of {x} the gradients of the running products "
                      "it went into, each times that product, summed the other way and "
                      "divided by the element (0 where it is 0, as TensorFlow's)",
                      ("where(x == 0, 0, running_sum(running_product(x, axis={axis}{flags})"
                       " * grad, axis={axis}{flags_back}) / where(x == 0, 1, x))",)),
    "DivNoNan": OpRule(("a", "b"), "uses d({a}/{b})/d{a:use} = 1/{b} and "
                       "d({a}/{b})/d{b:use} = -{a}/{b}**2, each taken as 0 where {b} is 0",
                       ("where(b == 0, 0, grad / where(b == 0, 1, b))",
                        "where(b == 0, 0, grad * -a / where(b == 0, 1, b)**2)")),
    "Einsum": OpRule(("a", "b"), "multiplies the upstream gradient by the other operand, "
                     "summing over what the forward product summed: {a:use} gets an einsum of "
                     "the upstream gradient and {b}, {b:use} one of the upstream gradient and "
                     "{a}", ("{da}", "{db}")),
    "ExpandDims": OpRule(("x",), "reshapes the gradient back to the shape of {x} (the new "
                         "axis of 1 goes)", ("reshape(grad, shape(x))",)),
    "Squeeze": OpRule(("x",), "reshapes the gradient back to the shape of {x} (the axes of 1 "
                      "come back)", ("reshape(grad, shape(x))",)),
    "Tile": OpRule(("x",), "adds up the gradients of every copy of {x}: each value of {x} was "
                   "used once per copy", ("sum(reshape(grad, {split}), axis={axes})",)),
    "PadV2": OpRule(("x", "constant_values"), "cuts the padding off the gradient: {x:use} gets "
                    "the gradient of its own positions, and the fill value none",
                    ("grad[{index}]", None)),
    "MirrorPad": OpRule(("x",), "cuts the padding off the gradient and adds each padded "
                        "position's gradient to the value of {x} it mirrors",
                        ("unmirror(grad, {pads}, '{mode}')",)),
    "GatherV2": OpRule(("params", "indices"), "sends each gathered slice's gradient back to "
                       "the place of {params} it was read from: only what {indices} names gets "
                       "a gradient, and a place read twice gets the sum of both",
                       ("{ungather}", None)),
    "GatherNd": OpRule(("params", "indices"), "sends each gathered value's gradient back to "
                       "the position of {params} it was read from (a position read twice gets "
                       "both)", ("scatter_nd(indices, grad, shape(params))", None)),
    "ScatterNd": OpRule(("indices", "updates"), "is the backward of GatherNd, linear in "
                        "{updates}: each update gets the gradient at the position it was added "
                        "to", (None, "gather_nd(grad, indices)")),
    "UnsortedSegmentSum": OpRule(("data", "segment_ids"), "copies each segment's gradient back "
                                 "to every slice of {data} summed into it (a slice whose id is "
                                 "negative was dropped and gets zeros)", ("{picked}", None)),
    "MirrorPadGrad": OpRule(("dy",), "is the backward of MirrorPad, linear in {dy}: its "
                            "backward pads the upstream gradient the same way",
                            ("pad(grad, {pads}, mode='{npmode}')",)),
}
#: Op types taking any number of inputs: their formulas name each input alone.
_VARIADIC = ("AddN", "ConcatV2", "Pack", "IdentityN")

# Comparisons are piecewise constant: no gradient flows through them.
for _op_type in ("Equal", "Greater", "GreaterEqual", "Less", "LessEqual"):
    OP_RULES[_op_type] = OpRule(("a", "b"),
                                "is a comparison: its bool output has no gradient", (None, None))
del _op_type
# TensorFlow's everyday vocabulary beyond the elementwise table
OP_RULES.update({
    "Roll": OpRule(("x",), "rolls the gradient back the other way: each value's gradient "
                   "returns to the place the value came from",
                   ("roll(grad, {back}, axis={axis})",)),
    "ReverseV2": OpRule(("x",), "reverses the gradient along the same axes, which puts each "
                        "value's gradient back where the value came from",
                        ("flip(grad, axis={axis})",)),
    "Slice": OpRule(("x",), "puts the gradient back where the block was cut from, in zeros "
                    "shaped like {x}", ("pad(grad, {pads})",)),
    "IdentityN": OpRule(("a",), "passes each output's gradient unchanged to its own input",
                        ("{gk}",)),
    "PreventGradient": OpRule(("x",), "refuses to pass a gradient: asking for one raises a "
                              "LookupError with its message, as in TensorFlow", (None,)),
    "EuclideanNorm": OpRule(("x",), "uses d sqrt(sum {x}**2)/d{x} = {x} / {y}: each element's "
                            "share of the length (NaN where the length is 0)",
                            ("x / ({y} / {grad})",)),
    "Any": OpRule(("x",), "is a logical reduction: its bool output has no gradient", (None,)),
    "All": OpRule(("x",), "is a logical reduction: its bool output has no gradient", (None,)),
    "SegmentSum": OpRule(("data", "segment_ids"), "copies each segment's gradient back to "
                         "every row of {data} summed into it", ("grad[segment_ids]", None)),
    "SegmentMean": OpRule(("data", "segment_ids"), "copies each segment's gradient back to "
                          "every row of {data} averaged into it, divided by how many rows the "
                          "segment has", ("grad[segment_ids] / {counts}", None)),
    "SegmentMax": OpRule(("data", "segment_ids"), "sends each segment's gradient to the rows "
                         "of {data} that held its maximum, shared equally among ties",
                         ("where({held}, grad[segment_ids] / segment_sum({held} * 1.0, "
                          "segment_ids, {n})[segment_ids], 0)", None)),
    "MatrixDiagV3": OpRule(("x",), "reads the main diagonal of the gradient: only the "
                           "diagonal came from {x}",
                           ("diagonal(grad, axis1=-2, axis2=-1)",)),
    "MatrixDiagPartV3": OpRule(("x",), "puts the gradient on the main diagonal of zeros shaped "
                               "like {x}", ("{embed}",)),
    "MatrixBandPart": OpRule(("x",), "keeps the gradient in the same band and zeros outside "
                             "it, as the forward pass kept the values", ("{band}",)),
})

# The elementwise table's ops read as their entries say (gradviz/engine/elementwise.py).
OP_RULES.update({e.op_type: OpRule(e.roles, e.idea, e.formulas) for e in TABLE})
OP_RULES.update({
    "IsFinite": OpRule(("x",), "tells where {x} is finite: its bool output has no gradient",
                       (None,)),
    "ArgMax": OpRule(("x",), "gives where the largest value is: an index, which has no "
                     "gradient", (None,)),
    "ArgMin": OpRule(("x",), "gives where the smallest value is: an index, which has no "
                     "gradient", (None,)),
    "OneHot": OpRule(("indices",), "turns integer indices into rows of zeros and ones: "
                     "integers have no gradient", (None,)),
})


def _rule(trace: Trace, s: BackwardStep) -> OpRule | None:
    """The step's rule, if its op has the inputs the rule speaks of (a trace loaded
    from JSON may not: it then gets the generic sentence, never a crash); a MatMul's
    with the idea of its transpose case.

    >>> import gradviz as gv
    >>> q = gv.constant([[1.0, 2.0]], name="ru_Q")
    >>> k = gv.constant([[3.0, 4.0]], name="ru_K")
    >>> tr = gv.trace_gradients(gv.matmul(q, k, transpose_b=True), [q, k])
    >>> _rule(tr, tr.steps[1]).idea.split(", so ")[1]
    '{a:use} gets the upstream gradient times {b} as it is, and {b:use} gets the upstream gradient transposed times {a}'
    """
    rule = OP_RULES.get(s.op_type)
    op = trace.ops[s.op]
    if rule is None or s.op_type in _VARIADIC:
        return rule
    if len(op.inputs) != len(rule.roles):
        return None
    if s.op_type == "MatMul":  # its idea says what its transpose case's formulas do
        case = (bool(op.attrs.get("transpose_a", False)), bool(op.attrs.get("transpose_b", False)))
        return replace(rule, idea=_MATMUL_IDEAS[case])
    return rule


# ---------------------------------------------------------------- a rule for one step
#
# A template's places in braces ({grad}, {axis}, {piece}, ...) are filled per step
# from its op's attributes and shapes, so that the formula runs as NumPy: a Sum
# over axis 1 of a (3,4) array copies back broadcast_to(grad[:, None], shape(x)),
# not broadcast_to(grad, ...), which NumPy would broadcast along the wrong axis.


class _Unfilled(dict):
    """Places a step cannot fill (a trace missing an attribute) read as their own word."""

    def __missing__(self, key: str) -> str:
        return key


def _specialised(trace: Trace, s: BackwardStep, i: int,
                 template: str) -> tuple[str, dict[str, Any]]:
    """Input ``i``'s template with its places filled for step ``s``, and the numbers it names.

    >>> import gradviz as gv
    >>> x = gv.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="sp_x")
    >>> tr = gv.trace_gradients(gv.reduce_mean(x, axis=1), x)
    >>> _specialised(tr, tr.steps[1], 0, OP_RULES["Mean"].formulas[0])
    ('broadcast_to(grad[:, None], shape(x)) / n', {'n': 2})
    """
    if "{" not in template:
        return template, {}
    places = _PLACES.get(s.op_type)
    try:
        filled, names = places(trace, trace.ops[s.op], s, i) if places else ({}, {})
    except (KeyError, IndexError, TypeError, ValueError):
        filled, names = {}, {}
    return template.format_map(_Unfilled(filled)), names


def _expand(word: str, ndim: int, axes: tuple[int, ...]) -> str:
    """``word`` indexed so its reduced ``axes`` come back as length 1: ``grad[:, None]``.

    >>> _expand("grad", 2, (1,)), _expand("grad", 2, (0,)), _expand("grad", 2, (0, 1))
    ('grad[:, None]', 'grad[None]', 'grad')
    """
    if not axes or len(axes) == ndim:
        return word  # nothing reduced, or a scalar: it broadcasts as it is
    parts = ["None" if a in axes else ":" for a in range(ndim)]
    while parts[-1] == ":":
        parts.pop()
    return f"{word}[{', '.join(parts)}]"


def _axis_text(axes: tuple[int, ...]) -> str:
    return str(axes[0]) if len(axes) == 1 else str(tuple(axes))


def _index_text(spec: list) -> str:
    """A slice spec as Python writes the index: ``1:, ::2``."""
    parts = []
    for it in spec:
        if isinstance(it, list):
            start, stop, step = (None if v is None else str(v) for v in it)
            parts.append(f"{start or ''}:{stop or ''}" + (f":{step}" if step else ""))
        else:
            parts.append({"newaxis": "None", "...": "..."}.get(it, str(it)))
    return ", ".join(parts)


def _array_of(trace: Trace, tid: int) -> np.ndarray | None:
    return trace.tensors[tid].value.values


def _reduction(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    ndim = len(trace.tensors[op.inputs[0]].shape)
    axes = tuple(op.attrs["axis"])
    keep = bool(op.attrs.get("keepdims", False))
    places = {"grad": "grad" if keep else _expand("grad", ndim, axes),
              "y": "y" if keep else _expand("y", ndim, axes), "axis": _axis_text(axes)}
    if s.op_type != "Mean":
        return places, {}
    shape = trace.tensors[op.inputs[0]].shape
    return places, {"n": max(1, math.prod(shape[a] for a in axes))}


def _along_axis(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    return {"axis": str(op.attrs["axis"])}, {}


def _softmax_xent(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    axis = int(op.attrs["axis"])
    ndim = len(trace.tensors[op.inputs[1]].shape)
    p = f"softmax(logits, axis={axis})"
    labels = _array_of(trace, op.inputs[0])
    # softmax - labels only where each row of labels sums to 1, as a distribution does
    if labels is None or not np.allclose(labels.sum(axis=axis), 1, atol=1e-5):
        p += f" * sum(labels, axis={axis}, keepdims=True)"
    return {"grad": _expand("grad", ndim, (axis,)), "axis": str(axis), "p": p}, {}


def _pow(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    a = _array_of(trace, op.inputs[0])
    if a is not None and bool(np.all(a > 0)):
        return {"dpow": "a**b * log(a)"}, {}
    return {"dpow": "a**b * where(a > 0, log(where(a > 0, a, 1)), 0)"}, {}


def _transpose(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    perm = list(op.attrs["perm"])
    inverse = [0] * len(perm)
    for k, p in enumerate(perm):
        inverse[p] = k
    return {"inverse": str(tuple(inverse))}, {}


def _piece(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    """Where input ``i`` sits in a concatenation (a slice) or a stack (an index)."""
    axis = int(op.attrs["axis"])
    lead = [":"] * axis
    if s.op_type == "Pack":
        return {"piece": ", ".join([*lead, str(i)])}, {}
    start = sum(trace.tensors[t].shape[axis] for t in op.inputs[:i])
    stop = start + trace.tensors[op.inputs[i]].shape[axis]
    return {"piece": ", ".join([*lead, f"{start}:{stop}"])}, {}


def _pieces(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    """The gradients of a split's or an unstack's outputs, zeros where none arrived."""
    pieces = [f"grad[{k}]" if k < len(s.upstream) and s.upstream[k] is not None
              else f"zeros({tuple(trace.tensors[o].shape)})"
              for k, o in enumerate(op.outputs)]
    return {"pieces": ", ".join(pieces), "axis": str(op.attrs["axis"])}, {}


def _slice(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    return {"index": _index_text(op.attrs["spec"])}, {}


def _cast(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    return {"dtype": str(np.dtype(trace.tensors[op.inputs[0]].dtype))}, {}


def _window_args(attrs: dict) -> str:
    """The window's keyword arguments, defaults left out: ``, strides=(2, 2), padding='SAME'``."""
    args = ""
    if tuple(attrs["strides"]) != (1, 1):
        args += f", strides={tuple(attrs['strides'])}"
    if attrs["padding"] == "EXPLICIT":
        args += f", padding={tuple(tuple(p) for p in attrs['pads'])}"
    elif attrs["padding"] != "VALID":
        args += f", padding='{attrs['padding']}'"
    if tuple(attrs.get("dilations", (1, 1))) != (1, 1):
        args += f", dilations={tuple(attrs['dilations'])}"
    return args


def _spread(word: str, attrs: dict, in_hw: tuple[int, ...], out_hw: tuple[int, ...]) -> str:
    """``word`` (an upstream gradient, NHWC) made ready for a plain convolution with the
    flipped kernel to give the input's gradient: ``strides - 1`` zeros between its values,
    then padded by the kernel's reach less the forward's padding (cut where that is
    negative)."""
    text = word if tuple(attrs["strides"]) == (1, 1) else \
        f"dilate({word}, {tuple(attrs['strides'])})"
    pads, cuts = [], []
    for d in range(2):
        reach = (attrs["ksize"][d] - 1) * attrs["dilations"][d] + 1
        spread = (out_hw[d] - 1) * attrs["strides"][d] + 1 if out_hw[d] else 0
        before = reach - 1 - attrs["pads"][d][0]
        after = in_hw[d] + reach - 1 - before - spread
        pads.append((max(before, 0), max(after, 0)))
        cuts.append((max(-before, 0), max(-after, 0)))
    if any(pads[0] + pads[1]):
        text = f"pad({text}, ((0, 0), {pads[0]}, {pads[1]}, (0, 0)))"
    if any(cuts[0] + cuts[1]):
        rows = f"{cuts[0][0] or ''}:{-cuts[0][1] if cuts[0][1] else ''}"
        cols = f"{cuts[1][0] or ''}:{-cuts[1][1] if cuts[1][1] else ''}"
        text += f"[:, {rows}, {cols}]"
    return text


def _window(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    """A convolution's or pool's window, and what its formulas need besides."""
    attrs = op.attrs
    ksize = tuple(attrs["ksize"])
    win = _window_args(attrs)
    places = {"k": str(ksize), "win": win, "k1": str((*ksize, 1))}
    dilations = tuple(attrs.get("dilations", (1, 1)))
    places["dil"] = f", dilations={dilations}" if dilations != (1, 1) else ""
    in_shape, out_shape = window_shapes(trace, op)
    word = "grad" if s.op_type == "Conv2D" else "dy"
    places["spread"] = _spread(word, attrs, tuple(in_shape[1:3]), tuple(out_shape[1:3]))
    numbers: dict[str, Any] = {}
    if s.op_type in ("AvgPool", "AvgPoolGrad"):
        padded = attrs["padding"] != "VALID" and any(p for pair in attrs["pads"] for p in pair)
        if padded:  # windows at the edge hold fewer input cells
            ones = "x" if s.op_type == "AvgPool" else "grad"
            places["n"] = f"sum(windows(ones(shape({ones})), {ksize}{win}), axis=(3, 4))"
        else:
            places["n"] = "n"
            numbers["n"] = math.prod(ksize)
    return places, numbers


def _leaky(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    return {"alpha": f"{float(op.attrs['alpha']):.9g}"}, {}


def _einsum(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    """Each operand's gradient as an einsum of the upstream gradient and the other operand;
    a letter only this operand has comes back broadcast."""
    lhs, out = op.attrs["equation"].split("->")
    subs = lhs.split(",")
    places = {}
    for k, (word, other) in enumerate((("a", "b"), ("b", "a"))):
        mine, theirs = subs[k], subs[1 - k]
        kept = "".join(c for c in mine if c in out or c in theirs)
        text = f"einsum('{out},{theirs}->{kept}', grad, {other})"
        if kept != mine:
            index = ", ".join(":" if c in kept else "None" for c in mine)
            text = f"broadcast_to({text}[{index}], shape({word}))"
        places[f"d{word}"] = text
    return places, {}


def _cumulative(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    exclusive, reverse = bool(op.attrs["exclusive"]), bool(op.attrs["reverse"])

    def flags(rev: bool) -> str:
        return (", exclusive=True" if exclusive else "") + (", reverse=True" if rev else "")
    return {"axis": str(op.attrs["axis"]), "flags": flags(reverse),
            "flags_back": flags(not reverse)}, {}


def _tile(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    shape = trace.tensors[op.inputs[0]].shape
    split = tuple(n for m, d in zip(op.attrs["multiples"], shape) for n in (m, d))
    return {"split": str(split), "axes": str(tuple(range(0, len(split), 2)))}, {}


def _pad(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    shape = trace.tensors[op.inputs[0]].shape
    pairs = op.attrs["paddings"]
    mode = str(op.attrs.get("mode", "CONSTANT"))
    index = ", ".join(f"{b}:{b + d}" for (b, _), d in zip(pairs, shape)) or "..."
    return {"index": index, "pads": str(tuple(tuple(p) for p in pairs)), "mode": mode,
            "npmode": mode.lower()}, {}


def _gather(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    """A gather's gradient: along axis 0, each row's slices summed into it (the dense form
    of TensorFlow's IndexedSlices); along another axis or in batches, ``ungather``."""
    axis, b = int(op.attrs.get("axis", 0)), int(op.attrs.get("batch_dims", 0))
    shape = trace.tensors[op.inputs[0]].shape
    if axis == 0 and b == 0:
        rest = "".join(f", {d}" for d in shape[1:])
        # (a practice slip: each row written once, the last slice read from it winning)
        return {"ungather": f"segment_sum(reshape(grad, (-1{rest})), reshape(indices, -1), "
                            f"{shape[0]})",
                "last_write": f"put(zeros({tuple(shape)}), reshape(indices, -1), "
                              f"reshape(grad, (-1{rest})))"}, {}
    return {"ungather": f"ungather(grad, indices, shape(params), axis={axis}, "
                        f"batch_dims={b})"}, {}


def _segments(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    ids = _array_of(trace, op.inputs[1])
    if ids is not None and bool(np.all(ids >= 0)):
        return {"picked": "grad[segment_ids]"}, {}
    extra = len(trace.tensors[op.inputs[0]].shape) - len(trace.tensors[op.inputs[1]].shape)
    keep = "(segment_ids >= 0)" + (f"[..., {', '.join(['None'] * extra)}]" if extra else "")
    return {"picked": f"where({keep}, grad[maximum(segment_ids, 0)], 0)"}, {}


def _roll(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    return {"back": str(tuple(-k for k in op.attrs["shift"])),
            "axis": str(tuple(op.attrs["axis"]))}, {}


def _reverse(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    return {"axis": str(tuple(op.attrs["axis"]))}, {}


def _cut(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    shape = trace.tensors[op.inputs[0]].shape
    pads = tuple((b, d - b - n) for b, n, d in zip(op.attrs["begin"], op.attrs["size"], shape))
    return {"pads": str(pads) if pads else "0"}, {}  # (a scalar's block is itself)


def _each(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    """Output ``i``'s gradient, zeros where none arrived (as the walk fills it)."""
    if i >= len(s.upstream) or s.upstream[i] is None:
        return {"gk": f"zeros({tuple(trace.tensors[op.outputs[i]].shape)})"}, {}
    return {"gk": "grad" if len(op.outputs) == 1 else f"grad[{i}]"}, {}


def per_row(ndim: int) -> str:
    """The index that gives a segment's number (one per row) the shape of the rows of an
    array of ``ndim`` axes: ``[:, None]`` for a matrix, nothing for a vector."""
    return f"[:{', None' * (ndim - 1)}]" if ndim > 1 else ""


def on_diagonal(word: str, rows: int, cols: int) -> str:
    """``word``'s last axis put on the main diagonal of rows x cols zeros (0 off it even
    where ``word`` is infinite: ``where``, not a product with ``eye``)."""
    part = f"{word}[..., :, None]" if rows <= cols else f"{word}[..., None, :]"
    return f"where(eye({rows}, {cols}, dtype=bool), {part}, 0)"


def in_band(word: str, low: int, up: int) -> str:
    """``word`` with zeros outside the band of ``low`` diagonals below the main one and
    ``up`` above it (-1: all)."""
    band = word if up < 0 else f"tril({word}, {up})"
    return band if low < 0 else f"triu({band}, {-low})"


def _in_segments(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    tail = per_row(len(trace.tensors[op.inputs[0]].shape))
    return {"counts": f"bincount(segment_ids)[segment_ids]{tail}",
            "held": "(data == y[segment_ids])",
            "n": str(trace.tensors[op.outputs[0]].shape[0])}, {}


def _embed(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    rows, cols = trace.tensors[op.inputs[0]].shape[-2:]
    return {"embed": on_diagonal("grad", rows, cols)}, {}


def _band(trace: Trace, op: OpInfo, s: BackwardStep, i: int) -> tuple[dict, dict]:
    return {"band": in_band("grad", int(op.attrs["num_lower"]), int(op.attrs["num_upper"]))}, {}


_PLACES = {
    "Roll": _roll, "ReverseV2": _reverse, "Slice": _cut, "IdentityN": _each,
    "EuclideanNorm": _reduction, "SegmentMean": _in_segments, "SegmentMax": _in_segments,
    "MatrixDiagPartV3": _embed, "MatrixBandPart": _band,
    **dict.fromkeys(("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool",
                     "MaxPoolGrad", "MaxPoolGradGrad", "AvgPool", "AvgPoolGrad"), _window),
    "Sum": _reduction, "Mean": _reduction, "Max": _reduction, "Min": _reduction,
    "Prod": _reduction, "Cumsum": _cumulative, "Cumprod": _cumulative,
    "LeakyRelu": _leaky, "LeakyReluGrad": _leaky, "Einsum": _einsum, "Tile": _tile,
    "PadV2": _pad, "MirrorPad": _pad, "MirrorPadGrad": _pad, "GatherV2": _gather,
    "UnsortedSegmentSum": _segments,
    "Softmax": _along_axis, "LogSoftmax": _along_axis,
    "SoftmaxCrossEntropyWithLogits": _softmax_xent, "Pow": _pow, "Transpose": _transpose,
    "ConcatV2": _piece, "Pack": _piece, "Split": _pieces, "Unpack": _pieces,
    "StridedSlice": _slice, "StridedSliceGrad": _slice, "Cast": _cast,
}
