"""A forward step in words: how an op's tangent follows from its inputs' tangents.

Forward mode carries beside each value its tangent: how it moves when the
primals move along their given directions.  Each op's step takes its inputs'
tangents (``dX`` for input ``X``) and gives its output's, ``dY = J·dX``: the
op's Jacobian applied to the tangents in, summed over the inputs that move.

Its formula runs as NumPy as a backward step's does (:class:`Formula`):

- an elementwise op (``DIAGONAL``) has a diagonal Jacobian, so its term for
  each moving input is its gradient rule's formula with that input's tangent
  in the upstream gradient's place: ``x * w`` reads ``dx * w + dw * x``;
- every other op has its tangent written here (:data:`_WRITERS`): a linear op
  moves the tangent as it moves the values (``sum(dx, axis=1)``,
  ``reshape(dx, (3, 2))``), a product of two inputs follows the product rule
  (``dA @ B + A @ dB``), and ``softmax`` and the reductions by max or product
  have their derivatives written out.

Only a custom gradient's step, whose function is the user's, is said in words
alone (its tangent comes from its function's own ops or its ``grad_fn``
transposed, as TensorFlow's accumulator computes it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...engine.elementwise import TABLE
from ...engine.jvp_rules import DIAGONAL
from ...trace import ArrayData, ForwardStep, OpInfo, Trace
from .explanation import FIRST_FEW, WIDE, Explanation, _and_some, _once_per_step, _pass_note
from .formatting import _named_shape, _sh
from .formula import Formula, formula_namespace
from .names import _fill, _formula_names, _name, _number, _type_is_ambiguous, op_name
from .rules import OP_RULES, _index_text, _spread, _window_args, in_band, on_diagonal, per_row
from .spelling import _fill_idea, _spelling
from .windows import window_shapes

__all__ = ["JVP_IDEAS", "part_formulas", "tangent_name"]


def tangent_name(name: str) -> str:
    """How the words write the tangent of a tensor called ``name``: ``dX``.

    >>> tangent_name("X"), tangent_name("'layer1/W'")
    ('dX', "'d(layer1/W)'")
    """
    if name.startswith("'") and name.endswith("'"):
        return f"'d({name[1:-1]})'"
    return f"d{name}"


# ---------------------------------------------------------------- each op's tangent in words


#: What an op's tangent is, completing "Its tangent ...", for every op that is not
#: elementwise (an elementwise op's words are its gradient rule's, see the module).
JVP_IDEAS: dict[str, str] = {
    "Identity": "is the input's tangent itself",
    "Cast": "is the input's tangent, cast as the value was",
    "Reshape": "is the input's tangent reshaped as the value was (a linear op moves the "
               "tangent as it moves the values)",
    "ExpandDims": "is the input's tangent given the same new axis",
    "Squeeze": "is the input's tangent with the same axis dropped",
    "Transpose": "is the input's tangent transposed the same way",
    "BroadcastTo": "is the input's tangent broadcast the same way",
    "Sum": "is the input's tangent summed over the same axes (a sum is linear)",
    "Mean": "is the input's tangent averaged over the same axes",
    "MatMul": "follows the product rule: d(a @ b) = da @ b + a @ db, a term for each factor "
              "that moves",
    "SoftmaxCrossEntropyWithLogits": "is each input's tangent times the loss's derivative for "
                                     "it, summed over the classes: softmax(logits) * "
                                     "sum(labels) - labels for the logits, -log_softmax(logits) "
                                     "for the labels",
    "AddV2": "is the sum of the inputs' tangents",
    "BiasAdd": "is the sum of the inputs' tangents, the bias's broadcast along the last axis",
    "Softmax": "is y * (dx - sum(y * dx)) along the axis: the tangent less its mean weighted "
               "by the probabilities y, times y",
    "LogSoftmax": "is dx - sum(softmax(x) * dx) along the axis: the tangent less its mean "
                  "weighted by the probabilities",
    "SigmoidCrossEntropyWithLogits": "is (sigmoid(logits) - labels) times the logits' tangent, "
                                     "less the logits times the labels' tangent",
    "Max": "is the tangent where the input was largest, shared equally among ties, as the "
           "gradient is",
    "Min": "is the tangent where the input was smallest, shared equally among ties, as the "
           "gradient is",
    "Prod": "is, over the reduced axes, the sum of each element's tangent times the product "
            "of the others",
    "Cumsum": "is the running sum of the tangent, taken the same way",
    "Cumprod": "is y times the running sum of dx / x along the axis, taken the same way (its "
               "gradient rule's form, which takes 0 where x is 0)",
    "ConcatV2": "joins the inputs' tangents the same way, zeros for an input that does not "
                "move",
    "Pack": "stacks the inputs' tangents the same way, zeros for an input that does not move",
    "Unpack": "cuts the tangent the same way: each output gets its piece",
    "Split": "cuts the tangent the same way: each output gets its piece",
    "StridedSlice": "is the same slice of the tangent",
    "StridedSliceGrad": "puts the tangent in the same slice of zeros",
    "Tile": "is the tangent tiled the same way",
    "PadV2": "is the tangent padded the same way, the padding value's own tangent in the "
             "padded cells",
    "MirrorPad": "is the tangent mirror-padded the same way",
    "MirrorPadGrad": "folds the tangent's mirrored edges back in the same way",
    "GatherV2": "gathers the same rows of the tangent",
    "GatherNd": "gathers the same places of the tangent",
    "ScatterNd": "scatters the updates' tangent to the same places",
    "UnsortedSegmentSum": "sums the tangent's rows into the same segments",
    "Conv2D": "follows the product rule, a convolution being linear in each input: "
              "conv2d(dx, w) + conv2d(x, dw), a term for each input that moves",
    "MaxPool": "is the tangent at each window's first maximum, where the value came from",
    "AvgPool": "is each window's average of the tangent",
    "Einsum": "follows the product rule: the same einsum with one operand's tangent in its "
              "place, a term for each operand that moves",
    "MaxPoolGrad": "routes the tangent of the gradient it passes on to each window's first "
                   "maximum, as it routes the gradient (where the maximum is moves with nothing)",
    "MaxPoolGradGrad": "picks, in each window, the tangent at its first maximum",
    "AvgPoolGrad": "spreads the tangent over each window, divided by the window's size, as it "
                   "spreads the gradient",
    "Conv2DBackpropInput": "follows the product rule, being linear in the kernel and in the "
                           "gradient it takes: a term for each that moves",
    "Conv2DBackpropFilter": "follows the product rule, being linear in the input and in the "
                            "gradient it takes: a term for each that moves",
    "Sign": "is none: sign is flat wherever it is differentiable, so no direction moves it, "
            "and as in TensorFlow its output gets no tangent",
    "OnesLike": "is none: its output is ones whatever the input, so it does not move",
    "ZerosLike": "is none: its output is zeros whatever the input, so it does not move",
    "Roll": "is the input's tangent rolled the same way",
    "ReverseV2": "is the input's tangent reversed along the same axes",
    "Slice": "is the same block of the tangent",
    "IdentityN": "is, for each output, its input's tangent itself",
    "PreventGradient": "would come from its gradient rule, which refuses: forward mode through "
                       "it raises the same LookupError, as in TensorFlow",
    "EuclideanNorm": "is sum(x * dx) / y over the same axes, the dot product of x and dx "
                     "over the length y: how far dx moves along x's direction",
    "SegmentSum": "sums the tangent's rows into the same segments",
    "SegmentMean": "averages the tangent's rows in the same segments",
    "SegmentMax": "is, in each segment, the tangent of the rows that held the maximum, shared "
                  "equally among ties, as the gradient is",
    "MatrixDiagV3": "puts the tangent on the same diagonal",
    "MatrixDiagPartV3": "is the tangent's main diagonal",
    "MatrixBandPart": "is the tangent cut to the same band",
}
# the elementwise table's flat ops (floor, round, ...), whose rule passes no gradient
JVP_IDEAS.update({e.op_type: "is none: it is flat between its jumps, so a small move of "
                  "its input does not move it"
                  for e in TABLE if not any(e.grads) and not e.comparison})


@dataclass(frozen=True)
class _Op:
    """What a writer needs of a step: the op, each input's name (``x``) and tangent name
    (``t``, None where it does not move), and each output's name (``y``)."""

    trace: Trace
    op: OpInfo
    x: list[str]
    t: list[str | None]
    y: list[str]

    def shape(self, tid: int) -> tuple[int, ...]:
        return tuple(self.trace.tensors[tid].shape)

    def zeros_or(self, i: int) -> str:
        """Input ``i``'s tangent, or zeros shaped like it where it does not move."""
        return self.t[i] or f"zeros_like({self.x[i]})"


