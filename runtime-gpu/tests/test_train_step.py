"""train_step: microbatching invariance, exact zero contribution of non-target tokens, the
section-9 reference values through the real model path, optimizer behaviour."""
import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import ON_CUDA, REDUCTIONS, configure_params, grads, make_batch, max_grad_diff, new_trainer, tiny_model  # noqa: E402

from arl_trainer.errors import RequestError  # noqa: E402
from arl_trainer.framing import Ragged  # noqa: E402

KL_INITIAL = {"coef": 0.05, "estimator": "k3", "placement": "loss", "reference": {"kind": "initial"}}


def trainer(critic=False, dtype="float64", kl=None):
    t = new_trainer()
    t.configure(configure_params(tiny_model(dtype), critic=critic, kl=kl or KL_INITIAL))
    return t


@pytest.fixture(scope="module")
def t64():
    return trainer(critic=True)


def run(t, batch, critic=True):
    res = t.compute_gradients(batch)
    g = grads(t.state.conf.weights.policy)
    if critic and t.state.conf.weights.critic is not None:
        g.update({"critic." + k: v for k, v in grads(t.state.conf.weights.critic).items()})
    return res, g


@pytest.mark.parametrize("reduction", REDUCTIONS, ids=[r["mode"] for r in REDUCTIONS])
def test_microbatches_give_the_same_loss_and_gradients(t64, reduction):
    batch = make_batch(t64.state.conf.weights.handle.vocab_size, seed=3, n=7, critic=True)
    batch["reduction"] = reduction
    results = {}
    for m in (1, 2, 4):
        results[m] = run(t64, {**batch, "microbatches": m})
    (r1, g1) = results[1]
    assert r1["tokens"] == int(batch["denominators"]["tokens"])
    assert abs(r1["policy_loss"]) > 1e-4 and r1["value_loss"] > 0 and r1["kl"] != 0
    for m in (2, 4):
        rm, gm = results[m]
        for key in ("loss", "policy_loss", "kl", "value_loss", "entropy", "clip_fraction", "ratio_mean", "ratio_min", "ratio_max"):
            assert abs(rm[key] - r1[key]) <= 1e-6, (m, key, rm[key], r1[key])
        assert max_grad_diff(g1, gm) <= 1e-6, m
    # gradients are not trivially zero
    assert max(float(np.abs(v).max()) for v in g1.values()) > 1e-4


def test_microbatches_float32_model():
    t = trainer(dtype="float32")
    batch = make_batch(t.state.conf.weights.handle.vocab_size, seed=5, n=6)
    batch["reduction"] = {"mode": "seq_mean_token_mean"}
    r1, g1 = run(t, {**batch, "microbatches": 1}, critic=False)
    r4, g4 = run(t, {**batch, "microbatches": 4}, critic=False)
    tol = 1e-5 if ON_CUDA else 1e-6
    assert abs(r1["loss"] - r4["loss"]) <= tol
    assert max_grad_diff(g1, g4) <= tol


def test_loss_equals_the_reduction_of_the_reference_formula(t64):
    """The trainer's loss equals -reduce(u) + beta*reduce(k3) computed independently in float64 from
    log-probs of the model (logprobs method) — for every reduction."""
    from arl_trainer.losses import Reduction, policy_loss_reference

    batch = make_batch(t64.state.conf.weights.handle.vocab_size, seed=11, n=5)
    lp = t64.logprobs({"ids": batch["ids"], "policy": "current", "sampling": None})["logprobs"]
    rows = lambda r: [list(map(float, x)) for x in r.rows()]  # noqa: E731
    masks = rows(batch["loss_mask"])
    groups = [int(g) for g in batch["groups"]]
    for reduction in REDUCTIONS:
        res = t64.compute_gradients({**batch, "reduction": reduction, "kl": {"coef": 0.0, "estimator": "k3", "placement": "loss"}})
        reference = Reduction.from_message(reduction)
        want = policy_loss_reference(rows(lp), rows(batch["old_logprobs"]), masks, rows(batch["advantages"]), batch["clip"], reference, groups)
        assert abs(res["policy_loss"] - want) <= 1e-6, reduction


