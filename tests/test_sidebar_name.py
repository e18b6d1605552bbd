"""The annotator's name in the sidebar (components/sidebar.py, components/name_memory.py):
the session's name is its own state; the text field only edits it and is drawn anew
(under a new key) when the name was set elsewhere."""

from __future__ import annotations

from tests.test_pages_shell import app_db, run_app  # noqa: F401


def _field(at):
    (field,) = [t for t in at.sidebar.text_input if t.label == "Annotator"]
    return field


def test_a_new_field_starts_with_the_sessions_name(app_db):
    at = run_app(annotator="ana")
    assert _field(at).value == "ana" and _field(at).key == "nw-annotator-field-0"
    assert "✍️ Enter your name to save work." not in [c.value for c in at.sidebar.caption]


def test_the_value_the_browser_sends_after_a_restart_becomes_the_name(app_db):
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    from tests.conftest import ROOT  # noqa: PLC0415

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.session_state["nw-annotator-field-0"] = "bo"  # a new session, the field's value kept
    at.run()
    assert not at.exception
    assert at.session_state["annotator"] == "bo" and _field(at).value == "bo"


def test_a_name_set_elsewhere_draws_the_field_anew(app_db):
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    from tests.conftest import ROOT  # noqa: PLC0415

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.session_state["annotator"] = "cy"  # e.g. given back by the browser's memory
    at.session_state["nw-annotator-field-0"] = ""  # what the old field still holds
    at.run()
    assert not at.exception
    assert _field(at).value == "cy" and _field(at).key == "nw-annotator-field-1"
    assert at.session_state["annotator"] == "cy"
