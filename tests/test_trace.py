"""Traces: the steps the engine records, and their JSON form."""

import copy
import json
import threading
from pathlib import Path

import numpy as np
import pytest

import gradviz as gv
from fixtures.traces import version_1
from gradviz.trace import FORMAT_VERSION


def lin_reg():
    X = gv.constant([[2.0], [3.0]], name="X")
    Y = gv.constant([[3.0], [2.0]], name="Y")
    W = gv.Variable(1.6649098, name="W")
    b = gv.Variable(0.54648024, name="b")
    with gv.name_scope("model"):
        pred = X * W + b
    cost = 0.5 * gv.reduce_sum((pred - Y) ** 2)
    return cost, W, b


def test_trace_gradients_equal_gradients():
    cost, W, b = lin_reg()
    tr = gv.trace_gradients(cost, [W, b])
    plain = gv.gradients(cost, [W, b])
    assert [g.numpy().tolist() for g in tr.gradients] == [g.numpy().tolist() for g in plain]


def test_linear_regression_steps_in_order():
    cost, W, b = lin_reg()
    tr = gv.trace_gradients(cost, [W, b])
    kinds = [s.kind for s in tr.steps]
    assert kinds[0] == "seed" and kinds[-2:] == ["result", "result"]
    backward = [s.op_type for s in tr.steps if s.kind == "backward"]
    assert backward == ["Mul", "Sum", "Pow", "Sub", "Add", "Mul"]
    seed = tr.steps[0]
    assert seed.given is False and seed.grad.values.tolist() == 1.0 and seed.num_ys == 1
    assert [r.grad.values.tolist() for r in tr.results] == pytest.approx([12.376228, 4.4175096])
    assert {o.scope for o in tr.ops} == {"", "model"}
    assert [s.index for s in tr.steps] == list(range(len(tr.steps)))
    assert tr.steps[-1].ops_visited == 6


def test_backward_step_carries_upstream_and_per_input_grads():
    a = gv.constant([[1.0, 2.0], [3.0, 4.0]])
    b = gv.constant([[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]])
    tr = gv.trace_gradients(a @ b, [a, b])
    (mm,) = [s for s in tr.steps if s.kind == "backward"]
    assert mm.op_type == "MatMul" and mm.rule == "_matmul_grad"
    assert mm.upstream[0].values.tolist() == np.ones((2, 3)).tolist()
    assert mm.grads[0].values.tolist() == [[21.0, 30.0], [21.0, 30.0]]
    assert mm.grads[1].shape == (2, 3) and mm.needed == (True, True)


def test_fan_out_accumulates_each_contribution():
    x = gv.constant([1.0, 2.0])
    for y in (x * x, x + x):
        tr = gv.trace_gradients(y, x)
        (acc,) = [s for s in tr.steps if s.kind == "accumulate"]
        assert acc.tensor == tr.xs[0] and len(acc.contributions) == 2
        assert [c.input_index for c in acc.contributions] == [0, 1]
        total = sum(c.grad.values for c in acc.contributions)
        assert acc.total.values.tolist() == total.tolist()


def test_several_ys_are_summed_at_a_shared_tensor():
    x = gv.constant(2.0)
    h = x * 3.0
    tr = gv.trace_gradients([h, h * h], x)
    seeds = [s for s in tr.steps if s.kind == "seed"]
    assert [s.y_index for s in seeds] == [0, 1] and all(s.num_ys == 2 for s in seeds)
    (acc,) = [s for s in tr.steps if s.kind == "accumulate"]
    assert [c.source for c in acc.contributions] == ["seed", "op", "op"]  # h*h uses h twice
    assert tr.gradients[0].numpy() == pytest.approx(3.0 + 2 * 6.0 * 3.0)


