"""No module is imported by two threads at once when the server starts: every component
is either light (imported by the first script run, under the package's import lock) or
an engine component (imported by the warm-up thread, which engine pages wait for)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from components import boot
from tests.conftest import ROOT


def test_every_component_is_light_or_engine_once():
    folder = ROOT / "components"
    modules = {".".join(p.relative_to(folder).with_suffix("").parts) for p in folder.rglob("*.py")
               if p.name != "__init__.py"} - {"boot"}
    assert set(boot.light()) | set(boot.engine_components()) == modules
    assert not set(boot.light()) & set(boot.engine_components())


@pytest.mark.slow
def test_light_components_do_not_import_the_engine():
    code = ("import sys; from components.boot import import_app; import_app(); "
            "print(sorted(m for m in ('torch', 'transformers', 'needlework.rewards.loading') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    assert out == "[]"


def test_engine_pages_wait_for_the_warm_up_before_importing_engine_components():
    for page in ("rewards.py", "needle.py", "rag.py", "suggestions.py"):
        source = (ROOT / "app_pages" / page).read_text(encoding="utf-8")
        first_engine = min(source.index(f"components.{m}") for m in boot.engine_components()
                           if f"components.{m}" in source)
        assert source.index("engine()") < first_engine, page
    for page in Path(ROOT / "app_pages").glob("*.py"):
        if page.name in ("rewards.py", "needle.py", "rag.py", "suggestions.py"):
            continue
        source = page.read_text(encoding="utf-8")
        assert not [m for m in boot.engine_components() if f"components.{m} " in source], page.name


@pytest.mark.slow
def test_with_warm_up_off_the_engine_is_imported_when_a_page_first_needs_it():
    """NEEDLEWORK_WARM_UP=0: a server's first get_db() starts no import of PyTorch; the first
    page that needs the engine (wait_for_engine) imports it then, in the warm-up thread."""
    code = ("import os, sys, threading; os.environ['NEEDLEWORK_WARM_UP'] = '0'\n"
            "from components import boot; boot.import_app(); boot.start_warm_up()\n"
            "print('torch' in sys.modules, [t.name for t in threading.enumerate()"
            " if t.name == 'needlework-warm-up'])\n"
            "boot.wait_for_engine()\n"
            "print('torch' in sys.modules, 'components.rewards.scoring' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-2:]
    assert out == ["False []", "True True"]


def test_startup_imports_light_modules_once_and_heavy_ones_in_one_thread():
    """needlework.startup: the warm-up thread is one per process and imports the heavy
    modules after the light ones; a caller of import_first waits for the first one."""
    code = (
        "import sys, threading, time; from needlework import startup\n"
        "order = []\n"
        "class Finder:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name in ('tomllib', 'wave', 'colorsys'): order.append((name, threading.current_thread().name))\n"
        "        return None\n"
        "sys.meta_path.insert(0, Finder())\n"
        "a = startup.warm_up(['tomllib'], ['wave', 'colorsys'])\n"
        "b = startup.warm_up(['other'], ['other'])\n"
        "startup.import_first(['tomllib'])\n"
        "a.join(30)\n"
        "print(a is b, [n for n, _ in order], sorted({t for n, t in order if n != 'tomllib'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    assert out == "True ['tomllib', 'wave', 'colorsys'] ['needlework-warm-up']"


def test_streamlit_never_takes_the_app_for_a_legacy_multipage_app():
    """The pages live in app_pages/ (Streamlit's name for the folder of an st.navigation
    app): with no pages/ folder beside app.py, Streamlit routes with app.py's
    st.navigation from the first run on, with no switch to turn off at start-up."""
    assert not (ROOT / "pages").exists()
    code = ("from streamlit.runtime.pages_manager import PagesManager; "
            "PagesManager.uses_pages_directory = None; PagesManager('app.py'); "
            "print(PagesManager.uses_pages_directory)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    assert out == "False"
