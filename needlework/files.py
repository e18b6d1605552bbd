"""Writing output files whole or not at all.

Every file the project writes (exports, results, charts) goes through
:func:`atomic_writer`: the data is written to a temporary file in the same folder,
flushed to disk, and renamed over the target only once complete. A full disk, a
killed process or an exception part way leaves the previous file as it was (and no
temporary file behind, except after a kill).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w", *, encoding: str | None = "utf-8",
                  newline: str | None = "") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing (``mode`` ``"w"`` or ``"wb"``);
    on a clean exit it replaces ``path``, on an exception it is removed.

    A symbolic link is followed (its target is replaced). A path that exists and is
    not a regular file (``/dev/stdout``, a FIFO) is written directly: it cannot be
    replaced. ``newline=""`` writes text exactly as given (no ``\\r\\n`` translation).
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_writer opens files for writing ('w' or 'wb'), not {mode!r}")
    binary = mode == "wb"
    kwargs: dict[str, Any] = {} if binary else {"encoding": encoding, "newline": newline}
    target = Path(os.path.realpath(path))
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        with open(target, mode, **kwargs) as f:
            yield f
        return
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        if info is not None:
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, mode, **kwargs) as f:
            fd = -1
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        tmp = ""
        _fsync_dir(target.parent)
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_text(path: str | Path, text: str) -> int:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns the bytes written."""
    data = text.encode("utf-8")
    write_bytes(path, data)
    return len(data)


def write_bytes(path: str | Path, data: bytes) -> int:
    """Write ``data`` to ``path`` atomically; returns the bytes written."""
    with atomic_writer(path, "wb") as f:
        f.write(data)
    return len(data)