def test_stop_gradients_cut_on_an_intermediate():
    a = gv.constant(0.0)
    b = 2 * a
    tr = gv.trace_gradients(a + b, [a, b], stop_gradients=[b])
    (cut,) = [s for s in tr.steps if s.kind == "cut"]
    assert cut.reason == "stop_gradients" and cut.tensor == tr.xs[1]
    assert [float(g.numpy()) for g in tr.gradients] == [1.0, 1.0]


def test_stop_gradient_op_cut_and_unconnected_reason():
    x = gv.constant([1.0, 2.0])
    tr = gv.trace_gradients(gv.stop_gradient(x) * 2.0, x)
    (cut,) = [s for s in tr.steps if s.kind == "cut"]
    assert cut.reason == "stop_gradient" and cut.tensor == tr.xs[0]
    (res,) = tr.results
    assert res.status == "unconnected" and res.grad is None and "cut" in res.reason


def test_unconnected_results_say_why():
    a = gv.ones([1, 2])
    b = gv.ones([3, 1])
    tr = gv.trace_gradients([b], [a], unconnected_gradients="zero")
    (res,) = tr.results
    assert res.status == "unconnected" and res.grad.values.tolist() == [[0.0, 0.0]]
    assert "not connected" in res.reason


def test_bytes_held_and_ops_visited():
    x = gv.constant(np.ones((4, 4), np.float32))
    y = gv.reduce_sum(gv.tanh(x) * 2.0)
    tr = gv.trace_gradients(y, x)
    assert tr.steps[0].bytes_held == 4  # the scalar seed
    assert max(s.bytes_held for s in tr.steps) == 64  # one (4,4) float32 gradient at a time
    assert tr.steps[-1].bytes_held == 64  # the result is kept
    assert [s.ops_visited for s in tr.steps if s.kind == "backward"] == [1, 2, 3]


def test_nonfinite_is_flagged_at_the_step_that_produced_it():
    x = gv.constant([0.0, 1.0])
    tr = gv.trace_gradients(gv.reduce_sum(gv.sqrt(x)), x)
    first = tr.first_nonfinite_step
    step = tr.steps[first]
    assert step.kind == "backward" and step.op_type == "Sqrt"
    assert not any(s.nonfinite for s in tr.steps[:first])
    assert gv.Trace.from_json(tr.to_json()).steps[first].nonfinite


def test_json_round_trip_keeps_everything():
    cost, W, b = lin_reg()
    tr = gv.trace_gradients(cost, [W, b], title="linear regression")
    text = tr.to_json()
    data = json.loads(text)
    assert [s["kind"] for s in data["steps"]] == [s.kind for s in tr.steps]
    back = gv.Trace.from_json(text)
    assert back.to_json() == text
    assert back.title == "linear regression"
    assert back.tensors == tr.tensors and back.ops == tr.ops and back.steps == tr.steps


def _valid():
    x = gv.constant([1.0, 2.0], name="x")
    return json.loads(gv.trace_gradients(x * x, x).to_json())


def _in_place(damage):
    """``damage``, done to the trace as version 1 wrote it (every array in place)."""
    def done(d):
        d = version_1(d)
        return damage(d) or d
    return done


@pytest.mark.parametrize("mutate,message", [
    (lambda d: "not json{", "not valid JSON"),
    (lambda d: [], "trace: expected an object"),
    (lambda d: {**d, "format": "other"}, "not a gradviz trace"),
    (lambda d: {**d, "version": 99}, "unsupported version 99"),
    (lambda d: {**d, "steps": "x"}, r"trace\.steps: expected a list"),
    (lambda d: {**d, "steps": [{**d["steps"][0], "kind": "explode"}]}, r"trace\.steps\[0\]\.kind: 'explode' is not one of"),
    (lambda d: {**d, "steps": [{**d["steps"][0], "tensor": 999}]}, r"trace\.steps\[0\]\.tensor: tensor id 999 does not exist"),
    (lambda d: {**d, "steps": [{**d["steps"][0], "tensor": "0"}]}, r"expected a tensor id \(an integer\)"),
    (lambda d: {**d, "ops": [{**d["ops"][0], "inputs": [5]}]}, r"trace\.ops\[0\]\.inputs: tensor id 5 does not exist"),
    (lambda d: {**d, "tensors": [{**d["tensors"][0], "shape": [-1]}] + d["tensors"][1:]}, r"shape: expected non-negative integers"),
    (_in_place(lambda d: d["tensors"][0]["value"].update(values=[[1, 2]])),
     r"values: the nested lists do not match shape \(2,\)"),
    (lambda d: {**d, "tensors": [{**d["tensors"][0], "dtype": 5}] + d["tensors"][1:]}, r"dtype: expected a string"),
])
def test_malformed_json_gives_a_clear_error(mutate, message):
    d = mutate(_valid())
    text = d if isinstance(d, str) else json.dumps(d)
    with pytest.raises(ValueError, match=message):
        gv.Trace.from_json(text)


