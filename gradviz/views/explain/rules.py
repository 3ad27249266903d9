"""Each op type's gradient rule in words: the idea, and a formula template per input.

A new op gets its entry in :data:`OP_RULES` here (``tests/test_explain.py``
fails for an op without one).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...trace import BackwardStep, Trace

__all__ = ["OpRule", "OP_RULES"]


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
for _op_type in ("Equal", "Greater", "GreaterEqual", "Less", "LessEqual"):
    OP_RULES[_op_type] = OpRule(("a", "b"),
                                "is a comparison: its bool output has no gradient", (None, None))
del _op_type

# One formula per input of a MatMul, per (transpose_a, transpose_b), with the
# operands of each product so the shapes can be written out:
#   c = a @ b  =>  dL/da = grad @ b.T,  dL/db = a.T @ grad   (TensorFlow's _MatMulGrad)
_MATMUL = {
    (False, False): (("grad", "b.T"), ("a.T", "grad")),
    (False, True): (("grad", "b"), ("grad.T", "a")),
    (True, False): (("b", "grad.T"), ("a", "grad")),
    (True, True): (("b.T", "grad.T"), ("grad.T", "a.T")),
}


def _rule(trace: Trace, s: BackwardStep) -> OpRule | None:
    """The step's rule, if its op has the inputs the rule speaks of (a trace loaded
    from JSON may not: it then gets the generic sentence, never a crash)."""
    rule = OP_RULES.get(s.op_type)
    if rule is None or s.op_type in _VARIADIC or len(trace.ops[s.op].inputs) == len(rule.roles):
        return rule
    return None
