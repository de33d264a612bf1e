"""policy.lora (lora.py) on a random Qwen3 built by transformers (hf_models.py) and real peft: only
the adapters train, the KL reference is the base model without a second copy of its weights,
checkpoints hold PEFT adapters that PeftModel.from_pretrained loads, resume is exact, and behaviour
snapshots (asynchronous rollout) copy the adapters only."""
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from helpers import configure_params, make_batch, new_trainer  # noqa: E402
from hf_models import make_model_dir  # noqa: E402

from arl_trainer.errors import RequestError  # noqa: E402
from arl_trainer.framing import Ragged  # noqa: E402

LORA = {"rank": 4, "alpha": 8, "dropout": 0.0, "targets": ["q_proj", "v_proj", "o_proj"]}
KL = {"coef": 0.1, "estimator": "k3", "placement": "loss", "reference": {"kind": "initial"}}
IDS = Ragged.from_sequences([[9, 311, 2048, 77, 5000, 13], [100, 200, 300, 400]], "int32")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return str(make_model_dir(tmp_path_factory.mktemp("qwen3"), arch="qwen3", tokenizer="qwen3", layers=2, hidden=32, seed=3))


def lora_trainer(model_dir, lora=LORA, kl=KL, dtype="float32", **extra):
    t = new_trainer()
    p = configure_params(model=model_dir, kl=kl, lr=1e-2)
    p["vocabulary"] = None
    p["policy"]["lora"] = lora
    p["policy"]["dtype"] = dtype
    p.update(extra)
    t.configure(p)
    return t


def batch(seed=0):
    b = make_batch(6000, seed=seed, ref=False)
    b["kl"] = {"coef": 0.1, "estimator": "k3", "placement": "loss"}
    return b


def logprobs(t, policy="current"):
    return t.logprobs({"ids": IDS, "policy": policy, "sampling": None})["logprobs"].values


def test_only_the_adapters_train(model_dir):
    t = lora_trainer(model_dir)
    w = t.state.conf.weights
    module = w.handle.module
    trainable = {n for n, q in module.named_parameters() if q.requires_grad}
    assert trainable and all("lora_A" in n or "lora_B" in n for n in trainable)
    # every trainable tensor, and nothing else, is in the optimizer
    in_optimizer = {id(q) for g in t.state.conf.optimizers.policy.param_groups for q in g["params"]}
    assert in_optimizer == {id(q) for n, q in module.named_parameters() if n in trainable}
    before = {n: v.detach().clone() for n, v in module.state_dict().items()}
    t.train_step(batch())
    t.train_step(batch(1))
    after = module.state_dict()
    changed = {n for n in before if not torch.equal(before[n], after[n])}
    assert changed and changed <= trainable
    assert any("lora_B" in n for n in changed)


def test_the_reference_is_the_base_model_without_a_copy(model_dir):
    t = lora_trainer(model_dir)
    w = t.state.conf.weights
    # before any step the adapters are zero (B = 0): policy and reference agree exactly, KL = 0
    assert np.array_equal(logprobs(t, "current"), logprobs(t, "reference"))
    first = t.train_step(batch())
    assert first["kl"] == 0.0
    # no second copy of the base weights: the reference slot owns no tensor, and the trainer's
    # tensors are the base model's plus the adapters
    assert list(w.reference.parameters()) == []
    full = new_trainer()
    p = configure_params(model=model_dir, kl=KL)
    p["vocabulary"] = None
    full.configure(p)
    base_count = sum(q.numel() for q in full.state.conf.weights.policy.parameters())
    lora_count = sum(q.numel() for q in w.policy.parameters() if q.requires_grad)
    assert sum(q.numel() for q in w.policy.parameters()) == base_count + lora_count
    pointers = {q.data_ptr() for q in w.policy.parameters()}
    assert len(pointers) == len(list(w.policy.parameters()))
    # after training, the policy moved and the reference is still exactly the base model
    t.train_step(batch(1))
    assert not np.array_equal(logprobs(t, "current"), logprobs(t, "reference"))
    assert np.array_equal(logprobs(t, "reference"), logprobs(full, "current"))
    assert t.train_step(batch())["kl"] > 0


