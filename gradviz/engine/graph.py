"""Tensors, Variables and Operations: the forward graph the engine builds.

Every op runs eagerly on NumPy arrays *and* records itself as a node, so a
result's ``.op`` leads back through ``.inputs`` to the values it came from.
The graph lives only in those references: nothing global keeps it alive.

>>> import gradviz as gv
>>> a = gv.constant([[1.0, 2.0]], name="graph_doc_a")
>>> c = a * 3.0
>>> c.op.type, c.op.inputs[0] is a, c.numpy().tolist()
('Mul', True, [[3.0, 6.0]])
>>> a.name
'graph_doc_a:0'
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import numbers
import os
import re
import sys
import threading
import weakref
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import numpy as np

from . import dtypes
from .dtypes import DType

#: What no name, scope or title holds: control characters (which the diagram's
#: layout program refuses) and lone surrogates (which are not text at all).
NOT_TEXT = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")

__all__ = [
    "Tensor",
    "Variable",
    "Operation",
    "constant",
    "convert_to_tensor",
    "name_scope",
    "record_source",
    "plain_name",
]

_MAKING_OP = threading.Lock()  # held while a deferred op is made (see Tensor.op)
_ops: Any = None  # gradviz.engine.ops, which sets this as it loads (it imports this module)
_elementwise: Any = None  # gradviz.engine.elementwise, set the same way
CONST, VARIABLE = "Const", "VariableV2"  # the op types made here (gradviz.engine.ops.OpType has all)


class Operation:
    """One node of the graph: an op type, its input tensors and its outputs."""

    __slots__ = ("type", "inputs", "_outputs", "attrs", "_naming", "skip_input_indices",
                 "_source", "__weakref__")

    def __init__(self, op_type: str, inputs: tuple[Tensor, ...], attrs: dict | None,
                 naming: tuple[str, str, int, _Numbers], source: Source | None = None) -> None:
        self.type = op_type  # e.g. "MatMul"
        self.inputs = inputs  # input tensors, in order
        # A single output points at its op and the op points back only weakly,
        # so most of a graph has no reference cycles and is freed by reference
        # counting; ops with several outputs hold them strongly (a rule may
        # need an output the user dropped).
        self._outputs: Any = ()  # one output: a weakref to it; several: the tensors
        self.skip_input_indices: tuple[int, ...] = ()  # set during a backward pass (below)
        self.attrs = attrs  # attributes such as {"transpose_a": False}, or None
        self._naming = naming  # (scope, name before numbering, number, _Numbers): _claim_name
        self._source = source  # where the user's code made it (see source_here), or None

    @property
    def outputs(self) -> tuple[Tensor, ...]:
        """The output tensors, in order."""
        outs = self._outputs
        if type(outs) is not weakref.ref:
            return outs
        out = outs()
        if out is None:
            raise RuntimeError(f"the output of {self.type} op {self.name!r} no longer exists "
                               "(nothing referred to it); keep a reference to the tensor, "
                               "e.g. `c = gv.exp(x)` then use `c.op`")
        return (out,)

    @property
    def name(self) -> str:
        """Unique name, e.g. ``"layer1/MatMul_2"``."""
        _, base, count, _ = self._naming
        return base if count == 0 else f"{base}_{count}"

    @property
    def base_name(self) -> str:
        """The name before numbering, e.g. ``"layer1/MatMul"``."""
        return self._naming[1]

    @property
    def scope(self) -> str:
        """The name scope the op was created in ("" at top level)."""
        return self._naming[0]

    def get_attr(self, name: str) -> Any:
        """An attribute of the op, e.g. ``op.get_attr("transpose_a")``."""
        if not self.attrs or name not in self.attrs:
            have = ", ".join(sorted(self.attrs or ())) or "none"
            raise ValueError(f"{self.type} op {self.name!r} has no attribute {name!r} "
                             f"(it has: {have})")
        return self.attrs[name]

    def __repr__(self) -> str:
        ins = ", ".join(t.name for t in self.inputs)
        return f"<gv.Operation {self.name!r} type={self.type} inputs=[{ins}]>"


class Tensor:
    """A value computed by the engine: a NumPy array plus the op that made it."""

    # (_tangents, set only under a ForwardAccumulator: {accumulator's number: tangent})
    __slots__ = ("_value", "_op", "value_index", "_dtype", "_pending", "_tangents",
                 "__weakref__")
    __array_priority__ = 100  # so ndarray (op) Tensor defers to Tensor's operators

    def __init__(self, value: np.ndarray, op: Operation | None, value_index: int = 0) -> None:
        self._value = value  # the NumPy value (never mutated in place)
        self._op = op  # the Operation that produced it; None: deferred (see make_op)
        self.value_index = value_index  # which output of op it is
        self._dtype = value.dtype  # NumPy dtype, cached

    @property
    def op(self) -> Operation:
        """The Operation that produced it."""
        op = self._op
        if op is None:  # deferred by make_op: made now, named and numbered as then
            with _MAKING_OP:  # (two threads asking at once get the same op)
                op = self._op
                if op is None:
                    op_type, inputs, attrs, naming, source = self._pending
                    if type(naming) is str:  # its scope: numbered now (see make_op)
                        naming = _claim_name(op_type, naming)
                    op = Operation(op_type, inputs, attrs, naming, source)
                    op._outputs = weakref.ref(self)
                    self._op, self._pending = op, None
        return op

    # -- what it is

    @property
    def dtype(self) -> DType:
        """Element type, e.g. ``gv.float32``."""
        return dtypes.from_numpy(self._dtype)

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape as a tuple of ints."""
        return self._value.shape

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def name(self) -> str:
        """Unique name, ``"<op name>:<output index>"``, e.g. ``"MatMul:0"``."""
        return f"{self.op.name}:{self.value_index}"

    def numpy(self) -> np.ndarray:
        """The value as a NumPy array of its own: changing it leaves the tensor as it was.

        (The engine never changes a value in place, and a trace reads its
        tensors' values when it is looked at, so a shared array changed by
        ``g = t.numpy(); g *= 0.1`` would change what the trace shows.)
        """
        return self._value.copy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # NumPy takes the tensor out of the graph here (np.exp(t), np.asarray(t)):
        # noted, so that a gradient that then comes back None can say so
        _note_escape(self)
        # np.asarray(t) without a copy is a read-only view: writing to it would
        # change the tensor behind the engine's back (and every trace showing it)
        if dtype is not None or copy:
            return self._value.astype(self._dtype if dtype is None else dtype)
        return read_only(self._value)

    def __repr__(self) -> str:
        return (f"<gv.Tensor {self.name!r} shape={self.shape} dtype={self.dtype.name}, "
                f"numpy={np.array2string(np.asarray(self._value), separator=', ')}>")

    def __len__(self) -> int:
        if not self._value.ndim:
            raise TypeError(f"len() of a scalar tensor ({self.name})")
        return len(self._value)

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        return bool(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __index__(self) -> int:
        if not self.dtype.is_integer or self._value.ndim:
            raise TypeError(f"only integer scalar tensors can be used as an index, "
                            f"not {self.name} of shape {self.shape} and dtype {self.dtype.name}")
        return int(self._value)

    # -- operators (each is the op of the same name in gradviz.engine.ops)

    def __add__(self, other: Any) -> Tensor:
        return _ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _ops.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _ops.subtract(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _ops.subtract(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _ops.multiply(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _ops.multiply(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _ops.divide(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _ops.divide(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return _ops.pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _ops.pow(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _ops.negative(self)

    def __abs__(self) -> Tensor:
        return _ops.abs(self)

    def __getitem__(self, index: Any) -> Tensor:
        return _ops.sliced(self, index)

    def __ge__(self, other: Any) -> Tensor:
        return _ops.greater_equal(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _ops.greater(self, other)

    def __le__(self, other: Any) -> Tensor:
        return _ops.less_equal(self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _ops.less(self, other)

    def __floordiv__(self, other: Any) -> Tensor:
        return _elementwise.floordiv(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _elementwise.floordiv(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return _elementwise.floormod(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return _elementwise.floormod(other, self)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        """``x != y`` elementwise, as TensorFlow 2's; as there, ``x != None`` and two shapes
        that do not broadcast are True.  ``==`` stays Python's identity (tensors are keys
        of dicts and sets): ``not (x == y)`` is not ``x != y``."""
        return _elementwise.not_equals(self, other)

    __hash__ = object.__hash__  # (defining __ne__ keeps it, but say so)


_variable_serials = itertools.count()


class Variable(Tensor):
    """A trainable tensor whose value can be replaced (``assign``).

    Tapes watch the Variables used inside them automatically.

    >>> import gradviz as gv
    >>> w = gv.Variable(1.5, name="w")
    >>> _ = w.assign_sub(0.5); w.numpy()
    array(1., dtype=float32)
    """

    __slots__ = ("trainable", "_serial")

    def __init__(self, value: Any, name: str | None = None, dtype: Any = None,
                 trainable: bool = True) -> None:
        if name is not None:
            check_name(name, "Variable")
        array = _to_array(value, dtype, "Variable")
        op = Operation(VARIABLE, (), None, _claim_name(name or "Variable"), source_here())
        super().__init__(array, op, 0)
        op._outputs = weakref.ref(self)
        self.trainable = trainable
        self._serial = next(_variable_serials)  # creation order (GradientTape.watched_variables)
        if _escapes and isinstance(value, (np.ndarray, np.generic)):
            _note_from_numpy(self)

    @property
    def watchable(self) -> bool:
        """Whether reading it inside a tape watches it: trainable, and a float."""
        return self.trainable and self._dtype.kind == "f"

    def assign(self, value: Any) -> Variable:
        """Replace the value; shape and dtype must stay the same."""
        return self._replace(_to_array(value, None if isinstance(value, Tensor) else self.dtype,
                                       "assign"), "assign")

    def assign_add(self, delta: Any) -> Variable:
        """``v += delta``."""
        self._check_number("assign_add")
        # (np.asarray: NumPy gives a scalar, not an array, for 0-d operands)
        return self._replace(np.asarray(self._value + _to_array(delta, self.dtype, "assign_add")),
                             "assign_add")

    def assign_sub(self, delta: Any) -> Variable:
        """``v -= delta``."""
        self._check_number("assign_sub")
        return self._replace(np.asarray(self._value - _to_array(delta, self.dtype, "assign_sub")),
                             "assign_sub")

    def _check_number(self, what: str) -> None:
        if self._dtype.kind == "b":  # NumPy would make += a logical or
            raise TypeError(f"{what} to {self.name}: a bool variable takes no arithmetic "
                            "(as in TensorFlow); give it its new value with assign()")

    def _replace(self, new: np.ndarray, what: str) -> Variable:
        if new.dtype != self._dtype:
            raise TypeError(f"{what} to {self.name}: value has dtype {new.dtype.name}, "
                            f"the variable has dtype {self._dtype.name}")
        if new.shape != self.shape:
            raise ValueError(f"{what} to {self.name}: value has shape {new.shape}, "
                             f"the variable has shape {self.shape}")
        self._value = new  # replaced, never changed in place: traces keep the old one
        return self

    def __repr__(self) -> str:
        return (f"<gv.Variable {self.name!r} shape={self.shape} dtype={self.dtype.name}, "
                f"numpy={np.array2string(np.asarray(self._value), separator=', ')}>")


# ---------------------------------------------------------------- what each thread is inside


class ThreadState:
    """What one thread is inside: its name scopes, its recording tapes, its backward passes.

    Each thread has its own, as in TensorFlow: a name scope, a tape or a
    backward pass in one thread leaves the ops another thread makes as they
    would be without it.  A block keeps the state of the thread that entered
    it, so it ends right even when another thread ends it (a generator closed
    late).
    """

    __slots__ = ("scopes", "scope", "tapes", "deferring", "source")

    def __init__(self) -> None:
        self.scopes: list[str] = []  # the active name scopes, in full, innermost last
        self.scope = ""  # scopes[-1], or "" outside any: the scope new ops are made in
        self.tapes: list[Any] = []  # what records each op made (tapes in their `with` block)
        self.deferring = 0  # > 0 while a backward pass builds its ops (see make_op)
        self.source: Source | None = None  # while deferring: the line that began the pass


class _PerThread(threading.local):
    def __init__(self) -> None:  # (run in each thread the first time it looks)
        self.state = ThreadState()


_per_thread = _PerThread()


def this_thread() -> ThreadState:
    """What the calling thread is inside (its own name scopes, tapes and backward passes)."""
    return _per_thread.state


# ---------------------------------------------------------------- where each op was made

#: An op's source: the code object and the instruction offset of the first frame
#: outside gradviz when it was made, and the notebook cell running then (``run``);
#: the trace layer reads the line, its text and its cell from them, and only when
#: it is traced.
Source = tuple  # (types.CodeType, int, int)

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # gradviz/
#: gradviz's own files, as its code objects name them: the frames an op's source skips;
#: and contextlib's, which runs gradviz's own ``with`` blocks (deferring_ops)
_OURS = frozenset([*(os.path.join(folder, f) for folder, _, files in os.walk(_HERE)
                     for f in files if f.endswith(".py")),
                   contextlib.__file__])
_getframe = sys._getframe
_outside: Any = None  # the code of the last frame found outside gradviz (see make_op)
_sourcing = True  # whether new ops record their source (record_source)
#: The IPython cell running (its execution count), 0 outside IPython: set before each
#: cell by gradviz.trace.source, whose cells of one text share one file name.
run = 0


def source_here(depth: int = 1) -> Source | None:
    """Where the calling code was called from outside gradviz: ``(code, offset, run)`` of
    the first frame outside gradviz's files, counting from ``depth`` frames above the
    caller; None when recording is off (:class:`record_source`) or no frame is outside."""
    if not _sourcing:
        return None
    f = _getframe(depth + 1)
    while f is not None and f.f_code.co_filename in _OURS:
        f = f.f_back
    return None if f is None else (f.f_code, f.f_lasti, run)


class record_source:  # noqa: N801 - a function to its callers, as name_scope
    """Whether the ops made from now on record the line of code that made them.

    On by default: each op keeps where the first frame outside gradviz was
    (a script's file and line, a notebook's cell), which a trace shows beside
    the op.  It costs a fraction of a microsecond an op (``make bench``);
    ``gv.record_source(False)`` turns it off, for every thread.  As a ``with``
    block it holds only while the block runs: at its end the switch is what
    the calls still in force say, the latest first, so two threads' blocks
    ending in either order leave it as it was before them.

    >>> import gradviz as gv
    >>> with gv.record_source(False):
    ...     y = gv.constant(2.0) * 3.0
    >>> y.op._source is None, gv.record_source.on()
    (True, True)
    """

    _said: list[record_source] = []  # the calls in force, oldest first (blocks leave it)
    _lock = threading.Lock()

    def __init__(self, on: bool = True) -> None:
        global _sourcing
        if not isinstance(on, bool):
            raise TypeError(f"record_source: expected True or False, got {on!r}")
        self._on = on
        with self._lock:
            said = record_source._said
            said.append(self)
            if len(said) > _SAID_KEPT:  # calls outside a block pile up: the oldest are moot
                del said[:-_SAID_KEPT]
            _sourcing = on

    def __enter__(self) -> record_source:
        return self

    def __exit__(self, *exc: object) -> None:
        global _sourcing
        with self._lock:
            said = record_source._said
            if self in said:
                said.remove(self)
            _sourcing = said[-1]._on if said else True

    @staticmethod
    def on() -> bool:
        """Whether ops made now record their line of code."""
        return _sourcing


_SAID_KEPT = 64  # record_source calls remembered (a block's end finds its own among them)


# ---------------------------------------------------------------- making ops


_new = object.__new__  # an instance without running __init__ (see make_op)


def make_op(op_type: str, inputs: tuple[Tensor, ...], value: np.ndarray,
            attrs: dict | None = None, name: str | None = None, ours: int = 1) -> Tensor:
    """Record a single-output op with an already computed value; returns its output.

    The op of a constant, and of every op a backward pass builds, is made
    only when something asks for it (``out.op``).  Nearly none are ever
    asked for: nothing walks back through a constant (it has no inputs), nor
    through a gradient unless it is differentiated again.  ``y * 1.01`` in a
    loop makes a constant each time, as TensorFlow does; deferred, an op
    costs one object instead of three.

    Names: an op made with a name (``gv.constant`` always gives one) claims
    it now, so names count up in creation order.  An op made without one
    and deferred, such as the constant for ``1.01`` or an op a backward pass
    builds, is numbered when first asked for: most never are.  A name stays
    taken while an op numbered from it is alive (see ``_Numbers``).
    """
    global _outside
    if name is not None:
        check_name(name, op_type)
    # Tensor(value, None, 0), spelt out: called from C, __init__ costs more than
    # setting the four slots does, and this is the engine's most frequent line
    out = _new(Tensor)
    out._value = value = value if type(value) is np.ndarray else np.asarray(value)
    out._op = None
    out.value_index = 0
    out._dtype = value.dtype
    here = _per_thread.state
    # where the user's code made it: the first frame outside gradviz (source_here, inline:
    # a call costs more than the walk), from ``ours`` frames up, the frames the caller
    # knows are gradviz's (1: its caller; _binary's 2).  Each frame the walk passes
    # through is made a Python object, which costs more than all the rest: the ops a
    # program makes most (`y + 0.01`, `gv.tanh(y)`) land on the user's frame at once.
    # None for a constant made without a name, such as the 1.01 of `y * 1.01`, which
    # the trace gives the line of the op that reads it.
    if here.deferring:  # a backward pass's op: the line that began the pass (see deferring_ops)
        source = here.source
    elif _sourcing and (inputs or name is not None):
        try:
            f = _getframe(ours + 1)
            code = f.f_code
            if code is not _outside:  # (a loop's ops come from one code: known outside)
                while code.co_filename in _OURS:
                    f = f.f_back
                    code = f.f_code
                _outside = code
            source = (code, f.f_lasti, run)
        except (AttributeError, ValueError):  # no frame outside gradviz
            source = None
    else:
        source = None
    if here.tapes:  # a tape records each op as it is made
        op = out._op = Operation(op_type, inputs, attrs, _claim_name(name or op_type), source)
        op._outputs = weakref.ref(out)
        for tape in here.tapes:
            tape._record(op)
        return out
    scope = here.scope
    if name is None and (here.deferring or not inputs):  # numbered later (see Tensor.op)
        out._pending = (op_type, inputs, attrs, scope, source)
        return out
    # _claim_name(name or op_type), inline
    full = name or op_type
    if scope:
        full = f"{scope}/{full}"
    ref = _name_counts.get(full)
    numbers = ref() if ref is not None else None
    if numbers is None:
        numbers = _numbers(full)
    naming = (scope, full, next(numbers.count), numbers)
    if not inputs:
        out._pending = (op_type, inputs, attrs, naming, source)
        return out
    # Operation(...), spelt out for the same reason as the tensor above
    op = out._op = _new(Operation)
    op.type, op.inputs, op.attrs, op.skip_input_indices = op_type, inputs, attrs, ()
    op._naming, op._source = naming, source
    op._outputs = weakref.ref(out)  # (not a tuple: one object fewer for the collector)
    return out


def make_multi_op(op_type: str, inputs: tuple[Tensor, ...], values: list[np.ndarray],
                  attrs: dict | None = None, name: str | None = None) -> tuple[Tensor, ...]:
    """Record an op with several outputs; returns them as a tuple."""
    if name is not None:
        check_name(name, op_type)
    here = _per_thread.state
    source = here.source if here.deferring else source_here()
    op = Operation(op_type, inputs, attrs, _claim_name(name or op_type), source)
    outs = tuple(Tensor(np.asarray(v), op, i) for i, v in enumerate(values))
    op._outputs = outs
    for tape in here.tapes:
        tape._record(op)
    return outs


def _claim_name(name: str, scope: str | None = None) -> tuple[str, str, int, _Numbers]:
    """A new op's naming: (scope, name within its scopes, how many ops had that name
    before, and the numbers that name has left, which the op holds).

    ``scope`` defaults to the calling thread's innermost name scope.
    """
    if scope is None:
        scope = _per_thread.state.scope
    full = f"{scope}/{name}" if scope else name
    ref = _name_counts.get(full)
    numbers = ref() if ref is not None else None
    if numbers is None:
        numbers = _numbers(full)
    return scope, full, next(numbers.count), numbers


class _Numbers:
    """The numbers one full op name has left, held by every op named from it.

    An op holds it in its naming (a constant not yet made, its tensor does), and
    ``_name_counts`` holds it only weakly.  So a name stays taken, its numbers
    counting up, while any op numbered from it is alive; once the last is gone,
    no op alive can be confused with a new one, and the table forgets the name
    (which then starts again from 0): the table holds the names of live ops,
    not of every op ever made.
    """

    __slots__ = ("count", "__weakref__")

    def __init__(self) -> None:
        # (taking one is atomic: threads that make ops, or number them when first
        # asked, never share a number)
        self.count = itertools.count()


#: full op name -> its _Numbers, weakly (see _Numbers); a name is removed by _forget
_name_counts: dict[str, weakref.ref[_Numbers]] = {}
# held while _name_counts gains or loses a name; reentrant, because the collector may
# free the last op of a name, and so call _forget, in the thread holding it
_NAMING = threading.RLock()


def _numbers(full: str) -> _Numbers:
    """The numbers the full op name ``full`` has left: from 0 when no op alive has it."""
    with _NAMING:  # (two threads naming the first op of a name at once get one _Numbers)
        ref = _name_counts.get(full)
        numbers = ref() if ref is not None else None
        if numbers is None:
            numbers = _Numbers()
            _name_counts[full] = weakref.ref(numbers, functools.partial(_forget, full))
        return numbers


def _forget(full: str, ref: weakref.ref[_Numbers]) -> None:
    """Forget ``full``: the last op named from it is gone (``ref``'s _Numbers with it)."""
    with _NAMING:
        if _name_counts.get(full) is ref:  # (not a _Numbers made for the name since)
            del _name_counts[full]


def _to_array(value: Any, dtype: Any, what: str) -> np.ndarray:
    """An array of the engine's own for ``value``, with TensorFlow's dtype inference.

    The engine never changes an array in place, and a trace reads its tensors'
    arrays when it is looked at; so an array the caller still holds is copied
    (``a[:] = 0`` after ``gv.constant(a)`` must not change the constant), while
    a tensor's array, or one made here from a list or a number, is not.
    """
    if type(value).__name__ == "IndexedSlices":  # a sparse gradient: its dense array
        value = convert_to_tensor(value)
    if isinstance(value, Tensor):
        return _checked_array(value._value, dtype, what)
    array = _checked_array(value, dtype, what)
    if array is value or not array.flags.owndata:  # the caller's array, or a view of one
        array = array.copy()
    return array


def _checked_array(value: Any, dtype: Any, what: str) -> np.ndarray:
    """``value`` as an array of a supported dtype (``dtype``, if given), copied only to convert."""
    want = None if dtype is None else dtypes.as_dtype(dtype).np
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            raise TypeError(f"{what}: unsupported dtype {array.dtype} (use numbers)")
        if not array.dtype.isnative:  # e.g. big-endian data read from a file
            array = array.astype(array.dtype.newbyteorder("="))
        if want is not None and array.dtype != want:
            array = _safe_cast(array, want, value, what)
        elif want is None:
            try:
                dtypes.from_numpy(array.dtype)
            except TypeError as e:
                raise TypeError(f"{what}: {e}; cast the array first, e.g. "
                                f"a.astype(np.float64)") from None
        return array
    try:
        array = np.asarray(value)
    except ValueError as e:
        raise ValueError(f"{what}: cannot make a tensor from {_short(value)}: {e}") from None
    if array.dtype == object or array.dtype.kind not in "biuf":
        raise TypeError(f"{what}: cannot make a tensor from {_short(value)} "
                        "(accepted: numbers, nested lists of numbers, NumPy arrays, tensors)")
    if want is not None:
        return _safe_cast(array, want, value, what)
    if array.dtype.kind == "f":
        return array.astype(np.float32)
    if array.dtype.kind in "iu":
        # Python ints are int32, as in TensorFlow, unless they do not fit
        fits = array.size == 0 or (_INT32.min <= array.min() and array.max() <= _INT32.max)
        return array.astype(np.int32 if fits else np.int64)
    return array


_INT32 = np.iinfo(np.int32)


def _safe_cast(array: np.ndarray, want: np.dtype, value: Any, what: str) -> np.ndarray:
    """``array`` as ``want``, refusing what would change its values or their meaning."""
    if (want.kind == "b") != (array.dtype.kind == "b"):  # 2 would become True, True 1.0
        raise TypeError(f"{what}: cannot convert {_short(value)} to {want.name}: bools and "
                        "numbers do not turn into each other implicitly (as in TensorFlow); "
                        "use gv.cast(t, ...), or a comparison such as x != 0")
    if want.kind in "iub" and array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            raise TypeError(f"{what}: cannot convert {_short(value)} to {want.name} "
                            "without losing its fractional part")
    if want.kind in "iu" and array.dtype.kind in "iuf" and array.size:
        info = np.iinfo(want)
        if array.min() < info.min or array.max() > info.max:
            raise TypeError(f"{what}: {_short(value)} does not fit in {want.name} "
                            f"(range {info.min}..{info.max})")
    if want.kind == "f" and array.dtype != want:
        with np.errstate(over="ignore"):
            out = array.astype(want)
        if np.any(np.isinf(out) & ~np.isinf(array)):  # a finite value overflowed
            big = float(np.finfo(want).max)
            raise TypeError(f"{what}: {_short(value)} does not fit in {want.name} "
                            f"(largest magnitude {big:.4g}); keep it in a wider dtype")
        return out
    return array.astype(want)


def read_only(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` that cannot be written to (for code outside the engine)."""
    view = array.view()
    view.flags.writeable = False
    return view


#: The longest name a user may give an op, a Variable or a name scope.
MAX_NAME = 200


def check_name(name: Any, what: str) -> None:
    """Refuse a name the diagram could not draw: not text, control characters, too long."""
    if not isinstance(name, str) or not name or len(name) > MAX_NAME or NOT_TEXT.search(name):
        detail = ("it is not a string" if not isinstance(name, str) else "it is empty"
                  if not name else f"it has {len(name)} characters" if len(name) > MAX_NAME
                  else "it holds a control character or a lone surrogate")
        raise ValueError(f"{what}: {_short(name)} is not a usable name ({detail}); a name "
                         f"is text of 1 to {MAX_NAME} characters")


def _short(value: Any) -> str:
    r = repr(value)
    return r if len(r) <= 60 else r[:57] + "..."


def constant(value: Any, dtype: Any = None, name: str | None = None) -> Tensor:
    """A constant tensor.

    A Python float becomes float32, a Python int int32; a NumPy array keeps its
    dtype unless ``dtype`` is given.

    >>> import gradviz as gv
    >>> gv.constant(1.0).dtype, gv.constant(1).dtype, gv.constant([1, 2], gv.float64).dtype
    (gv.float32, gv.int32, gv.float64)
    """
    out = make_op(CONST, (), _to_array(value, dtype, "constant"), None, name or CONST)
    if _escapes and isinstance(value, (np.ndarray, np.generic)):  # maybe what NumPy made of one
        _note_from_numpy(out)
    return out


def convert_to_tensor(value: Any, dtype: Any = None, what: str = "value") -> Tensor:
    """``value`` as a Tensor (a Tensor is returned as it is when dtypes agree; a sparse
    gradient, ``IndexedSlices``, is made dense, as TensorFlow does)."""
    if type(value).__name__ == "IndexedSlices":
        from .array_ops import dense
        value = dense(value)
    if isinstance(value, Tensor):
        if dtype is not None and value._dtype != dtypes.as_dtype(dtype).np:
            raise TypeError(f"{what}: expected dtype {dtypes.as_dtype(dtype).name}, "
                            f"got {value.name} of dtype {value.dtype.name}")
        return value
    return constant(value, dtype)


def is_python_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, (np.generic, np.ndarray))


@contextlib.contextmanager
def deferring_ops() -> Iterator[None]:
    """Ops the calling thread makes inside defer their Operation objects until asked
    for (see make_op)."""
    here = _per_thread.state
    if not here.deferring:  # the ops it builds were made by the line that began the pass
        here.source = source_here() if _sourcing else None
    here.deferring += 1
    try:
        yield
    finally:
        here.deferring -= 1
        if not here.deferring:
            here.source = None


class name_scope:  # noqa: N801 - a function to its callers, as TensorFlow's
    """Group the ops created inside under ``name`` (nested scopes join with "/").

    Each thread has its own scopes: ops another thread makes meanwhile are not in it.

    >>> import gradviz as gv
    >>> with gv.name_scope("layer1"):
    ...     h = gv.constant(2.0) * 3.0
    >>> h.op.name.startswith("layer1/Mul"), h.op.scope
    (True, 'layer1')

    (A class rather than a generator: a model enters a scope per layer, and a
    generator's context manager costs several times as much.)
    """

    __slots__ = ("_name", "_here", "_full")

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or "/" in name:
            raise ValueError(f"name_scope: expected a non-empty name without '/', got {name!r}")
        check_name(name, "name_scope")
        self._name = name

    def __enter__(self) -> str:
        here = self._here = _per_thread.state  # the entering thread's, whichever ends it
        full = self._full = f"{here.scope}/{self._name}" if here.scope else self._name
        here.scopes.append(full)
        here.scope = full
        return full

    def __exit__(self, *exc: object) -> None:
        # removed by value, not popped: when blocks end out of order (a generator
        # closed late), the scope still comes back to "" once every block has ended
        here = self._here
        here.scopes.remove(self._full)
        here.scope = here.scopes[-1] if here.scopes else ""


# ---------------------------------------------------------------- names as a student reads them


def plain_name(name: str) -> str:
    """A tensor's name as the engine's warnings and reasons write it: without ``:0``.

    The scope stays (``layer1/W``); another output keeps its number (``Split:1``).

    >>> plain_name("layer1/W:0"), plain_name("Split:1")
    ('layer1/W', 'Split:1')
    """
    return name[:-2] if name.endswith(":0") else name


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__)) + os.sep


def outside_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning issued by the caller point at the
    first frame outside gradviz: the user's own call, however deep the engine is."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


# ---------------------------------------------------------------- leaving the graph through NumPy


class Escape(NamedTuple):
    """A tensor NumPy turned into an array (``np.exp(t)`` calls ``Tensor.__array__``)."""

    tensor: Tensor  # the tensor converted
    number: int  # the conversions counted, this one included
    file: str  # where the user's code asked for it ("" when not known)
    line: int  # the line in that file (0 when not known)
    function: str  # the NumPy function in Python the call went through ("mean"), or ""

    @property
    def where(self) -> str:
        """The call site as a reader finds it: ``"train.py:12"``, ``"line 3 of the notebook
        cell"``, or "" when not known."""
        if not self.file:
            return ""
        if "ipykernel" in self.file:  # a notebook cell's code, "compiled" from a temporary file
            return f"line {self.line} of the notebook cell"
        return f"{os.path.basename(self.file)}:{self.line}"


#: The tensors NumPy lately turned into arrays, oldest first.  Only the last few
#: are kept (and with them, the tensors they come from): enough to explain a
#: gradient computed soon after, without keeping old graphs alive for long.
_escapes: deque[Escape] = deque(maxlen=8)
_escape_numbers = itertools.count(1)


class FromNumpy(NamedTuple):
    """A constant or Variable made from a NumPy array while a conversion was remembered:
    maybe what NumPy returned for it (``np.exp(t) * t`` makes one of ``np.exp(t)``)."""

    number: int  # the number of the latest conversion then
    file: str  # where the user's code made it ("" when not known)
    line: int  # the line in that file (0 when not known)


#: Constants and Variables made from a NumPy array while a conversion is
#: remembered (it may be what NumPy returned) -> when and where they were made
_from_numpy: weakref.WeakKeyDictionary[Tensor, FromNumpy] = weakref.WeakKeyDictionary()


def _note_escape(tensor: Tensor) -> None:
    """Remember that NumPy took ``tensor`` out of the graph, with the user's line."""
    try:
        frame: Any = sys._getframe(2)  # whoever called __array__: NumPy's C code is not a frame
    except ValueError:  # called from C with no Python caller at all
        frame = None
    function = ""
    while frame is not None and frame.f_code.co_filename.startswith(_NUMPY_DIR):
        function = frame.f_code.co_name  # np.mean runs as Python: keep its outermost name
        frame = frame.f_back
    if frame is None:
        _escapes.append(Escape(tensor, next(_escape_numbers), "", 0, function))
    elif not frame.f_code.co_filename.startswith(_PACKAGE_DIR):  # gradviz's own reads are not
        _escapes.append(Escape(tensor, next(_escape_numbers), frame.f_code.co_filename,
                               frame.f_lineno, function))


def _note_from_numpy(tensor: Tensor) -> None:
    """Remember that ``tensor`` was made from a NumPy array after the latest conversion, with
    the user's line: the first frame outside gradviz and NumPy (``np.exp(t) * t`` makes
    the constant inside ``Tensor.__rmul__``, called from the user's line)."""
    try:
        frame: Any = sys._getframe(2)  # whoever made the constant or the Variable
    except ValueError:  # made from C with no Python caller at all
        frame = None
    while frame is not None and frame.f_code.co_filename.startswith((_PACKAGE_DIR, _NUMPY_DIR)):
        frame = frame.f_back
    file, line = ("", 0) if frame is None else (frame.f_code.co_filename, frame.f_lineno)
    _from_numpy[tensor] = FromNumpy(_escapes[-1].number, file, line)


def _inputs(t: Tensor) -> tuple[Tensor, ...]:
    """The inputs of the op that made ``t``, without making a deferred op (see make_op)."""
    op = t._op
    return t._pending[1] if op is None else op.inputs


def upstream(tensors: Iterable[Tensor]) -> set[Tensor]:
    """The tensors given and every tensor they were computed from."""
    seen: set[Tensor] = set()
    stack = list(tensors)
    while stack:
        t = stack.pop()
        if t not in seen:
            seen.add(t)
            stack.extend(_inputs(t))
    return seen


def left_through_numpy(x: Tensor, ys: Iterable[Tensor],
                       above: set[Tensor] | None = None) -> Escape | None:
    """Where a computation from ``x`` left the graph through NumPy and came back to the ys.

    That is the latest remembered conversion of a tensor computed from ``x``
    (or of ``x`` itself) after which a constant made from a NumPy array went
    into the ys, while ``x`` itself did not: what NumPy returned, come back as
    a constant, is why no gradient reaches ``x``.  ``above``: ``upstream(ys)``,
    if known.  None when there is no such conversion (the usual case costs
    nothing: none was made).
    """
    if not _escapes:
        return None
    if above is None:
        above = upstream(ys)
    if x in above:  # x is in the ys' graph: if no gradient reaches it, something else cut it
        return None
    made = [m.number for t in above if (m := _from_numpy.get(t)) is not None]
    if not made:
        return None
    latest = max(made)
    for escape in reversed(_escapes):
        if escape.number <= latest and x in upstream([escape.tensor]):
            return escape
    return None