def test_hostile_json_is_refused_not_crashed():
    deep = "[" * 100000 + "]" * 100000
    with pytest.raises(ValueError):
        gv.Trace.from_json(deep)
    with pytest.raises(ValueError):
        gv.Trace.from_json(b"\xff\xfe")
    with pytest.raises(ValueError, match="trace JSON is not valid JSON: .*digits"):
        gv.Trace.from_json('{"passes": ' + "9" * 5000 + "}")


def test_recording_off_builds_no_trace_objects():
    x = gv.constant([1.0, 2.0])
    assert isinstance(gv.gradients(x * x, x), list)
    tr = gv.trace_gradients(x * x, x)
    assert tr._steps is None  # summarised only when read
    assert len(tr.steps) == 4 and tr._events is None


# ---------------------------------------------------------------- names within a trace


def _names(tr: gv.Trace) -> tuple[list[str], list[str]]:
    return [t.name for t in tr.tensors], [o.name for o in tr.ops]


def test_a_rerun_cell_draws_the_same_names():
    # a notebook cell run twice: the engine's names go on counting (W, then W_1)
    first = gv.trace_gradients(*_cell())
    cost, W, b = lin_reg()
    assert W.name != "W:0"  # the engine's own names are unique in the process
    again = gv.trace_gradients(cost, [W, b])
    assert _names(again) == _names(first)
    assert "W:0" in _names(again)[0] and "b:0" in _names(again)[0]
    # and the JSON says the same
    loaded = gv.Trace.from_json(again.to_json())
    assert _names(loaded) == _names(first)


def _cell():
    cost, W, b = lin_reg()
    return cost, [W, b]


def test_names_stay_unique_within_a_trace():
    w_old = gv.Variable(1.0, name="w")
    w_new = gv.Variable(2.0, name="w")          # the engine calls it w_1
    mine = gv.Variable(3.0, name="w_1")         # ...and so did the user, for another tensor
    y = w_old * w_new + mine
    tr = gv.trace_gradients(y, [w_old, w_new, mine])
    names = [t.name for t in tr.tensors]
    assert len(set(names)) == len(names)
    by_x = {x: tr.tensors[r.tensor].name for x, r in zip(("old", "new", "mine"), tr.results)}
    assert by_x == {"old": "w:0", "new": "w_2:0", "mine": "w_1:0"}


def test_reasons_use_the_trace_names():
    earlier = gv.constant(0.0, name="lonely")  # an earlier cell's tensor, still alive
    lonely = gv.constant(1.0, name="lonely")
    y = gv.constant(2.0, name="y_reason") * 3.0
    tr = gv.trace_gradients(y, lonely)
    (result,) = tr.results
    assert result.status == "unconnected"
    assert result.reason == "no y depends on lonely: it is not connected to them in the graph"
    with gv.GradientTape() as tape:
        z = lonely * 2.0
    with pytest.warns(UserWarning, match="lonely_1 was not watched"):
        tr = tape.trace_gradient(z, lonely)
    assert tr.results[0].reason.startswith("lonely was not watched")


