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
result for ex_x
>>> for formula in describe(tr, 1).formula.split("; "):
...     print(formula)
dL/dex_x (as input 0) = grad * ex_x: (2,) -> (2,) = [1, 2]
dL/dex_x (as input 1) = grad * ex_x: (2,) -> (2,) = [1, 2]
>>> print(describe(tr, 2).sentence)
ex_x is used twice: by Mul = ex_x * ex_x as input 0 (g1) and input 1 (g2). Its gradient is the sum of the 2 contributions: [1, 2] + [1, 2] = [2, 4].

Where each part lives (everything public is importable from here):

- ``formatting``: numbers, shapes and arrays as text.
- ``names``: tensors and ops by name, as the sentences and as the formulas write them,
  and gradients by name (``gradient_target``: ``dL/db``, or ``dL/d(b broadcast)``).
- ``formula``: ``Formula``, a step's maths as a NumPy expression that runs on the
  step's own arrays (``step_formulas``).
- ``rules``: ``OP_RULES``, each op's gradient rule in words (a new op goes here).
- ``spelling``: how a backward step names its op's tensors (``input_names``).
- ``seed``, ``backward``, ``reduce``, ``accumulate``, ``cut``, ``result``: each
  step kind's title, sentence and formula, and its arrays labelled to match.
- ``jacobian``: a Jacobian trace's rows, stacked and named.
- ``steps``: which module takes which step kind; ``describe`` and
  ``labelled_arrays``, and what a renderer asks once per step (``step_words``)
  and once for the results (``result_words``).
- ``meanings``: ``LEGEND`` and ``legend``, what each mark means.
- ``lines``: the line of code behind a node or a step (``step_source``), for the
  step panel and the hover texts.
- ``explanation``: the ``Explanation`` record and the phrases the step kinds share.
"""

from __future__ import annotations

from .backward import Gathered, gathered
from .explanation import Explanation
from .formatting import (format_array, format_number, format_shape, marked_values,
                         preview_lines, value_spans)
from .lines import node_source, source_lines, source_said, step_source
from .jacobian import is_jacobian, jacobian_array, jacobian_name, jacobian_rows
from .meanings import LEGEND, legend
from .names import display_name, gradient_target
from .result import describe_jacobian
from .rules import OP_RULES, OpRule
# _PLACE: the tests check every rule's places for inputs by it.
from .spelling import _PLACE, input_names  # noqa: F401
from .formula import Formula, formula_namespace
from .names import op_name, op_names, op_phrase
from .steps import (ResultWords, StepWords, describe, formula_mismatches, labelled_arrays,
                    result_words, step_formulas, step_words)
from .tangent import forward_jacobian_array, is_forward_jacobian

__all__ = [
    "Explanation",
    "Gathered",
    "gathered",
    "OpRule",
    "describe",
    "step_formulas",
    "formula_mismatches",
    "Formula",
    "formula_namespace",
    "op_name",
    "op_names",
    "op_phrase",
    "describe_jacobian",
    "is_jacobian",
    "is_forward_jacobian",
    "forward_jacobian_array",
    "jacobian_name",
    "jacobian_rows",
    "jacobian_array",
    "legend",
    "LEGEND",
    "OP_RULES",
    "display_name",
    "gradient_target",
    "input_names",
    "format_shape",
    "format_number",
    "format_array",
    "marked_values",
    "value_spans",
    "preview_lines",
    "StepWords",
    "step_words",
    "ResultWords",
    "result_words",
    "labelled_arrays",
]
