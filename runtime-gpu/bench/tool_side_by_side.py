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
grpo_side_by_side.py (whose step clock and row reading this reuses). Both compute in float32
without gradient checkpointing, as ARL does.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from grpo_side_by_side import Steps, train_rows
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
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def score(text: str, truth) -> float:
    return float(compute_score(None, text, truth)["score"])


def run_trl(args, rows: list[dict], steps: Steps) -> list[list[dict]]:
    # As in grpo_side_by_side.py: vLLM is installed without its dependencies and not used.
    sys.modules["vllm"] = None
    import tempfile

    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer, chat_template_utils

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

    class StepTimes(TrainerCallback):
        def on_train_begin(self, *_, **__):
            steps.mark()

        def on_step_end(self, *_, **__):
            steps.end()

        def on_log(self, _args, _state, _control, logs=None, **__):
            if logs and "frac_reward_zero_std" in logs:
                steps.varied.append(1.0 - float(logs["frac_reward_zero_std"]))
                steps.grad_norm.append(float(logs.get("grad_norm", math.nan)))

    # The test tokenizer ships an older revision of Qwen3's chat template, which TRL does not
    # recognise (it renders these conversations alike): a user gives TRL its own Qwen3 template,
    # from which it takes the tool-call parser and the prefix-preserving training template.
    tok = AutoTokenizer.from_pretrained(args.model)
    tok.chat_template = chat_template_utils.qwen3_chat_template
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": r["prompt"]}], "answer": r["answer"], "facts": r["facts"]} for r in rows])
    with tempfile.TemporaryDirectory() as out:
        config = GRPOConfig(
            output_dir=out,
            max_steps=args.steps,
            num_generations=args.group_size,
            per_device_train_batch_size=args.prompts_per_step * args.group_size,
            gradient_accumulation_steps=1,
            steps_per_generation=1,
            num_iterations=1,
            # TRL's budget is the whole completion (every turn and tool result): K + 1 turns of
            # turn_tokens, and room for the K results.
            max_completion_length=(args.calls + 1) * args.turn_tokens + args.calls * 24,
            max_tool_calling_iterations=args.calls,
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
            bf16=False,
            fp16=False,
            activation_checkpointing=False,
            model_init_kwargs={"dtype": torch.float32},
        )
        trainer = GRPOTrainer(
            model=args.model,
            reward_funcs=reward,
            args=config,
            train_dataset=dataset,
            processing_class=tok,
            environment_factory=LookupEnv,
            callbacks=[StepTimes()],
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


def run_floor(args, rows: list[dict], steps: Steps) -> list[list[dict]]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(args.seed)
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    eos = tok.convert_tokens_to_ids("<|im_end|>")
    pad = tok.pad_token_id if tok.pad_token_id is not None else eos
    G, T, K = args.group_size, args.turn_tokens, args.calls
    episodes: list[list[dict]] = []

    def generate(contexts: list[list[int]]) -> list[list[int]]:
        """One turn for each context: left-padded, sampled by inverse CDF up to T tokens or <|im_end|>."""
        P = max(len(c) for c in contexts)
        ids = torch.tensor([[pad] * (P - len(c)) + c for c in contexts])
        mask = torch.tensor([[0] * (P - len(c)) + [1] * len(c) for c in contexts])
        with torch.no_grad():
            position = (mask.cumsum(1) - 1).clamp(min=0)
            out = model(input_ids=ids, attention_mask=mask, position_ids=position, use_cache=True, logits_to_keep=1)
            cache, logits = out.past_key_values, out.logits[:, -1]
            done = torch.zeros(len(contexts), dtype=torch.bool)
            turns: list[list[int]] = [[] for _ in contexts]
            for _ in range(T):
                cdf = torch.softmax(logits / args.temperature, dim=-1).cumsum(-1)
                token = torch.searchsorted(cdf, torch.rand(cdf.size(0), 1) * cdf[:, -1:]).squeeze(1).clamp_(max=cdf.size(1) - 1)
                for i in range(len(contexts)):
                    if not done[i]:
                        turns[i].append(int(token[i]))
                done = done | (token == eos)
                if bool(done.all()):
                    break
                mask = torch.cat([mask, torch.ones_like(mask[:, :1])], 1)
                position = position[:, -1:] + 1
                out = model(input_ids=token[:, None], attention_mask=mask, position_ids=position, past_key_values=cache, use_cache=True)
                cache, logits = out.past_key_values, out.logits[:, -1]
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
        steps.varied.append(float((rewards.std(1) > 0).float().mean()))
        advantages = ((rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4)).view(-1, 1)
        # The step: every episode's stream right-padded, the generated tokens the targets.
        L = max(len(s) for s in stream)
        full = torch.tensor([s + [pad] * (L - len(s)) for s in stream])
        attention = torch.tensor([[1] * len(s) + [0] * (L - len(s)) for s in stream])
        targets = torch.tensor([g + [0] * (L - len(g)) for g in generated], dtype=torch.float32)
        start = min(prompt_len)
        logits = model(input_ids=full, attention_mask=attention, logits_to_keep=L - start + 1).logits[:, :-1]
        logp = torch.log_softmax(logits / args.temperature, dim=-1).gather(-1, full[:, start:, None]).squeeze(-1)
        mask = targets[:, start:]
        ratio = torch.exp(logp - logp.detach())
        surrogate = torch.minimum(ratio * advantages, ratio.clamp(1 - args.clip, 1 + args.clip) * advantages)
        loss = -(surrogate * mask).sum() / mask.sum()
        loss.backward()
        steps.grad_norm.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)))
        opt.step()
        opt.zero_grad(set_to_none=True)
        steps.end()
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
    rows = train_rows(args.data)
    import torch

    steps = Steps()
    steps.settings = {"dtype": "float32", "bf16": False, "gradient_checkpointing": False}
    episodes = (run_trl if args.mode == "trl" else run_floor)(args, rows, steps)
    result = {
        "mode": args.mode,
        "seconds": steps.seconds,
        "cpu_seconds": steps.cpu,
        "varied_group_ratio": steps.varied,
        "grad_norm": steps.grad_norm,
        "episodes": episodes,
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