def test_non_target_tokens_contribute_exactly_zero_gradient(t64):
    batch = make_batch(t64.state.conf.weights.handle.vocab_size, seed=2, n=5, critic=True)
    batch["reduction"] = {"mode": "seq_mean_token_mean"}
    _, g_ref = run(t64, batch)
    # perturb advantages, old/ref log-probs, returns and old values where loss_mask is 0
    pert = copy.deepcopy(batch)
    m = pert["loss_mask"].values == 0
    assert m.sum() > 5
    rng = np.random.default_rng(0)
    for key in ("advantages", "old_logprobs", "ref_logprobs"):
        pert[key].values[m] = rng.normal(size=int(m.sum())) * 100
    for key in ("returns", "old_values"):
        pert["critic"][key].values[m] = rng.normal(size=int(m.sum())) * 100
    _, g_pert = run(t64, pert)
    # bitwise identical on CPU (on CUDA, atomics may reorder additions)
    assert max_grad_diff(g_ref, g_pert) <= (1e-12 if ON_CUDA else 0.0)


def test_head_sees_exactly_the_target_positions(t64):
    """A hook on the output head: it is applied to the hidden states at positions k-1 of the target
    tokens only, so no other position's log-prob enters the loss; its gradient is non-zero."""
    batch = make_batch(t64.state.conf.weights.handle.vocab_size, seed=4, n=4)
    seen = {}

    def hook(module, inputs, output):
        seen["rows"] = inputs[0].shape[0]
        output.register_hook(lambda g: seen.__setitem__("grad", g.detach().clone()))

    h = t64.state.conf.weights.handle.module.lm_head.register_forward_hook(hook)
    try:
        t64.compute_gradients(batch)
    finally:
        h.remove()
    assert seen["rows"] == int(batch["loss_mask"].values.sum())
    assert torch.all(seen["grad"].abs().sum(-1) > 0)


def test_section9_reduction_values_through_train_step():
    """docs/semantics.md §9: rewards (1,0,0,0), lengths (2,4,4,6), rho = 1: seq_mean_token_mean 0,
    token_mean 1/(2 sqrt3), constant(6) 1/(3 sqrt3) — with old_logprobs = the model's own."""
    t = trainer(kl={"coef": 0.0, "estimator": "k3", "placement": "loss", "reference": None})
    s3 = np.sqrt(3)
    adv = [s3, -1 / s3, -1 / s3, -1 / s3]
    lengths = [2, 4, 4, 6]
    ids = [np.arange(6, 7 + L, dtype=np.int32) for L in lengths]  # one prompt token + L targets
    masks = [np.r_[0, np.ones(L)].astype(np.uint8) for L in lengths]
    lp = t.logprobs({"ids": Ragged.from_sequences(ids, "int32"), "policy": "current", "sampling": None})["logprobs"]
    batch = {
        "ids": Ragged.from_sequences(ids, "int32"),
        "loss_mask": Ragged.from_sequences(masks, "uint8"),
        "advantages": Ragged.from_sequences([np.full(L + 1, a) for L, a in zip(lengths, adv, strict=True)], "float32"),
        "old_logprobs": lp,
        "ref_logprobs": None,
        "groups": np.zeros(4, np.int32),
        "denominators": {"tokens": 16.0, "sequences": 4.0, "groups": 1.0, "group_tokens": np.array([16.0]), "sequence_tokens": np.array(lengths, float)},
        "microbatches": 2,
        "clip": {"low": 0.2, "high": 0.2, "dual": None},
        "kl": {"coef": 0.0, "estimator": "k3", "placement": "loss"},
        "sampling": None,
        "critic": None,
    }
    for red, want in [({"mode": "seq_mean_token_mean"}, 0.0), ({"mode": "token_mean"}, 1 / (2 * s3)), ({"mode": "constant", "constant": 6}, 1 / (3 * s3))]:
        res = t.compute_gradients({**batch, "reduction": red})
        # float32 advantages on the wire: |error| ~ 1e-7
        assert abs(res["loss"] - want) < 1e-6, (red, res["loss"], want)
        assert abs(res["ratio_mean"] - 1) < 1e-6 and res["clip_fraction"] == 0


