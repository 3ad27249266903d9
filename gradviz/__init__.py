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

import importlib

from .engine.backprop import UnconnectedGradients, broadcast_axes, gradients, unbroadcast
from .engine.custom import (GradientCheck, check_gradients, custom_gradient, define_op,
                            recompute_grad)
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
from .engine import nn
from .engine.graph import Operation, Tensor, Variable, constant, convert_to_tensor, name_scope
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
from .trace import GradientTape, Trace, trace_gradients

__version__ = "0.1.0"

__all__ = [
    "DType", "GradientCheck", "GradientTape", "LayoutError", "NotDifferentiable", "OpType",
    "Operation", "RegisterGradient", "Tensor", "Trace", "UnconnectedGradients", "Variable",
    "abs", "add", "add_n", "as_dtype", "bool_", "broadcast_axes", "broadcast_to", "cast",
    "check_gradients", "concat", "constant", "convert_to_tensor", "custom_gradient",
    "define_op", "divide", "equal", "exercise", "exp", "explore", "export_html", "float16", "float32", "float64",
    "get_gradient_function", "gradients", "greater", "greater_equal", "identity", "int8",
    "int16", "int32", "int64", "layout_engine", "less", "less_equal", "log", "log_softmax",
    "matmul", "maximum", "minimum", "multiply", "name_scope", "negative", "nn", "ones", "ones_like",
    "pow", "questions", "recompute_grad", "reduce_max", "reduce_mean", "reduce_sum", "registered_op_types", "relu", "reshape",
    "show", "sigmoid", "sigmoid_cross_entropy_with_logits", "sign", "slider", "softmax",
    "softmax_cross_entropy_with_logits", "split", "sqrt", "square", "stack", "stop_gradient",
    "strided_slice", "subtract", "tanh", "trace_gradients", "transpose", "uint8", "unbroadcast",
    "unstack", "where", "zeros", "zeros_like",
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


def exercise(trace: Trace, step: int | None = None, which: int | str = 0):
    """A question of ``trace`` to answer in a notebook: ``.ask()``, then ``.check(answer)``.

    ``step`` is a step index (None: the first step with a question); ``which``
    picks among a backward step's questions, by position or by the tensor's
    name.  See :mod:`gradviz.views.practice`.
    """
    from .views.practice import exercise as _exercise
    return _exercise(trace, step=step, which=which)


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


def layout_engine() -> str:
    """Which Graphviz lays out diagrams here: ``"dot"`` (the program on PATH) or ``"pygraphviz"``.

    The environment variable ``GRADVIZ_LAYOUT`` forces one; see
    :mod:`gradviz.views.diagram.layout`.
    """
    from .views.diagram.layout import layout_engine as _engine
    return _engine()


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
        return importlib.import_module(f"{__name__}.{_MOVED[name]}.{name}")
    raise AttributeError(f"module 'gradviz' has no attribute {name!r}")
