"""The engine: tensors, ops, gradient rules and the backward walk, on NumPy.

- :mod:`~gradviz.engine.dtypes`, :mod:`~gradviz.engine.graph`: dtypes, tensors,
  operations, Variables, name scopes.
- :mod:`~gradviz.engine.ops`: the forward ops; :mod:`~gradviz.engine.gradient_rules`:
  one gradient rule per op type.
- :mod:`~gradviz.engine.backprop`: the backward walk behind ``gradients`` (and the
  protocol of the recorder it reports to); :mod:`~gradviz.engine.tape`: the tape;
  :mod:`~gradviz.engine.custom`: custom gradients, new ops, gradient checks.

The engine imports nothing from the trace or the views (see ARCHITECTURE.md).
"""
