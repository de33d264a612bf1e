"""TextArena: its single-player text games by env id (``Sudoku-v0``, ``Minesweeper-v0-small``, ...).

Knob (docs/env-libraries.md, "TextArena"): ``env_id``. An episode is ``ta.make(env_id)``, ``reset(num_players=1,
seed)``, then ``get_observation()`` / ``step(action)`` until the game says done; ``close()`` gives the
reward. The task is the seed: TextArena generates a game from it (``task_count`` is None).

TextArena's games draw from Python's global ``random`` (``State`` calls ``random.seed(seed)``) and some
from numpy's. The host interleaves many episodes in one process, so each episode keeps its own copy of
both generators' states and puts it in place around every call into the library: one episode's moves
never shift another's dice.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from arl_envhost.backends.base import Backend, ConfigError, Episode, SignalValue, Step
from arl_envhost.backends.knobs import import_library, knob, unknown_knobs, words

KNOBS = ("env_id",)
T = TypeVar("T")

# Single-player games that cannot run here, by the module of their entry point (measured on
# textarena 0.7.4, Python 3.11: docs/env-libraries.md). They are refused at check, before their module
# is imported: the NLTK ones call nltk.download at import, a network fetch.
_NLTK = "needs NLTK's 'words' corpus, which the game downloads at import (no network here)"
_API_KEY = "plays against an LLM over OpenRouter (needs OPENROUTER_API_KEY and the network): not a local, reproducible env"
_PY312 = "its source uses Python 3.12 syntax (f-strings with nested quotes)"
REFUSED: dict[str, tuple[str, Callable[[], bool]]] = {
    "textarena.envs.Hangman.env": (_NLTK, lambda: True),
    "textarena.envs.WordLadder.env": (_NLTK, lambda: True),
    "textarena.envs.Wordle.env": (_NLTK, lambda: True),
    "textarena.envs.WordSearch.env": (_NLTK, lambda: True),
    "textarena.envs.GuessWho.env": (_API_KEY, lambda: True),
    "textarena.envs.TwentyQuestions.env": (_API_KEY, lambda: True),
    "textarena.envs.Klondike.env": (_PY312, lambda: sys.version_info < (3, 12)),
    "textarena.envs.UltimateTexasHoldem.env": (_PY312, lambda: sys.version_info < (3, 12)),
}


class EpisodeRandom:
    """One episode's own states of Python's and numpy's global generators, swapped in around each library call."""

    def __init__(self, seed: int) -> None:
        self._seed = seed
        self._python: Any = None
        self._numpy: Any = None

    @contextmanager
    def active(self) -> Iterator[None]:
        np = sys.modules.get("numpy")
        outer_python = random.getstate()
        outer_numpy = np.random.get_state() if np is not None else None
        if self._python is None:
            random.seed(self._seed)
            if np is not None:
                np.random.seed(self._seed % 2**32)
        else:
            random.setstate(self._python)
            if np is not None and self._numpy is not None:
                np.random.set_state(self._numpy)
        try:
            yield
        finally:
            self._python = random.getstate()
            np = sys.modules.get("numpy")  # a game's first call may have imported it
            if np is not None:
                self._numpy = np.random.get_state()
                if outer_numpy is not None:
                    np.random.set_state(outer_numpy)
            random.setstate(outer_python)

    def run(self, fn: Callable[[], T]) -> T:
        with self.active():
            return fn()


def _text(observation: Any) -> str:
    """A wrapped env's observation is a string; a ``-raw`` env's is its new messages (sender, text, type)."""
    if isinstance(observation, str):
        return observation.strip()
    return "\n".join(str(message[1]) for message in observation or []).strip()


def _unwrapped(env: Any) -> Any:
    while hasattr(env, "env"):
        env = env.env
    return env


