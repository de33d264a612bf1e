#!/usr/bin/env python3
"""A random-weight transformers Qwen2 through arl_trainer: train-step MFU and generation speed.

    python bench/hf_gpu_bench.py --out DIR                               (one process)
    ARL_TRAINER_PARALLEL=fsdp python -m torch.distributed.run --nproc_per_node 1 \\
        bench/hf_gpu_bench.py --out DIR --label fsdp                     (the FSDP2 path)

The model is Qwen2.5-0.5B's shape (hidden 896, 24 layers, 14 heads, 2 KV heads, intermediate
4864, vocabulary 151936, tied embeddings) with random weights from transformers' own Qwen2Config,
saved with the real Qwen tokenizer (tests/hf_models.py copies it from node_modules) and loaded by
the trainer like a user's checkpoint. Nothing is downloaded.

Train step: `train_step` called in-process, bf16 autocast over float32 master weights, --batch
sequences of --seq-len tokens in --microbatches slices. FLOPs per processed token: 6 * N_matmul
(every Linear, the output head included, forward and backward) plus causal attention,
6 * layers * seq_len * d_attn. MFU = achieved FLOP/s / --peak-tflops (default 790, H200 dense bf16
as this check counts it).

Generation: `generate` of --gen-batch prompts of --prompt-len tokens, --gen-tokens new tokens each
(no stop ids, so every row runs to the limit); tokens/s counts generated tokens only.
gen_sampler_share is the part of a second such call spent in the sampler (timed with a
synchronisation on each side; bench/sampler_bench.py compares it with the sampler it replaced).

Writes DIR/hf-bench-LABEL.json (rank 0).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

H200_BF16_DENSE_TFLOPS = 790.0

SHAPES = {
    "qwen2-0.5b": dict(hidden=896, layers=24, heads=14, kv_heads=2, intermediate=4864, vocab=151936),
    "tiny": dict(hidden=64, layers=2, heads=4, kv_heads=2, intermediate=128, vocab=151936),
}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--shape", choices=sorted(SHAPES), default="qwen2-0.5b")
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--batch", type=int, default=16, help="sequences per optimizer step")
    p.add_argument("--microbatches", type=int, default=4)
    p.add_argument("--steps", type=int, default=4, help="timed train steps")
    p.add_argument("--warmup", type=int, default=1, help="untimed train steps first")
    p.add_argument("--gen-batch", type=int, default=64)
    p.add_argument("--prompt-len", type=int, default=128)
    p.add_argument("--gen-tokens", type=int, default=128, help="new tokens per row (0: no generation)")
    p.add_argument("--peak-tflops", type=float, default=H200_BF16_DENSE_TFLOPS, help="the device's dense bf16 peak, TFLOP/s")
    p.add_argument("--label", default="single", help="names the result file hf-bench-LABEL.json")
    p.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    p.add_argument("--work", default=None, help="where the random model is saved (default: the temp directory; reused)")
    a = p.parse_args(argv)
    for name in ("seq_len", "batch", "microbatches", "steps", "gen_batch", "prompt_len"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if a.microbatches > a.batch:
        p.error("--microbatches must not exceed --batch")
    if a.peak_tflops <= 0:
        p.error("--peak-tflops must be positive")
    return a


def train_flops_per_token(n_matmul: int, layers: int, seq_len: int, d_attn: int) -> int:
    """Forward + backward FLOPs per token: 2 per weight forward, 4 backward, over every Linear;
    causal attention's QK^T and AV: 2 * 2 * (T/2) * d forward per layer, times 3 with backward."""
    return 6 * n_matmul + 6 * layers * seq_len * d_attn


def mfu(tokens_per_s: float, flops_per_token: float, peak_tflops: float) -> float:
    return tokens_per_s * flops_per_token / (peak_tflops * 1e12)


