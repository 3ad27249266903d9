"""The few names the two libraries spell differently, and running a program in each.

gradviz puts every op at the top (``gv.relu``); TensorFlow puts some in
``tf.nn`` or ``tf.math``.  ``fn(lib, name)`` finds an op by its name in either.
gradviz is always eager; ``tf.gradients`` needs a graph, so ``Graph`` runs the
``gradients`` programs in a TensorFlow graph and a session, and eagerly in gradviz.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["Runner", "dense", "fn", "is_tensorflow", "prevent_gradient"]


def is_tensorflow(lib: Any) -> bool:
    """Whether ``lib`` is TensorFlow (else gradviz)."""
    return lib.__name__.split(".")[0] == "tensorflow"


def dense(lib: Any, g: Any) -> Any:
    """A sparse gradient (IndexedSlices) made dense, as TensorFlow has no arithmetic on
    one; anything else as it is."""
    return lib.convert_to_tensor(g) if type(g).__name__ == "IndexedSlices" else g


def fn(lib: Any, name: str) -> Callable[..., Any]:
    """The op called ``name`` in ``lib``: at the top, or in its ``nn`` or ``math``."""
    for space in (lib, getattr(lib, "nn", None), getattr(lib, "math", None)):
        found = getattr(space, name, None)
        if found is not None:
            return found
    raise AttributeError(f"{lib.__name__} has no op {name!r} (looked in it, .nn and .math)")


def prevent_gradient(lib: Any, x: Any, message: str) -> Any:
    """``gv.prevent_gradient``; in TensorFlow its op (whose Python function is not public)."""
    if is_tensorflow(lib):
        return lib.raw_ops.PreventGradient(input=x, message=message)
    return lib.prevent_gradient(x, message=message)


class Runner:
    """Runs a program in one library and reads its tensors' values back.

    ``graph=True`` (``tf.gradients``): in TensorFlow the program is built in a
    ``tf.Graph`` and its tensors are read by one session run; gradviz runs it
    eagerly as always.
    """

    def __init__(self, lib: Any, graph: bool = False) -> None:
        self.lib = lib
        self.graph = graph and is_tensorflow(lib)

    @contextlib.contextmanager
    def building(self) -> Iterator[None]:
        """The context a program is built in: a fresh graph for TensorFlow's graph mode."""
        if not self.graph:
            yield
            return
        self._graph = self.lib.Graph()
        with self._graph.as_default():
            yield

    def values(self, tensors: list[Any]) -> list[np.ndarray | None]:
        """Each tensor's value (None stays None)."""
        if not self.graph:
            return [None if t is None else np.asarray(t.numpy()) for t in tensors]
        wanted = [t for t in tensors if t is not None]
        with self.lib.compat.v1.Session(graph=self._graph) as session:
            got = iter(session.run(wanted)) if wanted else iter(())
        return [None if t is None else np.asarray(next(got)) for t in tensors]
