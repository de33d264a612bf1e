#!/usr/bin/env python3
"""The multi-turn GRPO step of TRL's GRPOTrainer (its `environment_factory`) and of a plain PyTorch
loop (the compute floor), on the work src/bench/peer-tools.ts gives ARL's run loop: an episode is K
calls of the tool `lookup` and then an answer (bench/tool_peer_env.py), from the same cold-started
checkpoint, rows, group size, turn and token budgets, sampling, optimizer and learning rate.
Writes, for each training step, its wall seconds, the CPU seconds of the whole process tree, the
fraction of groups whose rewards were not all equal, the gradient norm, and each episode's
well-formed calls and whether it ended in an answer, as JSON to --out.

    python tool_side_by_side.py trl|floor --model DIR --data ROWS.jsonl --out RESULT.json --calls K [...]

A step's time runs from the end of the step before to the end of this one, as in
grpo_side_by_side.py, whose step clock, TRL settings, sampler, policy step and report this shares
(peer_common.py). Both compute in float32 without gradient checkpointing, as ARL does.
"""

from __future__ import annotations

import argparse
import json
import re

import peer_common as common
from tool_peer_env import TOOL_DEFINITION, LookupEnv, compute_score, lookup_result

CALL = re.compile(r"<tool_call>\s*(\{.*\})\s*</tool_call>", re.S)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["trl", "floor"])
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True, help="JSON lines with prompt, answer, facts and split (the train rows are used)")
    p.add_argument("--out", required=True)
    p.add_argument("--calls", type=int, required=True, help="K: the calls an episode makes before its answer")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--group-size", type=int, default=4)
    p.add_argument("--prompts-per-step", type=int, default=4)
    p.add_argument("--turn-tokens", type=int, default=32, help="new tokens a turn may generate")
    common.add_sampling_and_optimizer_args(p)
    return p.parse_args(argv)


def score(text: str, truth) -> float:
    return float(compute_score(None, text, truth)["score"])


def run_trl(args, rows: list[dict], steps: common.Steps) -> list[list[dict]]:
    common.hide_vllm()
    import tempfile

    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOTrainer, chat_template_utils

    episodes: list[list[dict]] = []

    def reward(completions, answer, environments, **_):
        # An episode's answer is its last assistant message when that one makes no call (TRL parsed
        # the calls with the template's response schema); one still calling when the turns ran out
        # has none and scores 0, as in ARL.
        got, out = [], []
        for messages, truth, env in zip(completions, answer, environments, strict=True):
            last = messages[-1] if messages else {}
            answered = last.get("role") == "assistant" and not last.get("tool_calls")
            got.append({"calls": env.calls, "answered": answered})
            out.append(score(last.get("content") or "", truth) if answered else 0.0)
        episodes.append(got)
        return out

    # The test tokenizer ships an older revision of Qwen3's chat template, which TRL does not
    # recognise (it renders these conversations alike): a user gives TRL its own Qwen3 template,
    # from which it takes the tool-call parser and the prefix-preserving training template.
    tok = AutoTokenizer.from_pretrained(args.model)
    tok.chat_template = chat_template_utils.qwen3_chat_template
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": r["prompt"]}], "answer": r["answer"], "facts": r["facts"]} for r in rows])
    with tempfile.TemporaryDirectory() as out:
        config = common.grpo_config(
            args,
            out,
            # TRL's budget is the whole completion (every turn and tool result): K + 1 turns of
            # turn_tokens, and room for the K results.
            max_completion_length=(args.calls + 1) * args.turn_tokens + args.calls * 24,
            max_tool_calling_iterations=args.calls,
            **common.float32_numerics(),
        )
        trainer = GRPOTrainer(
            model=args.model,
            reward_funcs=reward,
            args=config,
            train_dataset=dataset,
            processing_class=tok,
            environment_factory=LookupEnv,
            callbacks=[common.step_times(steps)],
        )
        trainer.train()
    return episodes


def parsed_call(text: str) -> dict | None:
    """The turn's call when it is one well-formed hermes call: a JSON object with a string name and object arguments."""
    m = CALL.search(text)
    if not m:
        return None
    try:
        value = json.loads(m.group(1))
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not isinstance(value.get("arguments", {}), dict):
        return None
    return value


