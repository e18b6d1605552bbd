"""Widget callbacks run to their end (components/callbacks.py), under Streamlit's own script
runner (AppTest): a rerun the browser asks for while a callback runs would otherwise stop it
at its next session-state access, and the next run would not call it again."""

from __future__ import annotations

import ast
from pathlib import Path

from streamlit.testing.v1 import AppTest

from components.callbacks import script_runner, uninterrupted


def _app(wrapped: bool) -> None:
    """A text box whose callback saves what was typed (an AppTest script: its own module)."""
    import streamlit as st  # noqa: PLC0415
    from streamlit.runtime.scriptrunner import RerunData  # noqa: PLC0415

    from components.callbacks import script_runner, uninterrupted  # noqa: PLC0415

    def save() -> None:
        runner = script_runner()
        assert runner is not None  # where Streamlit keeps the runner: see components/callbacks.py
        # what the browser sends while the callback runs: the outbox asks for a redraw
        runner._requests.request_rerun(RerunData(query_string=""))
        saved = st.session_state.setdefault("saved", [])  # a check for a rerun is here
        saved.append(st.session_state["box"])

    st.text_input("Answer", key="box", on_change=uninterrupted(save) if wrapped else save)
    st.session_state["runs"] = st.session_state.get("runs", 0) + 1


def _typed(wrapped: bool) -> AppTest:
    at = AppTest.from_function(_app, args=(wrapped,))
    at.run()
    at.text_input(key="box").input("It takes 8 minutes [cite_1].").run()
    assert not at.exception
    return at


def test_a_callback_is_not_interrupted_by_a_rerun_asked_meanwhile() -> None:
    at = _typed(wrapped=True)
    assert at.session_state["saved"] == ["It takes 8 minutes [cite_1]."]
    assert at.session_state["runs"] >= 2  # the rerun asked for came after it


def test_without_it_streamlit_drops_the_rest_of_the_callback() -> None:
    # what the wrapper is for: if Streamlit stops interrupting callbacks, this fails and
    # components/callbacks.py can go
    at = _typed(wrapped=False)
    assert "saved" not in at.session_state


def test_outside_a_script_run_it_is_the_callback() -> None:
    assert script_runner() is None
    assert uninterrupted(lambda a, b=1: a + b)(2, b=3) == 5


# --- the rule: every callback of the pages is uninterrupted ---------------------------------

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "app.py", *sorted((ROOT / "app_pages").rglob("*.py")),
           *sorted((ROOT / "components").rglob("*.py"))]


def _module(path: Path, root: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts)


def _marked(tree: ast.Module) -> dict[str, bool]:
    """The module's top-level functions: whether each is decorated ``@uninterrupted``."""
    return {node.name: any(isinstance(d, ast.Name) and d.id == "uninterrupted"
                           for d in node.decorator_list)
            for node in tree.body if isinstance(node, ast.FunctionDef)}


def _problem(value: ast.expr, module: str, imported: dict[str, tuple[str, str]],
             marked: dict[str, dict[str, bool]]) -> str | None:
    """What is wrong with ``value``, given as a callback in ``module`` (``None``: nothing)."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return None  # "rerun": no function
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id == "uninterrupted"):
        return None  # a callback handed in, made uninterrupted here
    if not isinstance(value, ast.Name):
        return "not a function's name"
    home, attr = imported.get(value.id, (module, value.id))
    return None if marked.get(home, {}).get(attr, False) else ""


def callbacks_not_uninterrupted(root: Path = ROOT, sources: list[Path] = SOURCES) -> list[str]:
    """``path:line callback`` of every ``on_change=`` / ``on_click=`` in ``sources`` given
    a function that is not decorated ``@uninterrupted`` where it is defined, nor wrapped in
    ``uninterrupted(...)`` there (a string such as ``"rerun"`` is no function)."""
    trees = {_module(p, root): ast.parse(p.read_text(encoding="utf-8")) for p in sources}
    marked = {name: _marked(tree) for name, tree in trees.items()}
    found = []
    for name, tree in trees.items():
        imported = {a.asname or a.name: (node.module, a.name) for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module for a in node.names}
        keywords = [kw for node in ast.walk(tree) if isinstance(node, ast.Call)
                    for kw in node.keywords if kw.arg in ("on_change", "on_click")]
        for kw in keywords:
            problem = _problem(kw.value, name, imported, marked)
            if problem is not None:
                found.append(f"{name.replace('.', '/')}.py:{kw.value.lineno} "
                             f"{ast.unparse(kw.value)}" + (f" ({problem})" if problem else ""))
    return found


def test_every_callback_of_the_pages_is_uninterrupted() -> None:
    assert callbacks_not_uninterrupted() == []


def test_the_rule_sees_a_plain_callback(tmp_path) -> None:
    page = tmp_path / "app_pages" / "p.py"
    page.parent.mkdir()
    page.write_text("import streamlit as st\nfrom components.callbacks import uninterrupted\n"
                    "def plain():\n    pass\n@uninterrupted\ndef whole():\n    pass\n"
                    "st.button('a', on_click=plain)\nst.button('b', on_click=whole)\n"
                    "st.button('c', on_click=lambda: None)\nst.toggle('d', on_change='rerun')\n")
    assert callbacks_not_uninterrupted(tmp_path, [page]) == [
        "app_pages/p.py:8 plain", "app_pages/p.py:10 lambda: None (not a function's name)"]