def test_train_step_updates_and_reports():
    t = trainer(kl={"coef": 0.1, "estimator": "k2", "placement": "loss", "reference": {"kind": "refresh", "every": 2}})
    batch = make_batch(t.state.conf.weights.handle.vocab_size, seed=9, n=4, ref=False)  # KL from the trainer's reference
    before = copy.deepcopy(t.state.conf.weights.handle.module.state_dict())
    res = t.train_step(batch)
    assert res["policy_version"] == 1 and res["tokens"] == int(batch["denominators"]["tokens"])
    assert res["kl"] == pytest.approx(0.0, abs=1e-12)  # the reference is the initial policy
    assert res["grad_norm"] is not None and res["grad_norm"] > 0
    changed = any(not torch.equal(before[k], v) for k, v in t.state.conf.weights.handle.module.state_dict().items())
    assert changed
    res2 = t.train_step(batch)
    assert res2["kl"] > 0 and res2["policy_version"] == 2
    # refresh(2): after step 2 the reference equals the policy again
    for a, b in zip(t.state.conf.weights.reference.parameters(), t.state.conf.weights.policy.parameters(), strict=True):
        assert torch.equal(a, b)


def test_invalid_train_step_requests():
    t = trainer()
    batch = make_batch(t.state.conf.weights.handle.vocab_size, seed=1, n=3)
    bad = copy.deepcopy(batch)
    bad["loss_mask"].values[0] = 1
    with pytest.raises(RequestError, match="token 0"):
        t.train_step(bad)
    bad = copy.deepcopy(batch)
    bad["denominators"]["sequence_tokens"] = np.zeros(2)
    with pytest.raises(RequestError):
        t.train_step(bad)
    bad = copy.deepcopy(batch)
    bad["reduction"] = {"mode": "median"}
    with pytest.raises(RequestError):
        t.train_step(bad)
    bad = copy.deepcopy(batch)
    bad["advantages"] = Ragged.from_sequences([[0.0]] * 3, "float32")
    with pytest.raises(RequestError, match="aligned"):
        t.train_step(bad)


def test_step_lr_replaces_the_rate_for_one_step_and_is_validated():
    """train_step's `lr`: the same gradient, a step of another size (Adam's first step is ~lr per weight)."""
    moved = {}
    for lr in (None, 2.5):
        t = trainer()
        batch = make_batch(t.state.conf.weights.handle.vocab_size, seed=11, n=4)
        before = {k: v.clone() for k, v in t.state.conf.weights.policy.named_parameters()}
        t.train_step({**batch, **({"lr": lr} if lr is not None else {})})
        moved[lr] = {k: (v.detach() - before[k]) for k, v in t.state.conf.weights.policy.named_parameters()}
    capabilities = t.handshake({"protocol": "arl-trainer", "version": 1, "runtime": {"name": "arl", "version": "0"}})["capabilities"]
    assert capabilities["step_lr"] is True and capabilities["is_weights"] is True
    base_lr = t.state.conf.optimizers.policy_cfg.lr
    nonzero = {k: moved[None][k].abs() > 0 for k in moved[None]}
    ratios = [float((moved[2.5][k][nz] / moved[None][k][nz]).mean()) for k, nz in nonzero.items() if nz.any()]
    assert np.mean(ratios) == pytest.approx(2.5 / base_lr, rel=0.05)
    for bad in (-1.0, 0.0, float("nan"), "fast", True):
        with pytest.raises(RequestError, match="lr must be"):
            t.train_step({**batch, "lr": bad})