def test_a_rule_returning_an_array_is_recorded_like_a_tensor():
    cube = gv.define_op("TraceArrayCube", lambda x: x ** 3)

    @gv.RegisterGradient("TraceArrayCube")
    def _cube_grad(op, grad):
        return (grad.numpy() * 3 * op.inputs[0].numpy() ** 2,)  # an array, not a tensor

    x = gv.constant([1.0, 2.0], name="x")
    tr = gv.trace_gradients(cube(x), x)
    (step,) = [s for s in tr.steps if s.kind == "backward"]
    assert step.grads[0].values.tolist() == [3.0, 12.0] and step.bytes_held == 8
    assert tr.gradients[0].numpy().tolist() == [3.0, 12.0]


def test_a_trace_keeps_the_values_variables_had_when_it_was_made():
    W = gv.Variable(2.0, name="W")
    seed = gv.Variable(5.0, name="seed")
    tr = gv.trace_gradients(W * W, W, grad_ys=[seed])
    W.assign(-1.0)
    seed.assign(-1.0)
    values = {t.name: t.value.values.tolist() for t in tr.tensors}
    assert values == {"W:0": 2.0, "Mul:0": 4.0}
    backward = [s for s in tr.steps if s.kind == "backward"][0]
    assert backward.upstream[0].values.tolist() == 5.0
    assert tr.gradients[0].numpy() == 20.0


# ---------------------------------------------------------------- every trace loads again


def _round_trip(tr: gv.Trace) -> gv.Trace:
    back = gv.Trace.from_json(tr.to_json())
    assert back.to_json() == tr.to_json()
    assert back.tensors == tr.tensors and back.ops == tr.ops and back.steps == tr.steps
    return back


def test_a_trace_with_bool_tensors_loads_again():
    x = gv.constant([1.0, 2.0], name="x")
    mask = x > 1.5
    back = _round_trip(gv.trace_gradients(gv.where(mask, x, x * 2.0), x))
    bools = [t for t in back.tensors if t.dtype == "bool"]
    assert bools and bools[0].value.values.tolist() == [False, True]


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4)])
def test_a_trace_with_zero_size_arrays_loads_again(shape):
    z = gv.constant(np.zeros(shape, np.float32), name="z")
    back = _round_trip(gv.trace_gradients(gv.reduce_sum(z * 2.0), z))
    assert back.tensors[back.xs[0]].value.values.shape == shape
    assert back.results[0].grad.shape == shape


def test_a_title_must_be_text():
    x = gv.constant(1.0)
    with pytest.raises(TypeError, match="title: expected a string, got int 5"):
        gv.trace_gradients(x * x, x, title=5)
    tr = gv.trace_gradients(x * x, x)
    with pytest.raises(TypeError, match="title: expected a string"):
        tr.title = ["lecture 1"]
    tr.title = "lecture 1"
    assert _round_trip(tr).title == "lecture 1"


@pytest.mark.parametrize("big", [1e200, 1.7e308, -1.7e308])
def test_large_finite_values_write_to_json(big):
    # their mean or norm overflows float64 if computed directly
    x = gv.constant(np.array([big, big, big / 2]), name="x")
    tr = gv.trace_gradients(gv.reduce_mean(x), x)
    value = tr.tensors[tr.xs[0]].value
    assert value.mean == pytest.approx(big / 6 * 5) and not value.nonfinite
    expected_norm = abs(big) * 1.5  # sqrt(1 + 1 + 1/4)
    assert value.norm == (pytest.approx(expected_norm) if expected_norm < 1.7976e308 else np.inf)
    _round_trip(tr)


def test_tiny_values_keep_their_norm():
    x = gv.constant(np.array([3e-200, 4e-200]), name="x")
    norm = gv.trace_gradients(x * 1.0, x).tensors[0].value.norm
    assert norm == pytest.approx(5e-200, rel=1e-9, abs=0)  # (not 0: the squares underflow)


