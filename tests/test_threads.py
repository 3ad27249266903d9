"""Threads kept apart: each thread's name scopes, tapes and backward passes are its own,
and the names of ops long gone are not kept for ever."""

import contextlib
import gc
import threading
import warnings
from collections.abc import Callable, Iterator

import numpy as np

import gradviz as gv
from gradviz.engine import graph

WAIT = 5.0  # seconds before a thread that never arrives fails the test instead of hanging it


@contextlib.contextmanager
def another_thread_inside(block: Callable[[Callable[[], None]], None]) -> Iterator[None]:
    """Runs ``block(pause)`` in another thread; the ``with`` body runs while that thread
    is paused where it called ``pause()``, and the thread ends after the body.

    The two threads take turns by Events, not by timing: the body starts only once
    the other thread has reached ``pause()``, and the other thread goes on only once
    the body has ended.
    """
    arrived, go_on = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def pause() -> None:
        arrived.set()
        if not go_on.wait(WAIT):
            raise TimeoutError("the test's body never ended")

    def run() -> None:
        try:
            block(pause)
        except BaseException as e:  # handed to the test, which raises it
            failed.append(e)
        finally:
            arrived.set()  # (also when it failed before pausing: the test must not hang)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        if not arrived.wait(WAIT):
            raise TimeoutError("the other thread never reached pause()")
        if failed:
            raise failed[0]
        yield
    finally:
        go_on.set()
        thread.join(WAIT)
    if failed:
        raise failed[0]


# ---------------------------------------------------------------- name scopes


def test_an_op_made_while_another_thread_is_inside_a_name_scope_is_not_named_in_it():
    def in_a_scope(pause: Callable[[], None]) -> None:
        with gv.name_scope("threads_test_a"):
            pause()

    x = gv.constant(1.0, name="threads_test_x")
    with another_thread_inside(in_a_scope):
        y = x * 2.0  # a Mul, and a Const for 2.0 numbered when first asked for
        with gv.name_scope("threads_test_b"):
            z = x * 3.0
    # (its number depends on the Muls other tests keep alive; its scope does not)
    assert y.op.scope == "" and y.op.base_name == "Mul" and y.op.inputs[1].op.scope == ""
    assert z.op.scope == "threads_test_b" and z.op.inputs[1].op.scope == "threads_test_b"


def test_a_deferred_op_keeps_the_scope_it_was_requested_in_whichever_thread_names_it():
    with gv.name_scope("threads_test_requested"):
        y = gv.constant(1.0) * 2.0  # the Const for 2.0 is numbered when first asked for
    two = y.op.inputs[1]

    def named_elsewhere(pause: Callable[[], None]) -> None:
        with gv.name_scope("threads_test_elsewhere"):
            names.append(two.name)
            pause()

    names: list[str] = []
    with another_thread_inside(named_elsewhere):
        pass
    assert names == [two.name] and two.op.scope == "threads_test_requested"
    assert two.name.startswith("threads_test_requested/Const")


def test_a_name_scope_ended_by_another_thread_ends_in_the_thread_that_entered_it():
    scope = gv.name_scope("threads_test_ended")
    scope.__enter__()

    def end(pause: Callable[[], None]) -> None:
        with gv.name_scope("threads_test_own"):
            scope.__exit__(None, None, None)  # as a generator closed late here would
            inside.append(gv.constant(1.0).op.scope)
        pause()

    inside: list[str] = []
    with another_thread_inside(end):
        pass
    assert inside == ["threads_test_own"] and gv.constant(1.0).op.scope == ""


# ---------------------------------------------------------------- backward passes


def test_ops_made_while_another_thread_runs_a_backward_pass_are_not_gradients_ops():
    def backward(pause: Callable[[], None]) -> None:
        @gv.custom_gradient
        def square(v):
            def grad_fn(upstream):
                pause()  # in the middle of the pass: the main thread makes its ops now
                return upstream * 2.0 * v
            return v * v, grad_fn

        v = gv.constant(3.0)
        results.extend(float(g) for g in gv.gradients(square(v), v))

    results: list[float] = []
    x = gv.constant([1.0, 2.0], name="threads_test_fwd_x")
    with another_thread_inside(backward):
        with gv.name_scope("threads_test_fwd"):
            first = gv.tanh(x)
            second = x * 2.0
        named = gv.constant(1.0, name="threads_test_fwd_named")
    # asked for last to first: numbered as they were made, in the main thread's scope
    assert second.name == "threads_test_fwd/Mul:0"
    assert first.name == "threads_test_fwd/Tanh:0"
    assert named.name == "threads_test_fwd_named:0"
    assert results == [6.0]


