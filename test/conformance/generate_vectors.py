#!/usr/bin/env python3
"""Writes the conformance vectors (test/conformance/*.json) from docs/semantics.md.

The expected values are computed here, independently of the TypeScript reference (plain
Python floats, exact fractions and math.comb where they apply), straight from the formulas:
never from the code under test. Reference values published in docs/semantics.md §9 are
written as published, with a tolerance matching their rounding. Run: python3 generate_vectors.py
"""
import json
import math
import os
from fractions import Fraction

EPS = 1e-6
HERE = os.path.dirname(os.path.abspath(__file__))


def case(name, op, input, expected, tol=None):
    c = {"name": name, "op": op, "input": input, "expected": expected}
    if tol is not None:
        c["tol"] = tol
    return c


def write(filename, cases):
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), filename
    # One case a line: diffs of regenerated vectors stay readable.
    lines = [json.dumps(c, separators=(", ", ": ")) for c in cases]
    with open(os.path.join(HERE, filename), "w") as f:
        f.write('{"cases": [\n  ' + ",\n  ".join(lines) + "\n]}\n")


# ---------- formulas, from the spec ----------

def pop_std(xs):
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def group_adv(rewards, baseline, normalize):
    G = len(rewards)
    if baseline != "none" and len(set(rewards)) == 1:
        return [0.0] * G
    if baseline == "mean":
        b = [sum(rewards) / G] * G
    elif baseline == "leave_one_out":
        b = [(sum(rewards) - r) / (G - 1) for r in rewards]
    else:
        b = [0.0] * G
    c = [r - bi for r, bi in zip(rewards, b)]
    if normalize == "std":
        s = pop_std(rewards)
        c = [x / (s + EPS) for x in c]
    return c


def task_norm(adv, tasks):
    out = [0.0] * len(adv)
    for t in set(tasks):
        idx = [i for i, x in enumerate(tasks) if x == t]
        vals = [adv[i] for i in idx]
        if len(set(vals)) == 1:
            continue
        mu = sum(vals) / len(vals)
        sd = pop_std(vals)
        for i in idx:
            out[i] = (adv[i] - mu) / (sd + EPS)
    return out


def gae_sum(rewards, values, gamma, lam, end, bootstrap=None):
    # The definition as a sum, not the backward recursion.
    T = len(rewards)
    last = 0.0 if end == "terminated" else bootstrap
    nxt = [values[t + 1] if t + 1 < T else last for t in range(T)]
    delta = [rewards[t] + gamma * nxt[t] - values[t] for t in range(T)]
    return [sum((gamma * lam) ** l * delta[t + l] for l in range(T - t)) for t in range(T)]


def surrogate(rho, a, low, high, dual):
    u = min(rho * a, min(max(rho, 1 - low), 1 + high) * a)
    if dual is not None and a < 0:
        u = max(u, dual * a)
    return u


def policy_loss(inp):
    logp, old, mask, adv = inp["logp"], inp["logp_old"], inp["mask"], inp["advantages"]
    clip, red = inp["clip"], inp["reduction"]
    N = len(logp)
    s = []  # per-sequence masked sums of u
    L = []
    for i in range(N):
        tot = 0.0
        for k in range(len(logp[i])):
            if mask[i][k]:
                a = adv[i][k] if isinstance(adv[i], list) else adv[i]
                tot += surrogate(math.exp(logp[i][k] - old[i][k]), a, clip["low"], clip["high"], clip["dual"])
        s.append(tot)
        L.append(sum(mask[i]))
    mode = red["mode"]
    if mode == "token_mean":
        r = sum(s) / sum(L)
    elif mode == "seq_mean_token_mean":
        r = sum(si / Li for si, Li in zip(s, L) if Li > 0) / N
    elif mode == "seq_mean_token_sum":
        r = sum(s) / N
    elif mode == "constant":
        r = sum(s) / (N * red["constant"])
    elif mode == "group_token_mean":
        groups = inp["groups"]
        names = list(dict.fromkeys(groups))
        per = []
        for g in names:
            gs = sum(s[i] for i in range(N) if groups[i] == g)
            gl = sum(L[i] for i in range(N) if groups[i] == g)
            per.append(gs / gl if gl > 0 else 0.0)
        r = sum(per) / len(names)
    return -r


def kl(logp, ref, est):
    out = []
    for lp, lr in zip(logp, ref):
        x = lr - lp
        out.append({"k1": -x, "k2": 0.5 * x * x, "k3": math.exp(x) - 1 - x}[est])
    return out


