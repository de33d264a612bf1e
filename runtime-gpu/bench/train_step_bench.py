#!/usr/bin/env python3
"""Train-step throughput of arl_trainer against the bare model, and MFU.

Measures, in one run on one device:
  1. a bare bf16 matmul (8192^3 on CUDA): the achievable matmul FLOP/s of this device;
  2. arl_trainer's train_step (the protocol method, called in-process) on a randomly initialised
     Qwen2-style model, bf16 autocast with fp32 master weights, sequences of --seq-len tokens;
  3. the same model's bare loop: forward, cross-entropy on every position, backward, AdamW step,
     with the same microbatching.

FLOP count (stated in the output): per processed token, 6 * N_matmul (forward + backward of
every Linear layer, including the output head; the embedding lookup is not a matmul) plus causal
attention, 6 * layers * seq_len * d_attn (QK^T and AV, forward 2 * 2 * T/2 * d per layer, times 3
for forward + backward). The PaLM-style count with non-causal attention (12 * layers * T * d) is
reported too. The trainer applies the output head only to target tokens, so it does somewhat
fewer FLOPs than counted; MFU uses the standard count for both loops.

MFU = achieved FLOP/s / 989 TFLOP/s (H200 dense bf16 peak), and / the measured bare matmul rate.
Writes bench-result.json and bench-result.txt under $OUT (or ./bench-out, or --out).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

H200_BF16_DENSE_PEAK = 989e12

CONFIGS = {
    # ~0.5B parameters (computed and printed): Qwen2-style GQA, tied embeddings
    "0.5b": dict(hidden=1024, layers=24, heads=16, kv_heads=2, intermediate=4096, vocab=151936),
    "tiny": dict(hidden=32, layers=2, heads=4, kv_heads=2, intermediate=64, vocab=64),
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--config", choices=sorted(CONFIGS), default="0.5b")
    for k in ("hidden", "layers", "heads", "kv_heads", "intermediate", "vocab"):
        p.add_argument(f"--{k.replace('_', '-')}", type=int, default=None, help=f"override the config's {k}")
    p.add_argument("--seq-len", type=int, default=4096)
    p.add_argument("--batch", type=int, default=8, help="sequences per optimizer step")
    p.add_argument("--microbatches", type=int, default=4, help="gradient-accumulation slices per step")
    p.add_argument("--prompt-frac", type=float, default=0.25, help="leading fraction of each sequence that is prompt (loss_mask 0)")
    p.add_argument("--steps", type=int, default=5, help="timed steps per loop")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps per loop")
    p.add_argument("--gradient-checkpointing", action="store_true")
    p.add_argument("--compile", action="store_true", help="torch.compile the decoder layers (torch >= 2.2)")
    p.add_argument("--out", default=None, help="output directory (default: $OUT, else ./bench-out)")
    return p.parse_args(argv)


def out_dir(args) -> str:
    d = args.out or os.environ.get("OUT") or os.path.join(os.getcwd(), "bench-out")
    os.makedirs(d, exist_ok=True)
    return d


def write(d: str, result: dict) -> None:
    with open(os.path.join(d, "bench-result.json"), "w") as f:
        json.dump(result, f, indent=2)
    lines = [f"{k}: {v}" for k, v in result.items() if not isinstance(v, dict)]
    for k, v in result.items():
        if isinstance(v, dict):
            lines.append(f"{k}:")
            lines += [f"  {kk}: {vv}" for kk, vv in v.items()]
    with open(os.path.join(d, "bench-result.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def matmul_rate(torch, device) -> float:
    n = 8192 if device.type == "cuda" else 256
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    sync(torch, device)
    iters = 30 if device.type == "cuda" else 5
    t0 = time.perf_counter()
    for _ in range(iters):
        a @ b
    sync(torch, device)
    return 2 * n**3 * iters / (time.perf_counter() - t0)


def main(argv=None) -> int:
    args = parse_args(argv)
    d = out_dir(args)
    try:
        import torch
    except ImportError:
        msg = "PyTorch is not installed; install PyTorch: pip install -r runtime-gpu/requirements.txt"
        write(d, {"status": "no_torch", "message": msg})
        print(msg, file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        msg = "CUDA is not available: this benchmark needs a GPU (for a CPU smoke run: --device cpu --config tiny --seq-len 64 --steps 2)"
        write(d, {"status": "no_cuda", "message": msg, "torch": torch.__version__})
        print(msg, file=sys.stderr)
        return 2

    import numpy as np

    from arl_trainer.distributed import Dist
    from arl_trainer.framing import Ragged
    from arl_trainer.trainer import Trainer

    device = torch.device("cuda", 0) if args.device == "cuda" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = True
    cfg = dict(CONFIGS[args.config])
    for k in list(cfg):
        v = getattr(args, k)
        if v is not None:
            cfg[k] = v
    spec = "builtin:tiny?" + "&".join(f"{k}={v}" for k, v in cfg.items()) + "&tie=1"
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    result: dict = {"status": "ok", "device": device_name, "torch": torch.__version__, "model_spec": spec}

    peak_matmul = matmul_rate(torch, device)
    result["bare_matmul_tflops"] = round(peak_matmul / 1e12, 2)

    trainer = Trainer(Dist(device=device))
    options = {"precision": "bf16" if device.type == "cuda" else "fp32", "gradient_checkpointing": args.gradient_checkpointing, "compile": args.compile}
    conf = trainer.configure(
        {
            "seed": 0,
            "policy": {"model": spec, "chat_template": None, "sampling": {"temperature": 1.0, "top_p": 1.0, "top_k": 0, "max_new_tokens": 16}},
            "algorithm": {
                "optimizer": {"name": "adamw", "lr": 1e-6, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.01, "grad_clip": 1.0, "warmup_steps": 0},
                "kl": {"coef": 0.0, "estimator": "k3", "placement": "loss", "reference": None},
                "critic": None,
            },
            "vocabulary": None,
            "options": options,
        }
    )
    model = trainer.state.conf.weights.handle.module
    n_params = conf["model"]["parameters"]
    n_matmul = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    mc = model.config
    d_attn = mc.num_attention_heads * mc.head_dim
    T = args.seq_len
    flops_tok = 6 * n_matmul + 6 * mc.num_hidden_layers * T * d_attn
    flops_tok_palm = 6 * n_matmul + 12 * mc.num_hidden_layers * T * d_attn
    result.update(
        {
            "parameters": n_params,
            "parameters_matmul": n_matmul,
            "config": {
                "hidden": mc.hidden_size,
                "layers": mc.num_hidden_layers,
                "heads": mc.num_attention_heads,
                "kv_heads": mc.num_key_value_heads,
                "intermediate": mc.intermediate_size,
                "vocab": mc.vocab_size,
                "tied": mc.tie_word_embeddings,
            },
            "seq_len": T,
            "batch_sequences": args.batch,
            "microbatches": args.microbatches,
            "tokens_per_step": args.batch * T,
            "flop_count": "per token 6*N_matmul + 6*layers*seq_len*d_attn (causal attention, fwd+bwd); palm variant: 12*layers*seq_len*d_attn",
            "flops_per_token": flops_tok,
        }
    )

    rng = np.random.default_rng(0)
    V = mc.vocab_size
    prompt = max(1, int(T * args.prompt_frac))
    seqs = [rng.integers(8, V, size=T).astype(np.int32) for _ in range(args.batch)]
    ids = Ragged.from_sequences(seqs, "int32")
    mask = np.zeros(T, dtype=np.uint8)
    mask[prompt:] = 1
    masks = Ragged.from_sequences([mask] * args.batch, "uint8")
    old = trainer.logprobs({"ids": ids, "policy": "current", "sampling": None})["logprobs"]
    adv = Ragged.from_sequences([np.full(T, 1.0 if i % 2 else -1.0, dtype=np.float32) for i in range(args.batch)], "float32")
    L = float(mask.sum())
    step = {
        "ids": ids,
        "loss_mask": masks,
        "advantages": adv,
        "old_logprobs": old,
        "ref_logprobs": None,
        "groups": np.arange(args.batch, dtype=np.int32) // 2,
        "reduction": {"mode": "token_mean"},
        "denominators": {
            "tokens": L * args.batch,
            "sequences": float(args.batch),
            "groups": float((args.batch + 1) // 2),
            "group_tokens": np.full((args.batch + 1) // 2, 2 * L),
            "sequence_tokens": np.full(args.batch, L),
        },
        "microbatches": args.microbatches,
        "clip": {"low": 0.2, "high": 0.28, "dual": 3.0},
        "kl": {"coef": 0.0, "estimator": "k3", "placement": "loss"},
        "sampling": None,
        "critic": None,
    }
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)

    def timed(fn, steps, warmup):
        for _ in range(warmup):
            fn()
        sync(torch, device)
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()
        sync(torch, device)
        return (time.perf_counter() - t0) / steps

    last: dict = {}

    def trainer_step():
        last.update(trainer.train_step(step))

    t_trainer = timed(trainer_step, args.steps, args.warmup)

    # the bare loop: same model, same optimizer, same microbatches
    x_all = torch.from_numpy(np.stack(seqs).astype(np.int64)).to(device)
    per_mb = math.ceil(args.batch / args.microbatches)
    opt = trainer.state.conf.optimizers.policy
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else torch.autocast("cpu", enabled=False)

    def bare_step():
        opt.zero_grad(set_to_none=True)
        for s in range(0, args.batch, per_mb):
            x = x_all[s : s + per_mb]
            with autocast:
                logits, _ = model(x)
            loss = torch.nn.functional.cross_entropy(logits[:, :-1].float().reshape(-1, V), x[:, 1:].reshape(-1))
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    t_bare = timed(bare_step, args.steps, args.warmup)

    tokens = args.batch * T
    tps_trainer, tps_bare = tokens / t_trainer, tokens / t_bare
    achieved = tps_trainer * flops_tok
    achieved_bare = tps_bare * flops_tok
    result.update(
        {
            "trainer_step_s": round(t_trainer, 4),
            "trainer_tokens_per_s": round(tps_trainer, 1),
            "bare_step_s": round(t_bare, 4),
            "bare_tokens_per_s": round(tps_bare, 1),
            "ratio_trainer_over_bare": round(tps_trainer / tps_bare, 4),
            "trainer_tflops": round(achieved / 1e12, 2),
            "bare_tflops": round(achieved_bare / 1e12, 2),
            "mfu_vs_989": round(achieved / H200_BF16_DENSE_PEAK, 4),
            "mfu_vs_measured_matmul": round(achieved / peak_matmul, 4),
            "bare_mfu_vs_989": round(achieved_bare / H200_BF16_DENSE_PEAK, 4),
            "mfu_vs_989_palm_count": round(tps_trainer * flops_tok_palm / H200_BF16_DENSE_PEAK, 4),
            "goals": {"mfu_vs_989>=0.45": achieved / H200_BF16_DENSE_PEAK >= 0.45, "ratio>=0.95": tps_trainer / tps_bare >= 0.95},
            "last_train_step": {k: v for k, v in last.items() if isinstance(v, (int, float)) or v is None},
        }
    )
    if device.type == "cuda":
        result["peak_memory_gib"] = round(torch.cuda.max_memory_allocated(device) / 2**30, 2)
    if device.type != "cuda":
        result["note"] = "CPU smoke run: MFU figures are against the H200 peak and meaningless here"
    write(d, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
