"""Reward-model engine benchmark on the demo model (prints figures, asserts nothing).

    python benchmarks/bench_rewards.py [--model data/demo-model] [--lengths 1024,2048,4096,8192]

1. tokens/s of the engine's scoring (each planned batch as one pass or one text per pass,
   as it measured on its first batches) vs one text per forward pass, and the planned
   batches always as one pass; the largest score difference from one text per pass;
   1b. the same on the GPU when there is one (else a line saying so);
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

from needlework.rewards.loading import RewardModel, cuda_summary, load_reward_model  # noqa: E402
from needlework.rewards.per_token import token_rewards  # noqa: E402
from needlework.rewards.pipeline import CHOICES, RewardPipeline, plan_batches  # noqa: E402
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


def bench_throughput(rm: RewardModel, lengths: list[int], batch_tokens: int, repeat: int) -> None:
    """The engine (each planned batch as one pass or one text per pass, as it measured on
    its first batches of each length bucket) against one text per pass, and the planned
    batches always run as one pass (the engine before it chose); the engine's scores
    against the single-pass scores."""
    CHOICES.clear()  # measured afresh, on this device and thread count
    print(f"\n1. scoring throughput on {rm.facts.device} (batch budget {batch_tokens} tokens, "
          f"best of {repeat}, real tokens per second)")
    print(f"{'length':>7} {'texts':>6} {'engine tok/s':>13} {'single tok/s':>13} {'engine':>7} "
          f"{'batches tok/s':>14} {'batches':>8}  {'max |Δ score|':>13}  engine chose")
    for n_tokens in lengths:
        count = max(2, min(16, 2 * batch_tokens // n_tokens))
        rows = [filler_ids(rm, n_tokens, seed) for seed in range(count)]
        engine = RewardPipeline(rm, batch_tokens=batch_tokens)
        fixed = RewardPipeline(rm, batch_tokens=batch_tokens, batching="batched")
        total = sum(len(r) for r in rows)
        batches = plan_batches([len(r) for r in rows], batch_tokens)
        got: dict[str, list[float]] = {}

        def chosen(rows=rows, engine=engine, batches=batches, got=got):
            got["engine"] = [0.0] * len(rows)
            for batch in batches:
                for i, s in zip(batch, engine.run_batch([rows[i] for i in batch]), strict=True):
                    got["engine"][i] = s

        def batched(rows=rows, fixed=fixed, batches=batches):
            for batch in batches:
                fixed.forward([rows[i] for i in batch])

        def single(rows=rows, fixed=fixed, got=got):
            got["single"] = [fixed.forward([row])[0] for row in rows]

        te, tb, ts = interleaved((chosen, batched, single), repeat)
        diff = max(abs(a - b) for a, b in zip(got["engine"], got["single"], strict=True))
        choice = CHOICES.get(engine.choice_key(n_tokens))
        said = choice.describe() if choice is not None else "one text per pass (one batch: not measured)"
        print(f"{n_tokens:>7} {count:>6} {total / te:>13,.0f} {total / ts:>13,.0f} {ts / te:>6.2f}x "
              f"{total / tb:>14,.0f} {ts / tb:>7.2f}x  {diff:>13.2e}  {said}")


def bench_gpu(model: str, lengths: list[int], batch_tokens: int, repeat: int, device: str) -> None:
    """Section 1 again on the GPU when this machine has one; else says what it would print."""
    if device not in ("auto", "cuda") and not device.startswith("cuda"):
        return
    if not torch.cuda.is_available():
        print("\n1b. GPU: none here (torch.cuda.is_available() is False). On a machine with a GPU "
              "this section prints the same table for cuda: the engine's choice, one text per "
              "pass and the batches, measured there.")
        return
    rm = load_reward_model(model, device="cuda")
    print(f"\n1b. GPU: {cuda_summary()}")
    bench_throughput(rm, lengths, batch_tokens, repeat)


def interleaved(fns, repeat: int) -> list[float]:
    """Best times of functions run in turn, each once first as a warm-up (fair under a
    fluctuating load)."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - start)
    return best


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

        tp, tt = interleaved((pooled, per_token), repeat)
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
    parser.add_argument("--throughput-repeat", type=int, default=2,
                        help="repeats for the throughput table's best-of timings (default 2)")
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
    bench_throughput(rm, lengths, args.batch_tokens, args.throughput_repeat)
    bench_gpu(args.model, lengths, args.batch_tokens, args.throughput_repeat, args.device)
    bench_per_token_overhead(rm, lengths, args.repeat)
    bench_prefixes(rm, args.prefix_tokens, args.prefix_sample)
    bench_cache(rm, args.cache_texts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
