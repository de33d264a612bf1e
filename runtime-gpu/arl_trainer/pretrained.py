"""Loading a pretrained policy: `hf:ORG/NAME` from the Hugging Face cache (or Hub), or a local
model directory, through transformers' AutoModelForCausalLM in the dtype configure asks for.

Bad input is a RequestError naming what is wrong: a directory that is not a model and a name that
is not cached are `invalid_request`; an architecture transformers cannot load as a causal LM is
`unsupported`. A directory this trainer wrote for a builtin model (Qwen2 config, word-level
vocab.json) also loads without transformers, with the plain model of qwen2.py.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any

import torch

from .errors import invalid, unsupported
from .model import HFHandle, LMHandle
from .qwen2 import HAS_SDPA, is_plain_checkpoint, load_plain_checkpoint

# ORG/NAME or NAME, as the Hub spells repository ids
_REPO_ID = re.compile(r"^(?:[A-Za-z0-9][\w.-]*/)?[A-Za-z0-9][\w.-]*$")
_WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")


def transformers_available() -> bool:
    try:
        import transformers  # noqa: F401
    except Exception:
        return False
    return True


def local_directory(spec: str) -> str | None:
    """The local directory the spec names (a path, or `file:PATH`), if it exists."""
    path = spec[len("file:") :] if spec.startswith("file:") else spec
    path = os.path.expanduser(path)
    return path if os.path.isdir(path) else None


def _looks_like_path(spec: str) -> bool:
    return spec.startswith(("file:", "/", "./", "../", "~")) or os.sep in spec.split("/", 1)[-1]


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def hub_source(spec: str) -> str:
    """The repository id of an `hf:` spec, checked against the local cache when offline."""
    repo = spec[len("hf:") :] if spec.startswith("hf:") else spec
    if not _REPO_ID.match(repo):
        raise invalid(f"policy.model '{spec}': not a local directory and not a Hugging Face repository id (hf:ORG/NAME)")
    from huggingface_hub import constants, try_to_load_from_cache

    cached = try_to_load_from_cache(repo, "config.json")
    if not isinstance(cached, str) and constants.is_offline_mode():
        raise invalid(
            f"policy.model '{spec}' is not in the local Hugging Face cache and HF_HUB_OFFLINE is set: "
            f"download it first (hf download {repo}) or give the path of a local model directory"
        )
    return repo


def check_directory(path: str, spec: str) -> dict[str, Any]:
    """The config.json of a local model directory; invalid_request when it is not a model."""
    config_path = os.path.join(path, "config.json")
    if not os.path.exists(config_path):
        raise invalid(
            f"policy.model '{spec}': directory {path} is not a model (no config.json; a model directory holds config.json, the weights and the tokenizer files)"
        )
    try:
        with open(config_path) as f:
            raw = json.load(f)
    except (OSError, ValueError) as e:
        raise invalid(f"policy.model '{spec}': {config_path} is not readable JSON ({_first_line(e)})") from None
    if not isinstance(raw, dict) or not raw.get("model_type"):
        raise invalid(f"policy.model '{spec}': {config_path} has no model_type, so it is not a transformers model config")
    if not any(os.path.exists(os.path.join(path, name)) for name in _WEIGHT_FILES):
        raise invalid(f"policy.model '{spec}': directory {path} has a config.json but no weights (model.safetensors or pytorch_model.bin)")
    return raw


def check_architecture(source: str, spec: str, trust_remote_code: bool) -> None:
    """`unsupported` unless transformers knows the config's model type as a causal LM."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    try:
        config = AutoConfig.from_pretrained(source, trust_remote_code=trust_remote_code)
    except ValueError as e:
        raise unsupported(f"policy.model '{spec}': transformers cannot load this architecture ({_first_line(e)}); a newer transformers may know it") from None
    except OSError as e:
        raise invalid(f"policy.model '{spec}': cannot read its config ({_first_line(e)}); download it first or give a local model directory") from None
    remote = trust_remote_code and "AutoModelForCausalLM" in (getattr(config, "auto_map", None) or {})
    if config.model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and not remote:
        raise unsupported(
            f"policy.model '{spec}': model type '{config.model_type}' is not a causal language model transformers can load "
            "(AutoModelForCausalLM); the trainer trains decoder-only LMs such as Qwen2, Qwen3 and Llama"
        )


def load_pretrained(spec: str, dtype: torch.dtype, options: dict[str, Any]) -> tuple[LMHandle, str]:
    """(handle, directory or repository id the tokenizer loads from) for `hf:ORG/NAME` or a path."""
    local = local_directory(spec)
    if local is None and _looks_like_path(spec) and not spec.startswith("hf:"):
        raise invalid(f"policy.model '{spec}': no such directory (give an existing model directory, or hf:ORG/NAME)")
    if local is not None and (not transformers_available() or options.get("prefer_plain")) and is_plain_checkpoint(local):
        return LMHandle(load_plain_checkpoint(local, dtype), spec), local
    if not transformers_available():
        raise unsupported(
            f"policy.model '{spec}' needs the transformers library, which is not installed; use builtin:tiny or a checkpoint directory written by this trainer"
        )
    from transformers import AutoModelForCausalLM

    trust = bool(options.get("trust_remote_code"))
    if local is not None:
        check_directory(local, spec)
        source = local
    else:
        source = hub_source(spec)
    check_architecture(source, spec, trust)
    attn = options.get("attn_implementation") or ("sdpa" if HAS_SDPA else "eager")
    try:
        model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, attn_implementation=attn, trust_remote_code=trust)
    except OSError as e:
        where = f"directory {local}" if local is not None else "the Hugging Face Hub"
        raise invalid(f"policy.model '{spec}': cannot load the weights from {where} ({_first_line(e)}); download it or give a local model directory") from None
    except ValueError as e:
        raise invalid(f"policy.model '{spec}': {_first_line(e)} (options.attn_implementation is '{attn}')") from None
    return HFHandle(model, spec), source


def word_vocabulary(directory: str) -> bool:
    """Whether the directory's vocab.json is the word-level vocabulary this trainer writes (a GPT-2
    style vocab.json maps tokens to ids instead)."""
    try:
        with open(os.path.join(directory, "vocab.json")) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("kind") == "word"
