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

import peer_common as common


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
    common.add_sampling_and_optimizer_args(p)
    return p.parse_args(argv)


def run_trl(args, rows: list[dict], score) -> common.Steps:
    common.hide_vllm()
    import tempfile

    from datasets import Dataset
    from trl import GRPOTrainer

    def reward(completions, answer, **_):
        return [score(c[-1]["content"] if isinstance(c, list) else c, a) for c, a in zip(completions, answer, strict=True)]

    steps = common.Steps()
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": r["prompt"]}], "answer": r["answer"]} for r in rows])
    same_numerics = {} if args.trl_defaults else common.float32_numerics()
    with tempfile.TemporaryDirectory() as out:
        config = common.grpo_config(args, out, max_completion_length=args.max_new_tokens, **same_numerics)
        trainer = GRPOTrainer(model=args.model, reward_funcs=reward, args=config, train_dataset=dataset, callbacks=[common.step_times(steps)])
        steps.settings = {
            "dtype": str(next(trainer.model.parameters()).dtype).replace("torch.", ""),
            "bf16": bool(config.bf16),
            # transformers' newer name for it (the old one is its deprecated alias), where it has one.
            "gradient_checkpointing": bool(getattr(config, "activation_checkpointing", config.gradient_checkpointing)),
        }
        trainer.train()
    return steps


def run_floor(args, rows: list[dict], score) -> common.Steps:
    import torch

    tok, model, opt, eos, pad = common.floor_model(args)
    G, T = args.group_size, args.max_new_tokens

    def generate(ids, mask):
        """Each row's completion (pad after its <|im_end|>) and the mask of its tokens up to and including that one."""
        completion, alive = [], []

        def take(token, done):
            token = torch.where(done, torch.full_like(token, pad), token)
            completion.append(token)
            alive.append(~done)
            return token

        common.sample_turn(model, ids, mask, T, args.temperature, eos, take)
        return torch.stack(completion, 1), torch.stack(alive, 1).float()

    steps = common.Steps()
    steps.settings = {"dtype": "float32", "bf16": False, "gradient_checkpointing": False}
    for step in range(args.steps):
        batch = [rows[(step * args.prompts_per_step + i) % len(rows)] for i in range(args.prompts_per_step)]
        chats = [[{"role": "user", "content": r["prompt"]}] for r in batch]
        prompts = [tok.apply_chat_template(c, add_generation_prompt=True, tokenize=True, return_dict=False) for c in chats]
        P = max(len(p) for p in prompts)
        # Left-padded, each prompt G times: row i*G+g is prompt i's g-th sample.
        ids = torch.tensor([[pad] * (P - len(p)) + list(p) for p in prompts for _ in range(G)])
        mask = torch.tensor([[0] * (P - len(p)) + [1] * len(p) for p in prompts for _ in range(G)])
        completion_ids, completion_mask = generate(ids, mask)
        texts = tok.batch_decode(completion_ids.masked_fill(completion_mask == 0, pad), skip_special_tokens=True)
        rewards = torch.tensor([score(t, batch[i // G]["answer"]) for i, t in enumerate(texts)]).view(-1, G)
        advantages = common.group_advantages(rewards, steps)
        # The step: log-probs of the sampled tokens under the current weights (ratio 1, so the clipped
        # surrogate's gradient is the advantage-weighted log-prob gradient), token mean over the batch.
        full = torch.cat([ids, completion_ids], 1)
        full_mask = torch.cat([(ids != pad) | (torch.arange(P) >= P - 1), completion_mask.bool()], 1).long()
        position = (full_mask.cumsum(1) - 1).clamp(min=0)
        logits = model(input_ids=full, attention_mask=full_mask, position_ids=position, logits_to_keep=completion_ids.size(1) + 1).logits[:, :-1]
        logp = torch.log_softmax(logits / args.temperature, dim=-1).gather(-1, completion_ids[..., None]).squeeze(-1)
        common.policy_step(model, opt, logp, advantages, completion_mask, args, steps)
    return steps


def main(argv=None) -> None:
    args = parse_args(argv)
    rows = common.train_rows(args.data)
    score = load_reward(args.reward)
    import torch

    steps = (run_trl if args.mode == "trl" else run_floor)(args, rows, score)
    common.write_result(args, steps, torch.get_num_threads())


if __name__ == "__main__":
    main()
