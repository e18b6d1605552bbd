"""A team on one machine: N app processes behind HAProxy, loaded by Locust's simulated annotators.

    .venv/bin/python benchmarks/bench_team.py [--processes 1,2,4] [--users 25,50,100]
                                              [--seconds 20] [--spawn-rate 5] [--key-seconds 1]
                                              [--keep DIR]

For each number of processes and of simulated annotators (a *cell*): a fresh copy of a database
seeded with the demo data (``needlework.seeding.demo.seed_demo``) where one annotator account per
simulated user was made (``accounts.add_user``) and given every demo grounding question
(``assignment.assign_dataset``), ``python -m needlework serve-team --workers N`` on it
(``tests/serve_team_fixtures.TeamRun``: the real command line, HAProxy included; the processes
run with ``NEEDLEWORK_WARM_UP=0``, as the tests' servers: the Annotate page never needs PyTorch,
so they never import it), then Locust headless (``benchmarks/locustfile.py``: what one simulated
user does is said there) through the proxy, spawning ``--spawn-rate`` users a second. Each user
signs in and opens its queue; from the moment the last one has, the cell measures for
``--seconds`` and stops.

Prints one table: p50 / p95 press -> committed (a label action sent to the action route -> the
answer acknowledging it), p95 page move (the move key -> the run that draws the next question
finished), p95 redraw (the rerun the outbox asks for after each key), errors (all of the cell,
ramp-up included), resends (answers that made the outbox send an action again: the database
busy, the proxy's 503; not errors, but press -> committed waits for them), and CPU as % of
one core over the measured seconds (``/proc/PID/stat``) of each app process, of HAProxy and of
Locust itself; then where one process stops keeping the p95 page move under 1 s, and what went
wrong (errors by kind, HAProxy marking a process down, a process started again, an
acknowledged action missing from the database). The simulated users (one Locust process) and
the app processes share the same machine and its cores: the figures are for both together.
Asserts nothing. The 9 cells of the defaults take about 10 minutes on 2 cores (more when
other work shares them: the sign-ins of 100 users queue behind each other).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import store  # noqa: E402
from needlework.seeding.demo import seed_demo  # noqa: E402
from needlework.teams import accounts  # noqa: E402
from needlework.teams.assignment import assign_dataset  # noqa: E402
from tests.serve_team_fixtures import TeamRun, haproxy_missing  # noqa: E402

LOCUSTFILE = ROOT / "benchmarks" / "locustfile.py"
DATASET = "demo-grounding"
MOVE_LIMIT_MS = 1000.0
TICK = os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def password_of(name: str) -> str:
    return f"{name}-bench-passphrase"


def make_template(path: Path, users: int) -> list[dict[str, str]]:
    """A database seeded with the demo data and ``users`` annotators, each assigned every
    demo grounding question: the accounts (name, password) the simulated users sign in as."""
    db = store.connect(path)
    try:
        seed_demo(db)
        names = [f"sim{i:03d}" for i in range(1, users + 1)]
        for name in names:
            accounts.add_user(db, name, "annotator", password=password_of(name))
        assign_dataset(db, DATASET, names, per_item=len(names))
    finally:
        db.conn.close()
    return [{"name": n, "password": password_of(n)} for n in names]


def copy_db(source: Path, target: Path) -> None:
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def cpu_ticks(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[11]) + int(fields[12])


class Sampler:
    """Every ``every`` seconds: the CPU ticks of each app process, of HAProxy and of Locust
    (by name; a process started again under a new pid is noted)."""

    def __init__(self, run: TeamRun, locust_pid: int, every: float = 0.5) -> None:
        self.run, self.locust_pid, self.every = run, locust_pid, every
        self.samples: list[tuple[float, dict[str, tuple[int, int]]]] = []
        self.restarted: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def pids(self) -> dict[str, int]:
        try:
            state = self.run.state()
        except (OSError, ValueError):
            return {}
        found = {w["name"]: w["pid"] for w in state["workers"] if w["pid"]}
        if state["proxy"]["pid"]:
            found["haproxy"] = state["proxy"]["pid"]
        found["locust"] = self.locust_pid
        return found

    def _loop(self) -> None:
        seen: dict[str, int] = {}
        while not self._stop.is_set():
            now, row = time.time(), {}
            for name, pid in self.pids().items():
                ticks = cpu_ticks(pid)
                if ticks is not None:
                    row[name] = (pid, ticks)
                    if seen.setdefault(name, pid) != pid:
                        self.restarted.add(name)
                        seen[name] = pid
            self.samples.append((now, row))
            self._stop.wait(self.every)

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def usage(self, start: float, end: float) -> dict[str, float]:
        """% of one core of each process between ``start`` and ``end`` (epoch seconds)."""
        inside = [(t, row) for t, row in self.samples if start <= t <= end]
        if len(inside) < 2:
            return {}
        out: dict[str, float] = {}
        span = inside[-1][0] - inside[0][0]
        names = {n for _, row in inside for n in row}
        for name in names:
            used = 0
            for (_, a), (_, b) in zip(inside, inside[1:], strict=False):
                if name in a and name in b and a[name][0] == b[name][0]:
                    used += b[name][1] - a[name][1]
            out[name] = 100.0 * used / TICK / span if span > 0 else 0.0
        return out


@dataclass
class Cell:
    processes: int
    users: int
    samples: list[list[Any]] = field(default_factory=list)  # [name, ms, ended, ok, user, bytes]
    errors: list[list[Any]] = field(default_factory=list)  # [when, name, message, user]
    resends: int = 0  # answers that made the outbox send an action again (not errors)
    ramp: float | None = None  # seconds from Locust's start until every user had its queue
    ready_at: float | None = None
    stopped_at: float | None = None
    cpu: dict[str, float] = field(default_factory=dict)
    restarted: set[str] = field(default_factory=set)
    load: float = 0.0
    problems: list[str] = field(default_factory=list)
    killed: str = ""  # the worker killed mid-run (--kill-after), and when
    kept: str = ""  # what the database says of the actions after that kill

    def measured(self, name: str) -> list[float]:
        """Successful timings of ``name`` that ended in the measured window (the whole run
        when not every user opened its queue in time)."""
        start = self.ready_at or 0.0
        end = self.stopped_at or float("inf")
        return [s[1] for s in self.samples if s[0] == name and s[3] and start <= s[2] <= end]


def run_cell(processes: int, users: int, template: Path, accounts_file: Path, folder: Path, *,
             seconds: float, spawn_rate: float, key_seconds: float,
             kill_after: float | None = None) -> Cell:
    """One cell: serve-team with ``processes`` on a fresh copy of ``template``, ``users``
    simulated annotators for ``seconds`` once all have their queue open. ``kill_after``:
    SIGKILL worker w1 that many seconds after the users should all be in (their number over
    the spawn rate), as a crash; the supervisor starts it again."""
    cell = Cell(processes, users)
    folder.mkdir(parents=True, exist_ok=True)
    db_path = folder / "team.db"
    copy_db(template, db_path)
    run = TeamRun(folder, db_path, workers=processes).start()
    samples_file, log = folder / "samples.json", folder / "locust.log"
    ramp_limit = users / spawn_rate + 150  # sign-ins queue behind each other
    command = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless",
               "-u", str(users), "-r", str(spawn_rate), "--host", run.url,
               "-t", f"{int(seconds + ramp_limit)}s", "--accounts", str(accounts_file),
               "--measure-seconds", str(seconds), "--key-seconds", str(key_seconds),
               "--samples-out", str(samples_file), "--only-summary",
               "--exit-code-on-error", "0", "--loglevel", "WARNING"]
    try:
        with open(log, "wb") as out:
            locust = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        sampler = Sampler(run, locust.pid).start()
        killer = None
        if kill_after is not None:
            at = users / spawn_rate + kill_after

            def kill() -> None:
                pid = run.kill_worker("w1")
                cell.killed = f"w1 (pid {pid}) killed {at:.0f} s after Locust started"

            killer = threading.Timer(at, kill)
            killer.start()
        try:
            code = locust.wait(seconds + ramp_limit + 60)
        except subprocess.TimeoutExpired:
            locust.kill()
            code = locust.wait()
            cell.problems.append("Locust did not stop by itself")
        finally:
            sampler.stop()
            if killer is not None:
                killer.cancel()
        cell.load = os.getloadavg()[0]
        if code != 0:
            cell.problems.append(f"Locust exited {code}: see {log}")
        try:
            record = json.loads(samples_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            cell.problems.append(f"Locust wrote no samples: see {log}")
            return cell
        cell.samples = record["samples"]
        cell.errors = [e for e in record["errors"] if not str(e[2]).startswith("resend:")]
        cell.resends = len(record["errors"]) - len(cell.errors)
        cell.ready_at, cell.stopped_at = record.get("ready_at"), record.get("stopped_at")
        if cell.ready_at is not None:
            cell.ramp = cell.ready_at - record["started_at"]
        if cell.ready_at is None:
            cell.problems.append(f"only {record.get('users_ready')} of {users} users opened "
                                 f"their queue in {ramp_limit:.0f} s: its figures are over "
                                 "the whole run, ramp-up included")
        cell.cpu = sampler.usage(cell.ready_at or record["started_at"],
                                 cell.stopped_at or time.time())
        cell.restarted = sampler.restarted
        if sampler.restarted:
            cell.problems.append("started again during the run: " + ", ".join(
                sorted(sampler.restarted)))
        cell.problems += integrity(db_path, cell)
    finally:
        run.stop()
    cell.problems += proxy_notes(run.run_dir / "haproxy.log")
    return cell


def proxy_notes(log: Path) -> list[str]:
    """What HAProxy's log says went wrong: a process marked down (with why)."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return []
    down: dict[str, int] = {}
    for line in lines:
        if " is DOWN" in line and not line.startswith("["):
            server = line.split("Server ", 1)[-1].split(" ", 1)[0]
            why = line.split("reason: ", 1)[-1].split(",", 1)[0] if "reason: " in line else ""
            key = f"{server} ({why})" if why else server
            down[key] = down.get(key, 0) + 1
    return [f"HAProxy marked {k} down {n}×" for k, n in sorted(down.items())]


