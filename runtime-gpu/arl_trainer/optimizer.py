"""AdamW configuration (algorithm.optimizer), the warm-up schedule, and one optimizer step with
clipping by the global gradient norm (the twin of src/trainer/embedded/optimizer.ts)."""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn as nn

from .errors import unsupported

log = logging.getLogger("arl_trainer")


@dataclass
class Optim:
    lr: float = 1e-6
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.01
    grad_clip: float | None = 1.0
    warmup_steps: int = 0

    @classmethod
    def from_message(cls, obj: Any, default_lr: float = 1e-6) -> Optim:
        obj = obj or {}
        if obj.get("name", "adamw") != "adamw":
            raise unsupported(f"optimizer '{obj.get('name')}' is not supported (adamw)")
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


def optimizer_step(opt: torch.optim.Optimizer, module: nn.Module, cfg: Optim, step: int, peak_lr: float | None = None) -> float | None:
    """Clips the gradients of `module`, sets the rate of step `step` and steps; returns the norm
    before clipping, or None when it is not finite (the step is skipped and the gradients dropped)."""
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
        g["lr"] = cfg.lr_at(step, peak_lr)
    opt.step()
    return norm_f


def reset_state(opt: torch.optim.Optimizer) -> None:
    """Forgets every step taken: AdamW makes zeroed moments and a step count 0 at the next step, as
    a freshly made optimizer over the same parameters does (the rate is set at every step)."""
    opt.state.clear()


def grad_norm(module: nn.Module) -> float:
    """The global L2 norm of the gradients in `module` (compute_gradients, which does not step)."""
    total = 0.0
    for q in module.parameters():
        if q.grad is not None:
            g = q.grad.full_tensor() if hasattr(q.grad, "full_tensor") else q.grad
            total += float(g.double().pow(2).sum())
    return math.sqrt(total)