def test_is_weights_scale_each_targets_policy_term_only(t64):
    """train_step's `is_weights` (mask.tis): the policy loss is the reference formula with each
    target's u times its weight; KL, entropy, ratios and clip statistics are those of the
    unweighted step; unit weights change nothing; bad weights are refused."""
    from arl_trainer.losses import Reduction, policy_loss_reference

    t = t64
    batch = make_batch(t.state.conf.weights.handle.vocab_size, seed=13, n=5)
    rng = np.random.default_rng(4)
    w = Ragged(rng.uniform(0.2, 2.0, size=len(batch["loss_mask"].values)).astype(np.float32), batch["loss_mask"].offsets.copy())
    plain = t.compute_gradients(batch)
    g_plain = grads(t.state.conf.weights.policy)
    weighted = t.compute_gradients({**batch, "is_weights": w})
    rows = lambda r: [list(map(float, x)) for x in r.rows()]  # noqa: E731
    lp = t.logprobs({"ids": batch["ids"], "policy": "current", "sampling": None})["logprobs"]
    want = policy_loss_reference(
        rows(lp), rows(batch["old_logprobs"]), rows(batch["loss_mask"]), rows(batch["advantages"]), batch["clip"], Reduction.from_message(batch["reduction"]),
        [int(g) for g in batch["groups"]], is_weights=rows(w),
    )
    assert abs(weighted["policy_loss"] - want) <= 1e-6
    assert abs(weighted["policy_loss"] - plain["policy_loss"]) > 1e-4
    for key in ("kl", "entropy", "clip_fraction", "ratio_mean", "ratio_min", "ratio_max", "tokens"):
        assert weighted[key] == pytest.approx(plain[key], abs=1e-12), key
    ones = Ragged(np.ones(len(w.values), dtype=np.float32), w.offsets.copy())
    t.compute_gradients({**batch, "is_weights": ones})
    assert max_grad_diff(g_plain, grads(t.state.conf.weights.policy)) == 0.0
    bad = w.values.copy()
    bad[2] = -0.5
    with pytest.raises(RequestError, match="finite and >= 0"):
        t.compute_gradients({**batch, "is_weights": Ragged(bad, w.offsets.copy())})
    with pytest.raises(RequestError, match="aligned"):
        t.compute_gradients({**batch, "is_weights": Ragged.from_sequences([[1.0]] * 5, "float32")})


def test_on_policy_step_equals_the_step_with_old_equal_to_the_current_logprobs():
    """old_logprobs null: the ratio is exactly 1 and carries logp's gradient, so loss, gradient and
    the weights after the step equal those of the step sent the current weights' log-probs; the
    result's nll is the targets' mean -log p. (A float32 model: log-probs travel as float32.)"""
    a = trainer(dtype="float32")
    b = copy.deepcopy(a)
    batch = make_batch(a.state.conf.weights.handle.vocab_size, seed=13, n=5)
    batch.update(microbatches=2, sampling={"temperature": 0.9, "top_p": 0.95, "top_k": 12})
    lp = a.logprobs({"ids": batch["ids"], "policy": "current", "sampling": batch["sampling"], "mask": batch["loss_mask"]})["logprobs"]
    tol = 1e-5
    with_old, g_old = run(a, {**batch, "old_logprobs": lp}, critic=False)
    on_policy, g_on = run(a, {**batch, "old_logprobs": None}, critic=False)
    for key in ("loss", "policy_loss", "kl", "entropy"):
        assert on_policy[key] == pytest.approx(with_old[key], abs=tol), key
    assert max_grad_diff(g_old, g_on) <= tol
    assert (on_policy["ratio_min"], on_policy["ratio_max"], on_policy["clip_fraction"]) == (1.0, 1.0, 0.0)
    targets = batch["loss_mask"].values == 1
    assert on_policy["nll"] == pytest.approx(-float(lp.values[targets].astype(np.float64).mean()), abs=tol)
    a.train_step({**batch, "old_logprobs": lp})
    b.train_step({**batch, "old_logprobs": None})
    after_a = dict(a.state.conf.weights.policy.named_parameters())
    for name, w in b.state.conf.weights.policy.named_parameters():
        assert float((w.detach() - after_a[name].detach()).abs().max()) <= tol, name
    caps = a.handshake({"protocol": "arl-trainer", "version": 1, "runtime": {"name": "arl", "version": "0"}})["capabilities"]
    assert caps["on_policy_step"] is True