def integrity(db_path: Path, cell: Cell) -> list[str]:
    """Every action the route acknowledged is in the database's record of applied actions,
    and no change was applied twice: every history row a label action made is the one its
    action recorded (an action applied again would leave a row no action names, or two
    actions naming one row). Notes the figures in ``cell.kept``."""
    acked = sum(1 for s in cell.samples if s[0] in ("press -> committed", "move -> committed")
                and s[3])
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    try:
        applied = conn.execute("select count(*) from applied_actions").fetchone()[0]
        unnamed = conn.execute(
            "select count(*) from history h where h.action = 'set' and not exists "
            "(select 1 from applied_actions a where a.history_id = h.id)").fetchone()[0]
        shared = conn.execute(
            "select count(*) from (select history_id from applied_actions where history_id "
            "is not null group by history_id having count(*) > 1)").fetchone()[0]
    finally:
        conn.close()
    cell.kept = (f"{acked} actions acknowledged, {applied} applied, {unnamed} changes no "
                 f"action names, {shared} changes named twice")
    found = [] if applied >= acked else [f"{acked} actions acknowledged, {applied} applied"]
    if unnamed or shared:
        found.append(f"applied twice? {unnamed} changes no action names, {shared} named twice")
    return found


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def seconds_text(value: float | None) -> str:
    return "-" if value is None else f"{value / 1000:.2f} s"


