#!/usr/bin/env python3
"""The sampler against the full-vocabulary sampler it replaced, alone and inside `generate`.

    python bench/sampler_bench.py [--device cpu|cuda] [--batches 8,16,32] [--rounds 7] [--gen-batch 16] [--out DIR]

1. `sample` alone, on rows of random logits over the Qwen vocabulary (151,936 tokens): the
   sampler now (kept candidates found by top-k, inverse CDF weighed by blocks of 1,024 tokens) and
   the former one (tests/sampling_reference.py: log_softmax, exp and a float64 cumulative sum over
   the whole vocabulary, top-p by a sort of the whole row). Rows of near-flat logits (a random
   model: standard normal) and of peaked ones (6 x standard normal: a nucleus of a few tokens).
   Each round times --calls calls of one sampler then of the other (the order alternating by
   round); a figure is the median over rounds of the milliseconds per call, the ratio the median
   of the rounds' new / old ratios (with their smallest and largest). Wall time, and beside it the
   process's CPU time, which a shared machine's load moves less (with --threads 1 the two agree
   on a quiet machine).
2. `generate` of a tiny random Qwen2 (hidden 64, 2 layers, the real Qwen tokenizer and its
   vocabulary; tests/hf_models.py copies it from node_modules) with each sampler, interleaved by
   round: wall time per call and the share of it spent in the sampler (calls timed with a clock
   read around each; on CUDA with a synchronisation on each side), and whether both drew the
   same tokens.

Writes DIR/sampler-bench.json and prints the rows.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests"), HERE]

QWEN_VOCAB = 151936
# (row label, temperature, top_p, top_k, logit scale)
SETTINGS = [
    ("T 1", 1.0, 1.0, 0, 1.0),
    ("T 0.7, top-k 50", 0.7, 1.0, 50, 1.0),
    ("T 1, top-p 0.95, peaked", 1.0, 0.95, 0, 6.0),
    ("T 1, top-p 0.95, flat", 1.0, 0.95, 0, 1.0),
    ("greedy", 0.0, 1.0, 0, 1.0),
]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--vocab", type=int, default=QWEN_VOCAB, help="tokens per row of part 1")
    p.add_argument("--batches", default="8,16,32", help="rows per call, comma-separated")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--calls", type=int, default=5, help="calls per sampler per round (part 1; top-p rows: 1)")
    p.add_argument("--gen-batch", type=int, default=16, help="prompts per generate call (part 2; 0: skip it)")
    p.add_argument("--no-sample", action="store_true", help="skip part 1")
    p.add_argument("--gen-tokens", type=int, default=32)
    p.add_argument("--prompt-len", type=int, default=16)
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    p.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    p.add_argument("--work", default=None, help="where the random model is saved (default: the temp directory; reused)")
    a = p.parse_args(argv)
    try:
        a.batch_list = [int(b) for b in a.batches.split(",")]
    except ValueError:
        p.error(f"--batches must be integers separated by commas, got {a.batches!r}")
    if not a.batch_list or min(a.batch_list) < 1 or a.rounds < 1 or a.calls < 1 or a.vocab < 2:
        p.error("--batches, --rounds, --calls must be at least 1 and --vocab at least 2")
    return a


def ratio_row(name: str, times: dict[str, dict[str, list[float]]]) -> dict:
    """Medians over rounds of old and new, and of their per-round ratios, for wall and CPU time."""
    row: dict = {"name": name, "rounds": len(times["old"]["wall"])}
    for clock, suffix in (("wall", ""), ("cpu", "_cpu")):
        old, new = times["old"][clock], times["new"][clock]
        ratios = [n / o for o, n in zip(old, new, strict=True)]
        row |= {f"old_ms{suffix}": round(statistics.median(old), 3), f"new_ms{suffix}": round(statistics.median(new), 3)}
        row |= {f"ratio{suffix}": round(statistics.median(ratios), 3), f"ratio{suffix}_min": round(min(ratios), 3), f"ratio{suffix}_max": round(max(ratios), 3)}
    return row


def clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def interleaved(old, new, rounds: int, calls: int, sync) -> dict[str, dict[str, list[float]]]:
    """Wall and CPU milliseconds per call of each, per round; the first call of each is a warm-up."""
    times = {name: {"wall": [], "cpu": []} for name in ("old", "new")}
    pair = [("old", old), ("new", new)]
    for fn in (old, new):
        fn()
    for r in range(rounds):
        for name, fn in pair if r % 2 == 0 else pair[::-1]:
            sync()
            wall, cpu = clocks()
            for _ in range(calls):
                fn()
            sync()
            times[name]["wall"].append((time.perf_counter() - wall) / calls * 1e3)
            times[name]["cpu"].append((time.process_time() - cpu) / calls * 1e3)
    return times


def sample_rows(args, torch, device, sync) -> list[dict]:
    from sampling_reference import FullVocabularyScratch, full_vocabulary_sample

    from arl_trainer.sampling import SampleScratch, SamplingParams, sample

    rows = []
    for label, temperature, top_p, top_k, scale in SETTINGS:
        params = SamplingParams(temperature, top_p, top_k)
        for n in args.batch_list:
            logits = (torch.randn(n, args.vocab, generator=torch.Generator().manual_seed(n)) * scale).to(device)
            seeds = list(range(n))
            new_scratch, old_scratch = SampleScratch(), FullVocabularyScratch()

            def new(logits=logits, params=params, seeds=seeds, scratch=new_scratch):
                return sample(logits, params, [torch.Generator().manual_seed(s) for s in seeds], scratch)

            def old(logits=logits, params=params, seeds=seeds, scratch=old_scratch):
                return full_vocabulary_sample(logits, params, [torch.Generator().manual_seed(s) for s in seeds], scratch, stable_ties=False)

            same = bool(torch.equal(new()[0], old()[0]))
            calls = 1 if top_p < 1.0 else args.calls
            times = interleaved(old, new, args.rounds, calls, sync)
            rows.append({**ratio_row(f"sample, {label}, batch {n}", times), "same_tokens": same})
            print(json.dumps(rows[-1]), flush=True)
    return rows


def generate_rows(args, torch, device, sync) -> list[dict]:
    import numpy as np
    from hf_gpu_bench import SHAPES, configure_params, write_model
    from sampling_reference import FullVocabularyScratch, full_vocabulary_sample

    import arl_trainer.generate as generate_module
    from arl_trainer.distributed import Dist
    from arl_trainer.framing import Ragged
    from arl_trainer.trainer import Trainer

    model_dir = os.path.join(args.work or tempfile.gettempdir(), "arl-hf-bench-tiny")
    if not os.path.exists(os.path.join(model_dir, "config.json")):
        write_model(model_dir, SHAPES["tiny"])
    trainer = Trainer(Dist(device=device))
    vocab = trainer.configure(configure_params(model_dir, device.type))["tokenizer"]["vocab_size"]
    rng = np.random.default_rng(1)
    prompts = Ragged.from_sequences([rng.integers(8, vocab, size=args.prompt_len).astype(np.int32) for _ in range(args.gen_batch)], "int32")
    request = {"prompts": prompts, "temperature": 1.0, "top_p": 1.0, "top_k": 0, "stop_ids": [], "policy": "current"}
    request |= {"seeds": np.arange(args.gen_batch, dtype=np.int32), "max_new_tokens": args.gen_tokens}
    new_sample = generate_module.sample
    old_scratch = FullVocabularyScratch()

    def old_sample(logits, params, generators, scratch=None):
        return full_vocabulary_sample(logits, params, generators, old_scratch, stable_ties=False)

    spent = {"wall": 0.0, "cpu": 0.0}

    def timed(fn):
        def call(*a):
            sync()
            wall, cpu = clocks()
            out = fn(*a)
            sync()
            spent["wall"] += time.perf_counter() - wall
            spent["cpu"] += time.process_time() - cpu
            return out

        return call

    times = {name: {"wall": [], "cpu": []} for name in ("old", "new")}
    shares = {name: {"wall": [], "cpu": []} for name in ("old", "new")}
    ids = {}
    order = [("old", old_sample), ("new", new_sample)]
    try:
        for r in range(args.rounds + 1):  # round 0 warms up
            for name, fn in order if r % 2 == 0 else order[::-1]:
                generate_module.sample = timed(fn)
                spent |= {"wall": 0.0, "cpu": 0.0}
                sync()
                wall, cpu = clocks()
                out = trainer.generate(dict(request))
                sync()
                took = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
                if r > 0:
                    for clock in ("wall", "cpu"):
                        times[name][clock].append(took[clock] * 1e3)
                        shares[name][clock].append(spent[clock] / took[clock])
                ids[name] = out["ids"].values
    finally:
        generate_module.sample = new_sample
    row = ratio_row(f"generate, tiny Qwen2, {args.gen_batch} x {args.gen_tokens} tokens", times)
    for name in ("old", "new"):
        row |= {f"sampler_share_{name}": round(statistics.median(shares[name]["wall"]), 3)}
        row |= {f"sampler_share_{name}_cpu": round(statistics.median(shares[name]["cpu"]), 3)}
    row |= {"same_tokens": bool(np.array_equal(ids["old"], ids["new"])), "vocab": vocab}
    print(json.dumps(row), flush=True)
    return [row]


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("sampler_bench: CUDA is not available (run with --device cpu)", file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    environment = {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "load_average": list(os.getloadavg()),
        "cpus": os.cpu_count(),
    }
    print(json.dumps(environment), flush=True)
    rows = [] if args.no_sample else sample_rows(args, torch, device, sync)
    if args.gen_batch > 0:
        rows += generate_rows(args, torch, device, sync)
    environment["load_average_after"] = list(os.getloadavg())
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "sampler-bench.json"), "w") as f:
        json.dump({"environment": environment, "arguments": sys.argv[1:], "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
