"""The arrays each step involves, labelled the way the step's sentence speaks of them."""

from __future__ import annotations

from ...trace import (AccumulateStep, ArrayData, BackwardStep, CutStep, ReduceStep, ResultStep,
                      SeedStep, Step, Trace)
from .jacobian import is_jacobian, jacobian_array, jacobian_name
from .names import _name
from .spelling import input_names

__all__ = ["labelled_arrays"]


def _backward_index(trace: Trace) -> dict[tuple[int, int], BackwardStep]:
    """(pass, op) -> that op's backward step, built once per trace.

    A reduce step needs the gradient before its reduction, which its op's
    backward step holds; this keeps finding it O(1).
    """
    idx = trace.__dict__.get("_gv_backward_index")
    if idx is None:
        idx = {(s.pass_index, s.op): s for s in trace.steps if isinstance(s, BackwardStep)}
        trace.__dict__["_gv_backward_index"] = idx
    return idx


def labelled_arrays(trace: Trace, step: Step) -> list[tuple[str, ArrayData]]:
    """(label, array) for each array the step involves, named as its sentence names them.

    >>> import gradviz as gv
    >>> x = gv.constant([1.0, 2.0], name="la_x")
    >>> tr = gv.trace_gradients(x * x, x)
    >>> [label for label, _ in labelled_arrays(tr, tr.steps[1])]
    ['upstream dL/dMul...', 'dL/dla_x (as input 0)', 'dL/dla_x (as input 1)']
    """
    out: list[tuple[str, ArrayData]] = []
    if isinstance(step, SeedStep):
        label = f"seed grad_ys[{step.y_index}]" if step.given else "seed: ones (default)"
        out.append((label, step.grad))
    elif isinstance(step, BackwardStep):
        op = trace.ops[step.op]
        for k, u in enumerate(step.upstream):
            if u is not None and k < len(op.outputs):
                out.append((f"upstream dL/d{_name(trace, op.outputs[k])}", u))
        # Named as the step's formula names them: X * W gives "dL/dW", not "dL/db (W)".
        names = input_names(trace, step)
        for i, g in enumerate(step.grads):
            if g is not None and i < len(op.inputs):
                out.append((f"dL/d{names[i]}", g))
    elif isinstance(step, ReduceStep):
        before = _backward_index(trace).get((step.pass_index, step.op))
        if (before is not None and step.input_index < len(before.grads)
                and before.grads[step.input_index] is not None):
            out.append((f"before: summed over axes {tuple(step.axes)}",
                        before.grads[step.input_index]))
        out.append((f"after: dL/d{_name(trace, step.tensor)}", step.grad))
    elif isinstance(step, AccumulateStep):
        for c in step.contributions:
            if c.op is None:
                label = "from the seed"
            else:
                label = f"from {trace.ops[c.op].type} input {c.input_index}"
            out.append((label, c.grad))
        out.append((f"total dL/d{_name(trace, step.tensor)}", step.total))
    elif isinstance(step, ResultStep):
        if step.grad is not None and is_jacobian(trace):
            jname = jacobian_name(trace, _name(trace, step.tensor))
            out.append((f"row {step.pass_index + 1} of {jname}", step.grad))
            full = (jacobian_array(trace, step.x_index)
                    if step.pass_index == trace.passes - 1 else None)
            if full is not None:  # the last row completes the Jacobian: show it whole
                out.append((f"Jacobian {jname} (one row per pass)", full))
        elif step.grad is not None:
            out.append((f"dL/d{_name(trace, step.tensor)}", step.grad))
    elif isinstance(step, CutStep):
        pass  # a cut produces nothing
    return out