_Writer = Callable[[_Op], list[str | None]]
_WRITERS: dict[str, _Writer] = {}


def _writes(*op_types: str) -> Callable[[_Writer], _Writer]:
    def register(fn: _Writer) -> _Writer:
        for t in op_types:
            _WRITERS[t] = fn
        return fn
    return register


def _terms(*terms: str | None) -> list[str | None]:
    """One output's tangent: the terms of the inputs that move, added."""
    moving = [t for t in terms if t is not None]
    return [" + ".join(moving).replace("+ -", "- ") if moving else None]


def _axes(op: OpInfo) -> str:
    axes = tuple(op.attrs.get("axis", ()))
    return str(axes[0]) if len(axes) == 1 else str(axes)


def _keep(op: OpInfo) -> str:
    return ", keepdims=True" if op.attrs.get("keepdims") else ""


@_writes("Identity")
def _identity(o: _Op) -> list[str | None]:
    return [o.t[0]]


@_writes("Cast")
def _cast(o: _Op) -> list[str | None]:
    dtype = np.dtype(o.trace.tensors[o.op.outputs[0]].dtype)
    return [None if o.t[0] is None else f"{o.t[0]}.astype({dtype})"]


@_writes("Reshape", "ExpandDims", "Squeeze")
def _reshape(o: _Op) -> list[str | None]:
    return [None if o.t[0] is None else f"reshape({o.t[0]}, {o.shape(o.op.outputs[0])})"]


