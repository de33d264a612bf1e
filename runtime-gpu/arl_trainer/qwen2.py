"""A Qwen2-style decoder-only transformer in plain torch (the `builtin:` models).

RMSNorm, rotary embeddings in the rotate-half convention, grouped-query attention with q/k/v
biases, SwiGLU MLP, tied or untied embeddings, with the tensor names of transformers'
Qwen2ForCausalLM, so a checkpoint written by the trainer (model.safetensors + config.json) loads
with `Qwen2ForCausalLM.from_pretrained`. It needs torch >= 1.13 only; on torch >= 2.0 attention
goes through `scaled_dot_product_attention` (flash kernels on CUDA). model.py wraps it (and
transformers models) in the handles the trainer uses.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any
from urllib.parse import parse_qsl

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import safetensors_io

_SDPA = getattr(F, "scaled_dot_product_attention", None)
HAS_SDPA = _SDPA is not None

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass
class Qwen2Config:
    vocab_size: int
    hidden_size: int = 64
    intermediate_size: int = 128
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    rms_norm_eps: float = 1e-6
    rope_theta: float = 1_000_000.0
    max_position_embeddings: int = 32768
    tie_word_embeddings: bool = True
    attention_bias: bool = True
    initializer_range: float = 0.02
    bos_token_id: int | None = None
    eos_token_id: int | None = None
    pad_token_id: int | None = None

    def __post_init__(self) -> None:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"hidden_size {self.hidden_size} is not a multiple of num_attention_heads {self.num_attention_heads}")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError("num_attention_heads must be a multiple of num_key_value_heads")
        if (self.hidden_size // self.num_attention_heads) % 2:
            raise ValueError("the head dimension must be even (rotary embeddings)")

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    def to_hf_dict(self, dtype: str = "float32") -> dict[str, Any]:
        d = asdict(self)
        d.pop("attention_bias")
        d.pop("initializer_range")
        d.update(
            {
                "architectures": ["Qwen2ForCausalLM"],
                "model_type": "qwen2",
                "hidden_act": "silu",
                "attention_dropout": 0.0,
                "initializer_range": self.initializer_range,
                "use_cache": True,
                "use_sliding_window": False,
                "sliding_window": None,
                "max_window_layers": self.num_hidden_layers,
                "dtype": dtype,
            }
        )
        return d

    @classmethod
    def from_hf_dict(cls, d: dict[str, Any]) -> Qwen2Config:
        names = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in names}
        if "num_key_value_heads" not in kwargs or kwargs["num_key_value_heads"] is None:
            kwargs["num_key_value_heads"] = d["num_attention_heads"]
        return cls(**kwargs)


PRESETS: dict[str, dict[str, Any]] = {
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2),
    "small": dict(hidden_size=256, intermediate_size=704, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2),
    # The shape of Qwen2-0.5B, randomly initialised.
    "qwen2-0.5b": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2, vocab_size=151936),
}
_SPEC_KEYS = {
    "hidden": ("hidden_size", int),
    "intermediate": ("intermediate_size", int),
    "layers": ("num_hidden_layers", int),
    "heads": ("num_attention_heads", int),
    "kv_heads": ("num_key_value_heads", int),
    "vocab": ("vocab_size", int),
    "rope_theta": ("rope_theta", float),
    "eps": ("rms_norm_eps", float),
    "max_positions": ("max_position_embeddings", int),
    "tie": ("tie_word_embeddings", lambda s: s.lower() in ("1", "true", "yes")),
    "bias": ("attention_bias", lambda s: s.lower() in ("1", "true", "yes")),
}


@dataclass
class BuiltinSpec:
    preset: str
    config: dict[str, Any] = field(default_factory=dict)
    dtype: str | None = None


def parse_builtin(spec: str) -> BuiltinSpec:
    """`builtin:NAME` or `builtin:NAME?layers=2&hidden=32&dtype=float64` (NAME: tiny, small, qwen2-0.5b, qwen2)."""
    body = spec[len("builtin:") :]
    name, _, query = body.partition("?")
    if name == "qwen2":
        name = "tiny"
    if name not in PRESETS:
        raise ValueError(f"unknown builtin model '{name}' (known: {', '.join(sorted(PRESETS))}, qwen2)")
    out = BuiltinSpec(preset=name, config=dict(PRESETS[name]))
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key == "dtype":
            if value not in DTYPES:
                raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got '{value}'")
            out.dtype = value
            continue
        if key not in _SPEC_KEYS:
            raise ValueError(f"unknown builtin model parameter '{key}' (known: dtype, {', '.join(_SPEC_KEYS)})")
        attr, conv = _SPEC_KEYS[key]
        try:
            out.config[attr] = conv(value)
        except ValueError:
            raise ValueError(f"builtin model parameter {key}={value!r} is not a number") from None
    return out


# --- layers -------------------------------------------------------------------------------------


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        h = x.float() if dtype in (torch.float16, torch.bfloat16) else x
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(dtype)


class Rotary(nn.Module):
    def __init__(self, head_dim: int, theta: float) -> None:
        super().__init__()
        self.head_dim = head_dim
        self.theta = theta

    def forward(self, position_ids: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        compute = torch.float64 if dtype == torch.float64 else torch.float32
        d = self.head_dim
        inv_freq = 1.0 / (self.theta ** (torch.arange(0, d, 2, device=position_ids.device, dtype=torch.float64) / d))
        freqs = position_ids.to(compute)[..., None] * inv_freq.to(compute)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype)[:, None], emb.sin().to(dtype)[:, None]  # [B, 1, T, D]


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None, causal: bool) -> torch.Tensor:
    """q [B,H,T,D], k/v [B,H,Tk,D]; mask bool [B,1,T,Tk] (True: attend) or None."""
    if _SDPA is not None:
        return _SDPA(q, k, v, attn_mask=mask, is_causal=causal and mask is None)
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    elif causal:
        T, Tk = q.shape[-2], k.shape[-2]
        upper = torch.ones(T, Tk, dtype=torch.bool, device=q.device).triu(Tk - T + 1)
        scores = scores.masked_fill(upper, float("-inf"))
    probs = torch.softmax(scores.float() if scores.dtype in (torch.float16, torch.bfloat16) else scores, dim=-1)
    return torch.matmul(probs.to(v.dtype), v)


class Attention(nn.Module):
    def __init__(self, cfg: Qwen2Config) -> None:
        super().__init__()
        self.n_heads = cfg.num_attention_heads
        self.n_kv = cfg.num_key_value_heads
        self.head_dim = cfg.head_dim
        h = cfg.hidden_size
        self.q_proj = nn.Linear(h, self.n_heads * self.head_dim, bias=cfg.attention_bias)
        self.k_proj = nn.Linear(h, self.n_kv * self.head_dim, bias=cfg.attention_bias)
        self.v_proj = nn.Linear(h, self.n_kv * self.head_dim, bias=cfg.attention_bias)
        self.o_proj = nn.Linear(self.n_heads * self.head_dim, h, bias=False)

    def forward(self, x, cos, sin, mask, causal, past=None):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv, self.head_dim).transpose(1, 2)
        # Rotary in the precision of cos/sin (fp32 under autocast), then back to the projections'
        # dtype, so that q, k, v agree (bf16 under autocast: flash attention stays eligible).
        q = (q * cos + _rotate_half(q) * sin).to(v.dtype)
        k = (k * cos + _rotate_half(k) * sin).to(v.dtype)
        if past is not None:
            k = torch.cat((past[0], k), dim=2)
            v = torch.cat((past[1], v), dim=2)
        present = (k, v)
        rep = self.n_heads // self.n_kv
        if rep > 1:
            Tk = k.shape[2]
            k = k[:, :, None].expand(B, self.n_kv, rep, Tk, self.head_dim).reshape(B, self.n_heads, Tk, self.head_dim)
            v = v[:, :, None].expand(B, self.n_kv, rep, Tk, self.head_dim).reshape(B, self.n_heads, Tk, self.head_dim)
        out = _attend(q, k, v, mask, causal)
        out = out.transpose(1, 2).reshape(B, T, self.n_heads * self.head_dim)
        return self.o_proj(out), present


class MLP(nn.Module):
    def __init__(self, cfg: Qwen2Config) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg: Qwen2Config) -> None:
        super().__init__()
        self.self_attn = Attention(cfg)
        self.mlp = MLP(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)

    def forward(self, x, cos, sin, mask, causal, past=None):
        a, present = self.self_attn(self.input_layernorm(x), cos, sin, mask, causal, past)
        h = x + a
        return h + self.mlp(self.post_attention_layernorm(h)), present


def _mask(attention_mask: torch.Tensor | None, B: int, T: int, past_len: int, device) -> tuple[torch.Tensor | None, bool]:
    """(bool mask [B,1,T,Tk] or None, causal flag). Every query may attend to itself, so no row is
    fully masked (padding positions produce finite garbage that callers ignore)."""
    Tk = past_len + T
    if attention_mask is None:
        if past_len == 0:
            return None, True
        if T == 1:
            return None, False
        key_ok = torch.ones(B, Tk, dtype=torch.bool, device=device)
    else:
        key_ok = attention_mask.to(device=device, dtype=torch.bool)
    q_pos = torch.arange(past_len, Tk, device=device)[:, None]
    k_pos = torch.arange(Tk, device=device)[None, :]
    allowed = (k_pos <= q_pos)[None] & key_ok[:, None, :]
    allowed = allowed | (k_pos == q_pos)[None]
    return allowed[:, None], False


class Qwen2Model(nn.Module):
    def __init__(self, cfg: Qwen2Config) -> None:
        super().__init__()
        self.config = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.rotary = Rotary(cfg.head_dim, cfg.rope_theta)
        self.gradient_checkpointing = False

    def forward(self, input_ids, attention_mask=None, position_ids=None, past_key_values=None, use_cache=False):
        B, T = input_ids.shape
        past_len = past_key_values[0][0].shape[2] if past_key_values else 0
        if position_ids is None:
            position_ids = torch.arange(past_len, past_len + T, device=input_ids.device)[None].expand(B, T)
        x = self.embed_tokens(input_ids)
        cos, sin = self.rotary(position_ids, x.dtype)
        mask, causal = _mask(attention_mask, B, T, past_len, input_ids.device)
        presents = []
        for i, layer in enumerate(self.layers):
            past = past_key_values[i] if past_key_values else None
            if self.gradient_checkpointing and self.training and not use_cache:
                from torch.utils.checkpoint import checkpoint

                x, present = checkpoint(layer, x, cos, sin, mask, causal, None, use_reentrant=False)
            else:
                x, present = layer(x, cos, sin, mask, causal, past)
            if use_cache:
                presents.append(present)
        return self.norm(x), (presents if use_cache else None)


class Qwen2ForCausalLM(nn.Module):
    def __init__(self, cfg: Qwen2Config) -> None:
        super().__init__()
        self.config = cfg
        self.model = Qwen2Model(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids, attention_mask=None, position_ids=None, past_key_values=None, use_cache=False):
        h, past = self.model(input_ids, attention_mask, position_ids, past_key_values, use_cache)
        return self.lm_head(h), past


def init_weights(module: nn.Module, std: float) -> None:
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=std)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=std)


def build_plain(cfg: Qwen2Config, seed: int, dtype: torch.dtype = torch.float32) -> Qwen2ForCausalLM:
    """Deterministic random initialisation: the same seed gives the same weights on every device."""
    devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(cfg)
        init_weights(model, cfg.initializer_range)
    return model.to(dtype)


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


# --- checkpoints of the plain model --------------------------------------------------------------


def load_state_dict_strict(module: nn.Module, tensors: dict[str, torch.Tensor], tied: bool) -> None:
    own = module.state_dict()
    missing = [k for k in own if k not in tensors and not (tied and k == "lm_head.weight")]
    unexpected = [k for k in tensors if k not in own]
    if missing or unexpected:
        raise ValueError(f"checkpoint does not fit the model: missing {missing[:5]}, unexpected {unexpected[:5]}")
    with torch.no_grad():
        for k, t in tensors.items():
            if own[k].shape != t.shape:
                raise ValueError(f"checkpoint tensor {k} has shape {tuple(t.shape)}, the model has {tuple(own[k].shape)}")
            own[k].copy_(t.to(own[k].dtype))


def is_plain_checkpoint(path: str) -> bool:
    try:
        with open(os.path.join(path, "config.json")) as f:
            cfg = json.load(f)
    except (OSError, ValueError):
        return False
    return cfg.get("model_type") == "qwen2" and os.path.exists(os.path.join(path, "model.safetensors"))


def load_plain_checkpoint(path: str, dtype: torch.dtype | None = None) -> Qwen2ForCausalLM:
    with open(os.path.join(path, "config.json")) as f:
        raw = json.load(f)
    cfg = Qwen2Config.from_hf_dict(raw)
    tensors = safetensors_io.load_file(os.path.join(path, "model.safetensors"))
    if dtype is None:
        # transformers 5 writes "dtype", older versions "torch_dtype"
        dtype = DTYPES.get(raw.get("dtype") or raw.get("torch_dtype") or "float32", torch.float32)
    with torch.random.fork_rng(devices=[]):
        model = Qwen2ForCausalLM(cfg)
    model = model.to(dtype)
    load_state_dict_strict(model, tensors, tied=cfg.tie_word_embeddings)
    return model

