"""gradviz: see reverse-mode differentiation happen, step by step.

A small reverse-mode engine on NumPy with TensorFlow's ``tf.gradients`` and
``GradientTape`` semantics, which can record every step of a backward pass as
a :class:`Trace`; renderers draw a trace as a diagram, a JupyterLab widget and
a self-contained HTML report.

Three layers, each a subpackage that imports only the ones below it (see
ARCHITECTURE.md): :mod:`gradviz.engine` (tensors, ops, gradient rules, the
backward walk, the tape), :mod:`gradviz.trace` (a backward pass as plain data)
and :mod:`gradviz.views` (words, diagram, widget, report, plots).

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0, 3.0], name="x")
>>> y = gv.reduce_sum(x * x)
>>> gv.gradients(y, x)[0].numpy().tolist()
[2.0, 4.0, 6.0]
"""

import importlib as _importlib
import sys as _sys
import types as _types

from .engine.backprop import UnconnectedGradients, broadcast_axes, gradients, unbroadcast
from .engine.custom import (GradientCheck, check_gradients, custom_gradient, define_op,
                            grad_pass_through, recompute_grad)
from .engine.dtypes import (
    DType,
    as_dtype,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from .engine.gradient_rules import (
    NotDifferentiable,
    RegisterGradient,
    get_gradient_function,
    registered_op_types,
)
from .engine import array_ops as _array_ops
from .engine import elementwise as _elementwise
from .engine import math_ops as _math_ops
from .engine import nn as _nn
from .engine.array_ops import (expand_dims, gather, gather_nd, identity_n, one_hot, pad,
                               prevent_gradient, repeat, reverse, roll, scatter_nd, slice, squeeze,
                               tile)
from .engine import linalg_ops as _linalg_ops
from .engine.linalg_ops import tensordot
from .engine.indexed_slices import IndexedSlices
from .engine.graph import (Operation, Tensor, Variable, constant, convert_to_tensor, name_scope,
                           record_source)
from .engine.ops import (
    OpType,
    abs,
    add,
    add_n,
    broadcast_to,
    cast,
    concat,
    divide,
    equal,
    exp,
    greater,
    greater_equal,
    identity,
    less,
    less_equal,
    log,
    log_softmax,
    matmul,
    maximum,
    minimum,
    multiply,
    negative,
    ones,
    ones_like,
    pow,
    reduce_max,
    reduce_mean,
    reduce_sum,
    relu,
    reshape,
    sigmoid,
    sigmoid_cross_entropy_with_logits,
    sign,
    softmax,
    softmax_cross_entropy_with_logits,
    split,
    sqrt,
    square,
    stack,
    stop_gradient,
    strided_slice,
    subtract,
    tanh,
    transpose,
    unstack,
    where,
    zeros,
    zeros_like,
)
from .engine.math_ops import (argmax, argmin, clip_by_value, cumsum, einsum, reduce_all,
                               reduce_any, reduce_logsumexp, reduce_min, reduce_prod, reduce_std,
                               reduce_variance)
from .trace import ForwardAccumulator as _ForwardAccumulator, GradientTape, Trace, trace_gradients

globals().update({_e.name: getattr(_elementwise, _e.name) for _e in _elementwise.TABLE if _e.top})

__version__ = "0.1.0"

__all__ = [
    "DType", "GradientCheck", "GradientTape", "IndexedSlices", "LayoutError",
    "NotDifferentiable", "OpType", "Operation", "RegisterGradient", "Tensor", "Trace",
    "UnconnectedGradients", "Variable", "abs", "add", "add_n", "argmax", "argmin", "as_dtype",
    "atan2", "autodiff", "bool_", "broadcast_axes", "broadcast_to", "cast", "check_gradients",
    "class_summary", "clip_by_value", "concat", "constant", "convert_to_tensor", "cos",
    "cumsum", "custom_gradient", "define_op", "divide", "einsum", "equal", "exercise", "exp",
    "expand_dims", "explore", "export_html", "float16", "float32", "float64", "floor", "gather",
    "gather_nd", "get_gradient_function", "grad_pass_through", "gradients", "greater",
    "greater_equal", "identity", "identity_n", "int16", "int32", "int64", "int8",
    "layout_engine", "less", "less_equal", "linalg", "log", "log_softmax", "math", "matmul",
    "maximum", "minimum", "multiply", "name_scope", "negative", "nn", "not_equal", "one_hot",
    "ones", "ones_like", "pad", "pow", "prevent_gradient", "questions", "recompute_grad",
    "record_source", "reduce_all", "reduce_any", "reduce_logsumexp", "reduce_max",
    "reduce_mean", "reduce_min", "reduce_prod", "reduce_std", "reduce_sum", "reduce_variance",
    "registered_op_types", "relu", "repeat", "reshape", "reverse", "roll", "round",
    "scatter_nd", "show", "sigmoid", "sigmoid_cross_entropy_with_logits", "sign", "sin",
    "slice", "slider", "softmax", "softmax_cross_entropy_with_logits", "split", "sqrt",
    "square", "squeeze", "stack", "stop_gradient", "strided_slice", "subtract", "tanh",
    "tensordot", "tile", "trace_gradients", "transpose", "uint8", "unbroadcast", "unstack",
    "where", "zeros", "zeros_like",
]


def show(trace: Trace, **options):
    """The step-through widget for ``trace`` (see :mod:`gradviz.views.widget`).

    ``options`` are the view options every renderer takes (see :mod:`gradviz.views.options`).
    """
    from .views.widget import show as _show
    return _show(trace, **options)


def export_html(traces, path, title: str = "gradviz report", **options):
    """Write one self-contained HTML report of one or more traces.

    ``options`` are the view options every renderer takes (see
    :mod:`gradviz.views.options`); the report is :mod:`gradviz.views.report`.
    """
    from .views.report import export_html as _export
    return _export(traces, path, title=title, **options)


class _Exercise:
    """A question to answer in a notebook: ``.ask()``, then ``.check(answer)``.

    ``gv.exercise(trace, step)`` asks a step's gradient (``step``: its index, None
    for the first step with a question; ``which`` picks among a backward step's
    questions, by position or by the tensor's name).  ``gv.exercise.value``,
    ``.shape``, ``.count``, ``.choice`` and ``.nones`` ask what a lesson asks
    besides.  See :mod:`gradviz.views.practice` (imported on first use, as every
    view is).
    """

    def __call__(self, trace: Trace, step: int | None = None, which: int | str = 0):
        from .views.practice import exercise as _exercise
        return _exercise(trace, step=step, which=which)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        from .views.practice import exercise as _exercise
        return getattr(_exercise, name)

    def __dir__(self):
        return ["value", "shape", "count", "choice", "nones"]

    def __repr__(self) -> str:
        return "<gv.exercise: (trace, step), .value, .shape, .count, .choice, .nones>"


exercise = _Exercise()


def explore(build, /, *, title: str = "what if", view=None, **inputs):
    """``build``'s backward pass with a slider (or number boxes) for each input: move one,
    and every value and gradient follows, the diagram standing still.

    ``build(**inputs)`` writes the forward pass from its inputs (each a
    ``gv.Variable`` of that name) and returns what to differentiate.  An input's
    value is a number, an array of at most 16 values, or a :func:`slider` with its
    range and step.  See :mod:`gradviz.views.explore`.
    """
    from .views.explore import explore as _explore
    return _explore(build, title=title, view=view, **inputs)


def slider(value, min=None, max=None, step=None):
    """An input of :func:`explore` that starts at ``value`` and moves over ``[min, max]`` by ``step``."""
    from .views.explore import slider as _slider
    return _slider(value, min, max, step)


def questions(trace: Trace) -> list:
    """Every question of ``trace``: per gradient a step produces, the right answer and the
    named wrong answers learners give (see :mod:`gradviz.views.practice`)."""
    from .views.practice import questions as _questions
    return _questions(trace)


def class_summary(files, trace: Trace):
    """What a class did with ``trace``'s practice: the results students handed in (a
    folder of them, a file, or a list) read together, per step, question and
    misconception, with the hardest steps, the misconceptions the class holds, a
    figure, and ``to_html(path)``, the teacher's offline report.  See
    :mod:`gradviz.views.practice.classroom`."""
    from .views.practice.classroom import class_summary as _summary
    return _summary(files, trace)


def layout_engine() -> str:
    """Which Graphviz lays out diagrams here: ``"dot"`` (the program on PATH) or ``"pygraphviz"``.

    The environment variable ``GRADVIZ_LAYOUT`` forces one; see
    :mod:`gradviz.views.diagram.layout`.
    """
    from .views.diagram.layout import layout_engine as _engine
    return _engine()


def _namespace(name: str, doc: str, members: dict) -> _types.ModuleType:
    """A namespace of public ops only, as TensorFlow's ``tf.nn``: ``gradviz.<name>``,
    importable too (``from gradviz.nn import conv2d``)."""
    space = _types.ModuleType(f"{__name__}.{name}", doc)
    space.__dict__.update(members)
    space.__all__ = sorted(members)
    _sys.modules[space.__name__] = space
    return space


def _members(module, names: str) -> dict:
    return {n: getattr(module, n) for n in names.split()}


nn = _namespace("nn", "Neural-network ops, as TensorFlow's ``tf.nn``.", {
    **_members(_nn, "avg_pool2d batch_normalization bias_add conv1d conv2d dropout gelu "
                    "layer_norm leaky_relu log_softmax max_pool2d moments relu sigmoid "
                    "sigmoid_cross_entropy_with_logits softmax softmax_cross_entropy_with_logits"),
    **_members(_math_ops, "softplus"), "tanh": tanh,
    "embedding_lookup": _array_ops.embedding_lookup})
math = _namespace("math", "Elementwise math and reductions, as TensorFlow's ``tf.math``.", {
    **_members(_math_ops, " ".join(n for n in _math_ops.__all__
                                   if n not in ("einsum", "clip_by_value"))),
    **{n: globals()[n] for n in (
        "abs add add_n divide equal exp greater greater_equal less less_equal log log_softmax "
        "maximum minimum multiply negative pow reduce_max reduce_mean reduce_sum sigmoid sign "
        "softmax sqrt square subtract tanh").split()},
    **_members(_elementwise, " ".join(e.name for e in _elementwise.TABLE)),
    "unsorted_segment_sum": _array_ops.unsorted_segment_sum})
linalg = _namespace("linalg", "Linear algebra, as TensorFlow's ``tf.linalg``.", {
    "einsum": einsum, "matmul": matmul, **_members(_linalg_ops, " ".join(_linalg_ops.__all__))})
autodiff = _namespace("autodiff", "Forward and reverse mode, as TensorFlow's ``tf.autodiff``.", {
    "ForwardAccumulator": _ForwardAccumulator, "GradientTape": GradientTape})


#: Modules of the flat package this one was, by the name they had there: each is
#: still an attribute, so `from gradviz import plots` (as the lessons write it) and
#: `gv.ops` keep working, loaded on first use (`import gradviz` loads no views).
#: `import gradviz.widget` does not: see CHANGELOG.md.
_MOVED = {
    **{m: "engine" for m in ("backprop", "custom", "dtypes", "gradient_rules", "graph", "ops",
                             "tape")},
    **{m: "views" for m in ("diagram", "explain", "plots", "report", "viewdata", "widget")},
}


def __getattr__(name: str):
    if name == "LayoutError":  # Graphviz missing, hung or broken: raised by the views
        from .views.diagram.layout import LayoutError
        return LayoutError
    if name in _MOVED:
        return _importlib.import_module(f"{__name__}.{_MOVED[name]}.{name}")
    raise AttributeError(f"module 'gradviz' has no attribute {name!r}")