@_writes("Transpose")
def _transpose(o: _Op) -> list[str | None]:
    perm = tuple(o.op.attrs["perm"])
    return [None if o.t[0] is None else f"transpose({o.t[0]}, {perm})"]


@_writes("BroadcastTo")
def _broadcast_to(o: _Op) -> list[str | None]:
    return [None if o.t[0] is None else f"broadcast_to({o.t[0]}, {o.shape(o.op.outputs[0])})"]


@_writes("Sum", "Mean")
def _reduce(o: _Op) -> list[str | None]:
    fn = "sum" if o.op.type == "Sum" else "mean"
    return [None if o.t[0] is None else f"{fn}({o.t[0]}, axis={_axes(o.op)}{_keep(o.op)})"]


def _factor(token: str, transposed: bool, ndim: int) -> str:
    if not transposed:
        return token
    return f"{token}.T" if ndim <= 2 else f"swapaxes({token}, -1, -2)"


@_writes("MatMul")
def _matmul(o: _Op) -> list[str | None]:
    ta, tb = bool(o.op.attrs.get("transpose_a")), bool(o.op.attrs.get("transpose_b"))
    na, nb = (len(o.shape(t)) for t in o.op.inputs)
    a, b = o.x

    def term(left: str | None, right: str | None) -> str | None:
        if left is None or right is None:
            return None
        return f"{_factor(left, ta, na)} @ {_factor(right, tb, nb)}"
    return _terms(term(o.t[0], b), term(a, o.t[1]))


@_writes("SoftmaxCrossEntropyWithLogits")
def _softmax_xent(o: _Op) -> list[str | None]:
    axis = int(o.op.attrs["axis"])
    labels, logits = o.x
    dlabels, dlogits = o.t
    slope = (f"softmax({logits}, axis={axis}) * sum({labels}, axis={axis}, keepdims=True) "
             f"- {labels}")
    return _terms(
        None if dlogits is None else f"sum({dlogits} * ({slope}), axis={axis})",
        None if dlabels is None else f"sum({dlabels} * -log_softmax({logits}, axis={axis}), "
                                     f"axis={axis})")


@_writes("AddV2", "BiasAdd")
def _add(o: _Op) -> list[str | None]:
    return _terms(*o.t)


@_writes("Softmax")
def _softmax(o: _Op) -> list[str | None]:
    axis, (dx,), (y,) = int(o.op.attrs["axis"]), o.t, o.y
    return [f"{y} * ({dx} - sum({y} * {dx}, axis={axis}, keepdims=True))"]


@_writes("LogSoftmax")
def _log_softmax(o: _Op) -> list[str | None]:
    axis, (dx,), (x,) = int(o.op.attrs["axis"]), o.t, o.x
    return [f"{dx} - sum(softmax({x}, axis={axis}) * {dx}, axis={axis}, keepdims=True)"]


@_writes("SigmoidCrossEntropyWithLogits")
def _sigmoid_xent(o: _Op) -> list[str | None]:
    (labels, logits), (dlabels, dlogits) = o.x, o.t
    return _terms(None if dlogits is None else f"{dlogits} * (sigmoid({logits}) - {labels})",
                  None if dlabels is None else f"-{dlabels} * {logits}")


