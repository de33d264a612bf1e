"""A Gymnasium env with Text spaces for tests/test_env_backends_gymnasium.py: guess the seeded secret word.
A module of its own so that Gymnasium (and the env host) import it by its entry point."""
from __future__ import annotations

import gymnasium as gym
from gymnasium import spaces

WORDS = ["apple", "brick", "cloud", "dune", "ember", "frost", "grove", "harbor"]


class GuessWordEnv(gym.Env):
    """The secret word is drawn from the env's own np_random at reset; each guess gets 'warmer' or 'colder'."""

    def __init__(self, max_guesses: int = 4):
        self.action_space = spaces.Text(max_length=16)
        self.observation_space = spaces.Text(max_length=200)
        self.max_guesses = max_guesses

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.secret = WORDS[int(self.np_random.integers(len(WORDS)))]
        self.guesses = 0
        return f"Guess a word among: {' '.join(WORDS)}.", {}

    def step(self, action):
        self.guesses += 1
        won = action.strip() == self.secret
        reward = 1.0 if won else -0.1
        hint = "right" if won else ("warmer" if action[:1] == self.secret[:1] else "colder")
        return f"{hint} ({self.guesses} guesses)", reward, won, self.guesses >= self.max_guesses and not won, {}


class BoxEnv(gym.Env):
    """Numeric observations: refused by the backend."""

    def __init__(self):
        self.action_space = spaces.Text(max_length=8)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2,))
