#!/usr/bin/env python3
"""The GRPO step of TRL's GRPOTrainer, and of a plain PyTorch loop (the compute floor), on the
work that src/bench/peer.ts gives ARL's run loop: the same model directory (a random Qwen3 with
the real tokenizer), the same prompt rows, group size, completion budget, sampling, optimizer,
learning rate and batch. Writes the wall and CPU seconds of each training step as JSON to --out.

    python grpo_side_by_side.py trl|floor --model DIR --data ROWS.jsonl --out RESULT.json [...]

Both score with `number_correct`, the `number` scorer of docs/datasets.md (the last number of the
answer equals the row's answer), so all three score alike. One step is: generate a completion
for each prompt G times, score, group-normalise the rewards, one forward and backward over the
completions, one clipped AdamW step.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def number_correct(answer: str, truth) -> float:
    """1.0 when the last number of `answer` equals `truth` to a relative 1e-9 (the `number` scorer)."""
    found = NUMBER.findall(answer)
    if not found:
        return 0.0
    got, want = float(found[-1].replace(",", "")), float(truth)
    return 1.0 if abs(got - want) <= 1e-9 * max(1.0, abs(want)) else 0.0


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["trl", "floor"])
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True, help="JSON lines with prompt, answer and split (the train rows are used)")
    p.add_argument("--out", required=True)
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


def run_trl(args, rows: list[dict]) -> tuple[list[float], list[float]]:
    # The trainer venv has vLLM installed without its dependencies (requirements-engines.txt, for
    # the protocol tests); TRL imports it whenever it is found. This bench runs TRL without vLLM
    # (use_vllm=False), so it is hidden: None in sys.modules makes find_spec and import see none.
    sys.modules["vllm"] = None
    import tempfile

    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    def reward(completions, answer, **_):
        return [number_correct(c[-1]["content"] if isinstance(c, list) else c, a) for c, a in zip(completions, answer, strict=True)]

    class StepTimes(TrainerCallback):
        def __init__(self):
            self.seconds, self.cpu, self.started = [], [], (0.0, 0.0)

        def on_step_begin(self, *_, **__):
            self.started = (time.perf_counter(), time.process_time())

        def on_step_end(self, *_, **__):
            self.seconds.append(time.perf_counter() - self.started[0])
            self.cpu.append(time.process_time() - self.started[1])

    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": r["prompt"]}], "answer": r["answer"]} for r in rows])
    times = StepTimes()
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
        )
        trainer = GRPOTrainer(model=args.model, reward_funcs=reward, args=config, train_dataset=dataset, callbacks=[times])
        trainer.train()
    return times.seconds, times.cpu


def run_floor(args, rows: list[dict]) -> tuple[list[float], list[float]]:
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
    seconds, cpu = [], []
    for step in range(args.steps):
        started, started_cpu = time.perf_counter(), time.process_time()
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
        rewards = torch.tensor([number_correct(t, batch[i // G]["answer"]) for i, t in enumerate(texts)]).view(-1, G)
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
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        seconds.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return seconds, cpu


def main(argv=None) -> None:
    args = parse_args(argv)
    rows = train_rows(args.data)
    import torch

    seconds, cpu = (run_trl if args.mode == "trl" else run_floor)(args, rows)
    result = {"mode": args.mode, "seconds": seconds, "cpu_seconds": cpu, "threads": torch.get_num_threads()}
    if args.mode == "trl":
        import trl

        result["trl"] = trl.__version__
    Path(args.out).write_text(json.dumps(result))
    print(json.dumps(result))
    if not all(math.isfinite(s) for s in seconds):
        sys.exit(1)


if __name__ == "__main__":
    main()
