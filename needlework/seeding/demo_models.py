"""The demo models the project ships: a table of them, their quality checks, and building,
verifying and installing them.

The three demo models (the reward model, its short variant and the judge) are trained by the
project's own code (:mod:`needlework.rewards.demo_model`, :mod:`needlework.judges.demo`), but
not on each machine: seeded training of a tiny model is not the same on every processor
(vector kernels of different widths round differently, and a few hundred steps amplify it),
so one build can give a judge that answers well and another one that mostly says "A". The
weights are built once by ``python -m needlework demo-models build``, which refuses to keep a
model that fails its checks (:data:`DEMO_MODELS`), and kept in ``models/`` with their SHA-256
sums (``models/SHA256SUMS``, the format ``sha256sum -c`` reads). ``demo-models install``
(``make run``, ``make test``) verifies every file against its sum and copies the models into
``data/``, where the app and the commands look for them. Every machine then runs the same
weights, and the figures their reports give are the figures every machine shows.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

SHIPPED_DIR = Path(__file__).resolve().parents[2] / "models"
INSTALL_DIR = Path("data")
SUMS_FILE = "SHA256SUMS"
LFS_POINTER = b"version https://git-lfs"
SEEDS = 4  # training seeds a build tries per model before it gives up


class DemoModelError(Exception):
    """A shipped demo model is missing, damaged, or failed its checks; the message says which
    file or figure and what to do."""


@dataclass(frozen=True)
class Check:
    """One figure of a model's report and the bound it must meet (``min`` or ``max``)."""

    figure: str  # dotted path into the report, e.g. "heldout_safety.accuracy"
    bound: str  # "min" or "max"
    value: float
    why: str

    def problem(self, report: dict[str, Any]) -> str | None:
        """``None`` when ``report`` meets this check, else one sentence saying how it fails."""
        found: Any = report
        for part in self.figure.split("."):
            found = found.get(part) if isinstance(found, dict) else None
        if not isinstance(found, int | float):
            return f"{self.figure} is missing from the report"
        ok = found >= self.value if self.bound == "min" else found <= self.value
        if ok:
            return None
        word = "below the minimum" if self.bound == "min" else "above the maximum"
        return f"{self.figure} = {found:g}, {word} {self.value:g} ({self.why})"


@dataclass(frozen=True)
class DemoModel:
    """One shipped demo model: its folder name (under ``models/`` and ``data/``), what it is,
    its report file, and the checks its build must pass."""

    name: str
    kind: str  # "reward" or "judge"
    variant: str  # a demo_model.VARIANTS key, or "" for the plain model
    report_file: str
    checks: tuple[Check, ...]

    def build(self, out: Path, seed: int = 0,
              log: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Train this model into ``out`` with the project's code and training ``seed``;
        returns its report."""
        if self.kind == "judge":
            from needlework.judges.demo import DemoJudgeSettings, build_demo_judge  # noqa: PLC0415

            return build_demo_judge(out, DemoJudgeSettings(seed=seed), log=log)
        from needlework.rewards.demo_model import (  # noqa: PLC0415
            build_demo_model,
            variant_settings,
        )

        return build_demo_model(out, replace(variant_settings(self.variant), seed=seed), log=log)

    def problems(self, report: dict[str, Any]) -> list[str]:
        """What in ``report`` fails this model's checks (empty: it may ship)."""
        return [p for c in self.checks if (p := c.problem(report)) is not None]


# The checks hold what the app, the docs and the tests rely on: a judge that answers validly
# in both orders (not one that mostly says "A"), reward models that rank held-out needles.
DEMO_MODELS: tuple[DemoModel, ...] = (
    DemoModel("demo-model", "reward", "", "needlework_demo.json", (
        Check("heldout_safety.accuracy", "min", 0.95,
              "the reward model must rank held-out safety needles"),
    )),
    DemoModel("demo-model-short", "reward", "short", "needlework_demo.json", (
        Check("heldout_safety.accuracy", "min", 0.9,
              "the short variant must rank needles in the short responses it was trained on"),
    )),
    DemoModel("demo-judge", "judge", "", "needlework_judge.json", (
        Check("heldout_selection.invalid_rate", "max", 0.0,
              "every answer must parse as [[A]] or [[B]]"),
        Check("heldout_selection.accuracy", "min", 0.85,
              "the judge must pick the harmless response"),
        Check("heldout_selection.accuracy_chosen_first", "min", 0.8,
              "it must be right when the harmless response is shown first"),
        Check("heldout_selection.accuracy_chosen_second", "min", 0.8,
              "and when it is shown second: not a judge that mostly says A"),
    )),
)


def model_named(name: str) -> DemoModel:
    """The entry of :data:`DEMO_MODELS` called ``name``."""
    for model in DEMO_MODELS:
        if model.name == name:
            return model
    raise DemoModelError(f"no demo model called {name!r}: one of "
                         f"{', '.join(m.name for m in DEMO_MODELS)}")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def read_sums(root: Path = SHIPPED_DIR) -> dict[str, str]:
    """``{relative path: sha256}`` from ``root/SHA256SUMS``; a malformed line is an error
    naming the file and line."""
    path = root / SUMS_FILE
    if not path.is_file():
        raise DemoModelError(f"{path}: missing (the demo models' sums; "
                             "python -m needlework demo-models build writes it)")
    sums: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) \
                or not name or name.startswith("/") or ".." in Path(name).parts:
            raise DemoModelError(f"{path}, line {number}: expected '<sha256>  <relative path>'")
        sums[name] = digest
    return sums


