"""The trainer: model, tokenizer, optimizers, and one method per protocol request.

Alignment conventions (all ragged arrays of a request are aligned with `ids`):
  * logprobs[k] = log p(ids[k] | ids[:k]); position 0 has no prediction and is 0.
  * train_step: loss_mask[k] = 1 makes token k a target; its log-prob comes from the logits at
    position k-1 (next-token shift). advantages[k], old_logprobs[k], ref_logprobs[k] belong to
    token k; loss_mask[0] must be 0.
  * values[k] = V(h_k), the value head on the hidden state at position k (context ids[:k+1]).
  * train_step critic: returns[k] and old_values[k] belong to target token k (loss_mask[k] = 1):
    the value regressed is that of the state in which token k was chosen, V(h_{k-1}), i.e. what
    `values` reports at position k-1.
"""
from __future__ import annotations

import copy
import json
import logging
import math
import os
import platform
import random
import shutil
import time
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn as nn

from . import __version__, conformance, losses, safetensors_io
from .distributed import Dist
from .framing import Ragged
from .model import DTYPES, HFHandle, LMHandle, Qwen2Config, build_plain, count_parameters, load_pretrained, make_value_model, parse_builtin
from .sampling import SamplingParams, sample, token_logprobs
from .tokenizer import HFTokenizer, WordTokenizer

log = logging.getLogger("arl_trainer")

PROTOCOL = "arl-trainer"
VERSION = 1
METHODS = ["handshake", "configure", "encode", "decode", "generate", "logprobs", "values", "train_step", "snapshot", "save", "load", "eval_op", "shutdown"]
CHECKPOINT_FORMAT = "arl-trainer-checkpoint"


class RequestError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def invalid(message: str) -> RequestError:
    return RequestError("invalid_request", message)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


class PolicyForward(nn.Module):
    """The module that is wrapped for data parallelism: LM forward returning logits, at the selected
    flat positions (row * T + position) when `select` is given, plus the KV cache when asked."""

    def __init__(self, handle: LMHandle) -> None:
        super().__init__()
        self.lm = handle.module
        self._handle = handle

    def forward(self, input_ids, select=None, attention_mask=None, position_ids=None, past=None, use_cache=False):
        h, present = self._handle.hidden(self.lm, input_ids, attention_mask, position_ids, past, use_cache)
        if select is not None:
            h = h.reshape(-1, h.shape[-1]).index_select(0, select)
        logits = self._handle.head(self.lm, h)
        return (logits, present) if use_cache else logits


def _layers_of(module: nn.Module) -> list[nn.Module]:
    for path in ("model.layers", "base_model.layers", "transformer.h", "trunk.layers"):
        obj: Any = module
        try:
            for part in path.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            continue
        if isinstance(obj, nn.ModuleList):
            return list(obj)
    return []


@dataclass
class Optim:
    lr: float = 1e-6
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.01
    grad_clip: float | None = 1.0
    warmup_steps: int = 0

    @classmethod
    def from_message(cls, obj: Any, default_lr: float = 1e-6) -> "Optim":
        obj = obj or {}
        if obj.get("name", "adamw") != "adamw":
            raise RequestError("unsupported", f"optimizer '{obj.get('name')}' is not supported (adamw)")
        betas = obj.get("betas", [0.9, 0.999])
        return cls(
            lr=float(obj.get("lr", default_lr)),
            betas=(float(betas[0]), float(betas[1])),
            eps=float(obj.get("eps", 1e-8)),
            weight_decay=float(obj.get("weight_decay", 0.01)),
            grad_clip=None if obj.get("grad_clip", 1.0) is None else float(obj.get("grad_clip", 1.0)),
            warmup_steps=int(obj.get("warmup_steps", 0)),
        )

    def make(self, params) -> torch.optim.Optimizer:
        return torch.optim.AdamW(params, lr=self.lr, betas=self.betas, eps=self.eps, weight_decay=self.weight_decay)

    def lr_at(self, step: int, peak: float | None = None) -> float:
        """The rate of optimizer step `step`; `peak` replaces the configured rate (train_step's `lr`)."""
        lr = self.lr if peak is None else peak
        if self.warmup_steps > 0 and step < self.warmup_steps:
            return lr * (step + 1) / self.warmup_steps
        return lr


def _step_lr(params: dict) -> float | None:
    """train_step's optional `lr`: a positive finite peak rate for this step, or None."""
    lr = params.get("lr")
    if lr is None:
        return None
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr) or lr <= 0:
        raise invalid(f"lr must be a positive finite number or null, got {lr!r}")
    return float(lr)


def _ragged(params: dict, key: str, dtype: str, n: int | None = None, offsets: np.ndarray | None = None, required: bool = True) -> Ragged | None:
    obj = params.get(key)
    if obj is None:
        if required:
            raise invalid(f"'{key}' is missing")
        return None
    try:
        r = Ragged.from_message(obj, key, dtype)
    except ValueError as e:
        raise invalid(str(e)) from None
    if n is not None and len(r) != n:
        raise invalid(f"'{key}' has {len(r)} sequences, expected {n}")
    if offsets is not None and not np.array_equal(r.offsets, offsets):
        raise invalid(f"'{key}' is not aligned with 'ids' (different offsets)")
    return r


def _padded(rows: list[np.ndarray], pad: int, device: torch.device, left: bool = False) -> tuple[torch.Tensor, int]:
    T = max((len(r) for r in rows), default=1) or 1
    out = np.full((len(rows), T), pad, dtype=np.int64)
    for i, r in enumerate(rows):
        if len(r):
            if left:
                out[i, T - len(r) :] = r
            else:
                out[i, : len(r)] = r
    return torch.from_numpy(out).to(device), T


