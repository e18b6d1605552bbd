"""Reward-model engine benchmark on the demo model (prints figures, asserts nothing).

    python benchmarks/bench_rewards.py [--model data/demo-model] [--lengths 1024,2048,4096,8192]

1. tokens/s of batched scoring (token budget, length-sorted) vs one text per forward pass;
2. per-token path time / pooled time (target ≤ 1.1);
3. per-token path vs one forward pass per prefix on a 1K-token response (expect ≥ 100×);
4. a cached re-run over 1,000 texts (target: no forward pass, ≤ 2 s).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from needlework.rewards.loading import RewardModel, load_reward_model  # noqa: E402
from needlework.rewards.per_token import token_rewards  # noqa: E402
from needlework.rewards.pipeline import RewardPipeline, plan_batches  # noqa: E402
from needlework.rewards.templates import render  # noqa: E402


def filler_ids(rm: RewardModel, n_tokens: int, seed: int) -> list[int]:
    """A rendered (prompt, response) of exactly ``n_tokens`` tokens, ending like a real text."""
    try:
        from needlework.demo import haystack_paragraphs  # noqa: PLC0415

        paragraphs = haystack_paragraphs()
    except ImportError:
        paragraphs = ["The reward model reads every paragraph of a long answer."] * 50
    text, k = "", seed
    while len(text) < n_tokens * 6:
        text += paragraphs[k % len(paragraphs)] + "\n\n"
        k += 7
    shown = render(rm.tokenizer, "Explain the project.", text)
    ids = rm.tokenizer(shown.text, add_special_tokens=shown.add_special_tokens,
                       verbose=False)["input_ids"]
    return ids[: n_tokens - 1] + ids[-1:]


def timed(fn, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def bench_throughput(rm: RewardModel, lengths: list[int], batch_tokens: int) -> None:
    print(f"\n1. scoring throughput (batch budget {batch_tokens} tokens, best of 2)")
    print(f"{'length':>7} {'texts':>6} {'batched tok/s':>14} {'single tok/s':>13} {'speed-up':>9}")
    for n_tokens in lengths:
        count = max(2, min(16, 2 * batch_tokens // n_tokens))
        rows = [filler_ids(rm, n_tokens, seed) for seed in range(count)]
        pipeline = RewardPipeline(rm, batch_tokens=batch_tokens)
        total = sum(len(r) for r in rows)

        batches = plan_batches([len(r) for r in rows], batch_tokens)

        def batched(rows=rows, pipeline=pipeline, batches=batches):
            for batch in batches:
                pipeline.forward([rows[i] for i in batch])

        def single(rows=rows, pipeline=pipeline):
            for row in rows:
                pipeline.forward([row])

        tb, ts = interleaved(batched, single, 2)
        print(f"{n_tokens:>7} {count:>6} {total / tb:>14,.0f} {total / ts:>13,.0f} {ts / tb:>8.2f}x")


def interleaved(first, second, repeat: int) -> tuple[float, float]:
    """Best times of two functions run alternately (fair under a fluctuating load)."""
    first()
    second()
    best = [float("inf"), float("inf")]
    for _ in range(repeat):
        for k, fn in enumerate((first, second)):
            start = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - start)
    return best[0], best[1]


def bench_per_token_overhead(rm: RewardModel, lengths: list[int], repeat: int) -> None:
    print(f"\n2. per-token path vs pooled score, one text, best of {repeat} "
          "(target ratio ≤ 1.1)")
    print(f"{'length':>7} {'pooled ms':>10} {'per-token ms':>13} {'ratio':>6}")
    for n_tokens in lengths:
        ids = torch.tensor([filler_ids(rm, n_tokens, 1)], device=rm.device)
        mask = torch.ones_like(ids)

        def pooled(ids=ids, mask=mask):
            with torch.inference_mode():
                rm.model(input_ids=ids, attention_mask=mask)

        def per_token(ids=ids, mask=mask):
            token_rewards(rm.model, ids, mask)

        tp, tt = interleaved(pooled, per_token, repeat)
        print(f"{n_tokens:>7} {tp * 1000:>10.1f} {tt * 1000:>13.1f} {tt / tp:>6.2f}")


def bench_prefixes(rm: RewardModel, response_tokens: int, sample: int | None) -> None:
    print(f"\n3. per-token path vs one forward pass per prefix ({response_tokens}-token response)")
    prompt_ids = filler_ids(rm, 64, 3)[:32]
    ids = prompt_ids + filler_ids(rm, response_tokens + 1, 4)[1:]
    start = len(prompt_ids)
    full = torch.tensor([ids], device=rm.device)
    t_one = timed(lambda: token_rewards(rm.model, full, torch.ones_like(full)), 3)
    ends = list(range(start + 1, len(ids) + 1))
    if sample and sample < len(ends):
        step = len(ends) / sample
        measured = [ends[int(k * step)] for k in range(sample)]
    else:
        measured = ends
    pipeline = RewardPipeline(rm)
    began = time.perf_counter()
    for end in measured:
        pipeline.forward([ids[:end]])
    t_prefix = (time.perf_counter() - began) * len(ends) / len(measured)
    note = "" if measured is ends else f" (extrapolated from {len(measured)} prefixes)"
    print(f"  one pass, every position: {t_one * 1000:.1f} ms")
    print(f"  one pass per prefix ({len(ends)} passes): {t_prefix:.2f} s{note}")
    print(f"  speed-up: {t_prefix / t_one:,.0f}x")


def bench_cache(rm: RewardModel, n_texts: int) -> None:
    import store  # noqa: PLC0415

    print(f"\n4. cached re-run over {n_texts} texts (target: 0 forward passes, ≤ 2 s)")
    with tempfile.TemporaryDirectory() as tmp:
        db = store.connect(Path(tmp) / "bench.db")
        pairs = [(f"Question {k}?", f"Answer number {k}: the needle is at position {k % 97}.")
                 for k in range(n_texts)]
        first = RewardPipeline(rm, db=db)
        t_first = timed(lambda: first.score_pairs(pairs))
        again = RewardPipeline(rm, db=db)
        t_again = timed(lambda: again.score_pairs(pairs))
        print(f"  first run: {t_first:.2f} s, {first.stats.forward_calls} forward passes")
        print(f"  re-run:    {t_again:.2f} s, {again.stats.forward_calls} forward passes, "
              f"{again.stats.cache_hits} cache hits")
        db.conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "data" / "demo-model"))
    parser.add_argument("--lengths", default="1024,2048,4096,8192")
    parser.add_argument("--batch-tokens", type=int, default=16384)
    parser.add_argument("--prefix-tokens", type=int, default=1000)
    parser.add_argument("--prefix-sample", type=int, default=None,
                        help="time only this many prefixes and extrapolate (default: all)")
    parser.add_argument("--cache-texts", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7, help="repeats for best-of timings")
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if not (Path(args.model) / "config.json").is_file():
        print(f"no model in {args.model}: build the demo first "
              f"(python -m needlework demo-model --out {args.model})", file=sys.stderr)
        return 1
    rm = load_reward_model(args.model, device=args.device)
    facts = rm.facts
    print(f"model {facts.name}: {facts.architecture}, {facts.parameters:,} parameters, "
          f"{facts.dtype} on {facts.device}, window {facts.context_length}, "
          f"torch threads {torch.get_num_threads()}")
    lengths = [int(x) for x in args.lengths.split(",")]
    bench_throughput(rm, lengths, args.batch_tokens)
    bench_per_token_overhead(rm, lengths, args.repeat)
    bench_prefixes(rm, args.prefix_tokens, args.prefix_sample)
    bench_cache(rm, args.cache_texts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
