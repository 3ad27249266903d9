"""The views: what shows a trace to a person.

- :mod:`~gradviz.views.explain`: the words (names, shapes, each step as sentences).
- :mod:`~gradviz.views.diagram`: the annotated graph diagram (Graphviz: the
  ``dot`` program or pygraphviz's), a subpackage: ``plan``, ``draw``, ``labels``,
  ``layout`` and ``svg`` make it.
- :mod:`~gradviz.views.practice`: per gradient a step produces, a question, its
  right answer and the named wrong answers learners give (``gv.exercise``).
- :mod:`~gradviz.views.viewdata`: a trace as the JSON the front end steps through.
- :mod:`~gradviz.views.marks`: the visual marks, from the one table ``static/marks.json``.
- :mod:`~gradviz.views.widget`: the JupyterLab widget; :mod:`~gradviz.views.report`:
  the self-contained HTML report; both run ``static/stepper.js``, built from the
  front end's ES modules in ``static/viewer/`` (see ARCHITECTURE.md).
- :mod:`~gradviz.views.plots`: matplotlib figures for the lessons (imported on use).

The views read traces (and the engine's names); nothing below imports them.
"""

from . import diagram, explain, practice, report, viewdata, widget

__all__ = ["diagram", "explain", "practice", "report", "viewdata", "widget"]