class Trainer:
    def __init__(self, dist: Dist | None = None, options: dict[str, Any] | None = None) -> None:
        self.dist = dist or Dist()
        self.device = self.dist.device
        self.default_options = dict(options or {})
        self.configured = False
        self.policy_version = 0
        self.step = 0
        self.save_count = 0

    # --- handshake ---------------------------------------------------------------------------
    def handshake(self, p: dict) -> dict:
        if p.get("protocol") != PROTOCOL or p.get("version") != VERSION:
            raise RequestError("unsupported", f"this trainer speaks {PROTOCOL} version {VERSION} (asked: {p.get('protocol')} version {p.get('version')})")
        versions = {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__, "arl_trainer": __version__}
        if torch.cuda.is_available():
            versions["cuda"] = str(torch.version.cuda)
            versions["gpu"] = torch.cuda.get_device_name(self.device if self.device.type == "cuda" else 0)
        try:
            import transformers

            versions["transformers"] = transformers.__version__
        except Exception:
            pass
        return {
            "protocol": PROTOCOL,
            "version": VERSION,
            "trainer": {"name": "arl_trainer", "version": __version__},
            "capabilities": {
                "methods": list(METHODS),
                "reductions": list(losses.REDUCTIONS),
                "kl_estimators": list(losses.KL_ESTIMATORS),
                "value_head": True,
                "keep_sampling_mask": True,
                "step_lr": True,
                "world_size": self.dist.world_size,
                "device": self.device.type,
                "parallel": self.dist.strategy,
                "behaviour_policy": True,
            },
            "versions": versions,
        }

    # --- configure ---------------------------------------------------------------------------
    def configure(self, p: dict) -> dict:
        seed = int(p.get("seed", 0) or 0)
        policy = p.get("policy")
        if not isinstance(policy, dict) or not isinstance(policy.get("model"), str):
            raise invalid("policy.model is missing")
        algorithm = p.get("algorithm") or {}
        options = {**self.default_options, **(p.get("options") or {})}
        vocabulary = p.get("vocabulary")
        seed_everything(seed)
        if options.get("deterministic"):
            os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
            torch.use_deterministic_algorithms(True, warn_only=True)
        self.seed = seed
        self.options = options
        self.spec = policy["model"]
        self.chat_template = policy.get("chat_template")
        self.default_sampling = policy.get("sampling") or {}
        on_cuda = self.device.type == "cuda"

        # precision: fp32 master weights; bf16 autocast by default on CUDA (on CPU only when
        # options.precision asks for it: tests of the autocast path)
        precision = options.get("precision", "bf16" if on_cuda else "fp32")
        if precision not in ("bf16", "fp32"):
            raise invalid("options.precision must be bf16 or fp32")
        self.autocast = precision == "bf16"

        if self.spec.startswith("builtin:"):
            try:
                b = parse_builtin(self.spec)
            except ValueError as e:
                raise invalid(str(e)) from None
            if vocabulary is not None:
                if not isinstance(vocabulary, list):
                    raise invalid("vocabulary must be a list of strings or null")
                tok = WordTokenizer(vocabulary)
                b.config["vocab_size"] = max(tok.vocab_size, int(b.config.get("vocab_size", 0) or 0))
            elif b.config.get("vocab_size"):
                tok = WordTokenizer.synthetic(int(b.config["vocab_size"]))
                b.config["vocab_size"] = max(tok.vocab_size, int(b.config["vocab_size"]))
            else:
                raise invalid(f"model {self.spec} builds its tokenizer from 'vocabulary', which is null (or give vocab=N in the spec)")
            cfg = Qwen2Config(**b.config, bos_token_id=tok.bos_id, eos_token_id=tok.eos_id, pad_token_id=tok.pad_id)
            dtype = DTYPES[b.dtype or "float32"]
            handle = LMHandle(build_plain(cfg, seed, dtype), self.spec)
            self.tokenizer: Any = tok
        else:
            dtype = DTYPES.get(options.get("dtype", "float32"), torch.float32)
            try:
                handle, tok_source = load_pretrained(self.spec, dtype, options)
            except ModuleNotFoundError as e:
                raise RequestError("unsupported", str(e)) from None
            except (OSError, ValueError) as e:
                raise invalid(f"cannot load model '{self.spec}': {e}") from None
            if isinstance(handle, HFHandle):
                self.tokenizer = HFTokenizer(tok_source, bool(options.get("trust_remote_code")))
            else:
                tok = WordTokenizer.load(tok_source) or (WordTokenizer(vocabulary) if vocabulary else None)
                if tok is None:
                    raise invalid(f"{self.spec} has no vocab.json and no vocabulary was given")
                self.tokenizer = tok
        handle.module.to(self.device)
        if options.get("gradient_checkpointing"):
            handle.set_gradient_checkpointing(True)
        if options.get("compile"):
            if hasattr(nn.Module, "compile"):  # torch >= 2.2: in place, parameter names unchanged
                for layer in _layers_of(handle.module):
                    layer.compile()
            else:
                log.warning("options.compile needs torch >= 2.2 (this is %s): ignored", torch.__version__)
        self.handle = handle
        self.dtype = next(handle.module.parameters()).dtype
        self.policy = PolicyForward(handle)
        self.policy.train()

        # reference policy (for KL): a frozen copy of the initial policy
        kl = algorithm.get("kl") or {}
        self.kl_cfg = kl
        ref_spec = kl.get("reference")
        self.ref_refresh = int(ref_spec.get("every")) if isinstance(ref_spec, dict) and ref_spec.get("kind") == "refresh" else None
        self.reference: PolicyForward | None = None
        if ref_spec is not None or float(kl.get("coef", 0) or 0) > 0:
            ref_module = copy.deepcopy(handle.module)
            for q in ref_module.parameters():
                q.requires_grad_(False)
            ref_handle = copy.copy(handle)
            ref_handle.module = ref_module
            self.reference = PolicyForward(ref_handle).eval()

        # behaviour policy (asynchronous rollout): a frozen copy that `snapshot` refreshes and
        # `generate`/`logprobs` with policy "behaviour" read; allocated here when asked (sharded
        # weights need it before wrapping), otherwise at the first snapshot
        self.behaviour: PolicyForward | None = self._frozen_copy(handle) if p.get("behaviour_policy") else None
        self.behaviour_version: int | None = None

        # critic
        critic_cfg = algorithm.get("critic")
        self.critic: nn.Module | None = None
        self.critic_train: nn.Module | None = None
        self.critic_opt = None
        self.critic_optim_cfg = None
        if critic_cfg:
            init = critic_cfg.get("init", "policy")
            if init not in ("policy", "random"):
                raise invalid("critic.init must be policy or random")
            self.critic = make_value_model(handle, init, seed).to(self.device)
            self.critic.train()
            self.critic_optim_cfg = Optim.from_message(critic_cfg.get("optimizer"), 1e-5)
            self.value_clip = critic_cfg.get("value_clip")

        # data parallel wrapping, then optimizers (FSDP2 replaces parameters)
        self.policy_train = self.dist.wrap(self.policy, _layers_of(handle.module))
        if self.reference is not None and self.dist.strategy == "fsdp":
            self.dist.wrap(self.reference, _layers_of(self.reference.lm), trainable=False)
        if self.behaviour is not None and self.dist.strategy == "fsdp":
            self.dist.wrap(self.behaviour, _layers_of(self.behaviour.lm), trainable=False)
        if self.critic is not None:
            self.critic_train = self.dist.wrap(self.critic, _layers_of(self.critic))
            self.critic_opt = self.critic_optim_cfg.make([q for q in self.critic.parameters() if q.requires_grad])
        self.optim_cfg = Optim.from_message(algorithm.get("optimizer"))
        self.opt = self.optim_cfg.make([q for q in self.policy.parameters() if q.requires_grad])

        self.configured = True
        self.policy_version = 0
        self.step = 0
        n_params = count_parameters(handle.module)
        log.info("configured %s: %d parameters, dtype %s, device %s, autocast bf16 %s", self.spec, n_params, self.dtype, self.device, self.autocast)
        tok = self.tokenizer
        return {
            "model": {"name": self.spec, "parameters": n_params},
            "tokenizer": {"vocab_size": tok.vocab_size, "bos_id": tok.bos_id, "eos_id": tok.eos_id, "pad_id": tok.pad_id},
            "policy_version": self.policy_version,
        }

    @staticmethod
    def _frozen_copy(handle: LMHandle) -> PolicyForward:
        """A gradient-free copy of the policy's weights (reference and behaviour slots)."""
        module = copy.deepcopy(handle.module)
        for q in module.parameters():
            q.requires_grad_(False)
        copied = copy.copy(handle)
        copied.module = module
        return PolicyForward(copied).eval()

    @torch.no_grad()
    def snapshot(self, p: dict) -> dict:
        """Copies the current weights into the behaviour slot (PROTOCOL.md, behaviour policy)."""
        self._need_configured()
        if self.behaviour is None:
            if self.dist.strategy == "fsdp":
                raise invalid("with sharded weights the behaviour slot is allocated at configure: send configure.behaviour_policy true")
            self.behaviour = self._frozen_copy(self.handle)
        else:
            for q_b, q in zip(self.behaviour.parameters(), self.policy.parameters()):
                q_b.copy_(q)
        self.behaviour_version = self.policy_version
        return {"policy_version": self.policy_version}

    def _behaviour(self) -> PolicyForward:
        if self.behaviour is None or self.behaviour_version is None:
            raise invalid("no behaviour policy: send snapshot first (or load a checkpoint that has one)")
        return self.behaviour

    def _need_configured(self) -> None:
        if not self.configured:
            raise invalid("configure the trainer first")

    def _autocast(self):
        return torch.autocast(self.device.type, dtype=torch.bfloat16) if self.autocast else nullcontext()

    # --- tokenizer ---------------------------------------------------------------------------
    def encode(self, p: dict) -> dict:
        self._need_configured()
        messages = p.get("messages")
        if not isinstance(messages, list):
            raise invalid("messages must be a list of {role, content}")
        try:
            seqs = self.tokenizer.encode_messages(messages, bool(p.get("add_generation_prompt", False)), self.chat_template)
        except NotImplementedError as e:
            raise RequestError("unsupported", str(e)) from None
        except (ValueError, KeyError, TypeError) as e:
            raise invalid(str(e)) from None
        return {"ids": Ragged.from_sequences(seqs, "int32")}

    def decode(self, p: dict) -> dict:
        self._need_configured()
        ids = _ragged(p, "ids", "int32")
        skip = bool(p.get("skip_special_tokens", False))
        return {"texts": [self.tokenizer.decode(r, skip_special=skip) for r in ids.rows()]}

    def eval_op(self, p: dict) -> dict:
        try:
            return {"output": conformance.eval_op(str(p.get("op")), p.get("input"))}
        except NotImplementedError as e:
            raise RequestError("unsupported", str(e)) from None
        except (ValueError, KeyError, TypeError, IndexError) as e:
            raise invalid(f"eval_op {p.get('op')}: {e}") from None

    # --- inference ---------------------------------------------------------------------------
    def _infers(self) -> bool:
        return self.dist.is_main or self.dist.all_ranks_infer

    def _check_ids(self, ids: Ragged) -> None:
        v = ids.values
        if len(v) and (v.min() < 0 or v.max() >= self.handle.vocab_size):
            raise invalid(f"token ids must lie in [0, {self.handle.vocab_size})")

    def _chunks(self, lengths: np.ndarray, budget: int) -> list[list[int]]:
        """Sequence indices in chunks whose padded size (rows * longest) stays within budget tokens."""
        order = sorted(range(len(lengths)), key=lambda i: (-int(lengths[i]), i))
        chunks: list[list[int]] = []
        cur: list[int] = []
        longest = 0
        for i in order:
            L = max(1, int(lengths[i]))
            if cur and (len(cur) + 1) * max(longest, L) > budget:
                chunks.append(cur)
                cur, longest = [], 0
            cur.append(i)
            longest = max(longest, L)
        if cur:
            chunks.append(cur)
        return chunks

    @torch.no_grad()
    def _sequence_logprobs(self, module: PolicyForward, ids: Ragged, sampling: SamplingParams | None, mask: Ragged | None = None) -> list[np.ndarray]:
        rows = ids.rows()
        wanted = mask.rows() if mask is not None else None
        out: list[np.ndarray] = [np.zeros(len(r), dtype=np.float32) for r in rows]
        budget = int(self.options.get("infer_tokens", 16384))
        for chunk in self._chunks(ids.lengths(), budget):
            sub = [rows[i] for i in chunk]
            x, T = _padded(sub, self.tokenizer.pad_id, self.device)
            select, targets, where = [], [], []
            for r, seq in enumerate(sub):
                m = wanted[chunk[r]] if wanted is not None else None
                for k in range(1, len(seq)):
                    # Only positions the caller reads get the vocabulary projection (PROTOCOL.md).
                    if m is not None and not m[k]:
                        continue
                    select.append(r * T + k - 1)
                    targets.append(int(seq[k]))
                    where.append((chunk[r], k))
            if not select:
                continue
            with self._autocast():
                logits = module(x, torch.tensor(select, device=self.device))
            lp_parts = []
            tgt = torch.tensor(targets, device=self.device)
            for s in range(0, len(select), 4096):
                lp, _ = token_logprobs(logits[s : s + 4096], tgt[s : s + 4096], sampling)
                lp_parts.append(lp)
            lp = torch.cat(lp_parts).float().cpu().numpy()
            for (i, k), v in zip(where, lp):
                out[i][k] = v
        return out

    def logprobs(self, p: dict) -> dict | None:
        self._need_configured()
        ids = _ragged(p, "ids", "int32")
        self._check_ids(ids)
        sampling = self._sampling(p.get("sampling"))
        mask = _ragged(p, "mask", "uint8", len(ids), ids.offsets, required=False)
        which = p.get("policy", "current")
        if which == "reference":
            if self.reference is None:
                raise invalid("no reference policy: configure algorithm.kl.reference (or a KL coefficient > 0)")
            module = self.reference
        elif which == "current":
            module = self.policy
        elif which == "behaviour":
            module = self._behaviour()
        else:
            raise invalid("policy must be current, reference or behaviour")
        if not self._infers():
            return None
        was = module.training
        module.eval()
        try:
            rows = self._sequence_logprobs(module, ids, sampling, mask)
        finally:
            module.train(was)
        return {"logprobs": Ragged.from_sequences(rows, "float32")}

    @torch.no_grad()
    def values(self, p: dict) -> dict | None:
        self._need_configured()
        if self.critic is None:
            raise invalid("no critic: configure algorithm.critic")
        ids = _ragged(p, "ids", "int32")
        self._check_ids(ids)
        if not self._infers():
            return None
        rows = ids.rows()
        out = [np.zeros(len(r), dtype=np.float32) for r in rows]
        self.critic.eval()
        try:
            for chunk in self._chunks(ids.lengths(), int(self.options.get("infer_tokens", 16384))):
                sub = [rows[i] for i in chunk]
                x, T = _padded(sub, self.tokenizer.pad_id, self.device)
                with self._autocast():
                    v = self.critic(x).float().cpu().numpy()
                for r, i in enumerate(chunk):
                    out[i][:] = v[r, : len(sub[r])]
        finally:
            self.critic.train()
        return {"values": Ragged.from_sequences(out, "float32")}

    def _sampling(self, obj: Any) -> SamplingParams | None:
        try:
            return SamplingParams.from_message(obj)
        except (ValueError, TypeError) as e:
            raise invalid(str(e)) from None

    @torch.no_grad()
    def generate(self, p: dict) -> dict | None:
        self._need_configured()
        prompts = _ragged(p, "prompts", "int32")
        self._check_ids(prompts)
        n = len(prompts)
        if np.any(prompts.lengths() == 0):
            raise invalid("every prompt needs at least one token")
        ds = self.default_sampling
        sampling = self._sampling(
            {
                "temperature": p.get("temperature", ds.get("temperature", 1.0)),
                "top_p": p.get("top_p", ds.get("top_p", 1.0)),
                "top_k": p.get("top_k", ds.get("top_k", 0)),
            }
        )
        assert sampling is not None
        max_new = int(p.get("max_new_tokens", ds.get("max_new_tokens", 512)))
        if max_new < 1:
            raise invalid("max_new_tokens must be >= 1")
        stop = {int(s) for s in (p.get("stop_ids") or [])}
        seeds = _seeds(p.get("seeds"), n)
        which = p.get("policy", "current")
        if which == "current":
            module, version = self.policy, self.policy_version
        elif which == "behaviour":
            module, version = self._behaviour(), self.behaviour_version
        else:
            raise invalid("generate samples from the current or behaviour policy")
        if not self._infers():
            return None
        batch = int(self.options.get("generate_batch", 64))
        out_ids: list[list[int]] = [[] for _ in range(n)]
        out_lp: list[list[float]] = [[] for _ in range(n)]
        finish = ["length"] * n
        was = module.training
        module.eval()
        try:
            for start in range(0, n, batch):
                idx = list(range(start, min(n, start + batch)))
                self._generate_chunk(module, prompts, idx, sampling, max_new, stop, seeds, out_ids, out_lp, finish)
        finally:
            module.train(was)
        return {
            "ids": Ragged.from_sequences(out_ids, "int32"),
            "logprobs": Ragged.from_sequences(out_lp, "float32"),
            "finish": finish,
            "policy_version": version,
        }

    def _generate_chunk(self, module, prompts, idx, sampling, max_new, stop, seeds, out_ids, out_lp, finish) -> None:
        rows = [prompts.row(i) for i in idx]
        x, T = _padded(rows, self.tokenizer.pad_id, self.device, left=True)
        b = len(rows)
        mask = torch.zeros(b, T, dtype=torch.long, device=self.device)
        for r, seq in enumerate(rows):
            mask[r, T - len(seq) :] = 1
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        gens = [torch.Generator().manual_seed(int(seeds[i])) for i in idx]
        last = torch.arange(b, device=self.device) * T + (T - 1)
        with self._autocast():
            logits, past = module(x, last, attention_mask=mask, position_ids=pos, use_cache=True)
        next_pos = pos[:, -1] + 1
        active = [True] * b
        for _ in range(max_new):
            tokens, lps = sample(logits, sampling, gens)
            t_list, lp_list = tokens.tolist(), lps.float().tolist()
            for r in range(b):
                if not active[r]:
                    continue
                out_ids[idx[r]].append(int(t_list[r]))
                out_lp[idx[r]].append(float(lp_list[r]))
                if int(t_list[r]) in stop:
                    active[r] = False
                    finish[idx[r]] = "stop"
            if not any(active):
                break
            if all(len(out_ids[idx[r]]) >= max_new for r in range(b) if active[r]):
                break
            feed = tokens.clone()
            for r in range(b):
                if not active[r]:
                    feed[r] = self.tokenizer.pad_id
            mask = torch.cat((mask, torch.ones(b, 1, dtype=mask.dtype, device=self.device)), dim=1)
            with self._autocast():
                logits, past = module(
                    feed[:, None], torch.arange(b, device=self.device), attention_mask=mask, position_ids=next_pos[:, None], past=past, use_cache=True
                )
            next_pos = next_pos + 1

    # --- training ----------------------------------------------------------------------------
    def train_step(self, p: dict) -> dict:
        return self._train_step(p, apply=True)

    def compute_gradients(self, p: dict) -> dict:
        """train_step without clipping and without the optimizer step (tests): the summed
        gradients of the whole step stay in the parameters' .grad."""
        return self._train_step(p, apply=False)

    def _train_step(self, p: dict, apply: bool) -> dict:
        self._need_configured()
        t0 = time.perf_counter()
        ids = _ragged(p, "ids", "int32")
        self._check_ids(ids)
        step_lr = _step_lr(p)
        n = len(ids)
        mask = _ragged(p, "loss_mask", "uint8", n, ids.offsets)
        adv = _ragged(p, "advantages", "float32", n, ids.offsets)
        old = _ragged(p, "old_logprobs", "float32", n, ids.offsets)
        ref = _ragged(p, "ref_logprobs", "float32", n, ids.offsets, required=False)
        for i in range(n):
            if len(mask.row(i)) and mask.row(i)[0]:
                raise invalid(f"sequence {i}: token 0 cannot be a target (nothing predicts it); loss_mask[0] must be 0")
        groups = p.get("groups")
        groups = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64).reshape(-1)
        if len(groups) != n:
            raise invalid(f"groups has {len(groups)} entries for {n} sequences")
        try:
            reduction = losses.Reduction.from_message(p.get("reduction") or {"mode": "token_mean"})
            den = losses.Denominators.from_message(p.get("denominators"), n)
            weights = losses.sequence_weights(reduction, den, groups)
        except ValueError as e:
            raise invalid(str(e)) from None
        L = np.array([float(mask.row(i).astype(np.float64).sum()) for i in range(n)])
        bad = np.nonzero(L != den.sequence_tokens)[0]
        if len(bad):
            i = int(bad[0])
            raise invalid(f"denominators.sequence_tokens[{i}] is {den.sequence_tokens[i]}, but sequence {i} has {L[i]:g} target tokens (sum of its loss_mask)")
        if den.tokens != L.sum() or den.sequences != n:
            # Allowed (the runtime owns the denominators), but usually a bug: say so in the log.
            log.warning("train_step: denominators (tokens %g, sequences %g) differ from this batch (%g target tokens, %d sequences)", den.tokens, den.sequences, L.sum(), n)
        clip = p.get("clip") or {}
        low, high = float(clip.get("low", 0.2)), float(clip.get("high", 0.2))
        dual = None if clip.get("dual") is None else float(clip["dual"])
        if dual is not None and dual <= 1:
            raise invalid("clip.dual must be > 1 (or null)")
        kl = p.get("kl") or {}
        kl_coef = float(kl.get("coef", 0) or 0)
        kl_est = kl.get("estimator", "k3")
        if kl_est not in losses.KL_ESTIMATORS:
            raise invalid(f"kl.estimator must be one of {', '.join(losses.KL_ESTIMATORS)}")
        placement = kl.get("placement", "loss")
        if placement not in losses.KL_PLACEMENTS:
            raise invalid(f"kl.placement must be one of {', '.join(losses.KL_PLACEMENTS)}")
        kl_in_loss = kl_coef > 0 and placement in ("loss", "both")
        if kl_in_loss and ref is None and self.reference is None:
            raise invalid("KL in the loss needs ref_logprobs or a reference policy")
        sampling = self._sampling(p.get("sampling"))
        critic = p.get("critic")
        returns = old_values = None
        value_clip = None
        if critic is not None:
            if self.critic is None:
                raise invalid("train_step has critic data, but no critic is configured (algorithm.critic)")
            returns = _ragged(critic, "returns", "float32", n, ids.offsets)
            old_values = _ragged(critic, "old_values", "float32", n, ids.offsets)
            value_clip = critic.get("value_clip", self.value_clip)
            value_clip = None if value_clip is None else float(value_clip)
        micro = int(p.get("microbatches", 1) or 1)
        if micro < 1:
            raise invalid("microbatches must be >= 1")

        batch = _TrainBatch(ids, mask, adv, old, ref, returns, old_values, weights)
        mine = self.dist.shard(ids.lengths())
        mbs = _split_balanced(mine, ids.lengths(), micro)
        # Statistics stay on the device until the end of the step: no host synchronisation per
        # microbatch (the CPU keeps queueing kernels while the GPU computes).
        acc = _Stats(self.device)

        self.opt.zero_grad(set_to_none=True)
        if self.critic_opt is not None:
            self.critic_opt.zero_grad(set_to_none=True)
        trained = [m for m in (self.policy_train, self.critic_train if returns is not None else None) if m is not None]
        prepared = [self._prepare(batch, mb) for mb in mbs]
        for j, m in enumerate(prepared):
            sync = j == len(prepared) - 1
            with (nullcontext() if sync else self.dist.no_sync(*trained)):
                self._microbatch(acc, batch, m, low, high, dual, kl_coef, kl_est, kl_in_loss, sampling, value_clip)

        stats, rmin, rmax = acc.host()
        stats = self.dist.all_reduce(stats, "sum")
        rmin = float(self.dist.all_reduce(np.array([rmin]), "min")[0])
        rmax = float(self.dist.all_reduce(np.array([rmax]), "max")[0])
        value_loss = float(stats[3]) if returns is not None else None
        if apply and stats[6] == 0:
            # No target token anywhere: no signal. Skip the update (AdamW would still move the
            # weights through decay and momentum); the step still counts.
            log.warning("train_step without target tokens: optimizer step skipped")
            grad_norm = 0.0
            self.step += 1
            self.policy_version += 1
        elif apply:
            grad_norm = self._step(self.opt, self.policy, self.optim_cfg, step_lr)
            if returns is not None and self.critic_opt is not None:
                self._step(self.critic_opt, self.critic, self.critic_optim_cfg)
            self.step += 1
            self.policy_version += 1
            if self.reference is not None and self.ref_refresh and self.step % self.ref_refresh == 0:
                self._refresh_reference()
        else:
            grad_norm = _grad_norm(self.policy)
        count = stats[6]
        policy_loss = -float(stats[0]) + 0.0  # no -0.0
        kl_value = float(stats[1]) if stats[7] > 0 else 0.0
        result = {
            "loss": policy_loss + (kl_coef * kl_value if kl_in_loss else 0.0),
            "policy_loss": policy_loss,
            "kl": kl_value,
            "entropy": float(stats[2] / count) if count else 0.0,
            "clip_fraction": float(stats[4] / count) if count else 0.0,
            "ratio_mean": float(stats[5] / count) if count else 1.0,
            "ratio_min": rmin if count else 1.0,
            "ratio_max": rmax if count else 1.0,
            "grad_norm": grad_norm,
            "tokens": int(count),
            "policy_version": self.policy_version,
        }
        if value_loss is not None:
            result["value_loss"] = value_loss
        log.debug("train_step %d: %d sequences, %d target tokens, %.3fs", self.step, n, int(count), time.perf_counter() - t0)
        return result

    def _prepare(self, batch: "_TrainBatch", mb: list[int]) -> dict[str, Any]:
        """Host work and transfers of one microbatch (all done before any compute, so the compute
        loop never waits on a host-to-device copy). An empty microbatch (a rank with fewer
        sequences than microbatches) becomes a zero-weighted dummy pass."""
        dev = self.device
        if not mb:
            x, _ = _padded([np.array([self.tokenizer.pad_id] * 2)], self.tokenizer.pad_id, dev)
            return {"dummy": True, "x": x, "sel": torch.zeros(1, dtype=torch.long, device=dev)}
        rows = [batch.ids.row(i) for i in mb]
        x, T = _padded(rows, self.tokenizer.pad_id, dev)
        sel, tgt, parts = [], [], {k: [] for k in ("adv", "old", "ref", "ret", "oldv", "w")}
        for r, i in enumerate(mb):
            ks = np.nonzero(batch.mask.row(i))[0]
            if len(ks) == 0:
                continue
            sel.append(r * T + ks - 1)
            tgt.append(batch.ids.row(i)[ks])
            parts["adv"].append(batch.adv.row(i)[ks])
            parts["old"].append(batch.old.row(i)[ks])
            if batch.ref is not None:
                parts["ref"].append(batch.ref.row(i)[ks])
            if batch.returns is not None:
                parts["ret"].append(batch.returns.row(i)[ks])
                parts["oldv"].append(batch.old_values.row(i)[ks])
            parts["w"].append(np.full(len(ks), batch.weights[i], dtype=np.float64))
        cd = torch.float64 if self.dtype == torch.float64 else torch.float32

        def dev_cat(chunks, dtype):
            arr = np.concatenate(chunks) if chunks else np.zeros(0)
            return torch.from_numpy(np.ascontiguousarray(arr)).to(dev).to(dtype)

        out: dict[str, Any] = {"dummy": False, "x": x, "n": int(sum(len(a) for a in sel))}
        out["sel"] = dev_cat(sel, torch.long)
        out["tgt"] = dev_cat(tgt, torch.long)
        for k in parts:
            out[k] = dev_cat(parts[k], cd) if parts[k] else None
        if out["w"] is None:
            out["w"] = torch.zeros(0, dtype=cd, device=dev)
            out["adv"] = out["old"] = out["w"]
        return out

    def _microbatch(self, acc: "_Stats", batch: "_TrainBatch", m: dict[str, Any], low, high, dual, kl_coef, kl_est, kl_in_loss, sampling, value_clip) -> None:
        scale = self.dist.grad_scale
        x, sel = m["x"], m["sel"]
        with_critic = batch.returns is not None and self.critic_train is not None
        if m["dummy"]:
            with self._autocast():
                dummy = self.policy_train(x, sel).sum() * 0.0
            dummy.backward()
            if with_critic:
                with self._autocast():
                    dv = self.critic_train(x, sel).sum() * 0.0
                dv.backward()
            return
        n, w, tgt = m["n"], m["w"], m["tgt"]
        with self._autocast():
            logits = self.policy_train(x, sel)
        logp, ent = token_logprobs(logits, tgt, sampling, want_entropy=True)
        u, rho, clipped = losses.surrogate(logp, m["old"], m["adv"], low, high, dual)
        pol = (w * u).sum()
        loss = -pol
        kl_sum = None
        ref_lp = m["ref"]
        if ref_lp is None and kl_in_loss and n:
            with torch.no_grad(), self._autocast():
                ref_logits = self.reference(x, sel)
            ref_lp = token_logprobs(ref_logits, tgt, sampling)[0].to(w.dtype)
        if ref_lp is not None:
            kl_sum = (w * losses.kl_terms(logp, ref_lp, kl_est)).sum()
            if kl_in_loss:
                loss = loss + kl_coef * kl_sum
        (loss * scale).backward()
        with torch.no_grad():
            acc.add(0, pol)
            if kl_sum is not None:
                acc.add(1, kl_sum)
                acc.add(7, n)
            if n:
                acc.add(2, ent.sum())
                acc.add(4, clipped.sum())
                acc.add(5, rho.sum())
                acc.add(6, n)
                acc.ratio(rho)
        if with_critic:
            with self._autocast():
                v = self.critic_train(x, sel)
            vl = (w * losses.value_terms(v.to(w.dtype), m["oldv"], m["ret"], value_clip)).sum() if n else v.sum() * 0.0
            (vl * scale).backward()
            acc.add(3, vl)

    def _step(self, opt: torch.optim.Optimizer, module: nn.Module, cfg: Optim, peak_lr: float | None = None) -> float | None:
        params = [q for q in module.parameters() if q.requires_grad]
        max_norm = cfg.grad_clip if cfg.grad_clip is not None else math.inf
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
        if hasattr(norm, "full_tensor"):
            norm = norm.full_tensor()
        norm_f = float(norm)
        if not math.isfinite(norm_f):
            log.warning("non-finite gradient norm (%s): optimizer step skipped", norm_f)
            opt.zero_grad(set_to_none=True)
            return None
        for g in opt.param_groups:
            g["lr"] = cfg.lr_at(self.step, peak_lr)
        opt.step()
        return norm_f

    @torch.no_grad()
    def _refresh_reference(self) -> None:
        assert self.reference is not None
        for q_ref, q in zip(self.reference.parameters(), self.policy.parameters()):
            q_ref.copy_(q)
        log.info("reference policy refreshed at step %d", self.step)

    # --- checkpoints -------------------------------------------------------------------------
    def _full_state(self, module: nn.Module, prefix: str = "") -> dict[str, torch.Tensor]:
        if self.dist.strategy == "fsdp":
            from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

            sd = get_model_state_dict(module, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
            return {k[len(prefix) :]: v for k, v in sd.items() if k.startswith(prefix)}
        return {k[len(prefix) :]: v for k, v in module.state_dict().items() if k.startswith(prefix)}

    def _policy_tensors(self, module: PolicyForward) -> dict[str, torch.Tensor]:
        sd = self._full_state(module, "lm.")
        tied_names = set(self._tied_names(module.lm))
        return {k: v for k, v in sd.items() if k not in tied_names}

    @staticmethod
    def _tied_names(lm: nn.Module) -> list[str]:
        if getattr(getattr(lm, "config", None), "tie_word_embeddings", False):
            return ["lm_head.weight"]
        return []

    def save(self, p: dict) -> dict:
        self._need_configured()
        path = p.get("path")
        if not isinstance(path, str) or not path:
            raise invalid("save needs a 'path' (a directory)")
        path = os.path.abspath(path)
        parent = os.path.dirname(path)
        self.save_count += 1
        tmp = f"{path}.tmp-arl-{self.save_count}"
        old_dir = f"{path}.old-arl-{self.save_count}"
        policy_sd = self._policy_tensors(self.policy)
        critic_sd = self._full_state(self.critic) if self.critic is not None else None
        ref_sd = self._policy_tensors(self.reference) if self.reference is not None else None
        behaviour_sd = self._policy_tensors(self.behaviour) if self.behaviour is not None and self.behaviour_version is not None else None
        files: list[str] = []
        error: Exception | None = None
        if self.dist.is_main:
            try:
                os.makedirs(parent, exist_ok=True)
                shutil.rmtree(tmp, ignore_errors=True)
                os.makedirs(tmp)
                files = self._write_checkpoint(tmp, policy_sd, critic_sd, ref_sd, behaviour_sd)
            except OSError as e:
                error = e
        error = self._first_error(error)
        if self.dist.strategy == "fsdp" and error is None:
            # sharded optimizer state: one file per rank
            try:
                torch.save(self._optimizer_state(), os.path.join(tmp, f"optimizer.rank{self.dist.rank}.pt"))
            except OSError as e:
                error = e
            error = self._first_error(error)
        if error is None and self.dist.is_main:
            try:
                if os.path.exists(path):
                    os.rename(path, old_dir)
                os.rename(tmp, path)
                shutil.rmtree(old_dir, ignore_errors=True)
                _fsync_dir(parent)
                files = sorted(os.listdir(path))
            except OSError as e:
                error = e
        error = self._first_error(error)
        if error is not None:
            raise invalid(f"cannot save to {path}: {error}")
        return {"files": files, "policy_version": self.policy_version}

    def _first_error(self, error: Exception | None) -> Exception | None:
        errors = self.dist.all_gather_object(None if error is None else str(error))
        for e in errors:
            if e is not None:
                return error or OSError(e)
        return None

    def _optimizer_state(self) -> dict[str, Any]:
        state = {"policy": self.opt.state_dict(), "critic": self.critic_opt.state_dict() if self.critic_opt else None}
        state["rng"] = {
            "python": random.getstate(),
            "numpy": np.random.get_state(),
            "torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        }
        return state

    def _write_checkpoint(self, d: str, policy_sd, critic_sd, ref_sd, behaviour_sd=None) -> list[str]:
        meta = {"format": CHECKPOINT_FORMAT, "format_version": 1, "model": self.spec}
        # transformers insists on metadata format "pt"
        st_meta = {"format": "pt", "arl_format": CHECKPOINT_FORMAT, "model": self.spec}
        safetensors_io.save_file(policy_sd, os.path.join(d, "model.safetensors"), st_meta)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(self.handle.config_json(self.dtype), f, indent=2)
        self.tokenizer.save(d)
        if critic_sd is not None:
            safetensors_io.save_file(critic_sd, os.path.join(d, "critic.safetensors"), st_meta)
        if ref_sd is not None:
            safetensors_io.save_file(ref_sd, os.path.join(d, "reference.safetensors"), st_meta)
        if behaviour_sd is not None:
            safetensors_io.save_file(behaviour_sd, os.path.join(d, "behaviour.safetensors"), st_meta)
        if self.dist.strategy != "fsdp":
            torch.save(self._optimizer_state(), os.path.join(d, "optimizer.pt"))
        trainer = {
            **meta,
            "policy_version": self.policy_version,
            "behaviour_version": self.behaviour_version if behaviour_sd is not None else None,
            "step": self.step,
            "seed": self.seed,
            "world_size": self.dist.world_size,
            "parallel": self.dist.strategy,
            "dtype": str(self.dtype).replace("torch.", ""),
            "torch": torch.__version__,
            "trainer_version": __version__,
            "saved_at": time.time(),
        }
        with open(os.path.join(d, "trainer.json"), "w") as f:
            json.dump(trainer, f, indent=2)
        for name in os.listdir(d):
            with open(os.path.join(d, name), "rb") as f:
                os.fsync(f.fileno())
        return sorted(os.listdir(d))

    def load(self, p: dict) -> dict:
        self._need_configured()
        path = p.get("path")
        if not isinstance(path, str) or not os.path.isdir(path):
            raise invalid(f"load needs the path of a checkpoint directory (got {path!r})")
        try:
            with open(os.path.join(path, "trainer.json")) as f:
                meta = json.load(f)
        except (OSError, ValueError) as e:
            raise invalid(f"{path}: no readable trainer.json ({e})") from None
        if meta.get("format") != CHECKPOINT_FORMAT:
            raise invalid(f"{path}: not a checkpoint of this trainer (format {meta.get('format')!r})")
        try:
            self._load_module(self.policy, safetensors_io.load_file(os.path.join(path, "model.safetensors")), "lm.")
            if self.reference is not None and os.path.exists(os.path.join(path, "reference.safetensors")):
                self._load_module(self.reference, safetensors_io.load_file(os.path.join(path, "reference.safetensors")), "lm.")
            behaviour_file = os.path.join(path, "behaviour.safetensors")
            if meta.get("behaviour_version") is not None and os.path.exists(behaviour_file):
                if self.behaviour is None:
                    if self.dist.strategy == "fsdp":
                        raise ValueError("the checkpoint has a behaviour policy: configure with behaviour_policy true to load it under sharding")
                    self.behaviour = self._frozen_copy(self.handle)
                self._load_module(self.behaviour, safetensors_io.load_file(behaviour_file), "lm.")
                self.behaviour_version = int(meta["behaviour_version"])
            else:
                self.behaviour_version = None
            if self.critic is not None and os.path.exists(os.path.join(path, "critic.safetensors")):
                self._load_module(self.critic, safetensors_io.load_file(os.path.join(path, "critic.safetensors")), "")
            opt_file = os.path.join(path, f"optimizer.rank{self.dist.rank}.pt" if self.dist.strategy == "fsdp" else "optimizer.pt")
            if os.path.exists(opt_file):
                state = _torch_load(opt_file, self.device)
                self.opt.load_state_dict(state["policy"])
                if self.critic_opt is not None and state.get("critic") is not None:
                    self.critic_opt.load_state_dict(state["critic"])
                rng = state.get("rng") or {}
                if rng.get("python") is not None:
                    random.setstate(rng["python"])
                    np.random.set_state(rng["numpy"])
                    torch.set_rng_state(rng["torch"].cpu())
                    if rng.get("cuda") is not None and torch.cuda.is_available():
                        torch.cuda.set_rng_state_all([s.cpu() for s in rng["cuda"]])
        except (ValueError, KeyError) as e:
            raise invalid(f"{path}: {e}") from None
        self.policy_version = int(meta.get("policy_version", 0))
        self.step = int(meta.get("step", 0))
        return {"files": sorted(os.listdir(path)), "policy_version": self.policy_version}

    def _load_module(self, module: nn.Module, tensors: dict[str, torch.Tensor], prefix: str) -> None:
        lm = getattr(module, "lm", None)
        tied = self._tied_names(lm) if lm is not None else []
        full = {prefix + k: v for k, v in tensors.items()}
        for name in tied:
            emb = [k for k in tensors if k.endswith("embed_tokens.weight")]
            if emb and prefix + name not in full:
                full[prefix + name] = tensors[emb[0]]
        if self.dist.strategy == "fsdp":
            from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

            set_model_state_dict(module, full, options=StateDictOptions(full_state_dict=True))
            return
        own = module.state_dict()
        missing = [k for k in own if k not in full]
        unexpected = [k for k in full if k not in own]
        if missing or unexpected:
            raise ValueError(f"checkpoint does not fit the configured model: missing {missing[:4]}, unexpected {unexpected[:4]}")
        with torch.no_grad():
            for k, t in full.items():
                if own[k].shape != t.shape:
                    raise ValueError(f"tensor {k} has shape {tuple(t.shape)} in the checkpoint, {tuple(own[k].shape)} in the model")
                own[k].copy_(t.to(own[k].dtype))

    # --- dispatch ----------------------------------------------------------------------------
    def shutdown(self, p: dict) -> dict:
        return {}

    def handle_request(self, method: str, params: dict) -> Any:
        fn = getattr(self, method, None) if method in METHODS else None
        if fn is None:
            raise RequestError("unsupported", f"method '{method}' is not supported by this trainer")
        if not isinstance(params, dict):
            raise invalid("params must be an object")
        return fn(params)


class _Stats:
    """Sums of a step on the device: policy, kl, entropy, value, clipped, ratio, tokens, kl tokens."""

    def __init__(self, device: torch.device) -> None:
        self.sums = torch.zeros(8, dtype=torch.float64, device=device)
        self.rmin = torch.full((), math.inf, dtype=torch.float64, device=device)
        self.rmax = torch.full((), -math.inf, dtype=torch.float64, device=device)

    def add(self, i: int, value: Any) -> None:
        self.sums[i] += value.detach().double() if isinstance(value, torch.Tensor) else float(value)

    def ratio(self, rho: torch.Tensor) -> None:
        self.rmin = torch.minimum(self.rmin, rho.detach().min().double())
        self.rmax = torch.maximum(self.rmax, rho.detach().max().double())

    def host(self) -> tuple[np.ndarray, float, float]:
        both = torch.cat((self.sums, self.rmin[None], self.rmax[None])).cpu().numpy()
        return both[:8].copy(), float(both[8]), float(both[9])


@dataclass
class _TrainBatch:
    ids: Ragged
    mask: Ragged
    adv: Ragged
    old: Ragged
    ref: Ragged | None
    returns: Ragged | None
    old_values: Ragged | None
    weights: np.ndarray


def _grad_norm(module: nn.Module) -> float:
    total = 0.0
    for q in module.parameters():
        if q.grad is not None:
            g = q.grad.full_tensor() if hasattr(q.grad, "full_tensor") else q.grad
            total += float(g.double().pow(2).sum())
    return math.sqrt(total)


def _split_balanced(indices: list[int], lengths: np.ndarray, parts: int) -> list[list[int]]:
    """`parts` microbatches (some possibly empty) with balanced token counts, deterministic."""
    bins: list[list[int]] = [[] for _ in range(parts)]
    load = [0] * parts
    for i in sorted(indices, key=lambda j: (-int(lengths[j]), j)):
        b = min(range(parts), key=lambda q: (load[q], q))
        bins[b].append(i)
        load[b] += int(lengths[i]) + 1
    return [sorted(b) for b in bins]


def _seeds(obj: Any, n: int) -> list[int]:
    """Seeds as uint32 values: an array, a list, or the {"0": s0, "1": s1, ...} object that
    JSON.stringify makes of a Uint32Array (which the framing does not carry as a typed array)."""
    if obj is None:
        return [0] * n
    if isinstance(obj, dict):
        try:
            values = [obj[str(i)] for i in range(len(obj))]
        except KeyError:
            raise invalid("seeds must be an array with one seed per prompt") from None
    else:
        values = list(np.asarray(obj).reshape(-1).tolist())
    if len(values) != n:
        raise invalid(f"seeds has {len(values)} entries for {n} prompts")
    return [int(v) % (2**32) for v in values]


def _torch_load(path: str, device: torch.device) -> Any:
    """Our own optimizer/RNG state (numpy and Python objects inside): torch >= 2.6 defaults to
    weights_only=True, which refuses them."""
    try:
        return torch.load(path, map_location=device, weights_only=False)
    except TypeError:  # torch without the weights_only argument
        return torch.load(path, map_location=device)


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