def test_the_viewer_payload_is_strict_json():
    from gradviz.views.viewdata import view_data

    # float32 values that overflow, and a gradient whose norm is beyond float32's range
    x = gv.constant([2.0, 3.0], name="x")
    payload = view_data(gv.trace_gradients(gv.reduce_sum(x * 3e38), x))
    text = json.dumps(payload, allow_nan=False)
    assert json.loads(text)["results"][0]["norm"] == pytest.approx(3e38 * 2 ** 0.5, rel=1e-6)


def test_op_attributes_that_are_not_json_data_still_write():
    op = gv.define_op("Odd", lambda v: v * 1)
    t = op(gv.constant([1.0]))
    t.op.attrs = {"scale": float("inf"), "shape": (2, 3), "kind": np.float32(1.5), 7: None}
    tr = gv.trace_gradients(gv.stop_gradient(t) * 1.0, t)
    attrs = [o.attrs for o in _round_trip(tr).ops if o.type == "Odd"][0]
    assert attrs == {"scale": "inf", "shape": [2, 3], "kind": "np.float32(1.5)", "7": None}


def _mutated(path, value):
    """_valid() with the entry at ``path`` (keys and indices) replaced by ``value``.  An
    array's own fields are damaged in version 1's form, where each array is written in
    place (version 2's rows have tests of their own: test_damaged_array_rows_are_named)."""
    d = _valid()
    if "value" in path:
        d = version_1(d)
    target = d
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    return json.dumps(d)


@pytest.mark.parametrize("path,value,message", [
    (["version"], True, r"unsupported version True"),
    (["tensors", 1, "id"], True, r"tensors\[1\]\.id: expected 1, got True"),
    (["ops", 0, "id"], False, r"ops\[0\]\.id: expected 0, got False"),
    (["steps", 0, "kind"], ["seed"], r"steps\[0\]\.kind: \['seed'\] is not one of"),
    (["steps", 0, "kind"], {"a": 1}, r"steps\[0\]\.kind: .* is not one of"),
    (["steps", 0, "pass_index"], -1, r"steps\[0\]\.pass_index: expected a count"),
    (["steps", 0, "tensor"], True, r"expected a tensor id \(an integer\), got True"),
    (["tensors", 0, "scope"], "a//b", r"tensors\[0\]\.scope: 'a//b' is not a name scope"),
    (["ops", 0, "scope"], "/", r"ops\[0\]\.scope: '/' is not a name scope"),
    (["tensors", 0, "value", "values"], None, r"value\.values: missing; an array of 2 values"),
    (["tensors", 0, "value", "values"], [True, False], r"True is not a float32 value"),
    (["tensors", 0, "value", "values"], [1e300, 1.0], r"a value does not fit in float32"),
    (["tensors", 0, "value", "values"], [[[[1.0]]], 2.0], r"\[\[\[1\.0\]\]\] is not a float32 value"),
    (["tensors", 0, "value", "values"], [[1.0, 2.0]], r"nested lists do not match shape \(2,\)"),
    (["tensors", 0, "value", "dtype"], "float128", r"'float128' is not a dtype a trace holds"),
    (["tensors", 0, "value", "dtype"], "float64", r"tensors\[0\]: .* do not match its value's"),
    (["tensors", 0, "value", "nbytes"], -8, r"value\.nbytes: expected a count"),
    (["tensors", 0, "shape"], [1] * 40, r"40 dimensions; at most 32"),
    (["ops", 0, "attrs"], {"deep": [[[[[[[[[[1]]]]]]]]]]}, r"attrs: nested more than 8 levels"),
    (["passes"], 1.5, r"trace\.passes: expected an integer"),
    (["ops", 0, "type"], "", r"ops\[0\]\.type: expected a name, got an empty string"),
    (["tensors", 0, "name"], "", r"tensors\[0\]\.name: expected a name"),
])
def test_malformed_fields_are_named(path, value, message):
    with pytest.raises(ValueError, match=message):
        gv.Trace.from_json(_mutated(path, value))


