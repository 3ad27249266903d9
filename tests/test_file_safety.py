"""Files kept safe: how gradviz writes a user's file, and how it reads an untrusted trace.

Every file gradviz writes goes through ``gradviz.views.report.write_text_atomic``
(the HTML report: ``gv.export_html``, ``Trace.to_html``); the one loader of
untrusted text is ``Trace.from_json``.
"""

from __future__ import annotations

import inspect
import os
import stat

import pytest

import gradviz as gv
import gradviz.trace.trace as trace_module
import gradviz.views.report as report


@pytest.fixture(scope="module")
def squared() -> gv.Trace:
    x = gv.constant(2.0, name="x")
    return gv.trace_gradients(x * x, x)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask():
    """Set the process umask for one test, and put the old one back after."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda value: os.umask(value)
    os.umask(old)


# ------------------------------------------------------------------ permissions


@pytest.mark.parametrize("kept", [0o600, 0o640, 0o664], ids=oct)
def test_replacing_a_file_keeps_its_permissions(tmp_path, squared, kept):
    out = tmp_path / "private.html"
    out.write_text("old", encoding="utf-8")
    out.chmod(kept)
    squared.to_html(out)
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert mode(out) == kept
    assert [p.name for p in tmp_path.iterdir()] == ["private.html"]


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664),
                                            (0o077, 0o600)], ids=["022", "027", "002", "077"])
def test_a_new_file_gets_the_mode_open_would_give(tmp_path, squared, umask, mask, expected):
    umask(mask)
    out = gv.export_html(squared, tmp_path / "new.html")
    assert mode(out) == expected


@pytest.mark.parametrize("write", [
    lambda tr, path: tr.to_html(path),
    lambda tr, path: gv.export_html([tr], path),
    lambda tr, path: report.write_text_atomic(path, "new text"),
], ids=["to_html", "export_html", "write_text_atomic"])
@pytest.mark.parametrize("read_only", [0o444, 0o400, 0o555], ids=oct)
def test_a_read_only_file_is_refused_and_left_alone(tmp_path, squared, write, read_only):
    # Checked on the mode bits, so that it holds when the tests run as root too.
    out = tmp_path / "handout.html"
    out.write_text("the teacher's copy", encoding="utf-8")
    out.chmod(read_only)
    try:
        with pytest.raises(PermissionError, match=r"handout\.html.* is read-only"):
            write(squared, out)
        assert out.read_text(encoding="utf-8") == "the teacher's copy"
        assert mode(out) == read_only
        assert [p.name for p in tmp_path.iterdir()] == ["handout.html"]
    finally:
        out.chmod(0o644)  # so that pytest can clean up


# ------------------------------------------------------------------ names and paths


@pytest.mark.parametrize("name", [
    "a" * 245 + ".html",                 # 250 bytes
    "\u00e9" * 122 + ".html",            # 249 bytes in UTF-8, 127 characters
    "b" * 255,                           # the longest name a file system allows
], ids=["250-bytes", "250-bytes-utf8", "255-bytes"])
def test_a_long_file_name_is_written(tmp_path, squared, name):
    out = squared.to_html(tmp_path / name)
    assert out.name == name
    assert [p.name for p in tmp_path.iterdir()] == [name]


@pytest.mark.parametrize("tail", ["/", os.sep, "/."], ids=["slash", "os.sep", "slash-dot"])
def test_a_path_ending_in_a_separator_is_refused(tmp_path, squared, tail):
    where = str(tmp_path / "new") + tail
    with pytest.raises(ValueError, match=r"names a directory.*expected a file path such as"):
        squared.to_html(where)
    assert list(tmp_path.iterdir()) == []


def test_an_existing_directory_is_refused(tmp_path, squared):
    (tmp_path / "lesson").mkdir()
    with pytest.raises(ValueError, match=r"lesson' is a directory; give a file path such as"):
        squared.to_html(tmp_path / "lesson")
    with pytest.raises(ValueError, match=r"is a directory"):
        report.write_text_atomic(tmp_path / "lesson", "text")
    assert [p.name for p in tmp_path.iterdir()] == ["lesson"]
    assert list((tmp_path / "lesson").iterdir()) == []


def test_a_missing_directory_is_named(tmp_path, squared):
    with pytest.raises(ValueError, match=r"the directory '.*missing' does not exist"):
        squared.to_html(tmp_path / "missing" / "r.html")
    assert list(tmp_path.iterdir()) == []


def test_a_file_where_the_directory_should_be_is_named(tmp_path, squared):
    (tmp_path / "notes.txt").write_text("notes", encoding="utf-8")
    with pytest.raises(ValueError, match=r"'.*notes\.txt' is a file, not a directory"):
        squared.to_html(tmp_path / "notes.txt" / "r.html")
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "notes"


# ------------------------------------------------------------------ atomic


@pytest.mark.parametrize("broken", ["fsync", "chmod", "replace"])
def test_a_failure_mid_write_leaves_the_original_and_no_temp_file(tmp_path, squared,
                                                                  monkeypatch, broken):
    out = tmp_path / "r.html"
    out.write_text("the previous report", encoding="utf-8")
    out.chmod(0o600)

    def fail(*args, **kwargs):
        raise OSError(f"{broken} failed")

    monkeypatch.setattr(os, broken, fail)
    with pytest.raises(OSError, match=f"{broken} failed"):
        squared.to_html(out)
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    assert out.read_text(encoding="utf-8") == "the previous report"
    assert mode(out) == 0o600


# ------------------------------------------------------------------ loading


def test_from_json_refuses_an_input_over_the_limit_before_parsing(squared, monkeypatch):
    text = squared.to_json()

    def no_parsing(*args, **kwargs):
        raise AssertionError("the text was parsed")

    monkeypatch.setattr(trace_module.json, "loads", no_parsing)
    limit = len(text) - 1
    for given in (text, text.encode("utf-8")):
        with pytest.raises(ValueError, match=rf"trace JSON: {len(text):,} bytes, over the limit "
                                             rf"of {limit:,} bytes.*max_bytes="):
            gv.Trace.from_json(given, max_bytes=limit)


def test_from_json_reads_an_input_at_the_limit(squared):
    text = squared.to_json()
    loaded = gv.Trace.from_json(text, max_bytes=len(text))
    assert loaded.to_json() == text
    assert gv.Trace.from_json(text, max_bytes=None).to_json() == text


def test_from_json_has_a_default_limit_above_honest_traces():
    limit = trace_module.MAX_JSON_BYTES
    assert limit >= 200 * 10**6  # a 50,000-op chain is about 120 MB
    default = inspect.signature(gv.Trace.from_json).parameters["max_bytes"].default
    assert default == limit


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-1, ValueError), (1.5, TypeError),
                                        (True, TypeError), ("1000", TypeError)])
def test_from_json_checks_its_limit(squared, bad, error):
    with pytest.raises(error, match=r"max_bytes: expected a positive whole number of bytes"):
        gv.Trace.from_json(squared.to_json(), max_bytes=bad)


def test_from_json_still_refuses_what_is_not_text():
    with pytest.raises(ValueError, match=r"expected a str or bytes of JSON text"):
        gv.Trace.from_json(12)
    with pytest.raises(ValueError, match=r"not valid JSON"):
        gv.Trace.from_json("{", max_bytes=10)


def test_from_json_counts_a_str_in_the_bytes_of_its_file(squared):
    # 'é' is one character and two bytes: the limit is in bytes, as the message says
    text = squared.to_json().replace('"title":""', '"title":"' + "\u00e9" * 50 + '"')
    assert not text.isascii()
    size = len(text.encode("utf-8"))
    with pytest.raises(ValueError, match=rf"trace JSON: {size:,} bytes, over the limit of "
                                         rf"{len(text):,} bytes"):
        gv.Trace.from_json(text, max_bytes=len(text))
    assert gv.Trace.from_json(text, max_bytes=size).title == "\u00e9" * 50


def test_a_file_this_user_may_not_write_is_not_called_read_only(tmp_path, monkeypatch):
    # someone else's 0644 file (os.access says no): its mode is not read-only
    out = tmp_path / "theirs.html"
    out.write_text("theirs")
    out.chmod(0o644)
    monkeypatch.setattr(report.os, "access", lambda *args, **kwargs: False)
    with pytest.raises(PermissionError, match=r"mode 0o644, owner uid \d+\) may not be "
                                              r"written by this user") as caught:
        report.write_text_atomic(out, "mine")
    assert "read-only" not in str(caught.value) and out.read_text() == "theirs"
