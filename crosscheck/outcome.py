"""What a run gives, and how gradviz's run and TensorFlow's are compared.

A run is a list of labelled results: an array, None (a gradient that is None),
or the exception that ended the run (its type's name).  Two runs agree when
they have the same labels, the same Nones, the same exception types, and arrays
of the same dtype and shape whose values agree within the dtype's tolerance
(NaN where the other has NaN, the same infinities).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .libs import Runner

__all__ = ["Difference", "Raised", "Recording", "TOLERANCE", "compare"]

#: largest difference allowed, relative to the larger of 1 and TensorFlow's largest value
TOLERANCE = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-4,
             np.dtype(np.float64): 1e-9}


@dataclass(frozen=True)
class Raised:
    """The exception that ended a run."""

    type: str  # its class's name, "ValueError" or TensorFlow's "InvalidArgumentError"
    message: str  # its text (shown in a report, not compared)


Result = np.ndarray | None | Raised


class Recording:
    """The labelled tensors a program produces, read in one go at the end."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.labels: list[str] = []
        self.tensors: list[Any] = []
        self.rows: set[int] = set()  # the places that hold a sparse gradient's rows

    def add(self, label: str, tensor: Any) -> None:
        """Note ``tensor`` (a tensor, or None) under ``label``.  A sparse gradient
        (IndexedSlices) is noted as its dense value and, under ``label rows``, the rows it
        holds, sorted (the order its slices were concatenated in is not compared): a
        gradient one library gives sparse and the other dense differs in its labels."""
        if type(tensor).__name__ == "IndexedSlices":
            self.labels += [label, f"{label} rows"]
            self.rows.add(len(self.tensors) + 1)
            self.tensors += [self.runner.lib.convert_to_tensor(tensor), tensor.indices]
            return
        self.labels.append(label)
        self.tensors.append(tensor)

    def results(self, error: BaseException | None = None) -> list[tuple[str, Result]]:
        """The labelled values, ending with ``error`` if the program raised one (or if
        reading the values raised one, as a TensorFlow session does for a bad shape)."""
        out: list[tuple[str, Result]] = []
        try:
            values = self.runner.values(self.tensors)
        except Exception as e:  # noqa: BLE001 - a session reports a kernel's error here
            return [("raised", raised(e))]
        for k in self.rows:
            values[k] = np.sort(values[k]).astype(np.int64)
        out.extend(zip(self.labels, values))
        if error is not None:
            out.append(("raised", raised(error)))
        return out


def raised(error: BaseException) -> Raised:
    """An exception as a result: its type and first line."""
    return Raised(type(error).__name__, str(error).strip().splitlines()[0][:300]
                  if str(error).strip() else "")


def _close(ours: np.ndarray, theirs: np.ndarray, floor: float) -> str | None:
    """Why two arrays differ, or None (``floor``: the least tolerance, see ``compare``)."""
    if ours.dtype != theirs.dtype:
        return f"dtype {ours.dtype} vs TensorFlow's {theirs.dtype}"
    if ours.shape != theirs.shape:
        return f"shape {ours.shape} vs TensorFlow's {theirs.shape}"
    if ours.dtype.kind != "f":
        if np.array_equal(ours, theirs):
            return None
        return f"{_show(ours)} vs TensorFlow's {_show(theirs)}"
    a, b = ours.astype(np.float64), theirs.astype(np.float64)
    if not (np.array_equal(np.isnan(a), np.isnan(b)) and
            np.array_equal(np.where(np.isinf(a), a, 0), np.where(np.isinf(b), b, 0))):
        return f"{_show(ours)} vs TensorFlow's {_show(theirs)} (NaN or infinity differ)"
    finite = np.isfinite(a) & np.isfinite(b)
    if not finite.any():
        return None
    scale = max(1.0, float(np.abs(b[finite]).max()))
    worst = float(np.abs(a[finite] - b[finite]).max()) / scale
    if worst > max(TOLERANCE[ours.dtype], floor):
        return f"{_show(ours)} vs TensorFlow's {_show(theirs)} (relative difference {worst:.2g})"
    return None


def _show(a: np.ndarray) -> str:
    return np.array2string(a, precision=5, threshold=12, edgeitems=3).replace("\n", "")


def _kind(r: Result) -> str:
    return "None" if r is None else f"raised {r.type}" if isinstance(r, Raised) else "an array"


Difference = tuple[str, str, str]  # (label, key, what)


def compare(ours: list[tuple[str, Result]], theirs: list[tuple[str, Result]],
            floor: float = 0.0) -> list[Difference]:
    """Every difference between gradviz's results and TensorFlow's, as (label, key, what):
    the result's label, the difference's kind (``key``: for the list of deliberate
    differences, which excuses a kind at a label), and ``what`` in full.  Empty when
    they agree.  Once the labels part (a run stopped early), the rest is not compared.

    ``floor``: the least tolerance, for a program in which a float64 array may
    have been computed in float32 (cast up, it keeps float32's rounding).
    """
    found: list[Difference] = []
    for k in range(max(len(ours), len(theirs))):
        if k >= len(ours) or k >= len(theirs):
            longer, who = (ours, "gradviz") if len(ours) > len(theirs) else (theirs,
                                                                               "TensorFlow")
            label, r = longer[k]
            found.append((label, "length", f"only {who} goes on to {label}: {_kind(r)}"))
            break
        (label, a), (label_t, b) = ours[k], theirs[k]
        if label != label_t:
            found.append((label, "label",
                          f"gradviz gives {label} where TensorFlow gives {label_t}"))
            break
        if isinstance(a, Raised) or isinstance(b, Raised):
            if isinstance(a, Raised) and isinstance(b, Raised):
                if a.type != b.type:
                    found.append((label, f"raises {a.type} where TensorFlow raises {b.type}",
                                  f"{label}: gradviz raises {a.type} ({a.message}); "
                                  f"TensorFlow raises {b.type} ({b.message})"))
            else:
                found.append((label, "raises", (
                    f"{label}: gradviz gives {_kind(a)}"
                    f"{f' ({a.message})' if isinstance(a, Raised) else ''}, "
                    f"TensorFlow {_kind(b)}{f' ({b.message})' if isinstance(b, Raised) else ''}")))
        elif label == "message":
            if str(b) not in str(a):  # gradviz may say more, but TensorFlow's words must be there
                found.append((label, "message",
                              f"TensorFlow says {str(b)!r}; gradviz says {str(a)!r}"))
        elif (a is None) != (b is None):
            found.append((label, "None", f"{label}: gradviz gives {_kind(a)}, TensorFlow "
                                         f"{_kind(b)}"))
        elif a is not None and (why := _close(a, b, floor)) is not None:
            found.append((label, "value", f"{label}: {why}"))
    return found