def pass_at_k(n, c, k):
    if n - c < k:
        return 1.0
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def mixed(p, G):
    return 1 - p ** G - (1 - p) ** G


# ---------- section 9 reference values, as published ----------

s3 = math.sqrt(3)
ln13 = math.log(1.3)
reference = [
    # The published values ignore eps = 1e-6, which moves them by ~2e-6: tol 1e-5.
    case("s9 group advantages (1,0,0,1) = (1,-1,-1,1)", "advantages", {"rewards": [[1, 0, 0, 1]], "baseline": "mean", "normalize": "std"}, [[1, -1, -1, 1]], 1e-5),
    case("s9 group advantages (1,0,0,0) = (sqrt3,-1/sqrt3,-1/sqrt3,-1/sqrt3)", "advantages", {"rewards": [[1, 0, 0, 0]], "baseline": "mean", "normalize": "std"}, [[s3, -1 / s3, -1 / s3, -1 / s3]], 1e-5),
    case("s9 group advantages (1,0,0,0) ~ (1.732,-0.577,-0.577,-0.577)", "advantages", {"rewards": [[1, 0, 0, 0]], "baseline": "mean", "normalize": "std"}, [[1.732, -0.577, -0.577, -0.577]], 6e-4),
    case("s9 all-equal rewards give zero advantages", "advantages", {"rewards": [[1, 1, 1, 1], [0, 0, 0, 0], [0.3, 0.3, 0.3]], "baseline": "mean", "normalize": "std"}, [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0]]),
    case("s9 all-equal rewards give zero policy gradient (zero advantages: loss 0 at any ratio)", "policy_loss", {
        "logp": [[-0.5, -1.2], [-2.0, -0.1]], "logp_old": [[-0.9, -1.0], [-1.1, -0.4]], "mask": [[1, 1], [1, 1]],
        "advantages": [0, 0], "clip": {"low": 0.2, "high": 0.2, "dual": None}, "reduction": {"mode": "token_mean"}}, {"loss": 0}),
    # One token: the loss is -u.
    case("s9 token rho=1.3 A=1.732 eps 0.2: u = min(2.2516, 2.0784) = 2.0784", "policy_loss", {
        "logp": [[-1 + ln13]], "logp_old": [[-1]], "mask": [[1]], "advantages": [1.732],
        "clip": {"low": 0.2, "high": 0.2, "dual": None}, "reduction": {"mode": "token_mean"}}, {"loss": -2.0784}),
    case("s9 token rho=1.3 A=-0.577 eps 0.2: u = -0.750", "policy_loss", {
        "logp": [[-1 + ln13]], "logp_old": [[-1]], "mask": [[1]], "advantages": [-0.577],
        "clip": {"low": 0.2, "high": 0.2, "dual": None}, "reduction": {"mode": "token_mean"}}, {"loss": 0.750}, 5e-4),
]
lengths = [2, 4, 4, 6]
adv1000 = [s3, -1 / s3, -1 / s3, -1 / s3]
rho1 = {
    "logp": [[-0.7] * 6 for _ in lengths], "logp_old": [[-0.7] * 6 for _ in lengths],
    "mask": [[1] * L + [0] * (6 - L) for L in lengths], "advantages": adv1000,
    "clip": {"low": 0.2, "high": 0.2, "dual": None},
}
reference += [
    case("s9 lengths (2,4,4,6) rho=1 seq_mean_token_mean loss = 0", "policy_loss", {**rho1, "reduction": {"mode": "seq_mean_token_mean"}}, {"loss": 0}),
    case("s9 lengths (2,4,4,6) rho=1 token_mean loss = 1/(2 sqrt3)", "policy_loss", {**rho1, "reduction": {"mode": "token_mean"}}, {"loss": 1 / (2 * s3)}),
    case("s9 lengths (2,4,4,6) rho=1 constant(6) loss = 1/(3 sqrt3)", "policy_loss", {**rho1, "reduction": {"mode": "constant", "constant": 6}}, {"loss": 1 / (3 * s3)}),
    case("s9 lengths (2,4,4,6) rho=1 token_mean ~ 0.2887", "policy_loss", {**rho1, "reduction": {"mode": "token_mean"}}, {"loss": 0.2887}, 5e-5),
    case("s9 lengths (2,4,4,6) rho=1 constant(6) ~ 0.1925", "policy_loss", {**rho1, "reduction": {"mode": "constant", "constant": 6}}, {"loss": 0.1925}, 5e-5),
    case("s9 P(mixed group) p=0.5 G=4 = 0.875", "mixed_group_probability", {"p": 0.5, "group_size": 4}, 0.875),
    case("s9 P(mixed group) p=0.01 G=4 ~ 0.0394", "mixed_group_probability", {"p": 0.01, "group_size": 4}, 0.0394, 1e-4),
    case("s9 P(mixed group) p=0.01 G=16 ~ 0.1485", "mixed_group_probability", {"p": 0.01, "group_size": 16}, 0.1485, 1e-4),
    case("s9 pass@3 n=10 c=2 = 1 - 56/120", "pass_at_k", {"n": 10, "c": 2, "k": 3}, 1 - 56 / 120),
    case("s9 pass@3 n=10 c=2 ~ 0.533 (not the plug-in 0.488)", "pass_at_k", {"n": 10, "c": 2, "k": 3}, 0.533, 5e-4),
]
write("reference-values.json", reference)

