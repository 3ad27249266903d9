"""The forward graph: names, scopes, and ops that lead back to their values."""

import random
import re
import sys
import threading

import numpy as np
import pytest

import gradviz as gv
from gradviz.engine.backprop import _topo_ops


def test_names_count_up_in_creation_order_with_the_scope_they_were_made_in():
    with gv.name_scope("graph_test_names"):
        a = gv.constant(1.0)
        b = a * 2.0  # makes a Const for 2.0, then a Mul
        c = gv.constant(3.0, name="three")
    d = gv.constant(4.0, name="graph_test_names_top")
    # asked for in the opposite order: names were given when the tensors were made
    assert d.name == "graph_test_names_top:0" and d.op.scope == ""
    assert c.name == "graph_test_names/three:0" and c.op.scope == "graph_test_names"
    assert b.op.inputs[1].name == "graph_test_names/Const_1:0"
    assert a.name == "graph_test_names/Const:0"
    assert b.name == "graph_test_names/Mul:0"


def test_a_python_numbers_constant_is_numbered_when_first_asked_for():
    with gv.name_scope("graph_test_later"):
        a = gv.constant(1.0) * 2.0  # gv.constant is named now; 2.0's Const is not
        b = gv.constant(3.0)
    two = a.op.inputs[1]
    assert b.name == "graph_test_later/Const_1:0"
    assert two.name == "graph_test_later/Const_2:0" and two.op.scope == "graph_test_later"
    assert two.name == "graph_test_later/Const_2:0" and two.op is a.op.inputs[1].op


def test_a_constants_op_is_one_object_that_points_back_at_it():
    x = gv.constant([1.0, 2.0])
    y = x * 0.5
    half = y.op.inputs[1]
    op = half.op
    assert op is half.op and op.type == "Const" and op.inputs == ()
    assert op.outputs == (half,) and half.value_index == 0
    assert repr(op) == f"<gv.Operation {op.name!r} type=Const inputs=[]>"


def test_a_constant_made_inside_a_tape_is_a_leaf_the_tape_does_not_need():
    w = gv.Variable([1.0, 2.0], name="graph_test_w")
    with gv.GradientTape() as tape:
        y = gv.reduce_sum(w * 3.0 + 1.0)
    (g,) = tape.gradient(y, [w])
    assert g.numpy().tolist() == [3.0, 3.0]
    assert y.op.inputs[0].op.inputs[1].op.type == "Const"


def test_gradients_of_gradients_see_through_constants_made_in_the_first_pass():
    x = gv.constant(2.0)
    y = x * x * 3.0  # 3x^2
    (dy,) = gv.gradients(y, x)  # 6x, built from a Const for 3.0
    (d2y,) = gv.gradients(dy, x)
    assert (float(dy), float(d2y)) == (12.0, 6.0)


def test_the_ops_a_backward_pass_builds_are_there_when_asked_for():
    with gv.name_scope("graph_test_backward"):
        x = gv.constant([0.5, 1.0])
        y = gv.tanh(x) * 2.0
    (g,) = gv.gradients(y, x)
    op = g.op  # TanhGrad(tanh(x), upstream * 2.0), made now
    assert op is g.op and op.outputs == (g,) and op.type == "TanhGrad"
    assert re.fullmatch(r"gradients/TanhGrad(_\d+)?", op.name) and op.scope == "gradients"
    upstream = op.inputs[1].op
    assert upstream.type == "Mul" and re.fullmatch(r"gradients/Mul(_\d+)?", upstream.name)


def test_the_backward_order_puts_every_op_after_the_ops_it_reads_on_random_graphs():
    rng = random.Random(7)
    for _ in range(50):
        pool = [gv.constant(float(i)) for i in range(3)]
        for _ in range(rng.randint(1, 40)):
            a, b = rng.choice(pool), rng.choice(pool)
            pool.append(rng.choice([lambda: a + b, lambda: a * 0.5, lambda: gv.tanh(a)])())
        ys = rng.sample(pool[3:], k=min(2, len(pool) - 3))
        order = _topo_ops(ys, None)
        place = {op: k for k, op in enumerate(order)}
        assert len(place) == len(order)  # each op once
        for op in order:
            for t in op.inputs:
                if t.op.inputs:  # a computed input: placed before its reader
                    assert place[t.op] < place[op]
        # and nothing is missing: every computed op the ys depend on is there
        stack, found = [y.op for y in ys], set()
        while stack:
            op = stack.pop()
            if op.inputs and op not in found:
                found.add(op)
                stack.extend(t.op for t in op.inputs)
        assert found == set(order)


