"""The browser scripts joined for Streamlit (components/scripts.py): every component's
module loads under node, each file runs in its own scope after what it imports, each once,
and what the bundle cannot take is refused with the file and line named."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from components import scripts
from components.scripts import ScriptError, bundle, order
from tests.conftest import ROOT

#: the scripts a component loads (components/outbox.py, annotate/keyboard.py, review/keys.py,
#: name_memory.py, needle/presentation.py)
ENTRIES = ["outbox.js", "courier.js", "annotate_keys.js", "review_keys.js", "name_memory.js",
           "slide.js"]


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail("node not found: `make test` installs it (the identity provider needs it too)")
    return found


def run_module(tmp_path: Path, code: str, then: str = "") -> subprocess.CompletedProcess[str]:
    """Import ``code`` as an ES module under node, then run ``then`` with its default
    export as ``main``."""
    (tmp_path / "bundle.mjs").write_text(code, encoding="utf-8")
    (tmp_path / "run.mjs").write_text(
        f'import main from "./bundle.mjs";\n{then}\n', encoding="utf-8")
    return subprocess.run([node(), str(tmp_path / "run.mjs")], capture_output=True, text=True,
                          timeout=60)


def scripts_in(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "js"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("entry", ENTRIES)
def test_every_components_module_loads(tmp_path: Path, entry: str) -> None:
    done = run_module(tmp_path, bundle(entry),
                      'if (typeof main !== "function") throw new Error("no default function");')
    assert done.returncode == 0, done.stderr


def test_a_courier_posts_to_the_name_its_component_carries(tmp_path: Path) -> None:
    """Every courier has the same code: the page's mail (window.__nwMail, a fake here, so
    the module is loaded again once it is there) gets the name from the component's."""
    code = bundle("courier.js")
    then = """
const got = [];
globalThis.window = {__nwMail: {post: (...a) => got.push(a), listen() {}}};
const again = await import("./bundle.mjs?again");
again.default({name: "needlework.annotate_keys_data", data: {n: 1}, parentElement: null});
console.log(JSON.stringify(got));
"""
    done = run_module(tmp_path, code, then)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [["annotate_keys", {"n": 1}, None]]


def test_each_file_once_after_what_it_imports() -> None:
    for entry in ENTRIES:
        names = [s.name for s in order(entry)]
        assert names[-1] == entry and len(set(names)) == len(names)
        seen: set[str] = set()
        for s in order(entry):
            assert {f for f, _, _ in s.imports} <= seen, (entry, s.name)
            seen.add(s.name)


def test_every_script_is_in_some_components_module() -> None:
    used = {s.name for entry in ENTRIES for s in order(entry)}
    assert used == {p.name for p in (ROOT / "components" / "js").glob("*.js")}


def test_a_files_names_are_its_own(tmp_path: Path) -> None:
    """A name another file declares but does not export is not seen: the bundle throws, as
    the browser would on a real module."""
    folder = scripts_in(tmp_path, {
        "a.js": 'import {shown} from "./b.js";\nexport default () => shown + hidden;\n',
        "b.js": "const hidden = 1;\nexport const shown = 2;\n",
    })
    done = run_module(tmp_path, bundle("a.js", folder), "console.log(main());")
    assert done.returncode != 0 and "hidden is not defined" in done.stderr


def test_imports_exports_and_a_shared_dependency(tmp_path: Path) -> None:
    folder = scripts_in(tmp_path, {
        "a.js": ('import {twice, three as n} from "./b.js";\nimport * as c from "./c.js";\n'
                 "export default function () { return [twice(n), c.count()]; }\n"),
        "b.js": ('import {count} from "./c.js";\nexport function twice(x) { count(); return 2 * x; }\n'
                 "const three = 3;\nexport {three};\n"),
        "c.js": ("// one counter: c.js runs once however many files import it\nlet n = 0;\n"
                 "/** @returns {number} */\nexport const count = () => (n += 1);\n"),
    })
    assert [s.name for s in order("a.js", folder)] == ["c.js", "b.js", "a.js"]
    done = run_module(tmp_path, bundle("a.js", folder), "console.log(JSON.stringify(main()));")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [6, 2]


def test_comment_lines_are_left_out_code_after_a_comment_is_kept() -> None:
    body = ("// a line comment\n/**\n * a block\n */\nconst a = 1;  // kept\n"
            "/** @type {any} */\n/** @type {any} */ (a).b = 2;\n\n/* one line */\n")
    assert scripts._code("x.js", body) == "const a = 1;  // kept\n/** @type {any} */ (a).b = 2;"


@pytest.mark.parametrize(("files", "error"), [
    ({"a.js": 'import {b} from "./b.js";\nexport default b;\n',
      "b.js": 'import a from "./a.js";\nexport const b = 1;\n'},
     "b.js:1: an import or export the bundle does not take: import a from"),
    ({"a.js": 'import {b} from "./b.js";\nexport default b;\n',
      "b.js": 'import {a} from "./a.js";\nexport const b = 1;\nexport const a = 2;\n'},
     "an import cycle: a.js → b.js → a.js"),
    ({"a.js": 'import {c} from "./b.js";\nexport default c;\n', "b.js": "export const b = 1;\n"},
     "a.js:1: b.js exports no c"),
    ({"a.js": "export let a = 1;\nexport default a;\n"}, "a.js:1: an import or export"),
    ({"a.js": "const a = 1;\nexport {a as b};\nexport default a;\n"}, "export {a as b}"),
    ({"a.js": "export default `\n`;\n"}, "a.js:1: a template literal over lines"),
    ({"a.js": 'import {x} from "./missing.js";\nexport default x;\n'}, "missing.js: no such"),
    ({"a.js": "export const a = 1;\n"}, "an entry script exports a default function"),
    ({"a.js": "const __nw_js_a = 1;\nexport default __nw_js_a;\n"}, "a.js:1: __nw_js_* names"),
])
def test_what_the_bundle_refuses(tmp_path: Path, files: dict[str, str], error: str) -> None:
    folder = scripts_in(tmp_path, files)
    with pytest.raises(ScriptError, match=re.escape(error)):
        bundle("a.js", folder)