@_writes("Max", "Min")
def _extreme(o: _Op) -> list[str | None]:
    (x,), (dx,) = o.x, o.t
    axes, keep = _axes(o.op), _keep(o.op)
    at = f"{x} == {o.op.type.lower()}({x}, axis={axes}, keepdims=True)"
    return [f"sum(where({at}, {dx}, 0), axis={axes}{keep}) / sum({at}, axis={axes}{keep})"]


@_writes("Prod")
def _prod(o: _Op) -> list[str | None]:
    (x,), (dx,) = o.x, o.t
    axes = _axes(o.op)
    return [f"sum({dx} * product_of_others({x}, axis={axes}), axis={axes}{_keep(o.op)})"]


@_writes("Cumsum")
def _cumsum(o: _Op) -> list[str | None]:
    flags = "".join(f", {k}=True" for k in ("exclusive", "reverse") if o.op.attrs.get(k))
    return [f"running_sum({o.t[0]}, axis={int(o.op.attrs['axis'])}{flags})"]


@_writes("Cumprod")
def _cumprod(o: _Op) -> list[str | None]:
    # the gradient rule's, transposed: y times the running sum of dx / x, with the rule's
    # 0 where x is 0
    flags = "".join(f", {k}=True" for k in ("exclusive", "reverse") if o.op.attrs.get(k))
    (x,), (dx,), (y,) = o.x, o.t, o.y
    return [f"{y} * running_sum(where({x} == 0, 0, {dx} / where({x} == 0, 1, {x})), "
            f"axis={int(o.op.attrs['axis'])}{flags})"]


@_writes("ConcatV2", "Pack")
def _join(o: _Op) -> list[str | None]:
    fn = "concatenate" if o.op.type == "ConcatV2" else "stack"
    parts = [o.zeros_or(i) for i in range(len(o.x))]
    return [f"{fn}([{', '.join(parts)}], axis={int(o.op.attrs['axis'])})"]


@_writes("Unpack")
def _unpack(o: _Op) -> list[str | None]:
    axis = int(o.op.attrs["axis"])
    return [f"moveaxis({o.t[0]}, {axis}, 0)[{k}]" for k in range(len(o.y))]


@_writes("Split")
def _split(o: _Op) -> list[str | None]:
    axis = int(o.op.attrs["axis"])
    cuts = list(np.cumsum([o.shape(t)[axis] for t in o.op.outputs])[:-1])
    return [f"split({o.t[0]}, {[int(c) for c in cuts]}, axis={axis})[{k}]"
            for k in range(len(o.y))]


@_writes("StridedSlice")
def _strided_slice(o: _Op) -> list[str | None]:
    return [f"{o.t[0]}[{_index_text(o.op.attrs['spec'])}]"]


@_writes("StridedSliceGrad")
def _strided_slice_grad(o: _Op) -> list[str | None]:
    shape = tuple(o.op.attrs["shape"])
    return [f"put(zeros({shape}), s_[{_index_text(o.op.attrs['spec'])}], {o.t[0]})"]


@_writes("Tile")
def _tile(o: _Op) -> list[str | None]:
    return [f"tile({o.t[0]}, {tuple(o.op.attrs['multiples'])})"]


def _pads(o: _Op) -> tuple:
    return tuple(tuple(p) for p in o.op.attrs["paddings"])


@_writes("PadV2")
def _pad(o: _Op) -> list[str | None]:
    pads = _pads(o)
    x = o.x[0]
    dfill = o.t[1] if len(o.t) > 1 else None
    return _terms(None if o.t[0] is None else f"pad({o.t[0]}, {pads})",
                  None if dfill is None else
                  f"pad(zeros_like({x}), {pads}, constant_values={dfill})")


@_writes("MirrorPad")
def _mirror_pad(o: _Op) -> list[str | None]:
    return [f"pad({o.t[0]}, {_pads(o)}, mode='{str(o.op.attrs['mode']).lower()}')"]


@_writes("MirrorPadGrad")
def _mirror_pad_grad(o: _Op) -> list[str | None]:
    return [f"unmirror({o.t[0]}, {list(map(list, _pads(o)))}, '{o.op.attrs['mode']}')"]


@_writes("GatherV2")
def _gather(o: _Op) -> list[str | None]:
    if int(o.op.attrs.get("batch_dims", 0)):
        raise _Unwritten
    return [f"take({o.t[0]}, {o.x[1]}, axis={int(o.op.attrs.get('axis', 0))})"]


@_writes("GatherNd")
def _gather_nd(o: _Op) -> list[str | None]:
    return [f"gather_nd({o.t[0]}, {o.x[1]})"]