# ---------- advantages and task normalisation ----------

adv_cases = []
for name, groups in [
    ("(1,0,0,1)", [[1, 0, 0, 1]]),
    ("(1,0,0,0)", [[1, 0, 0, 0]]),
    ("seed responses (0,1,0,1)", [[0, 1, 0, 1]]),
    ("graded rewards, groups of different sizes", [[0.2, 0.9, 0.4], [3, -1, 2, 0, 5], [0.25, 0.75]]),
    ("penalised rewards (abnormal termination -0.2)", [[1, -0.2, 0, 0.6, -0.2, 1, 0, 0.3]]),
]:
    for baseline in ["mean", "leave_one_out", "none"]:
        for normalize in ["std", "none"]:
            adv_cases.append(case(f"{baseline}/{normalize} {name}", "advantages",
                                  {"rewards": groups, "baseline": baseline, "normalize": normalize},
                                  [group_adv(g, baseline, normalize) for g in groups]))
adv_cases += [
    case("leave_one_out/none (1,0,0,0) = (1,-1/3,-1/3,-1/3)", "advantages", {"rewards": [[1, 0, 0, 0]], "baseline": "leave_one_out", "normalize": "none"}, [[1, -1 / 3, -1 / 3, -1 / 3]]),
    case("mean/none (1,0,0,0) = (G-1)/G of leave-one-out", "advantages", {"rewards": [[1, 0, 0, 0]], "baseline": "mean", "normalize": "none"}, [[0.75, -0.25, -0.25, -0.25]]),
    case("G=1 mean/std is zero", "advantages", {"rewards": [[0.7], [1]], "baseline": "mean", "normalize": "std"}, [[0], [0]]),
    case("G=1 mean/none is zero", "advantages", {"rewards": [[0.7]], "baseline": "mean", "normalize": "none"}, [[0]]),
    case("G=1 leave_one_out/none is zero", "advantages", {"rewards": [[0.7]], "baseline": "leave_one_out", "normalize": "none"}, [[0]]),
    case("G=1 leave_one_out/std is zero", "advantages", {"rewards": [[1]], "baseline": "leave_one_out", "normalize": "std"}, [[0]]),
    case("all-equal leave_one_out is zero", "advantages", {"rewards": [[1, 1, 1], [0.4, 0.4]], "baseline": "leave_one_out", "normalize": "std"}, [[0, 0, 0], [0, 0]]),
    case("all-equal mean/none is zero", "advantages", {"rewards": [[0.6, 0.6, 0.6, 0.6]], "baseline": "mean", "normalize": "none"}, [[0, 0, 0, 0]]),
    case("all-equal without a baseline keeps A = R (REINFORCE)", "advantages", {"rewards": [[1, 1, 1]], "baseline": "none", "normalize": "none"}, [[1, 1, 1]]),
]
tn = [
    ("two tasks", [1.7, -0.6, -0.6, -0.5, 0.3, 0.9, 0.2], ["db", "db", "db", "db", "kg", "kg", "kg"]),
    ("interleaved tasks", [0.5, 2.0, -1.0, 0.25, 3.0, -0.75], ["a", "b", "a", "b", "a", "b"]),
    ("a task with one token is zero", [0.4, 1.0, -1.0, 2.5], ["solo", "t", "t", "t"]),
    ("an all-equal task is zero", [0.3, 0.3, 0.3, 1.0, -1.0], ["flat", "flat", "flat", "t", "t"]),
    ("token-level advantages of two trajectories", [1.2, 1.2, 1.2, -0.4, -0.4, 0.1, 0.1, 0.1, 0.1], ["web"] * 5 + ["os"] * 4),
]
for name, a, t in tn:
    adv_cases.append(case(f"task_normalize {name}", "task_normalize", {"advantages": a, "tasks": t}, task_norm(a, t)))
