"""Checkpoints of a transformers policy: what `save` writes is a Hugging Face model directory
(AutoModelForCausalLM and AutoTokenizer load it: config, weights, tokenizer, chat template,
generation config) with the same logits, `load` resumes it exactly, and a policy.model naming
it configures."""
import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from helpers import configure_params, make_batch, new_trainer  # noqa: E402
from hf_models import make_model_dir  # noqa: E402

from arl_trainer.framing import Ragged  # noqa: E402

IDS = [151644, 872, 198, 9707, 11, 1879, 0, 17, 42]
CONVERSATION = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a colour."}, {"role": "assistant", "content": "Red."}]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return str(make_model_dir(tmp_path_factory.mktemp("hf") / "qwen3", arch="qwen3", tokenizer="qwen3", seed=2))


def trainer_on(model: str, dtype: str = "float32", seed: int = 7):
    t = new_trainer()
    kl = {"coef": 0.05, "estimator": "k3", "placement": "loss", "reference": {"kind": "initial"}}
    params = configure_params(model, seed=seed, kl=kl, critic=True)
    params["vocabulary"] = None
    params["policy"]["dtype"] = dtype
    t.configure(params)
    return t


def batch_for(t, seed: int):
    return make_batch(t.state.conf.weights.handle.vocab_size, seed=seed, n=4, critic=True)


def logits_of(module, ids=IDS):
    with torch.no_grad():
        return module(input_ids=torch.tensor([ids])).logits[0].float()


def logprobs_of(t, ids=IDS):
    return t.logprobs({"ids": Ragged.from_sequences([ids], "int32"), "policy": "current", "sampling": None})["logprobs"].values


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_saved_policy_is_a_hugging_face_model_directory(tmp_path, model_dir, dtype):
    t = trainer_on(model_dir, dtype)
    t.train_step(batch_for(t, 1))
    files = set(t.save({"path": str(tmp_path / "ck")})["files"])
    assert {"config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "trainer.json", "optimizer.pt"} <= files

    ck = str(tmp_path / "ck")
    hf = transformers.AutoModelForCausalLM.from_pretrained(ck).eval()  # the dtype config.json names
    assert type(hf).__name__ == "Qwen3ForCausalLM" and next(hf.parameters()).dtype == getattr(torch, dtype)
    ours = t.state.conf.weights.handle.module
    for name, tensor in ours.state_dict().items():
        assert torch.equal(hf.state_dict()[name], tensor), name
    assert torch.equal(logits_of(hf), logits_of(ours.eval()))

    saved_gen = json.loads(open(os.path.join(ck, "generation_config.json")).read())
    original_gen = json.loads(open(os.path.join(model_dir, "generation_config.json")).read())
    assert saved_gen["eos_token_id"] == original_gen["eos_token_id"] and saved_gen["pad_token_id"] == original_gen["pad_token_id"]

    tok, original = transformers.AutoTokenizer.from_pretrained(ck), transformers.AutoTokenizer.from_pretrained(model_dir)
    assert len(tok) == len(original) and tok.eos_token_id == original.eos_token_id
    assert tok.chat_template and tok.apply_chat_template(CONVERSATION, tokenize=False) == original.apply_chat_template(CONVERSATION, tokenize=False)
    assert tok("Name a colour.")["input_ids"] == original("Name a colour.")["input_ids"]


def test_every_checkpoint_holds_the_tokenizer_files_that_save_pretrained_writes(tmp_path, model_dir):
    # The trainer writes the first save's tokenizer files again in later saves (tokenizer.py):
    # each checkpoint must still hold exactly what the tokenizer's own save_pretrained writes.
    t = trainer_on(model_dir)
    first = set(t.save({"path": str(tmp_path / "ck1")})["files"])
    t.train_step(batch_for(t, 1))
    second = set(t.save({"path": str(tmp_path / "ck2")})["files"])
    reference = {os.path.basename(p) for p in t.state.conf.tokenizer.tok.save_pretrained(str(tmp_path / "tok"))}
    assert reference <= first and first == second
    for name in reference:
        want = open(tmp_path / "tok" / name, "rb").read()
        assert open(tmp_path / "ck1" / name, "rb").read() == want and open(tmp_path / "ck2" / name, "rb").read() == want, name
    tok, original = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "ck2")), transformers.AutoTokenizer.from_pretrained(model_dir)
    assert tok.apply_chat_template(CONVERSATION, tokenize=False) == original.apply_chat_template(CONVERSATION, tokenize=False)


