#!/usr/bin/env python3
"""The GRPO step of TRL's GRPOTrainer, and of a plain PyTorch loop (the compute floor), on the
work that src/bench/peer.ts gives ARL's run loop: the same model directory (a random Qwen3 with
the real tokenizer), the same prompt rows, group size, completion budget, sampling, optimizer,
learning rate and batch. Writes, for each training step, its wall seconds, the CPU seconds of the
whole process tree, the fraction of groups whose rewards were not all equal and the gradient norm,
as JSON to --out.

    python grpo_side_by_side.py trl|floor --model DIR --data ROWS.jsonl --reward FILE --out RESULT.json [...]

All three sides score with the same file's `compute_score` (--reward: bench/peer_reward.py, which
ARL runs as its veRL verifier). One step is: generate a completion for each prompt G times, score,
group-normalise the rewards, one forward and backward over the completions, one clipped AdamW step.
A step's time runs from the end of the step before to the end of this one (the first from the
start of training), so that TRL's batch fetch and logging are inside it, as ARL's commit is.
TRL runs in float32 without gradient checkpointing, as ARL and the floor do, unless
--trl-defaults leaves both to TRL's own defaults (bf16 autocast where the device has it, and
activation checkpointing).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import resource
import sys
import time
from pathlib import Path


def load_reward(path: str):
    """The `compute_score(data_source, solution_str, ground_truth, extra_info)` of the file, as a function of (text, truth) to the score."""
    spec = importlib.util.spec_from_file_location("peer_reward", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import the reward file {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def score(text: str, truth) -> float:
        result = module.compute_score(None, text, truth, None)
        return float(result["score"] if isinstance(result, dict) else result)

    return score


def tree_cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and of its children that have ended."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["trl", "floor"])
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True, help="JSON lines with prompt, answer and split (the train rows are used)")
    p.add_argument("--reward", required=True, help="a Python file with a veRL-style compute_score (bench/peer_reward.py)")
    p.add_argument("--out", required=True)
    p.add_argument("--trl-defaults", action="store_true", help="trl: leave dtype, bf16 and gradient checkpointing to TRL's defaults")
    p.add_argument("--steps", type=int, default=6, help="training steps (the first is warm-up; all are reported)")
    p.add_argument("--group-size", type=int, default=4)
    p.add_argument("--prompts-per-step", type=int, default=4)
    p.add_argument("--max-new-tokens", type=int, default=16)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def train_rows(path: str) -> list[dict]:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return [r for r in rows if r.get("split", "train") == "train"]


class Steps:
    """Per step: wall seconds since the previous step's end, tree CPU seconds, varied group fraction, gradient norm."""

    def __init__(self):
        self.seconds, self.cpu, self.varied, self.grad_norm = [], [], [], []
        self.mark()

    def mark(self):
        self.last = (time.perf_counter(), tree_cpu_seconds())

    def end(self):
        wall, cpu = self.last
        self.mark()
        self.seconds.append(self.last[0] - wall)
        self.cpu.append(self.last[1] - cpu)


def run_trl(args, rows: list[dict], score) -> Steps:
    # The trainer venv has vLLM installed without its dependencies (requirements-engines.txt, for
    # the protocol tests); TRL imports it whenever it is found. This bench runs TRL without vLLM
    # (use_vllm=False), so it is hidden: None in sys.modules makes find_spec and import see none.
    sys.modules["vllm"] = None
    import tempfile

    import torch
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    def reward(completions, answer, **_):
        return [score(c[-1]["content"] if isinstance(c, list) else c, a) for c, a in zip(completions, answer, strict=True)]

    steps = Steps()

    class StepTimes(TrainerCallback):
        # From the previous step's end (or the start of training) to this one's: the batch fetch
        # before on_step_begin and the previous step's logging after on_step_end are inside.
        def on_train_begin(self, *_, **__):
            steps.mark()

        def on_step_end(self, *_, **__):
            steps.end()

        def on_log(self, _args, _state, _control, logs=None, **__):
            # Logged once a step (logging_steps 1), after on_step_end; the final summary has neither key.
            if logs and "frac_reward_zero_std" in logs:
                steps.varied.append(1.0 - float(logs["frac_reward_zero_std"]))
                steps.grad_norm.append(float(logs.get("grad_norm", math.nan)))

    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": r["prompt"]}], "answer": r["answer"]} for r in rows])
    # The same numerics as ARL and the floor: float32 weights and arithmetic, activations kept.
    same_numerics = {"bf16": False, "fp16": False, "activation_checkpointing": False, "model_init_kwargs": {"dtype": torch.float32}}
    if args.trl_defaults:
        same_numerics = {}
    with tempfile.TemporaryDirectory() as out:
        config = GRPOConfig(
            output_dir=out,
            max_steps=args.steps,
            num_generations=args.group_size,
            # TRL counts the batch in completions: prompts x G, all in one optimizer step.
            per_device_train_batch_size=args.prompts_per_step * args.group_size,
            gradient_accumulation_steps=1,
            steps_per_generation=1,
            num_iterations=1,
            max_completion_length=args.max_new_tokens,
            temperature=args.temperature,
            top_p=1.0,
            top_k=0,
            learning_rate=args.lr,
            lr_scheduler_type="constant",
            weight_decay=0.0,
            adam_beta1=0.9,
            adam_beta2=0.999,
            adam_epsilon=1e-8,
            max_grad_norm=args.grad_clip,
            beta=0.0,
            epsilon=args.clip,
            loss_type="dapo",
            scale_rewards="group",
            use_vllm=False,
            seed=args.seed,
            report_to="none",
            save_strategy="no",
            logging_steps=1,
            disable_tqdm=True,
            use_cpu=True,
            dataloader_num_workers=0,
            **same_numerics,
        )
        trainer = GRPOTrainer(model=args.model, reward_funcs=reward, args=config, train_dataset=dataset, callbacks=[StepTimes()])
        steps.settings = {
            "dtype": str(next(trainer.model.parameters()).dtype).replace("torch.", ""),
            "bf16": bool(config.bf16),
            # transformers' newer name for it (the old one is its deprecated alias), where it has one.
            "gradient_checkpointing": bool(getattr(config, "activation_checkpointing", config.gradient_checkpointing)),
        }
        trainer.train()
    return steps