write("advantages.json", adv_cases)

# ---------- GAE ----------

gae_cases = []
for name, r, v, g, l, end, b in [
    ("terminal reward, gamma=lambda=1, terminated", [0, 0, 1], [0.5, 0.6, 0.7], 1, 1, "terminated", None),
    ("terminal reward, gamma=lambda=1, truncated bootstraps V(h_T)", [0, 0, 1], [0.5, 0.6, 0.7], 1, 1, "truncated", 0.8),
    ("gamma 0.99 lambda 0.95 terminated", [0, 0, 0.5, 0, 0, 1], [0.2, 0.3, 0.35, 0.4, 0.5, 0.6], 0.99, 0.95, "terminated", None),
    ("gamma 0.99 lambda 0.95 truncated", [0, 0, 0.5, 0, 0, 1], [0.2, 0.3, 0.35, 0.4, 0.5, 0.6], 0.99, 0.95, "truncated", 0.45),
    ("lambda 0 is the one-step TD residual", [0.1, -0.2, 0.3, 1.0], [0.5, 0.4, 0.6, 0.2], 0.9, 0, "truncated", 0.3),
    ("lambda 1 is the discounted return minus V", [0.1, -0.2, 0.3, 1.0], [0.5, 0.4, 0.6, 0.2], 0.9, 1, "terminated", None),
    ("a single step, terminated", [1], [0.4], 1, 1, "terminated", None),
    ("a single step, truncated", [0], [0.4], 0.95, 0.9, "truncated", 0.7),
    ("turn rewards on each turn's last token, gamma 1 lambda 0.9", [0, 0, -0.2, 0, 0, 0, 1], [0.1, 0.15, 0.1, 0.3, 0.35, 0.5, 0.8], 1, 0.9, "terminated", None),
    ("gamma 0 ignores the future", [0.5, 1.0, -1.0], [0.2, 0.4, 0.6], 0, 0.95, "truncated", 5.0),
]:
    inp = {"rewards": r, "values": v, "gamma": g, "lambda": l, "end": end}
    if b is not None:
        inp["bootstrap_value"] = b
    gae_cases.append(case(name, "gae", inp, gae_sum(r, v, g, l, end, b)))
gae_cases.append(case("terminated ignores bootstrap_value", "gae",
                      {"rewards": [0, 1], "values": [0.3, 0.6], "gamma": 0.99, "lambda": 0.95, "end": "terminated", "bootstrap_value": 5.0},
                      gae_sum([0, 1], [0.3, 0.6], 0.99, 0.95, "terminated")))
write("gae.json", gae_cases)

# ---------- policy loss: clipping, every reduction, microbatches ----------

pl = []
one = lambda lp, lpo, a, clip: {"logp": [[lp]], "logp_old": [[lpo]], "mask": [[1]], "advantages": [a], "clip": clip, "reduction": {"mode": "token_mean"}}
sym = {"low": 0.2, "high": 0.2, "dual": None}
for name, rho, a, clip in [
    ("seed: A=1, rho=1.5 stays at 1.2 (loss -1.2)", 1.5, 1.0, sym),
    ("seed: A=-1, rho=0.5 stays at -0.8 (loss 0.8)", 0.5, -1.0, sym),
    ("A=1, rho=0.5 is not clipped below (loss -0.5)", 0.5, 1.0, sym),
    ("A=-1, rho=1.5 is not clipped above (loss 1.5)", 1.5, -1.0, sym),
    ("clip-higher 0.2/0.28: A=1, rho=1.25 is inside", 1.25, 1.0, {"low": 0.2, "high": 0.28, "dual": None}),
    ("clip-higher 0.2/0.28: A=1, rho=1.4 stops at 1.28", 1.4, 1.0, {"low": 0.2, "high": 0.28, "dual": None}),
    ("clip-higher 0.2/0.28: A=-0.5, rho=0.7 stops at 0.8", 0.7, -0.5, {"low": 0.2, "high": 0.28, "dual": None}),
    ("dual clip c=3: A=-0.5, rho=5 is bounded by c*A", 5.0, -0.5, {"low": 0.2, "high": 0.2, "dual": 3}),
    ("dual clip c=3: A=-0.5, rho=2 is below the bound", 2.0, -0.5, {"low": 0.2, "high": 0.2, "dual": 3}),
    ("dual clip c=3 does not touch A>0", 5.0, 0.5, {"low": 0.2, "high": 0.2, "dual": 3}),
    ("rho=1 gives u = A", 1.0, 0.37, sym),
]:
    lpo = -1.3
    lp = lpo + math.log(rho)
    inp = one(lp, lpo, a, clip)
    pl.append(case(name, "policy_loss", inp, {"loss": policy_loss(inp)}))