def test_saved_adapters_load_with_peft(model_dir, tmp_path):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    t = lora_trainer(model_dir)
    t.train_step(batch())
    t.train_step(batch(1))
    out = str(tmp_path / "ckpt")
    files = t.save({"path": out})["files"]
    assert "adapter_config.json" in files and "adapter_model.safetensors" in files
    assert "model.safetensors" not in files and "reference.safetensors" not in files
    base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    peft_model = PeftModel.from_pretrained(base, out).eval()
    x = torch.tensor([[9, 311, 2048, 77, 5000, 13]])
    with torch.no_grad():
        theirs = peft_model(input_ids=x).logits[0]
        policy = t.state.conf.weights.policy
        policy.eval()
        ours = policy(x)[0]
    assert torch.allclose(ours, theirs, atol=1e-5, rtol=0)
    # and the adapters are not nothing: the base model alone answers otherwise
    with torch.no_grad(), peft_model.disable_adapter():
        assert not torch.allclose(peft_model(input_ids=x).logits[0], theirs, atol=1e-5, rtol=0)


def test_resume_equals_uninterrupted(model_dir, tmp_path):
    lora = {**LORA, "dropout": 0.1}  # dropout draws from the RNG, which the checkpoint restores
    a = lora_trainer(model_dir, lora)
    a.train_step(batch())
    out = str(tmp_path / "ckpt")
    a.save({"path": out})
    second_a = a.train_step(batch(1))
    b = lora_trainer(model_dir, lora)
    loaded = b.load({"path": out})
    assert loaded["policy_version"] == 1
    second_b = b.train_step(batch(1))
    assert second_a == second_b
    assert np.array_equal(logprobs(a), logprobs(b))


@pytest.mark.parametrize("at_configure", [False, True])
def test_behaviour_snapshots_copy_the_adapters_only(model_dir, tmp_path, at_configure):
    t = lora_trainer(model_dir, **({"behaviour_policy": True} if at_configure else {}))
    w = t.state.conf.weights
    t.train_step(batch())
    t.train_step(batch(1))
    at_snapshot = logprobs(t)
    assert t.snapshot({})["policy_version"] == 2
    assert list(w.behaviour.parameters()) == []
    copied = w.behaviour.tensors()
    assert copied and all("lora_" in n for n in copied)
    assert sum(v.numel() for v in copied.values()) == sum(q.numel() for q in w.policy.parameters() if q.requires_grad)
    t.train_step(batch(2))
    current = logprobs(t)
    assert not np.array_equal(current, at_snapshot)
    assert np.array_equal(logprobs(t, "behaviour"), at_snapshot)
    # the swap puts the current adapters back exactly
    assert np.array_equal(logprobs(t), current)
    s = {"temperature": 1.0, "top_p": 1.0, "top_k": 0, "stop_ids": [], "seeds": np.array([4, 5], dtype=np.int32), "max_new_tokens": 5}
    generated = t.generate({"prompts": IDS, "policy": "behaviour", **s})
    assert generated["policy_version"] == 2
    assert np.array_equal(logprobs(t), current)
    # a checkpoint carries the snapshot's adapters
    out = str(tmp_path / "ckpt")
    assert "behaviour.safetensors" in t.save({"path": out})["files"]
    resumed = lora_trainer(model_dir)
    resumed.load({"path": out})
    assert resumed.state.conf.weights.behaviour_version == 2
    assert np.array_equal(logprobs(resumed, "behaviour"), at_snapshot)
    assert np.array_equal(logprobs(resumed), current)


