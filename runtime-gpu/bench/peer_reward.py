"""The peer benchmark's reward (src/bench/peer.ts), one file for all three sides: ARL scores with it
as a veRL `compute_score` verifier in its env host, TRL as a reward function, the floor directly.

Correctness alone is 0 on every sample of a random model, so every advantage and gradient would be
0 and the sides would time an update that does nothing. Two small graded terms make the rewards
differ within every group: how close the answer's last number is to the truth, and brevity (the
shorter answer scores higher; the length of sampled text differs from sample to sample).
"""

import re

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    found = NUMBER.findall(solution_str)
    want = float(ground_truth)
    got = float(found[-1].replace(",", "")) if found else None
    correct = got is not None and abs(got - want) <= 1e-9 * max(1.0, abs(want))
    closeness = 0.0 if got is None else max(0.0, 1.0 - abs(got - want) / max(1.0, abs(want)))
    brevity = 1.0 / (1.0 + len(solution_str) / 100.0)
    return {"score": float(correct) + 0.1 * closeness + 0.1 * brevity, "acc": correct}