# A batch of two groups, ragged lengths with padding, ratios on both sides of the clip range.
batch = {
    "logp": [
        [-0.9, -1.4, -0.2, -2.2, 0, 0],
        [-0.5, -0.8, -1.9, 0, 0, 0],
        [-1.1, -0.3, -0.7, -1.5, -0.9, -2.0],
        [-0.4, -2.6, 0, 0, 0, 0],
        [-1.3, -0.6, -0.8, -1.2, -0.1, 0],
    ],
    "logp_old": [
        [-1.2, -1.0, -0.2, -1.9, 0, 0],
        [-0.9, -0.8, -1.4, 0, 0, 0],
        [-1.0, -0.7, -0.5, -1.5, -1.4, -1.6],
        [-0.8, -2.0, 0, 0, 0, 0],
        [-1.0, -0.9, -0.8, -1.5, -0.6, 0],
    ],
    # Position 1 of sequence 2 is an observation token (not a target); padding is 0.
    "mask": [
        [1, 1, 1, 1, 0, 0],
        [1, 1, 1, 0, 0, 0],
        [1, 0, 1, 1, 1, 1],
        [1, 1, 0, 0, 0, 0],
        [1, 1, 1, 1, 1, 0],
    ],
    "advantages": [1.2, -0.4, -0.8, 0.9, -0.9],
    "groups": ["p1", "p1", "p1", "p2", "p2"],
}
reductions = [
    ("token_mean", {"mode": "token_mean"}),
    ("seq_mean_token_mean", {"mode": "seq_mean_token_mean"}),
    ("seq_mean_token_sum", {"mode": "seq_mean_token_sum"}),
    ("constant(8)", {"mode": "constant", "constant": 8}),
    ("group_token_mean", {"mode": "group_token_mean"}),
]
partitions = [[[0, 1], [2, 3, 4]], [[4], [2, 0], [3], [1]], [[3, 1, 4, 0, 2]]]
for clipname, clip in [("eps 0.2", sym), ("clip-higher 0.2/0.28 dual 1.5", {"low": 0.2, "high": 0.28, "dual": 1.5})]:
    for rname, red in reductions:
        inp = {**batch, "clip": clip, "reduction": red}
        expected = {"loss": policy_loss(inp)}
        pl.append(case(f"batch {rname}, {clipname}", "policy_loss", inp, expected))
        for p in partitions:
            pl.append(case(f"batch {rname}, {clipname}, microbatches {p}", "policy_loss", {**inp, "microbatches": p}, expected))

per_token = [[1.0, 0.8, 0.5, 0.2, 0, 0], [-0.3, -0.3, -0.6, 0, 0, 0], [0.4, 9.9, -0.2, -0.5, -0.7, 1.1], [0.9, -0.9, 0, 0, 0, 0], [-1.0, -0.5, 0, 0.5, 1.0, 0]]
for rname, red in reductions:
    inp = {**batch, "advantages": per_token, "clip": sym, "reduction": red}
    pl.append(case(f"per-token advantages (GAE) {rname}", "policy_loss", inp, {"loss": policy_loss(inp)}))
    pl.append(case(f"per-token advantages (GAE) {rname}, microbatches", "policy_loss", {**inp, "microbatches": [[2], [0, 4], [1, 3]]}, {"loss": policy_loss(inp)}))

