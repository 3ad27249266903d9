"""gradviz.views.plots (imported as the lessons do, `from gradviz import plots`): each helper returns a figure of exactly its input, deterministically."""

import numpy as np
import pytest
from matplotlib.figure import Figure

import gradviz as gv
from gradviz import plots


def fan_in_traces(branches=8, batch=16):
    """A loss over several branches: one whole pass, and the same branch by branch."""
    rng = np.random.default_rng(0)
    xs = [gv.constant(rng.standard_normal((batch, 3)), gv.float32, name=f"x{i}")
          for i in range(branches)]
    ws = [gv.Variable(rng.standard_normal((3, 3)).astype(np.float32), name=f"w{i}")
          for i in range(branches)]
    y = gv.add_n([gv.tanh(x @ w) for x, w in zip(xs, ws)])
    loss = gv.reduce_sum(gv.square(y))
    whole = gv.trace_gradients(loss, ws, title="whole")
    head = gv.trace_gradients(loss, y, title="head")
    parts = [gv.trace_gradients(y, [w], grad_ys=head.gradients[0], title=f"branch {i}")
             for i, w in enumerate(ws)]
    return whole, head, parts


# ---------------------------------------------------------------- heatmap


def test_heatmap_prints_every_value_and_centres_the_colours_at_zero():
    a = np.array([[573.0, -816.0], [1295.0, 1844.0]])
    fig = plots.heatmap(a, title="dL/da")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_title() == "dL/da"
    assert [t.get_text() for t in ax.texts] == ["573", "-816", "1295", "1844"]
    image = ax.get_images()[0]
    np.testing.assert_array_equal(image.get_array(), a)
    assert image.norm.vmin == -1844.0 and image.norm.vmax == 1844.0


def test_heatmap_of_a_vector_a_scalar_and_a_tensor():
    row = plots.heatmap([1.5, -2.0, 0.0])
    assert row.axes[0].get_images()[0].get_array().shape == (1, 3)
    assert plots.heatmap(3.0).axes[0].texts[0].get_text() == "3"
    t = gv.constant([[21.0, 30.0], [21.0, 30.0]])
    assert [x.get_text() for x in plots.heatmap(t).axes[0].texts] == ["21", "30", "21", "30"]


def test_heatmap_draws_into_a_given_axes_and_returns_its_figure():
    fig = Figure()
    ax = fig.add_subplot()
    assert plots.heatmap(np.eye(2), ax=ax) is fig


def test_heatmap_of_all_zeros_and_of_nan():
    zeros = plots.heatmap(np.zeros((2, 2)))
    assert zeros.axes[0].get_images()[0].norm.vmax == 1.0
    texts = [t.get_text() for t in plots.heatmap([1.0, np.nan]).axes[0].texts]
    assert texts == ["1", "nan"]


def test_heatmap_of_a_bigger_array_has_no_values_unless_asked():
    assert len(plots.heatmap(np.ones((20, 20))).axes[0].texts) == 0
    assert len(plots.heatmap(np.ones((20, 20)), values=True).axes[0].texts) == 400


@pytest.mark.parametrize("bad, message", [
    (np.zeros((2, 2, 2)), "3 dimensions"),
    (np.zeros((0, 3)), "empty"),
    (np.array(["a", "b"]), "numbers"),
    (np.zeros((200, 200)), "too many"),
])
def test_heatmap_rejects_what_it_cannot_draw(bad, message):
    with pytest.raises(ValueError, match=message):
        plots.heatmap(bad)


def test_heatmap_rejects_bad_options():
    with pytest.raises(ValueError, match="ax"):
        plots.heatmap([1.0], ax="left")
    with pytest.raises(ValueError, match="title"):
        plots.heatmap([1.0], title=3)
    with pytest.raises(ValueError, match="row_labels"):
        plots.heatmap(np.eye(2), row_labels=["one"])


# ---------------------------------------------------------------- gradient norms