def run_floor(args, rows: list[dict], score) -> Steps:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(args.seed)
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    eos = tok.convert_tokens_to_ids("<|im_end|>")
    pad = tok.pad_token_id if tok.pad_token_id is not None else eos
    G, T = args.group_size, args.max_new_tokens
    steps = Steps()
    steps.settings = {"dtype": "float32", "bf16": False, "gradient_checkpointing": False}
    for step in range(args.steps):
        batch = [rows[(step * args.prompts_per_step + i) % len(rows)] for i in range(args.prompts_per_step)]
        chats = [[{"role": "user", "content": r["prompt"]}] for r in batch]
        prompts = [tok.apply_chat_template(c, add_generation_prompt=True, tokenize=True, return_dict=False) for c in chats]
        P = max(len(p) for p in prompts)
        # Left-padded, each prompt G times: row i*G+g is prompt i's g-th sample.
        ids = torch.tensor([[pad] * (P - len(p)) + list(p) for p in prompts for _ in range(G)])
        mask = torch.tensor([[0] * (P - len(p)) + [1] * len(p) for p in prompts for _ in range(G)])
        with torch.no_grad():
            position = (mask.cumsum(1) - 1).clamp(min=0)
            out = model(input_ids=ids, attention_mask=mask, position_ids=position, use_cache=True, logits_to_keep=1)
            cache, logits = out.past_key_values, out.logits[:, -1]
            done = torch.zeros(ids.size(0), dtype=torch.bool)
            completion, alive = [], []
            for _ in range(T):
                # Inverse CDF with one uniform a row: one pass over the vocabulary and no random
                # number per token of it (torch.multinomial and the exponential race draw those).
                cdf = torch.softmax(logits / args.temperature, dim=-1).cumsum(-1)
                token = torch.searchsorted(cdf, torch.rand(cdf.size(0), 1) * cdf[:, -1:]).squeeze(1).clamp_(max=cdf.size(1) - 1)
                token = torch.where(done, torch.full_like(token, pad), token)
                completion.append(token)
                alive.append(~done)
                done = done | (token == eos)
                if bool(done.all()):
                    break
                mask = torch.cat([mask, torch.ones_like(mask[:, :1])], 1)
                position = position[:, -1:] + 1
                out = model(input_ids=token[:, None], attention_mask=mask, position_ids=position, past_key_values=cache, use_cache=True)
                cache, logits = out.past_key_values, out.logits[:, -1]
        completion_ids = torch.stack(completion, 1)
        completion_mask = torch.stack(alive, 1).float()
        texts = tok.batch_decode(completion_ids.masked_fill(completion_mask == 0, pad), skip_special_tokens=True)
        rewards = torch.tensor([score(t, batch[i // G]["answer"]) for i, t in enumerate(texts)]).view(-1, G)
        steps.varied.append(float((rewards.std(1) > 0).float().mean()))
        advantages = ((rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4)).view(-1, 1)
        # The step: log-probs of the sampled tokens under the current weights (ratio 1, so the clipped
        # surrogate's gradient is the advantage-weighted log-prob gradient), token mean over the batch.
        full = torch.cat([ids, completion_ids], 1)
        full_mask = torch.cat([(ids != pad) | (torch.arange(P) >= P - 1), completion_mask.bool()], 1).long()
        position = (full_mask.cumsum(1) - 1).clamp(min=0)
        logits = model(input_ids=full, attention_mask=full_mask, position_ids=position, logits_to_keep=completion_ids.size(1) + 1).logits[:, :-1]
        logp = torch.log_softmax(logits / args.temperature, dim=-1).gather(-1, completion_ids[..., None]).squeeze(-1)
        ratio = torch.exp(logp - logp.detach())
        surrogate = torch.minimum(ratio * advantages, ratio.clamp(1 - args.clip, 1 + args.clip) * advantages)
        loss = -(surrogate * completion_mask).sum() / completion_mask.sum()
        loss.backward()
        steps.grad_norm.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)))
        opt.step()
        opt.zero_grad(set_to_none=True)
        steps.end()
    return steps


def main(argv=None) -> None:
    args = parse_args(argv)
    rows = train_rows(args.data)
    score = load_reward(args.reward)
    import torch

    steps = (run_trl if args.mode == "trl" else run_floor)(args, rows, score)
    result = {
        "mode": args.mode,
        "seconds": steps.seconds,
        "cpu_seconds": steps.cpu,
        "varied_group_ratio": steps.varied,
        "grad_norm": steps.grad_norm,
        "settings": steps.settings,
        "threads": torch.get_num_threads(),
    }
    if args.mode == "trl":
        import trl

        result["trl"] = trl.__version__
    Path(args.out).write_text(json.dumps(result))
    print(json.dumps(result))
    if not all(math.isfinite(s) for s in steps.seconds):
        sys.exit(1)


if __name__ == "__main__":
    main()
