"""Refuse a wide address in local mode before Streamlit opens its socket (beside
``serve.py``, which it guards: it reads Streamlit's config, so it is not in ``needlework/``).

Contract: when this interpreter was started as ``streamlit run <this repository's
serve.py> ...`` and the address Streamlit would listen on is one that local mode may not
serve (:func:`needlework.teams.config.serving_refusal`), print the refusal and exit with
status 2 before any socket exists. Any other command is left alone and costs a look at
``sys.orig_argv``.

Streamlit binds its port before it imports ``serve.py``, so a refusal in ``serve.py``
comes after the port has been open on the wide address. This check runs earlier: from a
``.pth`` file in the virtual environment's site-packages, which Python reads at start-up
(the mechanism coverage.py and editable installs use). ``make venv`` writes that file
(``python listen_guard.py install``); ``serve.py`` keeps its own refusal
for a Streamlit started some other way.

The address is the one Streamlit resolves, through Streamlit's own parsing: the
``--server.address`` flag, then ``STREAMLIT_SERVER_ADDRESS``, then the config files
(``~/.streamlit``, the working folder's and the script folder's ``config.toml``).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SERVE = ROOT / "serve.py"
PTH_NAME = "needlework-listen-guard.pth"


def run_arguments(argv: list[str]) -> list[str] | None:
    """The arguments after ``run`` when ``argv`` (a full command line, as
    ``sys.orig_argv``) is ``streamlit run SCRIPT ...`` or ``python -m streamlit run SCRIPT
    ...``; else ``None``."""
    rest: list[str]
    if len(argv) >= 2 and Path(argv[0]).name != "streamlit":
        # python [options] -m streamlit ... or python [options] path/to/bin/streamlit ...
        for i, arg in enumerate(argv[1:], start=1):
            if arg == "-m":
                if argv[i + 1:i + 2] != ["streamlit"]:
                    return None
                rest = argv[i + 2:]
                break
            if arg == "-X" or arg == "-W":
                continue
            if not arg.startswith("-"):
                if argv[i - 1] in ("-X", "-W"):
                    continue
                if Path(arg).name != "streamlit":
                    return None
                rest = argv[i + 1:]
                break
        else:
            return None
    elif argv and Path(argv[0]).name == "streamlit":
        rest = argv[1:]
    else:
        return None
    if not rest or rest[0] != "run" or len(rest) < 2:
        return None
    return rest[1:]


def serves_this_app(script: str, cwd: Path) -> bool:
    """Whether ``script`` (as typed, relative to ``cwd``) is this repository's serve.py."""
    try:
        return (cwd / script).resolve() == SERVE
    except OSError:
        return False


def streamlit_address(script: str, args: list[str]) -> str | None:
    """The ``server.address`` Streamlit would use for ``streamlit run script *args``,
    resolved by Streamlit's own flag parser and config loader (``None``: every interface)."""
    # Imported here, not above: every `... run ...` command reads this file at start-up.
    from streamlit import config  # noqa: PLC0415
    from streamlit.web import cli  # noqa: PLC0415

    context = cli.main_run.make_context("run", [script, *args], resilient_parsing=True)
    flags = {name.replace("_", "."): value for name, value in context.params.items()
             if name not in ("target", "args") and value is not None}
    config._main_script_path = str(Path(script).resolve())
    try:
        config.get_config_options(force_reparse=True, options_from_flags=flags)
        address = config.get_option("server.address")
    finally:
        # leave Streamlit's config unparsed, as before: its CLI parses it again, and a parse
        # already there would be taken for a changed [server] section (a warning)
        config._config_options = None
        config._main_script_path = None
    return str(address) if address else None


def refusal(argv: list[str], cwd: Path) -> str | None:
    """Why the command ``argv`` may not start (``None``: it may, or it is not ours)."""
    args = run_arguments(argv)
    if args is None or not serves_this_app(args[0], cwd):
        return None
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from needlework.teams.config import (  # noqa: PLC0415 (only for this app's server)
        ConfigError,
        load_config,
        serving_refusal,
    )

    try:
        config = load_config()
    except ConfigError:
        return None  # serve.py names the file and the key, as it does for any start
    return serving_refusal(config, streamlit_address(args[0], args[1:]))


def check() -> None:
    """Exit with status 2 and the refusal when this process may not start (the .pth hook)."""
    why = refusal(list(getattr(sys, "orig_argv", sys.argv)), Path.cwd())
    if why:
        sys.stderr.write(why + "\n")
        sys.stderr.flush()
        os._exit(2)


def pth_line() -> str:
    """The .pth line: cheap for every other command, :func:`check` for ``streamlit run``."""
    return ("import sys; 'run' in getattr(sys, 'orig_argv', sys.argv) and "
            f"__import__('runpy').run_path({str(Path(__file__).resolve())!r}, "
            "run_name='needlework_listen_guard')\n")


def install() -> Path:
    """Write the .pth file into this interpreter's site-packages; return its path."""
    path = Path(sysconfig.get_paths()["purelib"]) / PTH_NAME
    path.write_text(pth_line())
    return path


if __name__ == "needlework_listen_guard":
    check()
elif __name__ == "__main__" and sys.argv[1:] == ["install"]:
    print(f"listen guard: {install()}")
