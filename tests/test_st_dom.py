"""Streamlit's DOM in one place (components/st_dom.py): the key scripts' copy is made
from the table, and no script or style names Streamlit's DOM on its own."""

from __future__ import annotations

import re

from components import st_dom
from tests.conftest import ROOT

# Streamlit's own markers: data-testid values, its st* classes, BaseWeb's attributes
_STREAMLIT = re.compile(r"data-testid|data-baseweb|\bstMain|\bstLayoutWrapper|\bstElementContainer"
                        r"|\bstSidebar|\bstHeader|\bstToolbar")
# files that take every such selector from st_dom (js/slide.js and needle/presentation.py
# keep theirs for now: st_dom lists them, the browser test watches them)
# every script but st_dom.js (the table's own copy) and slide.js (above)
_USERS = sorted(f"components/js/{p.name}" for p in (ROOT / "components" / "js").glob("*.js")
                if p.name not in ("st_dom.js", "slide.js")) + [
    "components/outbox.py", "components/annotate/keyboard.py", "components/review/keys.py",
    "components/name_memory.py", "components/teams/session.py", "components/scripts.py"]


def test_the_scripts_copy_is_made_from_the_table() -> None:
    assert st_dom.JS_FILE.read_text(encoding="utf-8") == st_dom.js(), \
        "components/js/st_dom.js is stale: run `python -m components.st_dom`"


def test_no_script_or_style_names_streamlits_dom_itself() -> None:
    found = [f"{path}:{n}: {line.strip()}" for path in _USERS
             for n, line in enumerate((ROOT / path).read_text(encoding="utf-8").splitlines(), 1)
             if _STREAMLIT.search(line)]
    assert not found, "\n".join(found)


def test_helpers() -> None:
    assert st_dom.key("nw-top") == ".st-key-nw-top"
    assert st_dom.wrapper("nw-top") == '[data-testid="stLayoutWrapper"]:has(> .st-key-nw-top)'
    assert st_dom.hidden("x") == (".st-key-x,[data-testid=\"stLayoutWrapper\"]:has(> .st-key-x)"
                                  "{display:none}")
