"""What the peer benchmarks' two scripts (grpo_side_by_side.py, single-turn; tool_side_by_side.py,
multi-turn) share, so that TRL and the floor are set up, timed and reported alike in both: the step
clock, TRL's GRPOConfig and step callback, the floor's model, sampler and policy step, and the
result JSON."""

from __future__ import annotations

import json
import math
import resource
import sys
import time
from pathlib import Path


def tree_cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and of its children that have ended."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


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


def add_sampling_and_optimizer_args(p) -> None:
    """The arguments both scripts take after their work's size: sampling temperature, AdamW rate, clip, gradient clip, seed."""
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)


def hide_vllm() -> None:
    # The trainer venv has vLLM installed without its dependencies (requirements-engines.txt, for
    # the protocol tests); TRL imports it whenever it is found. These benches run TRL without vLLM
    # (use_vllm=False), so it is hidden: None in sys.modules makes find_spec and import see none.
    sys.modules["vllm"] = None


def float32_numerics() -> dict:
    """GRPOConfig settings for the same numerics as ARL and the floor: float32 weights and arithmetic, activations kept."""
    import torch

    return {"bf16": False, "fp16": False, "activation_checkpointing": False, "model_init_kwargs": {"dtype": torch.float32}}


def grpo_config(args, output_dir: str, **side):
    """TRL's GRPOConfig for the peer work on CPU; `side` adds the script's completion budget and numerics."""
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=output_dir,
        max_steps=args.steps,
        num_generations=args.group_size,
        # TRL counts the batch in completions: prompts x G, all in one optimizer step.
        per_device_train_batch_size=args.prompts_per_step * args.group_size,
        gradient_accumulation_steps=1,
        steps_per_generation=1,
        num_iterations=1,
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
        **side,
    )


def step_times(steps: Steps):
    """A TrainerCallback that times TRL's steps into `steps` and takes each step's varied fraction and gradient norm from its log."""
    from transformers import TrainerCallback

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

    return StepTimes()


def floor_model(args):
    """The floor's seeded tokenizer, float32 model in training mode and AdamW, and its <|im_end|> and pad ids."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(args.seed)
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    eos = tok.convert_tokens_to_ids("<|im_end|>")
    pad = tok.pad_token_id if tok.pad_token_id is not None else eos
    return tok, model, opt, eos, pad


def sample_turn(model, ids, mask, max_tokens: int, temperature: float, eos: int, take) -> None:
    """Prefills the left-padded `ids` (`mask`), then samples up to `max_tokens` tokens a row until every row has
    given `eos`. `take(token, done)` gets each step's sampled tokens and the rows done before it, and returns the
    tokens fed back (its done rows' tokens may be replaced)."""
    import torch

    with torch.no_grad():
        position = (mask.cumsum(1) - 1).clamp(min=0)
        out = model(input_ids=ids, attention_mask=mask, position_ids=position, use_cache=True, logits_to_keep=1)
        cache, logits = out.past_key_values, out.logits[:, -1]
        done = torch.zeros(ids.size(0), dtype=torch.bool)
        for _ in range(max_tokens):
            # Inverse CDF with one uniform a row: one pass over the vocabulary and no random
            # number per token of it (torch.multinomial and the exponential race draw those).
            cdf = torch.softmax(logits / temperature, dim=-1).cumsum(-1)
            token = torch.searchsorted(cdf, torch.rand(cdf.size(0), 1) * cdf[:, -1:]).squeeze(1).clamp_(max=cdf.size(1) - 1)
            token = take(token, done)
            done = done | (token == eos)
            if bool(done.all()):
                break
            mask = torch.cat([mask, torch.ones_like(mask[:, :1])], 1)
            position = position[:, -1:] + 1
            out = model(input_ids=token[:, None], attention_mask=mask, position_ids=position, past_key_values=cache, use_cache=True)
            cache, logits = out.past_key_values, out.logits[:, -1]


def group_advantages(rewards, steps: Steps):
    """Each group's (a row of `rewards`) normalised rewards as a column; records the fraction of groups whose rewards varied."""
    steps.varied.append(float((rewards.std(1) > 0).float().mean()))
    return ((rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4)).view(-1, 1)


def policy_step(model, opt, logp, advantages, mask, args, steps: Steps) -> None:
    """The clipped surrogate's token mean over `mask`, one clipped AdamW step, and the step's end on the clock.
    The ratio is 1 (on-policy), so the gradient is the advantage-weighted log-prob gradient."""
    import torch

    ratio = torch.exp(logp - logp.detach())
    surrogate = torch.minimum(ratio * advantages, ratio.clamp(1 - args.clip, 1 + args.clip) * advantages)
    loss = -(surrogate * mask).sum() / mask.sum()
    loss.backward()
    steps.grad_norm.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)))
    opt.step()
    opt.zero_grad(set_to_none=True)
    steps.end()


def write_result(args, steps: Steps, threads: int, **extra) -> None:
    """Writes the steps (and `extra`, before the settings) as JSON to --out and stdout; exits 1 when a step's time is not finite."""
    result = {
        "mode": args.mode,
        "seconds": steps.seconds,
        "cpu_seconds": steps.cpu,
        "varied_group_ratio": steps.varied,
        "grad_norm": steps.grad_norm,
        **extra,
        "settings": steps.settings,
        "threads": threads,
    }
    if args.mode == "trl":
        import trl

        result["trl"] = trl.__version__
    Path(args.out).write_text(json.dumps(result))
    print(json.dumps(result))
    if not all(math.isfinite(s) for s in steps.seconds):
        sys.exit(1)