def test_changing_numpys_array_leaves_the_tensor_and_its_trace_as_they_were():
    w = gv.Variable([1.0, 2.0], name="graph_test_copy")
    trace = gv.trace_gradients(gv.reduce_sum(w * 3.0), w)
    g = trace.gradients[0].numpy()
    g *= 0.1  # e.g. scaling a gradient in place before a step
    assert trace.gradients[0].numpy().tolist() == [3.0, 3.0]
    assert trace.steps[-1].grad.values.tolist() == [3.0, 3.0]  # what the trace shows


def test_name_scopes_come_back_to_the_top_level_when_blocks_end_out_of_order():
    outer, inner = gv.name_scope("graph_test_a"), gv.name_scope("graph_test_b")
    outer.__enter__()
    inner.__enter__()  # graph_test_a/graph_test_b
    outer.__exit__(None, None, None)  # ends first, as a generator closed late can
    assert gv.constant(1.0).op.scope == "graph_test_a/graph_test_b"
    inner.__exit__(None, None, None)
    assert gv.constant(1.0).op.scope == ""


def test_names_stay_unique_while_another_thread_numbers_constants_by_reading_them():
    x = gv.constant(1.0, name="graph_test_thread_x")
    lazy = [(x * 2.0).op.inputs[1] for _ in range(2000)]  # numbered when first read
    made: list = []
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can
    try:
        reader = threading.Thread(target=lambda: [t.name for t in lazy])
        reader.start()
        made.extend(gv.constant(1.0) for _ in range(2000))
        reader.join()
    finally:
        sys.setswitchinterval(switch)
    names = [t.name for t in lazy + made]
    assert len(set(names)) == len(names)


def test_an_op_defined_with_no_inputs_is_named_when_made():
    src = gv.define_op("GraphTestSource", lambda: np.array([1.0, 2.0], np.float32))
    a, b = src(), src()
    assert (b.name, a.name) == ("GraphTestSource_1:0", "GraphTestSource:0")


def test_arrays_of_dtypes_gradviz_has_no_name_for_are_refused_and_big_endian_ones_converted():
    with pytest.raises(TypeError, match=r"constant: unsupported dtype 'float128' \(supported: "
                                        r"bool, float16, float32, float64.*a.astype"):
        gv.constant(np.array([1.0, 2.0], np.longdouble))
    t = gv.constant(np.array([1.0, 2.0], ">f4"))  # big-endian, as read from some files
    assert t.dtype == gv.float32 and (t * 2.0).numpy().tolist() == [2.0, 4.0]
    assert gv.gradients(t * t, t)[0].numpy().tolist() == [2.0, 4.0]


# ---------------------------------------------------------------- tensors own their values


def test_a_constant_keeps_its_values_when_the_callers_array_changes():
    a = np.array([1.0, 2.0], np.float32)
    c = gv.constant(a)
    tr = gv.trace_gradients(c * c, c)
    a[:] = 0
    assert c.numpy().tolist() == [1.0, 2.0]
    assert tr.tensors[tr.xs[0]].value.values.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("make", [
    lambda a: gv.constant(a[1:]),  # a view of the caller's array
    lambda a: gv.Variable(a[1:]),
    lambda a: (gv.constant(1.0) * a[1:]).op.inputs[1],  # the constant an operand became
    lambda a: gv.identity(a[1:]),
])
def test_no_tensor_shares_an_array_the_caller_holds(make):
    a = np.array([1.0, 2.0, 3.0], np.float32)
    t = make(a)
    a[:] = -1
    assert t.numpy().tolist() == [2.0, 3.0]


def test_an_array_made_for_the_tensor_is_not_copied_again():
    t = gv.constant([1.0, 2.0])
    assert gv.constant(t).numpy().tolist() == [1.0, 2.0]
    assert gv.constant(t)._value is t._value  # a tensor's own array needs no copy
    assert gv.Variable(np.zeros(3, np.float64))._value.flags.owndata


