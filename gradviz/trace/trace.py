"""The trace: a backward pass recorded as plain, serialisable data.

The engine's walk reports each event to a :class:`~gradviz.trace.recorder.Recorder`
(cheap: it keeps references to the arrays involved); :class:`Trace` turns the
events into the records of :mod:`gradviz.trace.records` when first read.
Everything a renderer shows comes from the trace's records, never from the engine.

>>> import gradviz as gv
>>> x = gv.constant([1.0, 2.0], name="x")
>>> tr = gv.trace_gradients(x * x, x)
>>> [s.kind for s in tr.steps]
['seed', 'backward', 'accumulate', 'result']
>>> gv.Trace.from_json(tr.to_json()).steps[-1].grad.values.tolist()
[2.0, 4.0]
"""

from __future__ import annotations

import contextlib
import gc
import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from functools import cached_property
from typing import Any

import numpy as np

from .fields import _attrs, _check_id, _count, _dtype, _expect, _scope, _shape, _text, check_title
from .json_form import (ArrayTable, SourceTable, _check_consistent, _IdCheck, _step_from_dict,
                        _step_to_dict, array_reader, source_reader)
from .records import (FORMAT_VERSION, FORWARD_KINDS, READ_VERSIONS, AccumulateStep, ArrayData,
                      BackwardStep, Contribution, CutStep, ForwardStep, JvpStep, OpInfo,
                      ReduceStep, ResultStep, SeedStep, Step, TangentStep, TensorInfo)

#: The longest JSON text :meth:`Trace.from_json` parses unless told otherwise:
#: 256 MiB.  Honest traces stay well below it (a 10,000-op chain of vectors is
#: about 23 MB, a 50,000-op chain about 119 MB, a convolution step with
#: image-sized arrays about 270 KB), while a hostile file is refused before any
#: of it is parsed (parsing and checking 118 MB takes about 7 s).
MAX_JSON_BYTES = 256 * 2**20

# ---------------------------------------------------------------- the trace