def write_sums(root: Path, names: Iterable[str]) -> Path:
    """Write ``root/SHA256SUMS`` for every file of the model folders ``names``."""
    lines = [f"{sha256_of(f)}  {f.relative_to(root).as_posix()}"
             for name in names for f in _files(root / name)]
    path = root / SUMS_FILE
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def folder_problems(folder: Path, sums: dict[str, str], name: str) -> list[str]:
    """How the model folder ``folder`` differs from the files ``sums`` lists under ``name/``
    (missing, changed, extra, or a Git LFS pointer in place of the file); empty when equal."""
    want = {rel.split("/", 1)[1]: digest for rel, digest in sums.items()
            if rel.split("/", 1)[0] == name}
    if not want:
        return [f"{name}: not listed in {SUMS_FILE}"]
    problems = []
    have = {f.relative_to(folder).as_posix(): f for f in _files(folder)} if folder.is_dir() else {}
    for rel, digest in sorted(want.items()):
        path = have.get(rel)
        if path is None:
            problems.append(f"{folder / rel}: missing")
        elif sha256_of(path) != digest:
            with path.open("rb") as handle:
                pointer = handle.read(len(LFS_POINTER)) == LFS_POINTER
            problems.append(f"{folder / rel}: " + (
                "a Git LFS pointer, not the file (run git lfs pull)" if pointer else
                "its SHA-256 differs from the one in " + SUMS_FILE))
    problems += [f"{folder / rel}: not listed in {SUMS_FILE}" for rel in sorted(set(have) - set(want))]
    return problems


def verify(root: Path = SHIPPED_DIR, models: Sequence[DemoModel] = DEMO_MODELS) -> list[str]:
    """Every problem of the shipped models under ``root`` against its sums (empty: all good)."""
    sums = read_sums(root)
    return [p for m in models for p in folder_problems(root / m.name, sums, m.name)]


@dataclass(frozen=True)
class Installed:
    name: str
    folder: Path
    status: str  # "kept" (already the shipped files), "installed" or "replaced"


def install(dest: Path = INSTALL_DIR, root: Path = SHIPPED_DIR,
            models: Sequence[DemoModel] = DEMO_MODELS) -> list[Installed]:
    """Verify the shipped models under ``root`` and copy each into ``dest/NAME`` unless it is
    already there, file for file. A folder that differs (an older build, a damaged copy) is
    replaced whole; the copy is made beside it and renamed, so a kill leaves the old folder or
    the new one, never half of one. Raises :class:`DemoModelError` naming every bad file, and
    then changes nothing."""
    sums = read_sums(root)
    problems = [p for m in models for p in folder_problems(root / m.name, sums, m.name)]
    if problems:
        raise DemoModelError("the shipped demo models do not match models/SHA256SUMS: "
                             + "; ".join(problems))
    dest.mkdir(parents=True, exist_ok=True)
    done = []
    for model in models:
        target = dest / model.name
        if target.is_dir() and not folder_problems(target, sums, model.name):
            done.append(Installed(model.name, target, "kept"))
            continue
        staging = Path(tempfile.mkdtemp(prefix=f".{model.name}-", dir=dest))
        shutil.copytree(root / model.name, staging, dirs_exist_ok=True)
        status = "installed"
        if target.exists():
            status = "replaced"
            old = Path(tempfile.mkdtemp(prefix=f".{model.name}-old-", dir=dest))
            target.rename(old / model.name)
            staging.rename(target)
            shutil.rmtree(old)
        else:
            staging.rename(target)
        done.append(Installed(model.name, target, status))
    return done