def _two_xs():
    """The JSON of a trace with two xs of different shapes, and a broadcast (a reduce step)."""
    a = gv.constant([1.0, 2.0], name="a")
    b = gv.constant(3.0, name="b")
    return json.loads(gv.trace_gradients(a * b, [a, b]).to_json())


def _step(d, kind, k=0):
    return [s for s in d["steps"] if s["kind"] == kind][k]


def _null_max(d):
    x = gv.constant(np.linspace(1, 2, 70, dtype=np.float32), name="x")
    d = version_1(json.loads(gv.trace_gradients(x * x, x).to_json()))
    d["tensors"][0]["value"]["max"] = None
    return d



@pytest.mark.parametrize("damage,message", [
    # a summarised array's four statistics are all numbers or all null
    (_null_max, r"tensors\[0\]\.value: min, max, mean and norm are all numbers, or all null"),
    # a gradient beside a tensor has its shape and dtype
    (lambda d: _step(d, "result", 1).update(x_index=0),
     r"x_index: 0 is not the index of tensor 1 in xs"),
    (lambda d: _step(d, "result", 0).update(grad=_step(d, "result", 1)["grad"]),
     r"steps\[\d+\]\.grad: a gradient of shape \(\) and dtype float32 for a:0, of shape \(2,\)"),
    (_in_place(lambda d: _step(d, "seed").update(grad={**_step(d, "seed")["grad"],
                                                      "dtype": "float64"})),
     r"steps\[0\]\.grad: a gradient of shape \(2,\) and dtype float64 for Mul:0"),
    (lambda d: _step(d, "backward").update(op_type="MatMul"), r"op_type: 'MatMul', but op .* is a Mul"),
    (lambda d: _step(d, "reduce").update(axes=[3]), r"axes \[3\] and shapes \(2,\) -> \(\)"),
    (lambda d: _step(d, "reduce").update(tensor=0), r"tensor: 0 is not input 1 of op"),
    (lambda d: d.update(passes=0), r"pass_index: 0, but the trace ran 0 passes"),
    (lambda d: d["steps"].append(json.loads(json.dumps(_step(d, "result", 0)))),
     r"a second result for x 0 in pass 0"),
    # JSON that Python reads but is no JSON number, or no text
    (lambda d: d["ops"][0].update(attrs={"scale": float("nan")}), r"attrs: nan is not a JSON number"),
    (_in_place(lambda d: d["tensors"][0]["value"].update(min=10 ** 400)),
     r"value\.min: .* is beyond a float's range"),
    (lambda d: d["tensors"][0].update(name="a\x01"), r"tensors\[0\]\.name: 'a\\x01' is not a name the diagram"),
    (lambda d: d["ops"][0].update(type="A" * 1001), r"ops\[0\]\.type: .* is not a name the diagram can draw"),
    (lambda d: d.update(title="\udfff"), r"trace\.title: .* holds a lone surrogate"),
    (lambda d: _step(d, "result", 0).update(reason="\ud800"), r"reason: .* holds a lone surrogate"),
])
def test_inconsistent_traces_are_refused_before_a_renderer_trips(damage, message):
    d = _two_xs()
    d = damage(d) or d
    with pytest.raises(ValueError, match=message):
        gv.Trace.from_json(json.dumps(d))


def test_a_title_must_be_text_a_page_can_hold():
    x = gv.constant(1.0)
    with pytest.raises(ValueError, match="title: .* holds a lone surrogate"):
        gv.trace_gradients(x * x, x, title="\udfff")