class TextArenaEpisode(Episode):
    def __init__(self, ta: Any, env_id: str, seed: int) -> None:
        self._random = EpisodeRandom(seed)
        self._seed = seed
        self._env = self._random.run(lambda: ta.make(env_id))
        self._outcome: dict[str, SignalValue] = {"reward": 0.0, "invalid_move": False, "turns": 0, "finished": False}
        self._done = False

    def reset(self) -> Step:
        self._random.run(lambda: self._env.reset(num_players=1, seed=self._seed))
        _, observation = self._random.run(self._env.get_observation)
        return Step(observation=_text(observation))

    def step(self, action: str) -> Step:
        if self._done:
            return Step(observation="The game is over.", signals=dict(self._outcome), done=True)
        done, _info = self._random.run(lambda: self._env.step(action))
        if not done:
            _, observation = self._random.run(self._env.get_observation)
            return Step(observation=_text(observation))
        self._done = True
        rewards, game_info = self._random.run(self._env.close)
        player = (game_info or {}).get(0, {})
        self._outcome = {
            "reward": float((rewards or {}).get(0, 0.0)),
            "invalid_move": bool(player.get("invalid_move", False)),
            "turns": int(player.get("turn_count", 0)),
            "finished": True,
        }
        reason = player.get("reason") or "The game is over."
        return Step(observation=str(reason), signals=dict(self._outcome), done=True)

    def outcome(self) -> dict[str, SignalValue]:
        return dict(self._outcome)


class TextArenaBackend(Backend):
    name = "textarena"

    def _library(self) -> Any:
        return import_library("textarena", "textarena", self.setup_hint)

    def _env_id(self, config: dict[str, Any]) -> str:
        ta = self._library()
        registry = import_library("textarena.envs.registration", "textarena", self.setup_hint).ENV_REGISTRY
        env_id = knob(config, "env_id", str, required=True, hint="a TextArena single-player env id, e.g. Sudoku-v0")
        if env_id not in registry:
            prefix = env_id.split("-")[0]
            close = [e for e in registry if e.split("-")[0].lower() == prefix.lower()][:4]
            hint = f"its ids for {prefix}: {', '.join(close)}" if close else "see docs/env-libraries.md"
            raise ConfigError("env_id", f"TextArena has no env {env_id!r}", hint)
        entry = registry[env_id].entry_point
        module = entry.split(":")[0] if isinstance(entry, str) else getattr(entry, "__module__", "")
        if module in REFUSED and REFUSED[module][1]():
            raise ConfigError("env_id", f"{env_id} cannot run here: {REFUSED[module][0]}", "pick another single-player game (docs/env-libraries.md)")
        # Made and reset once: a game for two or more players refuses one, and a variant may fail at its first observation.
        probe = EpisodeRandom(0)
        try:
            env = probe.run(lambda: ta.make(env_id))
            probe.run(lambda: env.reset(num_players=1, seed=0))
            state = _unwrapped(env).state
            probe.run(env.get_observation)
        except Exception as e:  # noqa: BLE001 - whatever the game raises is why it cannot run here
            why = f"{env_id} does not run as a single-player game here: {type(e).__name__}: {e}"[:300]
            raise ConfigError("env_id", why, "pick a single-player game") from None
        if not isinstance(state, ta.SinglePlayerState):
            raise ConfigError("env_id", f"{env_id} is a game for several players", "ARL runs TextArena's single-player games")
        return env_id

    def check(self, config: dict[str, Any]) -> list[ConfigError]:
        self._library()
        errors = unknown_knobs(config, KNOBS)
        try:
            self._env_id(config)
        except ConfigError as e:
            errors.append(e)
        return errors

    def open(self, config: dict[str, Any], task: int, seed: int, data_root: str) -> Episode:
        return TextArenaEpisode(self._library(), knob(config, "env_id", str, required=True), seed)

    def vocabulary(self, config: dict[str, Any], tasks: list[int], data_root: str) -> list[str]:
        """The words of each seed's first observation (``tasks`` are seeds: TextArena's tasks are unbounded)."""
        texts = []
        for seed in tasks:
            episode = self.open(config, 0, seed, data_root)
            texts.append(episode.reset().observation)
        return words(["The game is over", *texts])