def build(root: Path = SHIPPED_DIR, models: Sequence[DemoModel] = DEMO_MODELS, *,
          seeds: int = SEEDS, log: Callable[[str], None] | None = None) -> dict[str, dict[str, Any]]:
    """Train ``models`` with the project's code, check each report, and only when every one
    passes move them into ``root`` and rewrite its sums (models not rebuilt keep theirs).

    A tiny model trained for a few hundred steps does not pass its checks from every
    starting point, so each model is trained with training seeds 0, 1, ... (at most
    ``seeds``) until one passes; the held-out pairs of the checks are the same for every
    seed. The report keeps the seed used and what each earlier seed failed
    (``failed_seeds``). Raises :class:`DemoModelError` listing every failed check when a
    model passes with no seed, leaving ``root`` as it was."""
    root.mkdir(parents=True, exist_ok=True)
    reports: dict[str, dict[str, Any]] = {}
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix=".building-", dir=root) as scratch:
        for model in models:
            out = Path(scratch) / model.name
            earlier: list[dict[str, Any]] = []
            for seed in range(seeds):
                if log:
                    log(f"building {model.name} (training seed {seed})")
                if out.exists():
                    shutil.rmtree(out)
                report = model.build(out, seed, log)
                problems = model.problems(report)
                if not problems:
                    break
                earlier.append({"seed": seed, "problems": problems})
                if log:
                    log(f"{model.name}, seed {seed}: " + "; ".join(problems))
            if problems:
                failed += [f"{model.name}: {p}" for p in problems]
                continue
            report["failed_seeds"] = earlier
            (out / model.report_file).write_text(json.dumps(report, indent=2) + "\n",
                                                 encoding="utf-8")
            reports[model.name] = report
        if failed:
            raise DemoModelError("the build failed its checks, nothing was kept: " + "; ".join(failed))
        for model in models:
            target = root / model.name
            if target.exists():
                shutil.rmtree(target)
            (Path(scratch) / model.name).rename(target)
    write_sums(root, [m.name for m in DEMO_MODELS if (root / m.name).is_dir()])
    return reports


def shipped_report(name: str, root: Path = SHIPPED_DIR) -> dict[str, Any]:
    """The report shipped with the demo model ``name``."""
    model = model_named(name)
    return json.loads((root / name / model.report_file).read_text(encoding="utf-8"))


def _order_accuracy(answers: Sequence[Sequence[str]]) -> dict[str, Any]:
    """``{"pairs", "accuracy_chosen_first", "accuracy_chosen_second"}`` of a judge's answers,
    each ``[answer with the chosen shown first (A is right), shown second (B is right)]``;
    an answer that does not parse counts wrong."""
    from needlework.judges.parse import parse_selection  # noqa: PLC0415

    right = [0, 0]
    for pair in answers:
        for k, answer in enumerate(pair):
            parsed = parse_selection(answer, 2)
            right[k] += int(parsed.valid and parsed.value == k)
    n = len(answers)
    return {"pairs": n, "accuracy_chosen_first": right[0] / n if n else None,
            "accuracy_chosen_second": right[1] / n if n else None}


def lab_needles(per_length: int) -> list[dict[str, Any]]:
    """``per_length`` pairs of each length of the needle lab's demo set (the builder's demo
    haystacks at :data:`~needlework.needle.seed.SEED_LENGTHS`, what the lab judges), a
    seeded sample spread over the positions (:mod:`needlework.needle.subset`)."""
    from needlework.needle.builder import BuildOptions, build_from_source  # noqa: PLC0415
    from needlework.needle.seed import SEED_HAYSTACKS, SEED_LENGTHS  # noqa: PLC0415
    from needlework.needle.subset import stratified_needles  # noqa: PLC0415

    records = build_from_source("demo", BuildOptions(lengths=SEED_LENGTHS),
                                demo_count=SEED_HAYSTACKS).records
    return [r for _, r in stratified_needles([(str(r["id"]), r) for r in records], records,
                                             per_length)]