def run_floor(args, rows: list[dict], steps: common.Steps) -> list[list[dict]]:
    import torch

    tok, model, opt, eos, pad = common.floor_model(args)
    G, T, K = args.group_size, args.turn_tokens, args.calls
    episodes: list[list[dict]] = []

    def generate(contexts: list[list[int]]) -> list[list[int]]:
        """One turn for each context: left-padded, sampled by inverse CDF up to T tokens or <|im_end|>."""
        P = max(len(c) for c in contexts)
        ids = torch.tensor([[pad] * (P - len(c)) + c for c in contexts])
        mask = torch.tensor([[0] * (P - len(c)) + [1] * len(c) for c in contexts])
        turns: list[list[int]] = [[] for _ in contexts]

        def take(token, done):
            for i in range(len(contexts)):
                if not done[i]:
                    turns[i].append(int(token[i]))
            return token

        common.sample_turn(model, ids, mask, T, args.temperature, eos, take)
        return turns

    for step in range(args.steps):
        batch = [rows[(step * args.prompts_per_step + i) % len(rows)] for i in range(args.prompts_per_step)]
        first = [
            tok.apply_chat_template(
                [{"role": "user", "content": r["prompt"]}], tools=[TOOL_DEFINITION], add_generation_prompt=True, tokenize=True, return_dict=False
            )
            for r in batch
        ]
        # Episode e (row e // G): its whole stream, which of it the model generated, and its state.
        stream = [list(first[e // G]) for e in range(len(batch) * G)]
        generated = [[0] * len(s) for s in stream]
        prompt_len = [len(s) for s in stream]
        calls = [0] * len(stream)
        answer: list[str | None] = [None] * len(stream)
        live = list(range(len(stream)))
        for turn in range(K + 1):
            if not live:
                break
            for e, ids in zip(live, generate([stream[e] for e in live]), strict=True):
                stream[e] += ids
                generated[e] += [1] * len(ids)
            still = []
            for e in live:
                text = tok.decode(_turn_ids(stream[e], generated[e]), skip_special_tokens=False).removesuffix("<|im_end|>")
                call = parsed_call(text) if "<tool_call>" in text else None
                if call is None and "<tool_call>" not in text:
                    answer[e] = text
                elif call is not None and turn < K:
                    calls[e] += 1
                    result = lookup_result(batch[e // G]["facts"], call.get("arguments", {}).get("key"))
                    # What the template writes after the turn's <|im_end|>: the tool result and the next generation prompt.
                    suffix = tok(
                        f"\n<|im_start|>user\n<tool_response>\n{result}\n</tool_response><|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False
                    )["input_ids"]
                    stream[e] += suffix
                    generated[e] += [0] * len(suffix)
                    still.append(e)
            live = still
        episodes.append([{"calls": c, "answered": a is not None} for c, a in zip(calls, answer, strict=True)])
        rewards = torch.tensor([score(a, batch[e // G]["answer"]) if a is not None else 0.0 for e, a in enumerate(answer)]).view(-1, G)
        advantages = common.group_advantages(rewards, steps)
        # The step: every episode's stream right-padded, the generated tokens the targets.
        L = max(len(s) for s in stream)
        full = torch.tensor([s + [pad] * (L - len(s)) for s in stream])
        attention = torch.tensor([[1] * len(s) + [0] * (L - len(s)) for s in stream])
        targets = torch.tensor([g + [0] * (L - len(g)) for g in generated], dtype=torch.float32)
        start = min(prompt_len)
        logits = model(input_ids=full, attention_mask=attention, logits_to_keep=L - start + 1).logits[:, :-1]
        logp = torch.log_softmax(logits / args.temperature, dim=-1).gather(-1, full[:, start:, None]).squeeze(-1)
        common.policy_step(model, opt, logp, advantages, targets[:, start:], args, steps)
    return episodes


def _turn_ids(stream: list[int], generated: list[int]) -> list[int]:
    """The ids of the stream's last generated turn (its trailing run of generated tokens)."""
    end = len(stream)
    begin = end
    while begin > 0 and generated[begin - 1]:
        begin -= 1
    return stream[begin:end]


def main(argv=None) -> None:
    args = parse_args(argv)
    rows = common.train_rows(args.data)
    import torch

    steps = common.Steps()
    steps.settings = {"dtype": "float32", "bf16": False, "gradient_checkpointing": False}
    episodes = (run_trl if args.mode == "trl" else run_floor)(args, rows, steps)
    common.write_result(args, steps, torch.get_num_threads(), episodes=episodes)


if __name__ == "__main__":
    main()