def test_what_lora_refuses(model_dir, tmp_path):
    with pytest.raises(RequestError) as e:
        lora_trainer(model_dir, kl={**KL, "reference": {"kind": "refresh", "every": 2}})
    assert e.value.code == "unsupported" and "refresh" in str(e.value)
    with pytest.raises(RequestError) as e:
        lora_trainer(model_dir, {**LORA, "targets": ["query"]})
    assert e.value.code == "invalid_request" and "policy.lora.targets" in str(e.value) and "q_proj" in str(e.value)
    t = lora_trainer(model_dir)
    # a checkpoint of adapters needs the same adapters to load
    out = str(tmp_path / "ckpt")
    t.save({"path": out})
    other = lora_trainer(model_dir, {**LORA, "rank": 8})
    with pytest.raises(RequestError) as e:
        other.load({"path": out})
    assert e.value.code == "invalid_request" and "rank" in str(e.value)
    full = new_trainer()
    p = configure_params(model=model_dir)
    p["vocabulary"] = None
    full.configure(p)
    with pytest.raises(RequestError) as e:
        full.load({"path": out})
    assert "policy.lora" in str(e.value)
    assert os.path.exists(os.path.join(out, "adapter_config.json"))


def test_gradient_checkpointing_gives_the_adapters_the_same_gradients(model_dir):
    # the embeddings are frozen: checkpointed blocks need inputs that require grad to reach the adapters
    plain = lora_trainer(model_dir)
    checkpointed = lora_trainer(model_dir, options={"precision": "fp32", "gradient_checkpointing": True})
    grads = []
    for t in (plain, checkpointed):
        t.compute_gradients(batch())
        module = t.state.conf.weights.handle.module
        grads.append({n: q.grad.clone() for n, q in module.named_parameters() if q.requires_grad and q.grad is not None})
    assert set(grads[0]) == set(grads[1]) and any("lora_B" in n for n in grads[0])
    for n, g in grads[0].items():
        assert torch.allclose(g, grads[1][n], atol=1e-6, rtol=1e-5), n


def test_the_critic_trains_whole_without_the_policys_adapters(model_dir):
    t = new_trainer()
    p = configure_params(model=model_dir, kl=KL, critic=True)
    p["vocabulary"] = None
    p["policy"]["lora"] = LORA
    t.configure(p)
    w = t.state.conf.weights
    names = [n for n, _ in w.critic.named_parameters()]
    assert names and not any("lora_" in n or "base_layer" in n for n in names)
    assert all(q.requires_grad for q in w.critic.parameters())
    # its trunk is a copy (the critic is trained): no tensor shared with the policy
    assert not {q.data_ptr() for q in w.critic.parameters()} & {q.data_ptr() for q in w.policy.parameters()}
    # the critic starts from the base model: its trunk's weights are the policy's base weights
    policy_sd = w.handle.module.state_dict()
    for n, v in w.critic.trunk.state_dict().items():
        adapted = f"model.{n.removesuffix('.weight')}.base_layer.weight"  # a target module's base weight
        assert torch.equal(v, policy_sd[adapted if adapted in policy_sd else f"model.{n}"]), n
    b = make_batch(6000, critic=True, ref=False)
    result = t.train_step(b)
    assert np.isfinite(result["value_loss"])


def test_float32_adapters_on_a_bfloat16_base(model_dir):
    # policy.dtype is the base weights' storage dtype; the adapters stay float32 master weights
    # (options.dtype too: the trainer's option for it before configure read policy.dtype)
    t = lora_trainer(model_dir, dtype="bfloat16", options={"precision": "fp32", "dtype": "bfloat16"})
    module = t.state.conf.weights.handle.module
    p = dict(module.named_parameters())
    assert {q.dtype for n, q in p.items() if "lora_" in n} == {torch.float32}
    assert {q.dtype for n, q in p.items() if "lora_" not in n} == {torch.bfloat16}
    before = {n: q.detach().clone() for n, q in p.items()}
    result = t.train_step(batch())
    assert np.isfinite(result["loss"]) and result["kl"] == 0.0
    changed = {n for n, q in module.named_parameters() if not torch.equal(before[n], q)}
    assert changed and all("lora_" in n for n in changed)