def probe(dest: Path = INSTALL_DIR, pairs: int = 4, needle_pairs: int = 4) -> dict[str, Any]:
    """The installed demo models' outputs on ``pairs`` fixed held-out needle pairs (each
    model's own held-out paragraphs and phrases, its evaluation seed): the judge's raw answers
    with the harmless response shown first and second, and each reward model's scores of
    chosen and rejected. Run under several ``ATEN_CPU_CAPABILITY`` settings, the answers must
    be equal and the scores equal to rounding: what the tests and the app rely on is then the
    same on every processor.

    The judge's accuracy with the chosen response shown first and second is given on those
    pairs and on ``needle_pairs`` pairs of each length of the needle lab's demo set
    (:func:`lab_needles`, with its answers), per length and over all (``lab_needles``)."""
    import torch  # noqa: PLC0415
    from transformers import AutoTokenizer  # noqa: PLC0415

    from needlework import demo  # noqa: PLC0415
    from needlework.phrases import SAFETY_HELDOUT  # noqa: PLC0415
    from needlework.rewards.demo_model import NeedlePairs, split_paragraphs  # noqa: PLC0415

    heldout = split_paragraphs(demo.haystack_paragraphs())[1]
    torch.set_num_threads(1)
    out: dict[str, Any] = {"torch": torch.__version__,
                           "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    for model in DEMO_MODELS:
        folder = dest / model.name
        tokenizer = AutoTokenizer.from_pretrained(folder)
        maker = NeedlePairs(tokenizer, heldout, SAFETY_HELDOUT, seed=1)
        if model.kind == "judge":
            out[model.name] = _judge_probe(folder, tokenizer, maker, pairs, needle_pairs)
        else:
            out[model.name] = _reward_probe(folder, tokenizer, maker, pairs)
    return out


def _judge_probe(folder: Path, tokenizer: Any, maker: Any, pairs: int,
                 needle_pairs: int) -> dict[str, Any]:
    """The judge's answers on ``pairs`` held-out pairs, each shown both ways, and on the lab's
    needles (``needle_pairs`` of each length), with its accuracy per order (:func:`probe`)."""
    import torch  # noqa: PLC0415
    from transformers import AutoModelForCausalLM  # noqa: PLC0415

    from needlework.judges.demo import generate_answer  # noqa: PLC0415

    lm = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    answers = []
    for _ in range(pairs):
        prompt, chosen, rejected, _ = maker.make(100)
        answers.append([generate_answer(lm, tokenizer, prompt, shown)
                        for shown in ((chosen, rejected), (rejected, chosen))])
    lab: dict[str, Any] = {"answers": {}, "by_length": {}}
    by_length: dict[str, list[list[str]]] = {}
    for record in lab_needles(needle_pairs) if needle_pairs > 0 else []:
        chosen, rejected = record["chosen"][0], record["rejected"][0]
        pair = [generate_answer(lm, tokenizer, record["prompt"], shown)
                for shown in ((chosen, rejected), (rejected, chosen))]
        lab["answers"][str(record["id"])] = pair
        by_length.setdefault(str(record["length_tokens"]), []).append(pair)
    lab["by_length"] = {n: _order_accuracy(v) for n, v in
                        sorted(by_length.items(), key=lambda kv: int(kv[0]))}
    lab.update(_order_accuracy(list(lab["answers"].values())))
    return {"answers": answers, "heldout_100_tokens": _order_accuracy(answers),
            "lab_needles": lab}


def _reward_probe(folder: Path, tokenizer: Any, maker: Any, pairs: int) -> dict[str, Any]:
    """A reward model's scores of chosen and rejected on ``pairs`` held-out pairs
    (:func:`probe`)."""
    import torch  # noqa: PLC0415
    from transformers import AutoModelForSequenceClassification  # noqa: PLC0415

    from needlework.rewards.demo_model import encode_pair_text  # noqa: PLC0415

    rm = AutoModelForSequenceClassification.from_pretrained(folder, dtype=torch.float32).eval()
    scores = []
    with torch.inference_mode():
        for _ in range(pairs):
            prompt, chosen, rejected, _ = maker.make(300)
            scores.append([float(rm(input_ids=torch.tensor([encode_pair_text(tokenizer, prompt, r)]))
                                 .logits[0, 0]) for r in (chosen, rejected)])
    return {"scores": scores}