def test_gradient_norms_plots_one_line_per_parameter_on_a_log_scale():
    history = {"W": [1.0, 0.1, 0.01], "b": [0.5, 0.4, 0.3]}
    fig = plots.gradient_norms(history, vanishing=1e-3)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel() == "training step" and "norm" in ax.get_ylabel()
    lines = {line.get_label(): line for line in ax.get_lines()}
    for name, values in history.items():
        np.testing.assert_array_equal(lines[name].get_ydata(), values)
        np.testing.assert_array_equal(lines[name].get_xdata(), [0, 1, 2])
    assert "vanishing < 0.001" in lines


def test_gradient_norms_with_steps_linear_scale_and_gaps():
    fig = plots.gradient_norms({"W": [0.0, 2.0, np.inf]}, steps=[10, 20, 30], log=False)
    ax = fig.axes[0]
    assert ax.get_yscale() == "linear"
    (line,) = ax.get_lines()
    assert line.get_label() == "W (1 NaN/Inf)"
    np.testing.assert_array_equal(line.get_xdata(), [10, 20, 30])
    # on a log scale a zero norm cannot be drawn: it becomes a gap, not an error
    (log_line,) = plots.gradient_norms({"W": [0.0, 2.0]}).axes[0].get_lines()
    assert np.isnan(log_line.get_ydata()[0])


@pytest.mark.parametrize("history, kwargs, message", [
    ({}, {}, "non-empty dict"),
    ([1.0, 2.0], {}, "non-empty dict"),
    ({"W": []}, {}, "empty"),
    ({"W": [1.0, -1.0]}, {}, "negative"),
    ({"W": [1.0], "b": [1.0, 2.0]}, {}, "lengths differ"),
    ({"W": [1.0, 2.0]}, {"steps": [0]}, "steps has 1"),
    ({"W": "abc"}, {}, "sequence of numbers"),
    ({1: [1.0]}, {}, "names"),
    ({"W": [1.0]}, {"exploding": -5}, "exploding"),
])
def test_gradient_norms_rejects_bad_input(history, kwargs, message):
    with pytest.raises(ValueError, match=message):
        plots.gradient_norms(history, **kwargs)


# ---------------------------------------------------------------- memory over a pass


def test_memory_over_pass_plots_each_steps_bytes_held():
    whole, head, parts = fan_in_traces()
    fig = plots.memory_over_pass({"whole": whole})
    ax = fig.axes[0]
    line = ax.get_lines()[0]
    assert list(line.get_ydata()) == [s.bytes_held for s in whole.steps]
    peak = max(s.bytes_held for s in whole.steps)
    assert line.get_label() == f"whole (peak {plots._format_bytes(peak)})"
    assert ax.get_ylabel() == "gradient bytes held"


def test_memory_over_pass_chains_a_list_and_carries_the_results_kept():
    whole, head, parts = fan_in_traces()
    fig = plots.memory_over_pass({"whole": whole, "branch by branch": [head, *parts]})
    chained = [line for line in fig.axes[0].get_lines()
               if line.get_label().startswith("branch by branch")][0]
    expected, carried = [], 0
    for tr in [head, *parts]:
        expected += [carried + s.bytes_held for s in tr.steps]
        carried += sum(r.grad.nbytes for r in tr.results)
    assert list(chained.get_ydata()) == expected
    # the point of splitting: a lower peak than the whole pass
    assert max(expected) < max(s.bytes_held for s in whole.steps)


def test_memory_over_pass_without_carry_draws_each_pass_as_it_is():
    _, head, parts = fan_in_traces()
    fig = plots.memory_over_pass({"split": [head, *parts]}, carry=False)
    expected = [s.bytes_held for tr in [head, *parts] for s in tr.steps]
    assert list(fig.axes[0].get_lines()[0].get_ydata()) == expected


def test_memory_over_pass_labels_a_list_by_titles():
    whole, head, _ = fan_in_traces()
    fig = plots.memory_over_pass([whole, head], carry=False)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert labels[0].startswith("whole (peak") and any(x.startswith("head (peak") for x in labels)