@pytest.mark.parametrize("op_type,attrs,message", [
    ("Transpose", {"perm": 5}, r"attrs\.perm: expected a list of integers, got 5"),
    ("Transpose", {"perm": [0, "1"]}, r"attrs\.perm: expected a list of integers"),
    ("MatMul", {"transpose_a": 1}, r"attrs\.transpose_a: expected true or false"),
    ("Sum", {"axis": "all"}, r"attrs\.axis: expected null, an integer or a list of integers"),
    ("Cast", {"DstT": 32}, r"attrs\.DstT: expected a string"),
    ("Softmax", {"axis": [1]}, r"attrs\.axis: expected an integer"),
    ("Reshape", {"shape": {"0": 2}}, r"attrs\.shape: expected a list of integers"),
])
def test_op_attributes_renderers_read_are_checked(op_type, attrs, message):
    d = _valid()
    d["ops"][0].update(type=op_type, attrs=attrs)
    with pytest.raises(ValueError, match=message):
        gv.Trace.from_json(json.dumps(d))


def test_a_scalar_constant_must_keep_its_value():
    # the diagram prints a scalar constant's value: a trace without it is refused
    x = gv.constant(3.0, name="x")
    d = version_1(json.loads(gv.trace_gradients(x * 2.0, x).to_json()))
    two = next(t for t in d["tensors"] if t["kind"] == "constant" and t["name"] != "x:0")
    two["value"]["values"] = None
    with pytest.raises(ValueError, match=r"values: missing; an array of 1 values"):
        gv.Trace.from_json(json.dumps(d))


def test_from_dict_refuses_deep_values_without_recursing():
    d = version_1(_valid())
    deep: list = [1.0]
    for _ in range(5000):
        deep = [deep]
    d["tensors"][0]["value"]["values"] = deep
    with pytest.raises(ValueError, match="nested lists do not match shape"):
        gv.Trace.from_dict(d)


def test_threads_reading_one_trace_share_one_summary():
    # Thread A is held inside the summary of the steps until thread B has asked
    # for them too (or, once B has to wait for A, half a second has passed).
    x = gv.constant([1.0, 2.0])
    y = gv.reduce_sum(gv.tanh(x) * x)
    trace = gv.trace_gradients(y, x)
    a_inside, b_done = threading.Event(), threading.Event()
    build, first = gv.Trace._build, [True]

    def held_build(self, index, event):
        if first[0] and threading.current_thread().name == "A":
            first[0] = False
            a_inside.set()
            b_done.wait(0.5)
        return build(self, index, event)

    got, errors = {}, []

    def read(name):
        try:
            got[name] = trace.steps
        except Exception as e:  # what the other thread's half-made summary raises
            errors.append(e)
        if name == "B":
            b_done.set()

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gv.Trace, "_build", held_build)
        a = threading.Thread(target=read, args=("A",), name="A")
        a.start()
        assert a_inside.wait(5)
        b = threading.Thread(target=read, args=("B",), name="B")
        b.start()
        a.join(5)
        b.join(5)
    assert errors == [] and got["A"] is got["B"]
    assert [s.kind for s in got["A"]] == [s.kind for s in gv.trace_gradients(y, x).steps]


def test_a_trace_drawn_and_read_can_be_deep_copied():
    x = gv.constant([1.0, 2.0])
    trace = gv.trace_gradients(gv.reduce_sum(x * x), x)
    trace.to_svg()  # its drawing cached, under a lock of its own
    copied = copy.deepcopy(trace)
    assert copied.to_json() == trace.to_json() and copied.to_svg() == trace.to_svg()


# ---------------------------------------------------------------- version 2: every array once

VERSION_1 = Path(__file__).parent / "fixtures" / "version1"


@pytest.mark.parametrize("name", ["mlp", "jacobian", "nan_and_cuts", "summarised"])
def test_files_version_1_wrote_still_load(name):
    """Written by version 1 itself: each array in place, as nested lists."""
    text = (VERSION_1 / f"{name}.json").read_text(encoding="utf-8")
    assert json.loads(text)["version"] == 1
    old = gv.Trace.from_json(text)
    again = gv.Trace.from_json(old.to_json())  # written as the version of today
    assert json.loads(old.to_json())["version"] == FORMAT_VERSION
    assert (again.tensors, again.ops, again.steps) == (old.tensors, old.ops, old.steps)
    assert [r.kind for r in old.steps] == [r["kind"] for r in json.loads(text)["steps"]]