# Groups that are not contiguous, one with more tokens: group_token_mean differs from token_mean.
uneven = {
    "logp": [[-1.0, -0.5, -0.2], [-0.3, -0.9, -1.1], [-0.6, -0.4, -0.8], [-0.7, -1.6, -0.2]],
    "logp_old": [[-1.1, -0.5, -0.4], [-0.3, -0.6, -1.2], [-0.6, -0.6, -0.8], [-0.9, -1.5, -0.2]],
    "mask": [[1, 0, 0], [1, 1, 1], [1, 1, 0], [1, 1, 1]],
    "advantages": [1.0, -0.5, 0.5, -1.0],
    "groups": ["x", "y", "x", "y"],
    "clip": sym,
}
for rname, red in reductions:
    inp = {**uneven, "reduction": red}
    pl.append(case(f"interleaved groups {rname}", "policy_loss", inp, {"loss": policy_loss(inp)}))
    pl.append(case(f"interleaved groups {rname}, microbatches", "policy_loss", {**inp, "microbatches": [[1, 2], [3, 0]]}, {"loss": policy_loss(inp)}))

# A sequence without targets still counts in N (seq means) but adds nothing.
empty = {
    "logp": [[-0.5, -0.7], [-1.0, -1.0], [-0.2, -0.9]],
    "logp_old": [[-0.6, -0.7], [-1.0, -1.0], [-0.4, -0.8]],
    "mask": [[1, 1], [0, 0], [1, 0]],
    "advantages": [0.7, 2.0, -0.3],
    "groups": ["a", "a", "b"],
    "clip": sym,
}
for rname, red in reductions:
    inp = {**empty, "reduction": red}
    pl.append(case(f"a sequence without targets, {rname}", "policy_loss", inp, {"loss": policy_loss(inp)}))
    pl.append(case(f"a sequence without targets, {rname}, microbatches", "policy_loss", {**inp, "microbatches": [[1], [2, 0]]}, {"loss": policy_loss(inp)}))
write("policy-loss.json", pl)

# ---------- KL ----------

logp = [-0.5, -1.2, -2.0, -0.05, -3.1]
ref = [-0.7, -1.2, -1.5, -0.3, -2.0]
kl_cases = [case(f"{e} on five tokens", "kl", {"logp": logp, "logp_ref": ref, "estimator": e}, kl(logp, ref, e)) for e in ["k1", "k2", "k3"]]
kl_cases += [case(f"{e} is zero when the policies agree", "kl", {"logp": [-0.4, -2.2], "logp_ref": [-0.4, -2.2], "estimator": e}, [0, 0]) for e in ["k1", "k2", "k3"]]
kl_cases.append(case("k3 of log_r = 1 is e - 2", "kl", {"logp": [-1.0], "logp_ref": [0.0], "estimator": "k3"}, [math.e - 2]))
kl_cases.append(case("k3 of log_r = -1 is 1/e", "kl", {"logp": [0.0], "logp_ref": [-1.0], "estimator": "k3"}, [1 / math.e]))
write("kl.json", kl_cases)

# ---------- train/inference mismatch and truncated importance sampling (section 12) ----------

def mismatch(old, engine, mask, threshold):
    d = [abs(o - e) for ro, re_, rm in zip(old, engine, mask) for o, e, m in zip(ro, re_, rm) if m]
    if not d:
        return {"mean_abs": 0.0, "max_abs": 0.0, "frac_over": 0.0, "tokens": 0}
    return {"mean_abs": sum(d) / len(d), "max_abs": max(d), "frac_over": sum(1 for x in d if x > threshold) / len(d), "tokens": len(d)}


def tis(old, engine, mask, cap, level):
    out = []
    for ro, re_, rm in zip(old, engine, mask):
        if level == "token":
            out.append([min(math.exp(o - e), cap) if m else 0.0 for o, e, m in zip(ro, re_, rm)])
        else:
            w = min(math.exp(sum(o - e for o, e, m in zip(ro, re_, rm) if m)), cap)
            out.append([w if m else 0.0 for m in rm])
    return out