class Trace:
    """A recorded backward pass: the forward graph plus the steps, in order.

    Build one with :func:`gradviz.trace_gradients` or a tape's
    ``trace_gradient`` / ``trace_jacobian``; load one with :meth:`from_json`.
    """

    def __init__(
        self,
        *,
        tensors: tuple[TensorInfo, ...] = (),
        ops: tuple[OpInfo, ...] = (),
        ys: tuple[int, ...] = (),
        xs: tuple[int, ...] = (),
        steps: tuple[Step, ...] | None = None,
        method: str = "gradients",
        passes: int = 1,
        title: str = "",
        gradients: list | None = None,
        graph: Any = None,
        events: list[tuple] | None = None,
    ) -> None:
        self.method = method  # "gradients", "tape.gradient" or "tape.jacobian"
        self.passes = passes  # number of backward passes run
        self.title = title  # a caption for renderers (checked: see the property)
        self.gradients = gradients  # what the engine returned (live traces only)
        # A trace made by the engine arrives as `graph` (a function numbering the
        # forward graph) plus the recorder's raw `events`, and is summarised on
        # first use, so that recording a pass costs little more than running it.
        self._graph, self._events, self._engine_ys, self._engine_xs = graph, events, ys, xs
        self._tensors, self._ops, self._steps = tensors, ops, steps
        self._ys, self._xs = (None, None) if graph is not None else (tuple(ys), tuple(xs))
        self._tensor_ids: dict | None = None
        self._op_ids: dict | None = None
        # Held while the graph or the steps are summarised, so that threads
        # reading one trace share one summary and never see half of it.
        self._summarising = threading.RLock()

    def __getstate__(self) -> dict[str, Any]:
        # a copy (copy.deepcopy) summarises under a lock of its own
        return {k: v for k, v in self.__dict__.items() if k != "_summarising"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._summarising = threading.RLock()

    @property
    def title(self) -> str:
        """A caption for renderers (the report's heading, the widget's title)."""
        return self._title

    @title.setter
    def title(self, value: str) -> None:
        self._title = check_title(value)

    def _load_graph(self) -> None:
        if self._graph is None:
            return
        with self._summarising:
            if self._graph is None:  # another thread summarised it meanwhile
                return
            with _collector_paused():
                tensors, ops, tensor_ids, op_ids = self._graph()
            self._tensors, self._ops = tensors, ops
            self._tensor_ids, self._op_ids = tensor_ids, op_ids
            self._ys = tuple(tensor_ids[t] for t in self._engine_ys)
            self._xs = tuple(tensor_ids[t] for t in self._engine_xs)
            self._graph = self._engine_ys = self._engine_xs = None

    @property
    def tensors(self) -> tuple[TensorInfo, ...]:
        """TensorInfo per tensor id (forward topological order)."""
        self._load_graph()
        return self._tensors

    @property
    def ops(self) -> tuple[OpInfo, ...]:
        """OpInfo per op id (forward topological order)."""
        self._load_graph()
        return self._ops

    @property
    def ys(self) -> tuple[int, ...]:
        """Tensor ids of the ys (the targets)."""
        self._load_graph()
        return self._ys

    @property
    def xs(self) -> tuple[int, ...]:
        """Tensor ids of the xs (the sources)."""
        self._load_graph()
        return self._xs

    # -- steps are built lazily from the recorder's events

    @property
    def steps(self) -> tuple[Step, ...]:
        """The records, in the order the engine produced them."""
        if self._steps is not None:
            return self._steps
        with self._summarising:
            if self._steps is None:
                self._load_graph()
                self._last_backward: dict = {}  # engine op -> its latest produced grads
                # id(array) -> (array, its ArrayData): an array the walk passes on
                # (an op's gradient, the next op's upstream, a result) is summarised,
                # held and written once
                self._summaries: dict[int, tuple[Any, ArrayData]] = {}
                with _collector_paused():
                    self._steps = tuple(self._build(i, e)
                                        for i, e in enumerate(self._events or ()))
                # the records are plain data now: let the engine's graph go
                self._events = self._last_backward = self._tensor_ids = self._op_ids = None
                self._summaries = None
        return self._steps

    def _build(self, index: int, event: tuple) -> Step:
        # `nonfinite` marks the step that *produced* a NaN or Inf from finite
        # inputs, not every later step that merely carries it along.
        kind, pass_index, ops_visited, bytes_held, p = event
        tid, oid, arr = self._tensor_ids.__getitem__, self._op_ids.__getitem__, self._summary
        if kind == "seed":
            grad = arr(p[4])
            return SeedStep(index, pass_index, ops_visited, bytes_held, grad.nonfinite,
                            tid(p[0]), p[1], p[2], p[3], grad)
        if kind == "backward":
            grads = tuple(arr(_value_of(g)) if n else None for g, n in zip(p[3], p[4]))
            upstream = tuple(arr(_value_of(u)) for u in p[2])
            bad = (any(g is not None and g.nonfinite for g in grads)
                   and not any(u is not None and u.nonfinite for u in upstream))
            self._last_backward[p[0]] = grads
            return BackwardStep(index, pass_index, ops_visited, bytes_held, bad, oid(p[0]),
                                p[0].type, p[1], upstream, grads, p[4])
        if kind == "reduce":
            grad = arr(p[5])
            before = self._last_backward.get(p[0], ())
            carried = p[1] < len(before) and before[p[1]] is not None and before[p[1]].nonfinite
            return ReduceStep(index, pass_index, ops_visited, bytes_held,
                              grad.nonfinite and not carried,
                              oid(p[0]), p[1], tid(p[2]), p[3], p[4], grad.shape, grad)
        if kind == "accumulate":
            contribs = tuple(
                Contribution("seed" if o is None else "op", None if o is None else oid(o), i,
                             arr(g))
                for o, i, g in p[1])
            total = arr(p[2])
            bad = total.nonfinite and not any(c.grad.nonfinite for c in contribs)
            return AccumulateStep(index, pass_index, ops_visited, bytes_held, bad,
                                  tid(p[0]), contribs, total)
        if kind == "cut":
            return CutStep(index, pass_index, ops_visited, bytes_held, False, tid(p[0]),
                           None if p[1] is None else oid(p[1]), p[2], p[3],
                           arr(_value_of(p[4])))
        if kind == "result":
            return ResultStep(index, pass_index, ops_visited, bytes_held, False, tid(p[0]), p[1],
                              p[2], arr(p[3]), p[4])
        if kind == "tangent":
            tangent = arr(p[2])
            return TangentStep(index, pass_index, ops_visited, bytes_held, tangent.nonfinite,
                               tid(p[0]), p[1], tangent)
        if kind == "forward":
            ins = tuple(arr(a) for a in p[2])
            outs = tuple(arr(a) for a in p[3])
            bad = (any(t is not None and t.nonfinite for t in outs)
                   and not any(t is not None and t.nonfinite for t in ins))
            return ForwardStep(index, pass_index, ops_visited, bytes_held, bad, oid(p[0]),
                               p[0].type, p[1], ins, outs)
        if kind == "jvp":
            return JvpStep(index, pass_index, ops_visited, bytes_held, False, tid(p[0]), p[1],
                           p[2], arr(p[3]), p[4])
        raise AssertionError(f"unknown event {kind!r}")  # engine bug, not user input

    def _summary(self, a: Any) -> ArrayData | None:
        """The ArrayData of a recorded array (None for None), made once per array."""
        if a is None:
            return None
        known = self._summaries.get(id(a))
        if known is None:
            known = self._summaries[id(a)] = (a, ArrayData.of(a))
        return known[1]

    # -- conveniences for renderers

    def tensor(self, tensor_id: int) -> TensorInfo:
        """The TensorInfo with this id."""
        return self.tensors[tensor_id]

    def op(self, op_id: int) -> OpInfo:
        """The OpInfo with this id."""
        return self.ops[op_id]

    @cached_property
    def consumers(self) -> dict[int, tuple[tuple[int, int], ...]]:
        """tensor id -> ((op id, input index), ...) for each use of the tensor."""
        uses: dict[int, list[tuple[int, int]]] = {t.id: [] for t in self.tensors}
        for o in self.ops:
            for i, t in enumerate(o.inputs):
                uses[t].append((o.id, i))
        return {k: tuple(v) for k, v in uses.items()}

    @property
    def forward(self) -> bool:
        """Whether the trace is of forward mode (``trace_jvp``, or a Jacobian in forward mode):
        its steps are tangents carried forward, not gradients carried back."""
        steps = self.steps
        return bool(steps) and steps[0].kind in FORWARD_KINDS

    @property
    def results(self) -> tuple[ResultStep, ...]:
        """The result steps, one per x (per pass for a Jacobian)."""
        return tuple(s for s in self.steps if s.kind == "result")

    @property
    def first_nonfinite_step(self) -> int | None:
        """Index of the first step that produced a NaN or Inf, or None."""
        return next((s.index for s in self.steps if s.nonfinite), None)

    def __len__(self) -> int:
        return len(self.steps)

    def __repr__(self) -> str:
        kinds: dict[str, int] = {}
        for s in self.steps:
            kinds[s.kind] = kinds.get(s.kind, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in kinds.items())
        return (f"<gradviz.Trace {self.method}: {len(self.tensors)} tensors, "
                f"{len(self.ops)} ops, {len(self.steps)} steps ({summary}), "
                f"{self.passes} pass{'es' if self.passes != 1 else ''}>")

    # -- JSON

    def without_source(self) -> Trace:
        """This trace without its lines of code and file paths (``source=False``).

        A trace records, for each op, the line of code that made it: the file's
        path, the function, the line's text, or the notebook cell.  A report
        handed out carries them; every renderer's ``source=False`` and
        ``to_json(source=False)`` show the trace this gives instead.
        """
        if not any(t.source for t in self.tensors) and not any(o.source for o in self.ops):
            return self
        made = self.__dict__.get("_unsourced")  # (made once: a viewer asks for it often)
        if made is None or made.title != self.title:
            made = self.__dict__["_unsourced"] = Trace(
                tensors=tuple(replace(t, source=None) for t in self.tensors),
                ops=tuple(replace(o, source=None) for o in self.ops),
                ys=self.ys, xs=self.xs, steps=self.steps, method=self.method,
                passes=self.passes, title=self.title, gradients=self.gradients)
        return made

    def to_dict(self, *, source: bool = True) -> dict[str, Any]:
        """The trace as JSON-ready plain data (the form :mod:`gradviz.trace.json_form`
        describes: every array once, in ``arrays``); ``source=False`` leaves out the
        lines of code and file paths (:meth:`without_source`)."""
        if not source:
            return self.without_source().to_dict()
        table = ArrayTable()
        ref = table.ref
        rows = SourceTable()
        at = rows.ref
        tensors = [
            {"id": t.id, "name": t.name, "op": t.op, "kind": t.kind, **_scoped(t.scope),
             "shape": list(t.shape), "dtype": t.dtype, "value": ref(t.value), **at(t.source)}
            for t in self.tensors
        ]
        ops = [
            {"id": o.id, "type": o.type, "name": o.name, **_scoped(o.scope),
             "inputs": list(o.inputs), "outputs": list(o.outputs),
             **({"attrs": o.attrs} if o.attrs else {}), "on_path": o.on_path, **at(o.source)}
            for o in self.ops
        ]
        steps = [_step_to_dict(s, ref) for s in self.steps]
        return {
            "format": "gradviz-trace",
            "version": FORMAT_VERSION,
            "method": self.method,
            "title": self.title,
            "passes": self.passes,
            "ys": list(self.ys),
            "xs": list(self.xs),
            "arrays": table.rows,
            "sources": rows.rows,
            "tensors": tensors,
            "ops": ops,
            "steps": steps,
        }

    def to_json(self, indent: int | None = None, *, source: bool = True) -> str:
        """Serialise to a JSON string; :meth:`from_json` reads it back.  ``source=False``
        leaves out the lines of code and file paths (:meth:`without_source`)."""
        if not isinstance(source, bool):
            raise TypeError(f"to_json: source must be True or False, got {source!r}")
        with _collector_paused():
            return json.dumps(self.to_dict(source=source), indent=indent, allow_nan=False,
                              check_circular=False,
                              separators=None if indent is not None else (",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes, *, max_bytes: int | None = MAX_JSON_BYTES) -> Trace:
        """Load a trace written by :meth:`to_json`.

        Anything malformed raises ``ValueError`` naming the offending field.  A
        text longer than ``max_bytes`` (default :data:`MAX_JSON_BYTES`, 256 MiB) is
        refused before it is parsed: parsing costs seconds and many times the
        text's size in memory, and a file from elsewhere is checked only once
        parsed.  Pass a larger number, or ``None`` for no limit, to load a larger
        trace you trust.  A ``str`` is measured as its UTF-8 bytes, as its file
        would be.

        >>> import gradviz as gv
        >>> x = gv.constant(2.0, name="x")
        >>> text = gv.trace_gradients(x * x, x).to_json()
        >>> len(gv.Trace.from_json(text).steps)
        4
        >>> gv.Trace.from_json(text, max_bytes=1000)
        Traceback (most recent call last):
        ...
        ValueError: trace JSON: ... bytes, over the limit of 1,000 bytes (to load a larger trace
        you trust, pass a larger max_bytes=, or max_bytes=None for no limit)
        """
        if max_bytes is not None:
            if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
                raise TypeError("max_bytes: expected a positive whole number of bytes or None, "
                                f"got {type(max_bytes).__name__}")
            if max_bytes <= 0:
                raise ValueError("max_bytes: expected a positive whole number of bytes or None, "
                                 f"got {max_bytes}")
            size = len(text) if isinstance(text, (str, bytes, bytearray)) else 0
            if isinstance(text, str) and size <= max_bytes and not text.isascii():
                size = len(text.encode("utf-8", errors="surrogatepass"))  # (what it is as a file)
            if size > max_bytes:
                raise ValueError(f"trace JSON: {size:,} bytes, over the limit of {max_bytes:,} "
                                 "bytes (to load a larger trace you trust, pass a larger "
                                 "max_bytes=, or max_bytes=None for no limit)")
        try:
            data = json.loads(text)
        except (TypeError, UnicodeDecodeError) as e:
            raise ValueError(f"trace JSON: expected a str or bytes of JSON text ({e})") from None
        except ValueError as e:  # JSONDecodeError, or an integer of too many digits
            raise ValueError(f"trace JSON is not valid JSON: {e}") from None
        except RecursionError:
            raise ValueError("trace JSON is nested too deeply") from None
        try:
            return cls.from_dict(data)
        except RecursionError:
            raise ValueError("trace JSON: values are nested too deeply") from None

    @classmethod
    def from_dict(cls, data: Any) -> Trace:
        """Build a trace from :meth:`to_dict` output, validating every field."""
        data = _expect(data, dict, "trace")
        if data.get("format") != "gradviz-trace":
            raise ValueError("trace: not a gradviz trace (missing \"format\": \"gradviz-trace\")")
        version = data.get("version")
        if type(version) is not int or version not in READ_VERSIONS:
            raise ValueError(f"trace: unsupported version {version!r} (this gradviz reads "
                             f"versions {', '.join(map(str, READ_VERSIONS))})")
        array = array_reader(data, version)
        source = source_reader(data, version)
        raw_tensors = _expect(data.get("tensors"), list, "trace.tensors")
        raw_ops = _expect(data.get("ops"), list, "trace.ops")
        n_t, n_o = len(raw_tensors), len(raw_ops)
        tref = _IdCheck("tensor", n_t)
        oref = _IdCheck("op", n_o)

        tensors = []
        for i, t in enumerate(raw_tensors):
            w = f"trace.tensors[{i}]"
            t = _expect(t, dict, w)
            _check_id(t.get("id"), i, f"{w}.id")
            kind = _expect(t.get("kind"), str, f"{w}.kind")
            if kind not in ("constant", "variable", "computed"):
                raise ValueError(f"{w}.kind: {kind!r} is not one of constant, variable, computed")
            tensors.append(TensorInfo(
                i, _text(t.get("name"), f"{w}.name"),
                oref(t.get("op"), f"{w}.op", optional=True), kind,
                _scope(t.get("scope", ""), f"{w}.scope"),
                _shape(t.get("shape"), f"{w}.shape"),
                _dtype(t.get("dtype"), f"{w}.dtype"),
                array(t.get("value"), f"{w}.value"),
                source(t.get("source"), f"{w}.source")))
        ops = []
        for i, o in enumerate(raw_ops):
            w = f"trace.ops[{i}]"
            o = _expect(o, dict, w)
            _check_id(o.get("id"), i, f"{w}.id")
            op_type = _text(o.get("type"), f"{w}.type")
            ops.append(OpInfo(
                i, op_type, _text(o.get("name"), f"{w}.name"),
                _scope(o.get("scope", ""), f"{w}.scope"),
                tuple(tref(x, f"{w}.inputs") for x in _expect(o.get("inputs"), list, f"{w}.inputs")),
                tuple(tref(x, f"{w}.outputs") for x in _expect(o.get("outputs"), list, f"{w}.outputs")),
                _attrs(o.get("attrs", {}), op_type, f"{w}.attrs"),
                _expect(o.get("on_path", False), bool, f"{w}.on_path"),
                source(o.get("source"), f"{w}.source")))
        ys = tuple(tref(x, "trace.ys") for x in _expect(data.get("ys"), list, "trace.ys"))
        xs = tuple(tref(x, "trace.xs") for x in _expect(data.get("xs"), list, "trace.xs"))
        raw_steps = _expect(data.get("steps"), list, "trace.steps")
        steps = tuple(_step_from_dict(s, i, tref, oref, array) for i, s in enumerate(raw_steps))
        passes = _count(data.get("passes", 1), "trace.passes")
        _check_consistent(tensors, ops, ys, xs, steps, passes)
        return cls(tensors=tuple(tensors), ops=tuple(ops), ys=ys, xs=xs, steps=steps,
                   method=_expect(data.get("method", "gradients"), str, "trace.method"),
                   passes=passes, title=_expect(data.get("title", ""), str, "trace.title"))

    # -- conveniences that render (through the one seam up to the views: _views)

    def to_dot(self, **options: Any):
        """The forward graph and every gradient label as a ``graphviz.Digraph``."""
        return _views().diagram.to_dot(self, **options)

    def to_svg(self, step: int | None = None, **options: Any) -> str:
        """The diagram as SVG text, styled to show the state after ``step``.

        ``crop=True`` gives a slide's picture of the step: its neighbourhood,
        16:9, its look written in (no ``<style>``, no filter); ``legend=False``
        leaves the legend out.  ``options`` are also the view options of every
        renderer (see :mod:`gradviz.views.options`); see
        :func:`gradviz.views.diagram.to_svg`.
        """
        return _views().diagram.to_svg(self, step=step, **options)

    def to_png(self, path: Any, step: int | None = None, **options: Any) -> Any:
        """Write the diagram after ``step`` to ``path`` as a PNG; ``crop=True`` for a slide.

        ``options`` are :meth:`to_svg`'s, and ``width`` the PNG's width in px
        (see :func:`gradviz.views.diagram.to_png`).
        """
        return _views().diagram.to_png(self, path, step=step, **options)

    def to_html(self, path: Any, title: str | None = None, **options: Any) -> Any:
        """Write a self-contained HTML report of this trace to ``path``.

        Written as :func:`gradviz.export_html` writes: all at once, keeping the
        permissions of a file it replaces, and refusing a read-only one.

        ``options`` are the view options of every renderer (``rankdir``,
        ``values``, ``start_step``, ``bookkeeping``, ``font_size``, ...: see
        :mod:`gradviz.views.options`).
        """
        return _views().report.to_html(self, path, title=title or self.title or "gradviz trace",
                                       **options)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return _views().widget.show(self)._repr_mimebundle_(include=include, exclude=exclude)

    def _ipython_display_(self) -> None:
        # A trace left as a cell's last value displays as gv.show(trace) does: the
        # viewer, then its picture as an output of its own, for readers without
        # the viewer (nbconvert with its defaults, GitHub).
        _views().widget.show(self)._ipython_display_()


def _views() -> Any:
    """The views package, for the conveniences above.

    This is the one import that points up the layers (views -> trace -> engine):
    the trace is plain data and knows nothing of its viewers, except that these
    four methods hand it to them.  ``tests/test_layers.py`` knows this seam by name.
    """
    from .. import views
    return views


_NO_SCOPE: dict[str, str] = {}


def _scoped(scope: str) -> dict[str, str]:
    """``{"scope": scope}``, or nothing for the top level (the JSON form's default)."""
    return {"scope": scope} if scope else _NO_SCOPE


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a trace makes its many small records (steps,
    arrays, their JSON): none of them makes a cycle, and the collector's passes over a
    growing heap cost more than the records (half of a 50,000-op trace's to_json)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _value_of(t: Any) -> np.ndarray | None:
    """A recorded gradient's array (the engine's walk records tensors, or arrays)."""
    return t if t is None or isinstance(t, np.ndarray) else t._value