@_writes("ScatterNd")
def _scatter_nd(o: _Op) -> list[str | None]:
    return [f"scatter_nd({o.x[0]}, {o.t[1]}, {tuple(o.op.attrs['shape'])})"]


@_writes("UnsortedSegmentSum")
def _segment_sum(o: _Op) -> list[str | None]:
    return [f"segment_sum({o.t[0]}, {o.x[1]}, {int(o.op.attrs['num_segments'])})"]


@_writes("Roll")
def _roll(o: _Op) -> list[str | None]:
    return [f"roll({o.t[0]}, {tuple(o.op.attrs['shift'])}, axis={tuple(o.op.attrs['axis'])})"]


@_writes("ReverseV2")
def _reverse(o: _Op) -> list[str | None]:
    return [f"flip({o.t[0]}, axis={tuple(o.op.attrs['axis'])})"]


@_writes("Slice")
def _cut(o: _Op) -> list[str | None]:
    index = ", ".join(f"{b}:{b + n}" for b, n in zip(o.op.attrs["begin"], o.op.attrs["size"]))
    return [f"{o.t[0]}[{index or '...'}]"]


@_writes("IdentityN")
def _identity_n(o: _Op) -> list[str | None]:
    return list(o.t)


@_writes("EuclideanNorm")
def _euclidean_norm(o: _Op) -> list[str | None]:
    (x,), (dx,), (y,) = o.x, o.t, o.y
    return [f"sum({x} * {dx}, axis={_axes(o.op)}{_keep(o.op)}) / {y}"]


def _segment_parts(o: _Op) -> tuple[str, str, int, str]:
    """A segment op's ids, its tangent's rows summed per segment, the number of segments
    and the index that gives a segment's count a row's shape."""
    n = o.shape(o.op.outputs[0])[0]
    return o.x[1], f"segment_sum({o.t[0]}, {o.x[1]}, {n})", n, \
        per_row(len(o.shape(o.op.inputs[0])))


@_writes("SegmentSum")
def _segment_sum_sorted(o: _Op) -> list[str | None]:
    return [_segment_parts(o)[1]]


@_writes("SegmentMean")
def _segment_mean(o: _Op) -> list[str | None]:
    ids, summed, n, tail = _segment_parts(o)
    return [f"{summed} / maximum(bincount({ids}, minlength={n}), 1){tail}"]


@_writes("SegmentMax")
def _segment_max(o: _Op) -> list[str | None]:
    (x, ids), (dx, _), (y,) = o.x, o.t, o.y
    n = o.shape(o.op.outputs[0])[0]
    held = f"({x} == {y}[{ids}])"
    return [f"segment_sum(where({held}, {dx}, 0), {ids}, {n}) / maximum(segment_sum("
            f"{held} * 1.0, {ids}, {n}), 1)"]


@_writes("MatrixDiagV3")
def _matrix_diag(o: _Op) -> list[str | None]:
    rows, cols = o.shape(o.op.outputs[0])[-2:]
    return [on_diagonal(o.t[0], rows, cols)]


@_writes("MatrixDiagPartV3")
def _matrix_diag_part(o: _Op) -> list[str | None]:
    return [f"diagonal({o.t[0]}, axis1=-2, axis2=-1)"]


@_writes("MatrixBandPart")
def _band_part(o: _Op) -> list[str | None]:
    return [in_band(o.t[0], int(o.op.attrs["num_lower"]), int(o.op.attrs["num_upper"]))]


@_writes("Conv2D")
def _conv2d(o: _Op) -> list[str | None]:
    win = _window_args(o.op.attrs)
    (x, w), (dx, dw) = o.x, o.t
    return _terms(None if dx is None else f"conv2d({dx}, {w}{win})",
                  None if dw is None else f"conv2d({x}, {dw}{win})")


@_writes("MaxPool")
def _max_pool(o: _Op) -> list[str | None]:
    k, win = tuple(o.op.attrs["ksize"]), _window_args(o.op.attrs)
    (x,), (dx,) = o.x, o.t
    return [f"sum(first_max(windows({x}, {k}{win}, fill=-inf)) * windows({dx}, {k}{win}), "
            f"axis=(3, 4))"]