# Two sequences; position 0 and an observation are not targets (their gaps, large, are ignored).
mm = {
    "logp_old": [[0.0, -1.0, -0.5, -2.0, -0.3], [0.0, -0.7, -1.2, -0.1]],
    "logp_engine": [[-9.0, -1.1, -0.5, -1.2, -0.35], [5.0, -0.7, -3.0, -0.4]],
    "mask": [[0, 1, 1, 0, 1], [0, 1, 1, 1]],
}
mmc = [
    # |d| on targets: 0.1, 0, 0.05, 0, 1.8, 0.3 -> mean 2.25/6 = 0.375, max 1.8, over 0.2: {1.8, 0.3} = 1/3.
    case("mismatch stats over target tokens only", "mismatch", {**mm, "threshold": 0.2}, {"mean_abs": 0.375, "max_abs": 1.8, "frac_over": 1 / 3, "tokens": 6}),
    case("mismatch: the threshold is strict (|d| = 0.1 is not over 0.1)", "mismatch", {**mm, "threshold": 0.1}, mismatch(mm["logp_old"], mm["logp_engine"], mm["mask"], 0.1)),
    case("mismatch without targets is zero", "mismatch", {"logp_old": [[0.0, -1.0]], "logp_engine": [[-2.0, -3.0]], "mask": [[0, 0]], "threshold": 0.5}, {"mean_abs": 0.0, "max_abs": 0.0, "frac_over": 0.0, "tokens": 0}),
    case("mismatch of equal log-probs is zero", "mismatch", {"logp_old": [[0.0, -1.0, -2.0]], "logp_engine": [[0.0, -1.0, -2.0]], "mask": [[0, 1, 1]], "threshold": 0.01}, {"mean_abs": 0.0, "max_abs": 0.0, "frac_over": 0.0, "tokens": 2}),
    # token level, cap 2: exp(0.1), exp(0), exp(0.05); exp(1.8) = 6.05 -> 2, exp(0.3); 0 off target.
    case("tis token level, cap 2", "tis_weights", {**mm, "cap": 2, "level": "token"},
         [[0.0, math.exp(0.1), 1.0, 0.0, math.exp(0.05)], [0.0, 1.0, 2.0, math.exp(0.3)]]),
    case("tis token level caps only above C (cap 1.5)", "tis_weights", {**mm, "cap": 1.5, "level": "token"}, tis(mm["logp_old"], mm["logp_engine"], mm["mask"], 1.5, "token")),
    # sequence level: exp(0.1 + 0 + 0.05) = exp(0.15) for every target of sequence 0; sequence 1's sum 2.1 -> capped at 2.
    case("tis sequence level, cap 2", "tis_weights", {**mm, "cap": 2, "level": "sequence"},
         [[0.0, math.exp(0.15), math.exp(0.15), 0.0, math.exp(0.15)], [0.0, 2.0, 2.0, 2.0]]),
    case("tis sequence level, cap 10 leaves exp(2.1)", "tis_weights", {**mm, "cap": 10, "level": "sequence"}, tis(mm["logp_old"], mm["logp_engine"], mm["mask"], 10, "sequence")),
    case("tis weights below 1 are kept (the engine was more confident)", "tis_weights",
         {"logp_old": [[0.0, -1.5]], "logp_engine": [[0.0, -1.0]], "mask": [[0, 1]], "cap": 2, "level": "token"}, [[0.0, math.exp(-0.5)]]),
]


def weighted_policy_loss(inp):
    # Each target's u times its weight: the same formula as policy_loss with u scaled.
    scaled = {**inp, "advantages": [[(inp["advantages"][i] if not isinstance(inp["advantages"][i], list) else inp["advantages"][i][k]) for k in range(len(inp["mask"][i]))] for i in range(len(inp["mask"]))]}
    logp, old, mask, adv, w = scaled["logp"], scaled["logp_old"], scaled["mask"], scaled["advantages"], inp["is_weights"]
    clip, red = inp["clip"], inp["reduction"]
    s, L = [], []
    for i in range(len(logp)):
        s.append(sum(w[i][k] * surrogate(math.exp(logp[i][k] - old[i][k]), adv[i][k], clip["low"], clip["high"], clip["dual"]) for k in range(len(logp[i])) if mask[i][k]))
        L.append(sum(mask[i]))
    assert red["mode"] == "token_mean"
    return -sum(s) / sum(L)


wb = {**batch, "clip": sym, "reduction": {"mode": "token_mean"},
      "is_weights": [[1.0, 0.5, 2.0, 1.2, 0, 0], [0.9, 1.0, 1.0, 0, 0, 0], [1.1, 7.0, 0.8, 1.0, 1.3, 0.2], [2.0, 0.0, 0, 0, 0, 0], [1.0, 1.0, 1.0, 1.0, 1.0, 0]]}
