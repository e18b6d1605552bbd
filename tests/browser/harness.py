"""Browser harness: a real ``streamlit run`` on a free port with a temporary
database, driven by Playwright in Debian's Chromium (no ``playwright install``)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("NEEDLEWORK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def page_paths() -> list[str]:
    """Every page's url_path, read from app.py's explicit st.Page entries."""
    source = (ROOT / "app.py").read_text(encoding="utf-8")
    return re.findall(r'url_path="([^"]+)"', source)


@contextmanager
def streamlit_server(db_path: Path, env: dict[str, str] | None = None):
    """Run the app on a free localhost port; yields its base URL."""
    port = free_port()
    full_env = dict(os.environ, NEEDLEWORK_DB=str(db_path), PYTHONUNBUFFERED="1",
                    **(env or {}))
    log = open(db_path.parent / f"streamlit-{port}.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true",
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                log.flush()
                raise RuntimeError("streamlit did not start:\n"
                                   + (db_path.parent / f"streamlit-{port}.log").read_text())
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def launch_browser(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def wait_idle(page, timeout: float = 30_000) -> None:
    """Wait until the app has rendered content and no script run is in progress
    (checked twice, 400 ms apart, so a run that is about to start is not missed)."""
    script = """() => {
        const main = document.querySelector('[data-testid="stMainBlockContainer"]');
        const running = document.querySelector('[data-testid="stStatusWidgetRunningIcon"]');
        return !!main && !running && main.querySelector('[data-testid="stElementContainer"]') !== null;
    }"""
    for _ in range(2):
        page.wait_for_function(script, timeout=timeout)
        page.wait_for_timeout(400)
    page.wait_for_function(script, timeout=timeout)


def assert_no_exception(page) -> None:
    """Fail when the page shows a Streamlit exception box."""
    boxes = page.locator('[data-testid="stException"]')
    if boxes.count():
        raise AssertionError("Streamlit exception on the page:\n" + boxes.first.inner_text())


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