@_writes("AvgPool")
def _avg_pool(o: _Op) -> list[str | None]:
    attrs = o.op.attrs
    k, win = tuple(attrs["ksize"]), _window_args(attrs)
    (x,), (dx,) = o.x, o.t
    padded = attrs["padding"] != "VALID" and any(p for pair in attrs["pads"] for p in pair)
    n = (f"sum(windows(ones(shape({x})), {k}{win}), axis=(3, 4))" if padded
         else str(int(np.prod(k))))
    return [f"sum(windows({dx}, {k}{win}), axis=(3, 4)) / {n}"]


def _pool_mask(o: _Op, x: str) -> str:
    """Where each window of ``x`` took its (first) maximum: ones there, zeros elsewhere."""
    k, win = tuple(o.op.attrs["ksize"]), _window_args(o.op.attrs)
    return f"first_max(windows({x}, {k}{win}, fill=-inf))"


@_writes("MaxPoolGrad")
def _max_pool_grad(o: _Op) -> list[str | None]:
    # linear in the gradient it routes (input 2); its window's choice moves with nothing
    win = _window_args(o.op.attrs)
    x, dy = o.x[0], o.t[2]
    if dy is None:
        raise _Unwritten
    return [f"unwindows({_pool_mask(o, x)} * {dy}[:, :, :, None, None, :], shape({x}){win})"]


@_writes("MaxPoolGradGrad")
def _max_pool_grad_grad(o: _Op) -> list[str | None]:
    k, win = tuple(o.op.attrs["ksize"]), _window_args(o.op.attrs)
    x, dg = o.x[0], o.t[2]
    if dg is None:
        raise _Unwritten
    return [f"sum({_pool_mask(o, x)} * windows({dg}, {k}{win}), axis=(3, 4))"]


@_writes("AvgPoolGrad")
def _avg_pool_grad(o: _Op) -> list[str | None]:
    attrs = o.op.attrs
    k, win = tuple(attrs["ksize"]), _window_args(attrs)
    shape = tuple(attrs["orig_input_shape"])
    padded = attrs["padding"] != "VALID" and any(p for pair in attrs["pads"] for p in pair)
    n = (f"sum(windows(ones({shape}), {k}{win}), axis=(3, 4))" if padded
         else str(int(np.prod(k))))
    return [f"unwindows(ones({(*k, 1)}) * ({o.t[0]} / {n})[:, :, :, None, None, :], "
            f"{shape}{win})"]


@_writes("Conv2DBackpropInput")
def _conv_input(o: _Op) -> list[str | None]:
    # dL/dx of a convolution, bilinear in the kernel (input 0) and dy (input 1)
    attrs = o.op.attrs
    in_shape, out_shape = window_shapes(o.trace, o.op)
    dilations = tuple(attrs.get("dilations", (1, 1)))
    dil = f", dilations={dilations}" if dilations != (1, 1) else ""

    def term(dy: str, w: str) -> str:
        spread = _spread(dy, attrs, tuple(in_shape[1:3]), tuple(out_shape[1:3]))
        return f"conv2d({spread}, {w}[::-1, ::-1].swapaxes(2, 3){dil})"
    (w, dy), (dw, ddy) = o.x, o.t
    return _terms(None if ddy is None else term(ddy, w), None if dw is None else term(dy, dw))


@_writes("Conv2DBackpropFilter")
def _conv_filter(o: _Op) -> list[str | None]:
    # dL/dw of a convolution, bilinear in the input (input 0) and dy (input 1)
    k, win = tuple(o.op.attrs["ksize"]), _window_args(o.op.attrs)
    (x, dy), (dx, ddy) = o.x, o.t

    def term(a: str, b: str) -> str:
        return f"einsum('nyxijc,nyxo->ijco', windows({a}, {k}{win}), {b})"
    return _terms(None if dx is None else term(dx, dy), None if ddy is None else term(x, ddy))


@_writes("Einsum")
def _einsum(o: _Op) -> list[str | None]:
    eq = o.op.attrs["equation"]
    if len(o.x) == 1:
        return [f"einsum('{eq}', {o.t[0]})"]
    (a, b), (da, db) = o.x, o.t
    return _terms(None if da is None else f"einsum('{eq}', {da}, {b})",
                  None if db is None else f"einsum('{eq}', {a}, {db})")


class _Unwritten(Exception):
    """A case of an op whose tangent has no formula here (said in words only)."""


# ---------------------------------------------------------------- the step


#: The words a name could collide with in a forward formula: NumPy's and the helpers'.
_TAKEN: set[str] = set()


def _taken() -> set[str]:
    if not _TAKEN:
        _TAKEN.update(formula_namespace(), {"grad", "L"})
    return _TAKEN