def test_np_asarray_of_a_tensor_cannot_change_it():
    t = gv.constant([1.0, 2.0])
    view = np.asarray(t)
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 5.0
    copied = np.array(t, dtype=np.float64)  # asked for a copy: writable, and separate
    copied[0] = 5.0
    assert t.numpy().tolist() == [1.0, 2.0]


def test_grad_ys_and_rule_results_are_copied_from_the_callers_arrays():
    seed = np.array([2.0, 3.0], np.float32)
    x = gv.constant([1.0, 1.0])
    tr = gv.trace_gradients(x * 1.0, x, grad_ys=[seed])
    seed[:] = 0
    assert tr.steps[0].grad.values.tolist() == [2.0, 3.0]
    assert tr.gradients[0].numpy().tolist() == [2.0, 3.0]

    buffer = np.array([5.0, 5.0], np.float32)

    @gv.custom_gradient
    def scaled(v):
        return gv.identity(v), lambda dy: buffer

    g = gv.gradients(scaled(x), x)[0]
    buffer[:] = 0
    assert g.numpy().tolist() == [5.0, 5.0]


def test_a_defined_ops_forward_array_is_its_own():
    kept = np.array([1.0, 2.0], np.float32)
    op = gv.define_op("KeepsABuffer", lambda v: kept)
    out = op(gv.constant([0.0, 0.0]))
    kept[:] = 9
    assert out.numpy().tolist() == [1.0, 2.0]


def test_a_variable_assigned_from_an_array_keeps_its_values():
    a = np.array([1.0, 2.0], np.float32)
    v = gv.Variable([0.0, 0.0])
    v.assign(a)
    a[:] = 0
    assert v.numpy().tolist() == [1.0, 2.0]
    v.assign_add(np.ones(2, np.float32))
    assert v.numpy().tolist() == [2.0, 3.0]


def test_a_scalar_variable_stays_an_array_when_added_to():
    v = gv.Variable(1.5)
    v.assign_sub(0.5)
    assert type(v._value) is np.ndarray and v.numpy().tolist() == 1.0


def test_a_defined_ops_forward_cannot_write_to_its_inputs():
    x = gv.constant([1.0, -2.0])
    v = gv.Variable([1.0, 2.0])
    tr = gv.trace_gradients(v * 3.0, v)

    def in_place_relu(a):
        a[a < 0] = 0
        return a

    with pytest.raises(ValueError, match="read-only"):
        gv.define_op("InPlaceRelu", in_place_relu)(x)
    with pytest.raises(ValueError, match="read-only"):
        gv.define_op("Scale", lambda a: a.__imul__(10))(v)
    assert x.numpy().tolist() == [1.0, -2.0] and v.numpy().tolist() == [1.0, 2.0]
    assert tr.tensors[tr.xs[0]].value.values.tolist() == [1.0, 2.0]
    assert gv.define_op("Same", lambda a: a)(x).numpy().tolist() == [1.0, -2.0]


def test_a_bool_variable_takes_no_arithmetic():
    v = gv.Variable([True, False])
    for call in (lambda: v.assign_add(True), lambda: v.assign_sub(True)):
        with pytest.raises(TypeError, match="a bool variable takes no arithmetic"):
            call()
    v.assign([False, True])
    assert v.numpy().tolist() == [False, True]


@pytest.mark.parametrize("make", [
    lambda: gv.constant(2.0, name="c\x01"),
    lambda: gv.Variable(2.0, name="tab\there"),
    lambda: gv.Variable(2.0, name="\udfff"),
    lambda: gv.constant(1.0) * gv.constant(2.0, name="x" * 201),
    lambda: gv.multiply(gv.constant(1.0), 2.0, name=""),
])
def test_names_the_diagram_cannot_draw_are_refused(make):
    with pytest.raises(ValueError, match=r"is not a usable name .*; a name is text of 1 to 200"):
        make()


def test_a_scope_or_op_type_the_diagram_cannot_draw_is_refused():
    with pytest.raises(ValueError, match="not a usable name"):
        with gv.name_scope("s\x00"):
            pass
    with pytest.raises(ValueError, match="at most 200 characters"):
        gv.define_op("A" * 201, lambda v: v)
    # unusual but drawable names are fine: quotes, markup, a line separator, Greek
    assert gv.constant(1.0, name='θ "<b>"\u2028').name.startswith("θ")
