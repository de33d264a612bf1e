"""A Gymnasium env with text actions and observations, for experiments/envs/gymnasium.arl: find a
hidden number between 1 and 16 from "higher"/"lower" hints. The env host runs from this folder, so
the entry point ``guess_env:HigherLower`` imports this module."""
from __future__ import annotations

import gymnasium as gym
from gymnasium import spaces


class HigherLower(gym.Env):
    def __init__(self, top: int = 16):
        self.top = top
        self.action_space = spaces.Text(max_length=8)
        self.observation_space = spaces.Text(max_length=120)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.secret = int(self.np_random.integers(1, self.top + 1))
        return f"Find the number between 1 and {self.top}. Guess one.", {}

    def step(self, action):
        text = action.strip()
        guess = int(text) if text.isdigit() else None
        if guess == self.secret:
            return "right", 1.0, True, False, {}
        if guess is None:
            return "say a number", 0.0, False, False, {}
        return ("higher" if guess < self.secret else "lower"), 0.0, False, False, {}