@dataclass(frozen=True)
class _Said:
    """How one forward step writes its op's tensors and their tangents."""

    names: dict[int, str]  # tensor id -> its name in the formulas
    tangents: list[str | None]  # per input: its tangent's name, None where it does not move


def _said(trace: Trace, s: ForwardStep) -> _Said:
    """The step's names, worked out once per step of a trace (its words, its arrays'
    labels and its questions all read them)."""
    return _once_per_step(trace, s, "_gv_forward_said", _say)


def _say(trace: Trace, s: ForwardStep) -> _Said:
    op = trace.ops[s.op]
    names = _formula_names(trace, [*op.inputs, *op.outputs], _taken())
    if s.op_type in DIAGONAL and s.op_type in OP_RULES:  # its gradient rule's names
        names.update(_spelling(trace, s).names)
    used = set(names.values())
    tangents: list[str | None] = []
    for i, t in enumerate(op.inputs):
        if i >= len(s.tangents_in) or s.tangents_in[i] is None:
            tangents.append(None)
            continue
        d = tangent_name(names[t])
        if d in used and not d.startswith("'"):  # a tensor called dX beside X: quote it
            d = f"'{d}'"
        tangents.append(d)
    return _Said(names, tangents)


def _forward(trace: Trace, s: ForwardStep) -> Explanation:
    op = trace.ops[s.op]
    said = _said(trace, s)
    name = op_name(trace, s.op)
    ambiguous = _type_is_ambiguous(trace, s.op)
    called = f"{s.op_type} '{name}'" if ambiguous else s.op_type
    inputs = _and_some([_named_shape(said.names[t], trace.tensors[t].shape)
                        for t in op.inputs[:WIDE]], len(op.inputs))
    moving = list(_first_inputs(said).values())  # each tangent once: x * x gets dx
    arriving = _and_some([_named_shape(said.tangents[i], s.tangents_in[i].shape)
                          for i in moving[:WIDE]], len(moving))
    sentence = (f"{called} of {inputs} gets the tangent{'s' if len(moving) > 1 else ''} "
                f"{arriving}")
    if len(moving) < sum(d is not None for d in said.tangents):
        sentence += " (one tensor as several of its inputs)"
    still = list(dict.fromkeys(said.names[t] for i, t in enumerate(op.inputs)
                               if said.tangents[i] is None and _moves(trace, t)))
    if still:
        sentence += (f"; {_and_some(still[:WIDE], len(still))} "
                     f"{'does' if len(still) == 1 else 'do'} not move")
    sentence += ". " + _idea(trace, s, said) + "."
    if s.nonfinite:
        sentence += " Warning: a tangent produced here holds NaN or Inf."
    formulas = _formulas(trace, s, said)
    outs = [_name(trace, t) for t in op.outputs]
    if formulas:
        formula = "; ".join(map(str, formulas[:FIRST_FEW + 1]))
        if len(formulas) > FIRST_FEW + 1:
            formula += f"; \u2026 and {len(formulas) - FIRST_FEW - 1} more, one per output"
    elif all(t is None for t in s.tangents):
        formula = "; ".join(f"{tangent_name(o)} = None" for o in outs)
    else:
        formula = "; ".join(f"{tangent_name(o)}: {_sh(t)}" for o, t in zip(outs, s.tangents)
                            if t is not None)
    title = f"{s.op_type} forward" + (f" ({name})" if ambiguous else "")
    return Explanation(title + _pass_note(trace, s), sentence, formula, tuple(formulas))


def _first_inputs(said: _Said) -> dict[str, int]:
    """Each tangent arriving, by name, and the first input it arrives at (in input order):
    ``x * x`` gets ``dx`` once."""
    first: dict[str, int] = {}
    for i, d in enumerate(said.tangents):
        if d is not None:
            first.setdefault(d, i)
    return first


def _moves(trace: Trace, tid: int) -> bool:
    """Whether tensor ``tid`` is one that could carry a tangent (a float, not a number)."""
    t = trace.tensors[tid]
    return np.dtype(t.dtype).kind == "f" and _number(t) is None