mmc += [
    # One token: u = min(1.5, 1.2) * 1 = 1.2, times w = 0.5: loss -0.6.
    case("policy_loss with an importance weight: rho=1.5 A=1 w=0.5 gives -0.6", "policy_loss", {**one(-1.3 + math.log(1.5), -1.3, 1.0, sym), "is_weights": [[0.5]]}, {"loss": -0.6}),
    case("policy_loss with importance weights on a batch, token_mean", "policy_loss", wb, {"loss": weighted_policy_loss(wb)}),
    case("policy_loss with importance weights on a batch, microbatches", "policy_loss", {**wb, "microbatches": [[0, 3], [1, 2, 4]]}, {"loss": weighted_policy_loss(wb)}),
    case("policy_loss with unit importance weights equals the unweighted loss", "policy_loss",
         {**batch, "clip": sym, "reduction": {"mode": "token_mean"}, "is_weights": [[1.0] * 6 for _ in range(5)]}, {"loss": policy_loss({**batch, "clip": sym, "reduction": {"mode": "token_mean"}})}),
]

# Per-token behaviour versions (docs/semantics.md §7). Sequence 0 is an episode that spanned a
# weight update: its first turn (targets 1-2) was sampled by version 3, its second (targets 4-5,
# after an observation at 3) by version 5; sequence 1 was sampled by version 5 throughout. The
# update starts at version 6, whose log-probs are the proximal logp_old of a corrected group.
mu = [[0.0, -0.9, -1.4, -2.0, -0.6, -1.1], [0.0, -0.5, -0.8, -1.6]]
prox = [[0.0, -0.5, -1.6, -2.0, -0.55, -0.2], [0.0, -0.45, -1.3, -0.2]]
vmask = [[0, 1, 1, 0, 1, 1], [0, 1, 1, 1]]
vw = tis(prox, mu, vmask, 2, "token")
vb = {"logp": [[0.0, -0.4, -1.5, -2.0, -0.5, -0.3], [0.0, -0.3, -1.4, -0.1]], "logp_old": prox, "mask": vmask,
      "advantages": [0.8, -0.6], "clip": sym, "reduction": {"mode": "token_mean"}, "is_weights": vw}
mmc += [
    # exp(0.4), exp(-0.2) from version 3's tokens; exp(0.05), exp(0.9) = 2.46 -> 2 from version 5's; sequence 1: exp(0.05), exp(-0.5), exp(1.4) -> 2.
    case("per-token versions: truncated weights of a sequence sampled by two versions, each token to its own sampler", "tis_weights",
         {"logp_old": prox, "logp_engine": mu, "mask": vmask, "cap": 2, "level": "token"},
         [[0.0, math.exp(0.4), math.exp(-0.2), 0.0, math.exp(0.05), 2.0], [0.0, math.exp(0.05), math.exp(-0.5), 2.0]]),
    case("per-token versions: sequence-level weight over the tokens of both versions", "tis_weights",
         {"logp_old": prox, "logp_engine": mu, "mask": vmask, "cap": 10, "level": "sequence"}, tis(prox, mu, vmask, 10, "sequence")),
    case("per-token versions: decoupled loss, ratio to the proximal policy, weights to each token's sampler", "policy_loss", vb, {"loss": weighted_policy_loss(vb)}),
    case("per-token versions: decoupled loss over microbatches", "policy_loss", {**vb, "microbatches": [[1], [0]]}, {"loss": weighted_policy_loss(vb)}),
    # Uncorrected (in-flight updates, no group past the bound): logp_old is each token's sampled log-prob, so
    # the ratio of one sequence is taken to version 3 on its first turn and to version 5 on its second.
    case("per-token versions: uncorrected loss, each token's ratio to the version that sampled it", "policy_loss",
         {**{k: v for k, v in vb.items() if k != "is_weights"}, "logp_old": mu}, {"loss": policy_loss({**{k: v for k, v in vb.items() if k != "is_weights"}, "logp_old": mu})}),
]
write("mismatch.json", mmc)

# ---------- evaluation and sampling arithmetic ----------

ev = []
for n, c, k in [(10, 2, 3), (10, 2, 1), (5, 3, 3), (5, 0, 2), (5, 5, 1), (5, 1, 5), (20, 7, 5), (200, 13, 50), (100, 1, 10), (1, 1, 1), (1, 0, 1)]:
    ev.append(case(f"pass@{k} n={n} c={c}", "pass_at_k", {"n": n, "c": c, "k": k}, pass_at_k(n, c, k)))
for p, G in [(0, 4), (1, 4), (0.5, 1), (0.3, 8), (0.9, 16), (0.5, 2)]:
    ev.append(case(f"P(mixed group) p={p} G={G}", "mixed_group_probability", {"p": p, "group_size": G}, mixed(p, G)))
write("eval.json", ev)

print("cases:", sum(len(x) for x in [reference, adv_cases, gae_cases, pl, kl_cases, mmc, ev]))
