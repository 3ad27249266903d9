"""A report of one attention block, opened offline in Chromium and stepped: the embedding's
sparse gradient and the softmax's backward step read as the words say."""

import numpy as np
import pytest
from fixtures.viewer_page import wait_step

import gradviz as gv

pytestmark = pytest.mark.browser


def attention_block() -> gv.Trace:
    rng = np.random.default_rng(3)
    E = gv.Variable(rng.standard_normal((5, 4)).astype(np.float32), name="E")
    Wq, Wk, Wv = (gv.Variable((rng.standard_normal((4, 4)) / 2).astype(np.float32), name=n)
                  for n in ("Wq", "Wk", "Wv"))
    x = gv.nn.embedding_lookup(E, gv.constant(np.array([[1, 3, 1]], np.int32), name="tokens"))
    with gv.name_scope("attention"):
        q, k, v = x @ Wq, x @ Wk, x @ Wv
        attended = gv.softmax(gv.einsum("bqd,bkd->bqk", q, k) * 0.5) @ v
    h = gv.nn.layer_norm(x + attended)
    probe = gv.constant(rng.standard_normal((1, 3, 4)).astype(np.float32), name="probe")
    return gv.trace_gradients(gv.reduce_sum(h * probe), [E, Wq, Wk, Wv])


def test_an_attention_blocks_report_steps_to_its_sparse_embedding_gradient(
        offline_page, tmp_path, screenshot_dir):
    tr = attention_block()
    gather = next(i for i, s in enumerate(tr.steps) if s.kind == "backward"
                  and s.op_type == "GatherV2")
    softmax = next(i for i, s in enumerate(tr.steps) if s.kind == "backward"
                   and s.op_type == "Softmax")
    path = gv.export_html(tr, tmp_path / "block.html", title="one attention block")
    offline_page.goto(path.as_uri())
    viewer = offline_page.locator(".gv-viewer")
    offline_page.wait_for_selector(".gv-viewer .gv-diagram svg")
    viewer.click()
    offline_page.keyboard.press("Home")
    for _ in range(softmax):
        offline_page.keyboard.press("ArrowRight")
    wait_step(viewer, softmax)
    panel = viewer.locator(".gv-panel").inner_text()
    assert "Softmax backward" in panel and "diag(Softmax) - Softmax Softmax^T" in panel
    offline_page.screenshot(path=str(screenshot_dir / "block-softmax-step.png"))
    for _ in range(gather - softmax):
        offline_page.keyboard.press("ArrowRight")
    wait_step(viewer, gather)
    panel = viewer.locator(".gv-panel").inner_text()
    assert "Only rows 1 and 3 of E get a gradient" in panel
    assert "row 1 twice, so its two contributions add" in panel
    edge = viewer.locator(".gv-diagram svg .gv-active", has_text="sparse: rows 1, 3")
    assert edge.count() >= 1
    offline_page.screenshot(path=str(screenshot_dir / "block-embedding-step.png"))
    assert offline_page.blocked_requests == [] and offline_page.page_errors == []