# ---------------------------------------------------------------- tapes


def test_a_tape_records_only_the_ops_of_the_thread_that_opened_it():
    x = gv.constant([1.0, 2.0], name="threads_test_tape_x")
    tapes: list[gv.GradientTape] = []

    def recording(pause: Callable[[], None]) -> None:
        with gv.GradientTape(persistent=True) as tape:
            tape.watch(x)
            tapes.append(tape)
            pause()
            own = x * x  # this thread's op, recorded
        tapes.append(own)

    with another_thread_inside(recording):
        other = x * x  # the main thread's: the other thread's tape must not record it
    tape, own = tapes
    assert tape.gradient(own, x).numpy().tolist() == [2.0, 4.0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert tape.gradient(other, x) is None  # computed outside the tape, as far as it knows
    assert any("outside the tape" in str(w.message) for w in caught)


def test_a_block_that_stops_the_tapes_stops_only_its_own_threads():
    x = gv.constant(2.0, name="threads_test_stop_x")

    def recomputed(pause: Callable[[], None]) -> None:
        def block(v):  # its forward pass runs with the tapes stopped (recompute_grad)
            pause()
            return v * 2.0
        gv.recompute_grad(block)(gv.constant(1.0))

    with gv.GradientTape() as tape:
        tape.watch(x)
        with another_thread_inside(recomputed):
            y = x * x  # recorded: the other thread stopped its own tapes, not this one
    assert float(tape.gradient(y, x)) == 4.0


# ---------------------------------------------------------------- the names in use


def test_the_names_of_ops_that_are_gone_are_forgotten():
    gc.collect()
    before = len(graph._name_counts)
    for i in range(20_000):
        gv.constant(1.0, name=f"threads_test_unique{i}")
    x = gv.constant([1.0, 2.0], name="threads_test_split_x")
    for i in range(1_000):  # several outputs: op and outputs refer to each other, a cycle
        gv.split(x, 2, name=f"threads_test_split{i}")
    del x
    gc.collect()
    assert len(graph._name_counts) <= before + 10


def test_a_name_stays_taken_while_any_op_numbered_from_it_is_alive():
    first = gv.constant(1.0, name="threads_test_again")
    dropped = gv.constant(1.0, name="threads_test_again")  # _1
    third = gv.constant(1.0, name="threads_test_again")  # _2
    assert [t.name for t in (first, dropped, third)] == [
        "threads_test_again:0", "threads_test_again_1:0", "threads_test_again_2:0"]
    del first, dropped
    gc.collect()
    again = gv.constant(1.0, name="threads_test_again")  # named like the dropped ones
    assert again.name == "threads_test_again_3:0"
    del third, again
    gc.collect()  # none is left: the name is free again
    assert gv.constant(1.0, name="threads_test_again").name == "threads_test_again:0"


def test_an_op_keeps_its_name_taken_after_its_output_is_gone():
    op = gv.constant(1.0, name="threads_test_op_kept").op  # its tensor is gone at once
    gc.collect()
    assert op.name == "threads_test_op_kept"
    assert gv.constant(1.0, name="threads_test_op_kept").name == "threads_test_op_kept_1:0"


def test_an_op_numbered_when_first_asked_for_keeps_its_name_taken_after_its_output_is_gone():
    with gv.name_scope("threads_test_lazy"):
        two = (gv.constant(1.0) * 2.0).op.inputs[1]  # 2.0's Const: numbered when asked for
    op = two.op
    del two
    gc.collect()
    # (gv.constant(1.0) was Const, but it was gone, with the Mul, before 2.0's was numbered)
    assert op.name == "threads_test_lazy/Const"
    with gv.name_scope("threads_test_lazy"):
        again = [gv.constant(1.0) * 2.0 for _ in range(2)]
    assert [y.op.inputs[1].name for y in again] == [
        "threads_test_lazy/Const_3:0", "threads_test_lazy/Const_4:0"]


def test_names_stay_unique_while_threads_make_and_drop_ops_of_the_same_names():
    start = threading.Barrier(4, timeout=WAIT)
    kept: list[list[gv.Tensor]] = [[] for _ in range(4)]

    def make(k: int) -> None:
        start.wait()
        for i in range(500):
            t = gv.constant(np.float32(i), name=f"threads_test_shared{i % 7}")
            if i % 3 == 0:
                kept[k].append(t)  # the others are dropped at once, freeing their names

    threads = [threading.Thread(target=make, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    names = [t.name for ts in kept for t in ts]
    assert len(names) == 4 * 167 and len(set(names)) == len(names)