def print_table(cells: list[Cell]) -> None:
    header = (f"{'proc':>4} {'users':>5} {'press->committed p50/p95':>25} {'page move p95':>13} "
              f"{'redraw p95':>10} {'errors':>6} {'resends':>7} {'moves':>5} {'keys':>5}  "
              "CPU % of one core: app processes | haproxy | locust  (load 1 min)")
    print(header)
    print("-" * len(header))
    for c in cells:
        press = c.measured("press -> committed")
        moves = c.measured("page move")
        cpu = c.cpu
        workers = " ".join(f"{cpu.get(f'w{i}', 0):.0f}" for i in range(1, c.processes + 1))
        users = f"{c.users}{'' if c.ready_at else '*'}"
        print(f"{c.processes:>4} {users:>5} "
              f"{ms(pct(press, .5)) + ' / ' + ms(pct(press, .95)) + ' ms':>25} "
              f"{seconds_text(pct(moves, .95)):>13} "
              f"{seconds_text(pct(c.measured('redraw'), .95)):>10} {len(c.errors):>6} "
              f"{c.resends:>7} "
              f"{len(moves):>5} {len(press):>5}  "
              f"{workers} | {cpu.get('haproxy', 0):.0f} | {cpu.get('locust', 0):.0f}"
              f"  ({c.load:.1f})")
    if any(c.ready_at is None for c in cells):
        print("* not every user had its queue open within the time limit: the figures of "
              "this row are over the whole run, sign-ins included")


def verdict(cells: list[Cell]) -> str:
    """Where one process stops keeping the p95 page move under 1 s."""
    ones = sorted((c for c in cells if c.processes == 1 and c.measured("page move")),
                  key=lambda c: c.users)
    if not ones:
        return "One process: not measured (add 1 to --processes)."
    over = [c for c in ones if (pct(c.measured("page move"), .95) or 0) >= MOVE_LIMIT_MS]
    if not over:
        return (f"One process kept the p95 page move under 1 s at every count measured "
                f"(up to {ones[-1].users} simulated annotators).")
    first = over[0]
    under = [c for c in ones if c.users < first.users]
    text = (f"One process stops keeping the p95 page move under 1 s between "
            f"{under[-1].users} and {first.users} simulated annotators"
            if under else f"One process does not keep the p95 page move under 1 s even at "
            f"{first.users} simulated annotators, the fewest measured")
    text += f" (p95 {seconds_text(pct(first.measured('page move'), .95))} at {first.users})"
    more = [c for c in cells if c.users == first.users and c.processes > 1
            and (pct(c.measured("page move"), .95) or MOVE_LIMIT_MS) < MOVE_LIMIT_MS]
    if more:
        best = min(more, key=lambda c: c.processes)
        text += (f"; {best.processes} processes keep it under 1 s there "
                 f"({seconds_text(pct(best.measured('page move'), .95))})")
    return text + "."


def commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True).stdout.splitlines()
        folders = sorted({str(Path(line[3:]).parent) for line in dirty})
        return out + (f" (uncommitted changes in {', '.join(folders[:4])}"
                      f"{', …' if len(folders) > 4 else ''})" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({model or platform.machine()}), {memory:.0f} GiB"


def numbers(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=numbers, default=[1, 2, 4],
                        help="app processes, comma-separated (default 1,2,4)")
    parser.add_argument("--users", type=numbers, default=[25, 50, 100],
                        help="simulated annotators, comma-separated (default 25,50,100)")
    parser.add_argument("--seconds", type=float, default=20.0,
                        help="measured seconds per cell, once every user has its queue open "
                        "(default 20)")
    parser.add_argument("--spawn-rate", type=float, default=5.0,
                        help="users started per second (each signs in: default 5)")
    parser.add_argument("--key-seconds", type=float, default=1.0,
                        help="mean time between two keys of one annotator (default 1)")
    parser.add_argument("--kill-after", type=float, default=None, metavar="SECONDS",
                        help="SIGKILL worker w1 this many seconds after every user should be "
                        "in (a crash mid-run; the supervisor starts it again), then check "
                        "that no acknowledged action is missing and none was applied twice")
    parser.add_argument("--keep", metavar="DIR", default=None,
                        help="keep each cell's database and logs (Locust's, HAProxy's, each "
                        "process's) in DIR/pP-uU (default: a temporary folder, removed)")
    args = parser.parse_args(argv)
    missing = haproxy_missing()
    if missing:
        print(missing, file=sys.stderr)
        return 1
    started = time.time()
    print(f"bench_team: commit {commit()}, {machine()}, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the start")
    print("The simulated users (one Locust process) and the app processes share this machine "
          "and its cores: the figures are for both together.")
    print(f"Each cell: a fresh database (demo data, one annotator account per user, every demo "
          f"grounding question assigned to each), serve-team, Locust spawning "
          f"{args.spawn_rate:g} users/s; measured for {args.seconds:g} s once every user has "
          f"signed in and opened its queue; a key every {args.key_seconds:g} s (±30 %) per "
          "user.", flush=True)
    cells: list[Cell] = []
    with tempfile.TemporaryDirectory(prefix="bench-team-") as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        template = folder / "template.db"
        made = make_template(template, max(args.users))
        accounts_file = folder / "accounts.json"
        accounts_file.write_text(json.dumps(made), encoding="utf-8")
        for processes in args.processes:
            for users in args.users:
                cell = run_cell(processes, users, template, accounts_file,
                                folder / f"p{processes}-u{users}", seconds=args.seconds,
                                spawn_rate=args.spawn_rate, key_seconds=args.key_seconds,
                                kill_after=args.kill_after)
                cells.append(cell)
                moves = cell.measured("page move")
                ramp = "-" if cell.ramp is None else f"{cell.ramp:.0f} s"
                print(f"  {processes} processes, {users} users: every queue open after {ramp}, "
                      f"p95 page move {seconds_text(pct(moves, .95))}, {len(cell.errors)} "
                      f"errors, {cell.resends} resends"
                      + (f" · {'; '.join(cell.problems)}" if cell.problems else ""), flush=True)
                if args.kill_after is not None:
                    print(f"    {cell.killed or 'no worker was killed (the run ended first)'}: "
                          f"{cell.kept}", flush=True)
        print()
        print_table(cells)
        print()
        print(verdict(cells))
        sizes = {name: pct([s[5] for c in cells for s in c.samples if s[0] == name and s[3]], .5)
                 for name in ("page load", "redraw", "page move")}
        print("Received over the WebSocket per run (median): " + ", ".join(
            f"{name} {size / 1024:.0f} KB" for name, size in sizes.items() if size))
        problems = [(c, c.problems) for c in cells if c.problems or c.errors]
        if problems:
            print("\nErrors and problems:")
            for c, found in problems:
                kinds: dict[str, int] = {}
                for e in c.errors:
                    key = " ".join(f"{e[1]}: {e[2]}".split())[:140]
                    kinds[key] = kinds.get(key, 0) + 1
                top = sorted(kinds.items(), key=lambda kv: -kv[1])[:4]
                print(f"  {c.processes} processes, {c.users} users: "
                      + "; ".join([*found, *(f"{n}× {k}" for k, n in top)]))
    print(f"\n({time.time() - started:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
