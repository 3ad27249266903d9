"""gradviz beside TensorFlow itself: the differential test that ``make crosscheck`` runs.

A claim that gradviz answers "as TensorFlow does" is true only when TensorFlow,
run, agrees.  This package runs the same programs through both libraries, which
share one API (``lib.multiply``, ``lib.GradientTape``, ``lib.gradients``, ...), and
compares what comes back: values, which results are None, dtypes, shapes, and
the types of the exceptions raised.

- ``programs.py``: random programs over every op (seeded: each run checks the same
  ones), with ``gradients`` and ``GradientTape`` in their every option;
- ``edges.py``: every op's value and gradients on its edge cases (ties, zeros,
  empty tensors, the convolution grid);
- ``errors.py``: bad arguments, and the exceptions each library raises;
- ``outcome.py``: what a run gives, and how two runs are compared;
- ``libs.py``: the few names the two libraries spell differently;
- ``deliberate.py``: the short list of differences that are on purpose, each with
  its reason.

``python -m crosscheck`` (with TensorFlow importable) prints ``crosscheck: N agree,
M differ of K`` and exits non-zero on any difference not on that list.
"""