def test_load_resumes_exactly(tmp_path, model_dir):
    first, second = batch_for_model(model_dir, 1), batch_for_model(model_dir, 2)
    a = trainer_on(model_dir)
    a.train_step(first)
    a.save({"path": str(tmp_path / "ck")})
    saved_lp = logprobs_of(a)
    a.train_step(second)
    after = {k: v.clone() for k, v in a.state.conf.weights.handle.module.state_dict().items()}
    critic_after = {k: v.clone() for k, v in a.state.conf.weights.critic.state_dict().items()}

    b = trainer_on(model_dir, seed=99)  # the pretrained weights, another seed (critic head, RNG)
    assert not np.array_equal(logprobs_of(b), saved_lp)
    assert b.load({"path": str(tmp_path / "ck")})["policy_version"] == 1
    assert np.array_equal(logprobs_of(b), saved_lp)
    b.train_step(second)  # optimizer state restored: the same step as the uninterrupted run
    assert b.state.policy_version == a.state.policy_version == 2
    for k, v in b.state.conf.weights.handle.module.state_dict().items():
        assert torch.equal(v, after[k]), k
    for k, v in b.state.conf.weights.critic.state_dict().items():
        assert torch.equal(v, critic_after[k]), k
    ref_a = a.logprobs({"ids": Ragged.from_sequences([IDS], "int32"), "policy": "reference", "sampling": None})["logprobs"].values
    ref_b = b.logprobs({"ids": Ragged.from_sequences([IDS], "int32"), "policy": "reference", "sampling": None})["logprobs"].values
    assert np.array_equal(ref_a, ref_b)


def test_a_policy_model_naming_a_saved_directory_configures(tmp_path, model_dir):
    a = trainer_on(model_dir)
    a.train_step(batch_for(a, 3))
    a.save({"path": str(tmp_path / "ck")})
    c = trainer_on(str(tmp_path / "ck"))
    assert c.state.conf.weights.handle.kind == "hf" and c.state.conf.tokenizer.vocab_size == a.state.conf.tokenizer.vocab_size
    assert np.array_equal(logprobs_of(c), logprobs_of(a))
    enc = {"messages": CONVERSATION[:2], "add_generation_prompt": True}
    assert np.array_equal(c.encode(enc)["ids"].values, a.encode(enc)["ids"].values)


def batch_for_model(model_dir: str, seed: int):
    return make_batch(len(transformers.AutoTokenizer.from_pretrained(model_dir)), seed=seed, n=4, critic=True)


def test_a_policy_only_save_holds_the_model_files_alone_and_loads_as_the_policy(tmp_path, model_dir):
    """An inference server's weight sync (docs/engines.md): vLLM reads every *.safetensors in the
    folder, so a reference or critic beside the model would be loaded as the model's weights."""
    t = trainer_on(model_dir)
    vocab = t.state.conf.weights.handle.vocab_size
    t.train_step(make_batch(vocab, seed=1, n=4, critic=True, ref=False))  # takes the KL reference, moves the critic
    assert t.state.conf.weights.reference_taken
    full = set(t.save({"path": str(tmp_path / "ck")})["files"])
    assert {"reference.safetensors", "critic.safetensors", "optimizer.pt"} <= full
    saved = t.save({"path": str(tmp_path / "v1"), "policy_only": True})
    files = set(saved["files"])
    assert files == set(os.listdir(tmp_path / "v1"))
    assert [f for f in files if f.endswith(".safetensors")] == ["model.safetensors"]
    assert "optimizer.pt" not in files and {"config.json", "tokenizer.json", "trainer.json"} <= files
    assert json.load(open(tmp_path / "v1" / "trainer.json"))["contents"] == "policy"
    hf = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path / "v1")).eval()
    np.testing.assert_allclose(logits_of(hf).numpy(), logits_of(t.state.conf.weights.handle.module).numpy(), atol=1e-5)

    # Loading it sets the policy's weights and version; the reference and the step stay.
    other = trainer_on(model_dir, seed=8)
    other.train_step(make_batch(vocab, seed=2, n=4, critic=True, ref=False))
    reference = [q.detach().clone() for q in other.state.conf.weights.reference.parameters()]
    step = other.state.step
    assert other.load({"path": str(tmp_path / "v1")})["policy_version"] == saved["policy_version"]
    np.testing.assert_array_equal(logprobs_of(other), logprobs_of(t))
    assert other.state.step == step
    for r, before in zip(other.state.conf.weights.reference.parameters(), reference, strict=True):
        assert torch.equal(r, before)
