"""A veRL-style reward function, written as for veRL (custom_reward_function.path / .name): the last
number of the answer against the ground truth. arl calls it unchanged (scorer: verl)."""

import re


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    numbers = re.findall(r"-?\d+(?:\.\d+)?", solution_str)
    if not numbers:
        return {"score": 0.0, "acc": False, "found": 0.0}
    correct = float(numbers[-1]) == float(ground_truth)
    return {"score": 1.0 if correct else 0.0, "acc": correct, "found": 1.0}