def test_logprobs_mask_computes_only_the_asked_positions():
    t = trainer()
    batch = make_batch(t.state.conf.weights.handle.vocab_size, seed=12, n=3)
    full = t.logprobs({"ids": batch["ids"], "policy": "current", "sampling": None})["logprobs"].values
    masked = t.logprobs({"ids": batch["ids"], "policy": "current", "sampling": None, "mask": batch["loss_mask"]})["logprobs"].values
    keep = batch["loss_mask"].values.astype(bool)
    assert keep.any() and (~keep).any()
    np.testing.assert_allclose(masked[keep], full[keep], atol=1e-6)
    assert np.all(masked[~keep] == 0)
    with pytest.raises(RequestError):
        t.logprobs({"ids": batch["ids"], "policy": "current", "sampling": None, "mask": Ragged.from_sequences([[1, 0]], "uint8")})


def test_reset_optimizer_makes_the_next_step_a_fresh_optimizers_first_step():
    """reset_optimizer (rollout.sft.optimizer fresh): after some steps, the next step equals the
    first step of a freshly configured trainer holding the same weights (policy and critic: moments
    zeroed, the warm-up counting from step 0); the twin of the embedded trainer's test."""
    params = configure_params(tiny_model("float64"), critic=True)
    params["algorithm"]["optimizer"]["warmup_steps"] = 2
    a = new_trainer()
    a.configure(params)
    batch = make_batch(a.state.conf.weights.handle.vocab_size, seed=21, n=4)
    for _ in range(3):
        a.train_step(batch)
    fresh = new_trainer()
    fresh.configure(copy.deepcopy(params))
    with torch.no_grad():
        for slot in ("policy", "critic"):
            src = dict(getattr(a.state.conf.weights, slot).named_parameters())
            for name, w in getattr(fresh.state.conf.weights, slot).named_parameters():
                w.copy_(src[name])
    assert a.reset_optimizer({}) == {"step": 0}
    a.train_step(batch)
    fresh.train_step(batch)
    for slot in ("policy", "critic"):
        after = dict(getattr(fresh.state.conf.weights, slot).named_parameters())
        for name, w in getattr(a.state.conf.weights, slot).named_parameters():
            assert torch.equal(w, after[name]), f"{slot}.{name}"
    methods = a.handshake({"protocol": "arl-trainer", "version": 1, "runtime": {"name": "arl", "version": "0"}})["capabilities"]["methods"]
    assert "reset_optimizer" in methods


def test_reference_initial_is_the_policy_rl_starts_from(tmp_path):
    """kl.reference initial is the policy at the reference's first use, i.e. after the SFT cold
    start's steps (which carry no KL), as in the embedded trainer (docs/semantics.md §6): the
    first KL step measures KL 0, and the reference equals the post-SFT weights, not the
    configured ones."""
    t = trainer(kl=KL_INITIAL)
    vocab = t.state.conf.weights.handle.vocab_size
    configured = [q.detach().clone() for q in t.state.conf.weights.policy.parameters()]
    sft = make_batch(vocab, seed=31, n=4, ref=False)
    sft["kl"] = {"coef": 0.0, "estimator": "k3", "placement": "loss"}
    for _ in range(2):
        t.train_step(sft)
    t.save({"path": str(tmp_path / "ck0")})  # checkpoint 0: after the cold start, before RL
    after_sft = [q.detach().clone() for q in t.state.conf.weights.policy.parameters()]
    assert any(not torch.equal(a, b) for a, b in zip(configured, after_sft, strict=True))
    assert not t.state.conf.weights.reference_taken
    res = t.train_step(make_batch(vocab, seed=32, n=4, ref=False))
    assert res["kl"] == pytest.approx(0.0, abs=1e-12)
    for r, a in zip(t.state.conf.weights.reference.parameters(), after_sft, strict=True):
        assert torch.equal(r, a)
    # checkpoint 0 holds no reference: loading it (resume) takes the reference again at its next use
    assert not (tmp_path / "ck0" / "reference.safetensors").exists()
    t.load({"path": str(tmp_path / "ck0")})
    assert not t.state.conf.weights.reference_taken
    assert t.train_step(make_batch(vocab, seed=32, n=4, ref=False))["kl"] == pytest.approx(0.0, abs=1e-12)
