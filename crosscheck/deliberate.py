"""The differences from TensorFlow that are on purpose, each with its reason.

A difference the crosscheck finds fails it unless it is listed here.  Keep the
list short: each entry is a promise that gradviz differs from TensorFlow there
for a reason a learner would accept, and the README's "as TensorFlow" claims
do not cover it.  ``case`` is a case's name (``errors: ...``, ``edges: ...``), or the
start of some followed by ``*``; ``label`` the result that differs; ``key`` the kind of
difference ``outcome.compare`` gives.  An entry excuses that difference only: any other
in the same case still fails the run.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DELIBERATE", "Deliberate", "reason_for"]


@dataclass(frozen=True)
class Deliberate:
    case: str  # the case's name, or the start of some and "*"
    label: str  # the result that differs: "raised", "message", "dy/dx1", ...
    key: str  # the kind of difference: "value", "None", "raises X where TensorFlow raises Y", ...
    reason: str  # why gradviz differs there, in a sentence


_KERNELS = ("TensorFlow's C++ kernels report a bad argument with their own exception classes "
            "(tf.errors.InvalidArgumentError, UnimplementedError: OpErrors, not ValueErrors); "
            "gradviz has no kernels and checks its arguments in Python, so it raises Python's "
            "ValueError, TypeError, IndexError or ZeroDivisionError (an integer division by "
            "0), with a message naming the op, the shapes or dtypes, and what is accepted")

_LABELS_NOT_SUMMING = (
    "TensorFlow's kernel gives softmax(logits) - labels as the gradient for the logits, "
    "which is the derivative of its loss only for rows of labels that sum to 1; gradviz "
    "gives the derivative, softmax(logits) * sum(labels) - labels, so a learner's check "
    "by finite differences holds (for a distribution, the case the op is for, the two "
    "agree: the random programs use only those)")
_SECOND_ORDER_IN_LABELS = (
    "TensorFlow's second-order rule leaves out how softmax(logits) - labels moves with the "
    "labels, so it gives zeros there; gradviz gives that second derivative")
_ZERO_TANGENTS = (
    "Where a derivative is infinite or NaN (log, log1p or a quotient at 0, exp past "
    "float32's range, xlogy's log(y) at y <= 0, floormod's floor(x / 0)), "
    "TensorFlow's accumulator gives an input with no tangent a tangent of zeros and "
    "multiplies it by that derivative, 0 * inf = NaN (run: the tangent of "
    "2 * reciprocal(x) at x = 0 is NaN, of reciprocal(x) alone -inf); for an elementwise "
    "op gradviz leaves an input with no tangent out of the sum, so the tangent is what "
    "the inputs that move give (+-inf there)")
_TANGENT_SHAPE = (
    "gradviz checks a tangent's shape when the accumulator is made and says which primal's "
    "tangent has which shape; TensorFlow takes a tangent of any shape, then fails in the "
    "first op's kernel or, where the shapes broadcast, gives a tangent of the wrong shape")
_NOT_A_TENSOR = (
    "gradviz refuses something that is not a tensor, as a primal or as the target of jvp, "
    "with a TypeError naming its place; TensorFlow fails inside with an AttributeError "
    "('float' object has no attribute 'dtype', or '_id')")

DELIBERATE: list[Deliberate] = [
    Deliberate(
        "edges: softmax_cross_entropy_with_logits, labels not summing to 1", "dy/dx1", "value",
        _LABELS_NOT_SUMMING),
    Deliberate(
        "edges: softmax_cross_entropy_with_logits, second order in the labels", "d2/dx0",
        "value", _SECOND_ORDER_IN_LABELS),
    Deliberate("forward edges: softmax_cross_entropy_with_logits, labels not summing to 1",
               "jvp y", "value", _LABELS_NOT_SUMMING),
    Deliberate(
        "forward edges: softmax_cross_entropy_with_logits, second order in the labels",
        "jvp dy/dx1", "value", _SECOND_ORDER_IN_LABELS),
    *(Deliberate(f"forward edges: {case}", label, "value", _ZERO_TANGENTS)
      for case, labels in (("log at 0", ("jvp dy/dx0",)),
                           ("exp of large values", ("jvp dy/dx0",)),
                           ("divide by 0", ("jvp dy/dx0", "jvp dy/dx1", "jvp y, x0 alone")),
                           ("log1p at its edges", ("jvp dy/dx0",)),
                           ("log1p float64", ("jvp dy/dx0",)),
                           ("xlogy at zeros", ("jvp dy/dx0", "jvp y, x0 alone")),
                           ("xlogy broadcast", ("jvp dy/dx0",)),
                           ("xdivy at zeros", ("jvp dy/dx0", "jvp y, x0 alone")),
                           ("floormod at zeros", ("jvp y, x0 alone",)),
                           ("floormod by 0.0", ("jvp y, x0 alone",)),
                           ("multiply_no_nan of inf and nan by 0", ("jvp dy/dx0",)))
      for label in labels),
    *(Deliberate(f"forward edges: {name} with an empty segment and ties", "jvp y", "value",
                 "An empty segment's value is 0 whatever the data, so its tangent is 0; "
                 "TensorFlow's accumulator runs the gradient rule transposed, and the rule "
                 "divides each segment's gradient by its count of rows, 0 / 0 = NaN for an "
                 "empty one, which no row reads backwards but the transpose carries forwards; "
                 "gradviz's rule divides with divide_no_nan, so the tangent is 0 (the "
                 "gradients, backwards, are the same)")
      for name in ("segment_mean", "segment_max")),
    Deliberate(
        "forward edges: unsorted_segment_sum with every id dropped", "y", "label",
        "With no segments, TensorFlow's gradient gathers from an empty gradient and fails "
        "(indices[0] = 0 is not in [0, 0)), and its accumulator's tangent is that gradient "
        "transposed, so it fails too; gradviz gives the tangent, zeros"),
    Deliberate(
        "forward edges: gather_nd of rows", "y", "label",
        "TensorFlow's accumulator fails on a sparse gradient taken under it ('IndexedSlices' "
        "object has no attribute '_id'); gradviz carries the tangent of a gather's gradient, "
        "as it carries any other"),
    Deliberate(
        "forward edges: recompute_grad", "y", "label",
        "TensorFlow refuses recompute_grad under an accumulator (NotImplementedError: it "
        "will not transpose the recomputed gradient); gradviz gives the function's results "
        "the tangents its own ops computed, as TensorFlow does for custom_gradient"),
    Deliberate("forward errors: a tangent of another length", "raised", "raises",
               _TANGENT_SHAPE),
    *(Deliberate(f"forward errors: {case}", "raised",
                 "raises ValueError where TensorFlow raises InvalidArgumentError", _TANGENT_SHAPE)
      for case in ("a tangent of another length, used", "a scalar tangent for a vector",
                   "a tangent of another rank")),
    *(Deliberate(f"forward errors: {case}", "raised",
                 "raises TypeError where TensorFlow raises AttributeError", _NOT_A_TENSOR)
      for case in ("a number as a primal", "jvp of a number", "jvp of None")),
    Deliberate(
        "edges: unsorted_segment_sum with every id dropped", "dy/dx0", "label",
        "With no segments, TensorFlow's gradient gathers from an empty gradient and fails "
        "(indices[0] = 0 is not in [0, 0)); gradviz gives the derivative, zeros: every slice "
        "was dropped, so none moves the (empty) sum"),
    *(Deliberate("errors: *", "raised", f"raises {ours} where TensorFlow raises {theirs}",
                 _KERNELS)
      for ours, theirs in (("ValueError", "InvalidArgumentError"),
                           ("TypeError", "InvalidArgumentError"),
                           ("IndexError", "InvalidArgumentError"),
                           ("ValueError", "UnimplementedError"),
                           ("ZeroDivisionError", "InvalidArgumentError"))),
    Deliberate(
        "errors: gradients: a number as ys", "raised", "raises",
        "gradviz refuses a number as ys with a TypeError that says to make it a tensor; "
        "TensorFlow makes it a constant, which depends on nothing, and answers None"),
    Deliberate(
        "errors: nn: a grouped convolution", "raised", "raises",
        "gradviz refuses a grouped convolution (input depth a multiple of the filter's, not "
        "equal) with a ValueError that names the groups; TensorFlow computes it, and gradviz "
        "has no grouped kernel, its words or its formulas"),
    Deliberate(
        "errors: nn: a SAME window too wide to pad in memory", "raised", "raises",
        "gradviz pads an input in memory and gathers its windows as arrays, so it refuses a "
        "window whose padded input or windows would pass 2**27 values (here a 3x3 kernel "
        "dilated 10000 times pads a 4x4 image to 20004x20004), with a ValueError giving the "
        "sizes and the limit; TensorFlow's kernels never pad in memory, and compute it"),
    Deliberate(
        "errors: nn: conv1d stride of length 2", "message", "message",
        "TensorFlow's 'of length 1, 1 or 3' repeats the 1; gradviz says 'of length 1 or 3' "
        "and names the forms it takes"),
]


def reason_for(case: str, label: str, key: str) -> Deliberate | None:
    """The entry that lets ``case`` differ from TensorFlow at ``label`` in the way ``key``
    says, or None."""
    for d in DELIBERATE:
        if d.key == key and d.label == label and (
                d.case == case or d.case.endswith("*") and case.startswith(d.case[:-1])):
            return d
    return None