@pytest.mark.parametrize("bad, message", [
    ([], "no traces"),
    ("trace", "expected a list"),
    ([1, 2], "not a gradviz Trace"),
    ({"whole": []}, "empty list"),
    ({3: None}, "labels must be str"),
    ({"whole": [None]}, "not a gradviz Trace"),
])
def test_memory_over_pass_rejects_bad_input(bad, message):
    with pytest.raises(ValueError, match=message):
        plots.memory_over_pass(bad)


# ---------------------------------------------------------------- Jacobian vs VJP


def test_jacobian_vs_vjp_cost_one_panel_per_metric():
    ns = [1, 2, 4, 8]
    jac = {"backward passes": [1, 2, 4, 8], "seconds": [0.1, 0.2, 0.4, 0.8]}
    vjp = {"backward passes": [1, 1, 1, 1], "seconds": [0.1, 0.1, 0.1, 0.1]}
    fig = plots.jacobian_vs_vjp_cost(ns, jac, vjp, log=True)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    for ax, metric in zip(fig.axes, jac):
        assert ax.get_ylabel() == metric and ax.get_xlabel() == "N = number of outputs"
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        full, one = ax.get_lines()
        assert full.get_xdata().tolist() == ns
        assert full.get_ydata().tolist() == jac[metric]
        assert one.get_ydata().tolist() == vjp[metric]


def test_jacobian_vs_vjp_cost_single_series_into_a_given_axes():
    fig = Figure()
    ax = fig.add_subplot()
    out = plots.jacobian_vs_vjp_cost([1, 2], [3, 6], [3, 3], metric="ops visited", ax=ax)
    assert out is fig and ax.get_ylabel() == "ops visited"


@pytest.mark.parametrize("ns, jac, vjp, message", [
    ([1, 2], [1, 2], {"p": [1, 1]}, "both"),
    ([1, 2], {"p": [1, 2]}, {"q": [1, 1]}, "same"),
    ([1, 2], [1], [1, 1], "1 values for 2 ns"),
    ([2, 1], [1, 2], [1, 1], "increasing"),
    ([0, 1], [1, 2], [1, 1], "positive whole"),
    ([1.5, 2], [1, 2], [1, 1], "positive whole"),
    ([1, 2], [1, -2], [1, 1], "non-negative"),
    ([], [], [], "empty"),
])
def test_jacobian_vs_vjp_cost_rejects_bad_input(ns, jac, vjp, message):
    with pytest.raises(ValueError, match=message):
        plots.jacobian_vs_vjp_cost(ns, jac, vjp)


def test_jacobian_vs_vjp_cost_refuses_one_axes_for_two_panels():
    fig = Figure()
    with pytest.raises(ValueError, match="leave ax=None"):
        plots.jacobian_vs_vjp_cost([1], {"a": [1], "b": [1]}, {"a": [1], "b": [1]},
                                   ax=fig.add_subplot())


# ---------------------------------------------------------------- determinism


@pytest.mark.parametrize("make", [
    lambda: plots.heatmap(np.arange(6.0).reshape(2, 3) - 2.5, title="h"),
    lambda: plots.gradient_norms({"W": [1.0, 0.1], "b": [0.2, 0.3]}),
    lambda: plots.memory_over_pass({"whole": fan_in_traces()[0]}),
    lambda: plots.jacobian_vs_vjp_cost([1, 2, 4], [1, 2, 4], [1, 1, 1]),
], ids=["heatmap", "gradient_norms", "memory_over_pass", "jacobian_vs_vjp_cost"])
def test_svg_bytes_are_the_same_every_time(make):
    first = plots.to_svg(make())
    assert first.startswith("<?xml")
    assert plots.to_svg(make()) == first  # a fresh figure from the same data
    fig = make()
    assert plots.to_svg(fig) == plots.to_svg(fig) == plots.to_svg(fig) == first  # redrawn
    assert "<dc:date>" not in first


def test_helpers_leave_pyplot_alone():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    plots.heatmap([1.0, 2.0])
    plots.gradient_norms({"W": [1.0]})
    assert plt.get_fignums() == before


def test_to_svg_rejects_what_is_not_a_figure():
    with pytest.raises(ValueError, match="Figure"):
        plots.to_svg("figure")