def test_each_array_is_written_once():
    x = gv.constant([1.0, 2.0], name="x")
    h = x
    for _ in range(20):
        h = gv.tanh(h) * 1.01  # twenty constants 1.01, each its own tensor
    tr = gv.trace_gradients(gv.reduce_sum(h), x)
    d = json.loads(tr.to_json())
    uses = len(d["tensors"]) + sum(
        len(s.get("upstream") or []) + len([g for g in s.get("grads") or [] if g is not None])
        + ("grad" in s and s["grad"] is not None) + ("total" in s) for s in d["steps"])
    # a gradient an op sends is the next op's upstream; the 1.01s are one row
    assert len(d["arrays"]) < uses * 0.6
    ones = [t["value"] for t in d["tensors"] if t["kind"] == "constant" and t["name"] != "x:0"]
    assert len(ones) == 20 and len(set(ones)) == 1
    assert gv.Trace.from_json(tr.to_json()).steps == tr.steps


@pytest.mark.parametrize("array", [
    np.array([1.5, np.nan, -np.inf, np.inf], np.float32),
    np.array([[1, 0], [0, 1]], bool),
    np.arange(6, dtype=np.int64).reshape(2, 3) - 3,
    np.array([65504.0, -6e-8], np.float16),
    np.zeros((0, 3), np.float64),
    np.arange(4096, dtype=np.float32).reshape(2, 4, 4, 128),  # an image batch: kept whole
    np.linspace(-1, 1, 65),  # past the preview: a summary
])
def test_array_rows_give_the_array_back(array):
    a = gv.trace.ArrayData.of(array)
    row = json.loads(json.dumps(a.to_row(), allow_nan=False))
    back = gv.trace.ArrayData.from_row(row, "row")
    assert back == a
    if a.values is not None:
        assert back.values.dtype == array.dtype
        assert back.values.tobytes() == array.tobytes()  # NaN's bits too


def _row_damaged(value):
    """_valid() with the row of the first tensor's value replaced by ``value(row)``."""
    d = _valid()
    k = d["tensors"][0]["value"]
    d["arrays"][k] = value(d["arrays"][k])
    return json.dumps(d)


@pytest.mark.parametrize("damage,message", [
    (lambda r: "x", r"trace\.arrays\[0\]: expected a list"),
    (lambda r: r[:2], r"trace\.arrays\[0\]: expected \[shape, dtype, values\] or .* got a list of 2"),
    (lambda r: [r[0], r[1], "%%%"], r"arrays\[0\]\[2\] \(values\): not base64 text"),
    (lambda r: [r[0], r[1], "AAAA"], r"\(values\): 3 bytes, where shape \(2,\) of float32 takes 8"),
    (lambda r: [[2], "bool", "AQI="], r"a bool array holds bytes 0 and 1 only"),
    (lambda r: [r[0], "complex64", r[2]], r"'complex64' is not a dtype a trace holds"),
    (lambda r: [[100], r[1], r[2]], r"an array of 100 values keeps only its summary"),
    (lambda r: [r[0], r[1], None, [], 1, 2, 1.5, 2.2, False, 8],
     r"an array of 2 values \(at most 64\) keeps them all"),
    (lambda r: [r[0], r[1], 5, [], 1, 2, 1.5, 2.2, False, 8], r"expected null in a row of ten"),
])
def test_damaged_array_rows_are_named(damage, message):
    with pytest.raises(ValueError, match=message):
        gv.Trace.from_json(_row_damaged(damage))


@pytest.mark.parametrize("index", [-1, 99, True, "0", 1.0])
def test_an_array_index_must_name_a_row(index):
    d = _valid()
    d["tensors"][0]["value"] = index
    with pytest.raises(ValueError, match=r"tensors\[0\]\.value: expected an index into "
                                         r"trace\.arrays"):
        gv.Trace.from_json(json.dumps(d))