def write_model(directory: str, shape: dict, seed: int = 0) -> str:
    """A random Qwen2 of `shape` with the real Qwen tokenizer, saved as a checkpoint directory."""
    from pathlib import Path

    import torch
    from hf_models import copy_tokenizer
    from transformers import AutoModelForCausalLM, AutoTokenizer, Qwen2Config

    copy_tokenizer("qwen3", Path(directory))
    tok = AutoTokenizer.from_pretrained(directory)
    config = Qwen2Config(
        vocab_size=max(shape["vocab"], len(tok)),
        hidden_size=shape["hidden"],
        intermediate_size=shape["intermediate"],
        num_hidden_layers=shape["layers"],
        num_attention_heads=shape["heads"],
        num_key_value_heads=shape["kv_heads"],
        max_position_embeddings=32768,
        tie_word_embeddings=True,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id,
    )
    torch.manual_seed(seed)
    AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


def train_request(vocab: int, seq_len: int, batch: int, microbatches: int, old_logprobs) -> dict:
    """A train_step on random tokens: the first quarter prompt, the rest targets, +-1 advantages."""
    import numpy as np

    from arl_trainer.framing import Ragged

    rng = np.random.default_rng(0)
    prompt = max(1, seq_len // 4)
    mask = np.zeros(seq_len, dtype=np.uint8)
    mask[prompt:] = 1
    L = float(mask.sum())
    groups = (batch + 1) // 2
    return {
        "ids": Ragged.from_sequences([rng.integers(8, vocab, size=seq_len).astype(np.int32) for _ in range(batch)], "int32"),
        "loss_mask": Ragged.from_sequences([mask] * batch, "uint8"),
        "advantages": Ragged.from_sequences([np.full(seq_len, 1.0 if i % 2 else -1.0, dtype=np.float32) for i in range(batch)], "float32"),
        "old_logprobs": old_logprobs,
        "ref_logprobs": None,
        "groups": np.arange(batch, dtype=np.int32) // 2,
        "reduction": {"mode": "token_mean"},
        "denominators": {
            "tokens": L * batch,
            "sequences": float(batch),
            "groups": float(groups),
            "group_tokens": np.full(groups, 2 * L),
            "sequence_tokens": np.full(batch, L),
        },
        "microbatches": microbatches,
        "clip": {"low": 0.2, "high": 0.28, "dual": 3.0},
        "kl": {"coef": 0.0, "estimator": "k3", "placement": "loss"},
        "sampling": None,
        "critic": None,
    }


def configure_params(model_dir: str, device: str) -> dict:
    return {
        "seed": 0,
        "policy": {"model": model_dir, "chat_template": None, "sampling": {"temperature": 1.0, "top_p": 1.0, "top_k": 0, "max_new_tokens": 16}},
        "algorithm": {
            "optimizer": {"name": "adamw", "lr": 1e-6, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.01, "grad_clip": 1.0, "warmup_steps": 0},
            "kl": {"coef": 0.0, "estimator": "k3", "placement": "loss", "reference": None},
            "critic": None,
        },
        "vocabulary": None,
        "options": {"precision": "bf16" if device == "cuda" else "fp32", "dtype": "float32"},
    }


@contextlib.contextmanager
def sampler_clock(sync):
    """Times each call of generate's sampler (synchronised on each side, so on a GPU the calls no
    longer overlap the model's queued work): yields {"s": seconds spent in it so far}."""
    import arl_trainer.generate as generate_module

    sample = generate_module.sample
    spent = {"s": 0.0}

    def timed(*a):
        sync()
        t0 = time.perf_counter()
        out = sample(*a)
        sync()
        spent["s"] += time.perf_counter() - t0
        return out

    generate_module.sample = timed
    try:
        yield spent
    finally:
        generate_module.sample = sample


def main(argv=None) -> int:
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    out_file = os.path.join(args.out, f"hf-bench-{args.label}.json")
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("hf_gpu_bench: CUDA is not available (for a CPU smoke run: --device cpu --shape tiny)", file=sys.stderr)
        return 2
    import numpy as np

    from arl_trainer.distributed import init_from_env
    from arl_trainer.framing import Ragged
    from arl_trainer.trainer import Trainer

    dist = init_from_env(args.device)
    # one directory for all ranks of this machine (DTensor numel() below is the global count)
    model_dir = os.path.join(args.work or tempfile.gettempdir(), f"arl-hf-bench-{args.shape}")
    if dist.is_main and not os.path.exists(os.path.join(model_dir, "config.json")):
        write_model(model_dir, SHAPES[args.shape])
    dist.barrier()
    trainer = Trainer(dist)
    t0 = time.perf_counter()
    conf = trainer.configure(configure_params(model_dir, args.device))
    load_s = time.perf_counter() - t0
    lm = trainer.state.conf.weights.handle.module
    mc = lm.config
    n_matmul = sum(m.weight.numel() for m in lm.modules() if isinstance(m, torch.nn.Linear))
    d_attn = mc.num_attention_heads * (getattr(mc, "head_dim", None) or mc.hidden_size // mc.num_attention_heads)
    flops_tok = train_flops_per_token(n_matmul, mc.num_hidden_layers, args.seq_len, d_attn)
    vocab = conf["tokenizer"]["vocab_size"]
    device = dist.device

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    probe = train_request(vocab, args.seq_len, args.batch, args.microbatches, None)
    old = trainer.logprobs({"ids": probe["ids"], "policy": "current", "sampling": None})
    req = {**probe, "old_logprobs": old["logprobs"] if old else Ragged.from_sequences([np.zeros(args.seq_len, np.float32)] * args.batch, "float32")}
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    first = trainer.train_step(req)
    for _ in range(args.warmup - 1):
        trainer.train_step(req)
    sync()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        last = trainer.train_step(req)
    sync()
    step_s = (time.perf_counter() - t0) / args.steps
    tokens_per_s = args.batch * args.seq_len / step_s
    result = {
        "status": "ok",
        "label": args.label,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "parallel": dist.strategy,
        "world_size": dist.world_size,
        "shape": args.shape,
        "parameters": conf["model"]["parameters"],
        "parameters_matmul": n_matmul,
        "load_s": round(load_s, 2),
        "seq_len": args.seq_len,
        "batch": args.batch,
        "microbatches": args.microbatches,
        "flops_per_token": flops_tok,
        "train_step_s": round(step_s, 4),
        "train_tokens_per_s": round(tokens_per_s, 1),
        "train_tflops": round(tokens_per_s * flops_tok / 1e12, 2),
        "peak_tflops": args.peak_tflops,
        "mfu": round(mfu(tokens_per_s, flops_tok, args.peak_tflops), 4),
        "first_step": {k: first[k] for k in ("loss", "grad_norm", "tokens")},
        "last_step": {k: last[k] for k in ("loss", "grad_norm", "tokens")},
    }
    if args.gen_tokens > 0:
        rng = np.random.default_rng(1)
        prompts = Ragged.from_sequences([rng.integers(8, vocab, size=args.prompt_len).astype(np.int32) for _ in range(args.gen_batch)], "int32")
        seeds = np.arange(args.gen_batch, dtype=np.int32)
        gen = {"prompts": prompts, "temperature": 1.0, "top_p": 1.0, "top_k": 0, "stop_ids": [], "seeds": seeds, "policy": "current"}
        trainer.generate({**gen, "max_new_tokens": 4})  # warm-up: kernels and caches
        sync()
        t0 = time.perf_counter()
        trainer.generate({**gen, "max_new_tokens": args.gen_tokens})
        sync()
        gen_s = time.perf_counter() - t0
        result.update({"gen_batch": args.gen_batch, "prompt_len": args.prompt_len, "gen_tokens": args.gen_tokens, "gen_s": round(gen_s, 3)})
        result["gen_tokens_per_s"] = round(args.gen_batch * args.gen_tokens / gen_s, 1)
        # the sampler's share from a second call: its clock synchronises, which the first must not
        with sampler_clock(sync) as sampler:
            t0 = time.perf_counter()
            trainer.generate({**gen, "max_new_tokens": args.gen_tokens})
            sync()
            result["gen_sampler_share"] = round(sampler["s"] / (time.perf_counter() - t0), 3)
    if device.type == "cuda":
        result["peak_memory_gib"] = round(torch.cuda.max_memory_allocated(device) / 2**30, 2)
    if dist.is_main:
        with open(out_file, "w") as f:
            json.dump(result, f, indent=2)
        print(json.dumps(result, indent=2))
    if dist.world_size > 1 or dist.strategy == "fsdp":
        import torch.distributed as tdist

        dist.barrier()
        tdist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