def _idea(trace: Trace, s: ForwardStep, said: _Said) -> str:
    """What the step's rule does, in a sentence of its own (without its full stop)."""
    if s.rule == "stop_gradient":
        return ("stop_gradient passes no tangent, as it passes no gradient: its output "
                "does not move, and nothing computed from it moves through it")
    if s.rule == "integer":
        return ("Its outputs are integers or booleans, which move in no direction: they get "
                "no tangent, as in TensorFlow")
    if s.rule == "custom":
        return ("It is a custom gradient: its results keep the tangents the ops inside its "
                "function gave them, as TensorFlow's accumulator does (its grad_fn serves a "
                "backward pass only)")
    rule = OP_RULES.get(s.op_type)
    if s.rule == "diagonal" and rule is not None:
        idea = _fill_idea(rule, _spelling(trace, s))
        parts = ("each moving input's part, and the parts add"
                 if sum(d is not None for d in said.tangents) > 1 else "its part")
        return (f"It works elementwise, so its Jacobian is diagonal, and its gradient rule "
                f"(it {idea}) with the tangent in the upstream gradient's place gives {parts}")
    idea = JVP_IDEAS.get(s.op_type)
    text = f"Its tangent {idea}" if idea else "Its tangent comes from its gradient rule"
    if s.rule == "transposed" and all(t is None for t in s.tangents):
        text += ("; gradviz finds that as TensorFlow's ForwardAccumulator does, by running "
                 "the gradient rule transposed, which gives none here")
    elif s.rule == "transposed":
        text += ("; gradviz computes it as TensorFlow's ForwardAccumulator does, by running "
                 "the gradient rule, which is linear in the upstream gradient, transposed")
    return text


def part_formulas(trace: Trace, s: ForwardStep, i: int) -> list[Formula]:
    """The step's formulas with input ``i``'s tangent alone (the others taken as not moving):
    that input's part of each output's tangent, where the step has formulas."""
    said = _said(trace, s)
    alone = _Said(said.names, [d if k == i else None for k, d in enumerate(said.tangents)])
    return _formulas(trace, s, alone)


def _formulas(trace: Trace, s: ForwardStep, said: _Said) -> list[Formula]:
    """One formula per output that gets a tangent, in the op's own tensors' names."""
    op = trace.ops[s.op]
    if s.rule not in ("diagonal", "own", "transposed"):
        return []
    if all(d is None for d in said.tangents):
        return []
    o = _Op(trace, op, [said.names[t] for t in op.inputs], said.tangents,
            [said.names[t] for t in op.outputs])
    numbers: dict = {}
    try:
        if s.rule == "diagonal" and s.op_type in OP_RULES:
            exprs, numbers = _diagonal(trace, s, said)
        elif s.op_type in _WRITERS:
            exprs = _WRITERS[s.op_type](o)
        else:
            return []
    except _Unwritten:
        return []
    bound: dict = {}
    for t in (*op.inputs, *op.outputs):
        token = said.names[t]
        if _NAME.fullmatch(token):
            bound[token] = trace.tensors[t].value
    for i, d in enumerate(said.tangents):
        if d is not None:
            bound[d] = s.tangents_in[i]
    ins = ", ".join(_sh(s.tangents_in[i]) for i, d in enumerate(said.tangents) if d is not None)
    where = ", ".join(f"{k} = {v}" for k, v in numbers.items())
    out = []
    for k, (expr, tangent) in enumerate(zip(exprs, s.tangents)):
        if expr is None or tangent is None:
            continue
        out.append(Formula(tangent_name(said.names[op.outputs[k]]), expr,
                           {**bound, **numbers}, f"{ins} -> {_sh(tangent)}", tangent, where))
    return out


# A name as a formula writes it: a word, or anything quoted.
_NAME = re.compile(r"[A-Za-z_]\w*|'[^']*'")
_GRAD = re.compile(r"\bgrad\b")
_PLACE = "__tangent__"


def _diagonal(trace: Trace, s: ForwardStep, said: _Said) -> tuple[list[str | None], dict]:
    """An elementwise op's tangent: each moving input's gradient formula with its tangent as
    the upstream gradient, added."""
    spell = _spelling(trace, s)
    terms: list[str | None] = []
    numbers: dict = {}
    for i, d in enumerate(said.tangents):
        if d is None or i >= len(spell.templates):
            terms.append(None)
            continue
        template = _GRAD.sub(_PLACE, spell.templates[i])
        terms.append(_fill(template, spell.by_word).replace(_PLACE, d))
        numbers.update(spell.numbers[i])
    return _terms(*terms), numbers


def _forward_arrays(trace: Trace, s: ForwardStep) -> list[tuple[str, ArrayData]]:
    op = trace.ops[s.op]
    said = _said(trace, s)
    out = [(f"tangent {d} arriving", s.tangents_in[i]) for d, i in _first_inputs(said).items()]
    out += [(f"tangent {tangent_name(said.names[t])}", a)
            for t, a in zip(op.outputs, s.tangents) if a is not None]
    return out
