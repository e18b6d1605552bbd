"""Needle test speed: build, then score with and without shared-prefix reuse.

Default: 8 lengths (1K–8K) × 10 positions × 10 demo haystacks = 800 records on the
demo reward model (``python -m needlework demo-model --out DIR``). Prints figures,
asserts nothing. The score cache is off so every run does all the work. Both wall
time and this process's CPU time are printed: on a shared machine the CPU time is
the steadier figure.

    .venv/bin/python benchmarks/bench_needle.py --model DIR [--modes on,off] [--haystacks 10]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from needlework.needle.builder import DEFAULT_LENGTHS, BuildOptions, build_from_source  # noqa: E402


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="reward model folder (e.g. the demo model)")
    p.add_argument("--haystacks", type=int, default=10)
    p.add_argument("--positions", type=int, default=10)
    p.add_argument("--lengths", default=",".join(str(n) for n in DEFAULT_LENGTHS))
    p.add_argument("--modes", default="on,off", help="reuse modes to time, in order (on, off, auto)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    p.add_argument("--device", default="auto")
    return p.parse_args()


def _line(mode: str, wall: float, cpu: float, result) -> str:
    s = result.stats
    reuse = (f"reuse on {s.reuse_records} records, {s.tokens_saved:,} prefix tokens not recomputed "
             f"({s.tokens_saved / max(1, s.tokens_texts):.0%}); " if s.reuse_records else "")
    return (f"{mode:>4}: wall {wall:7.1f} s, cpu {cpu:7.1f} s | {s.tokens_texts / wall:8,.0f} text tokens/s wall, "
            f"{s.tokens_texts / cpu:8,.0f} per cpu-s | forwarded {s.tokens_forwarded:,} of {s.tokens_texts:,} "
            f"text tokens | {reuse}check: {s.reuse_check or '-'} {s.reuse_note}")


def main() -> None:
    args = _args()
    import torch  # noqa: PLC0415

    from needlework.needle.run import run_needles  # noqa: PLC0415
    from needlework.rewards.loading import cuda_summary, load_reward_model  # noqa: PLC0415
    from needlework.rewards.pipeline import RewardPipeline  # noqa: PLC0415

    if args.threads:
        torch.set_num_threads(args.threads)
    lengths = tuple(int(x) for x in args.lengths.split(","))
    started = time.perf_counter()
    built = build_from_source("demo", BuildOptions(lengths=lengths, positions=args.positions),
                              demo_count=args.haystacks)
    records = built.records
    print(f"build: {len(records)} records in {time.perf_counter() - started:.1f} s "
          f"({built.summary.token_method} token counts)", flush=True)
    rm = load_reward_model(args.model, device=args.device)
    print(f"model: {rm.facts.name} ({rm.facts.parameters:,} parameters, {rm.facts.dtype}, {rm.facts.device}, "
          f"torch threads {torch.get_num_threads()})", flush=True)
    if rm.device.type == "cuda":
        print(f"gpu: {cuda_summary()}", flush=True)
    frames = {}
    for mode in args.modes.split(","):
        wall0, cpu0 = time.perf_counter(), time.process_time()
        result = run_needles(RewardPipeline(rm, db=None), records, reuse_prefix=mode)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        frames[mode] = (wall, cpu, result.frame.set_index("id"))
        print(_line(mode, wall, cpu, result), flush=True)
        print(f"      accuracy {result.frame['correct'].mean():.1%} over {len(result.frame)} pairs", flush=True)
    if "on" in frames and "off" in frames:
        (w_on, c_on, f_on), (w_off, c_off, f_off) = frames["on"], frames["off"]
        diff = (f_on[["chosen_score", "rejected_score"]] - f_off[["chosen_score", "rejected_score"]]).abs().max().max()
        print(f"saving from prefix reuse: wall {1 - w_on / w_off:.0%}, cpu {1 - c_on / c_off:.0%}; "
              f"max |score difference| {diff:.2e}; same verdict on "
              f"{(f_on['correct'] == f_off['correct']).mean():.1%} of records")


if __name__ == "__main__":
    main()
