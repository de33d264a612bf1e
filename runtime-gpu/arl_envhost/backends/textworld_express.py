"""TextWorldExpress: its eight procedural text games (twc, cookingworld, coin, mapreader, arithmetic,
sorting, simonsays, peckingorder), simulated in a JVM.

Knobs (docs/env-libraries.md, "TextWorldExpress"): ``game``, ``game_params`` (an object of the game's
integer parameters, e.g. ``{"numLocations": 5}``), ``fold`` (train, dev, test), ``step_limit`` and
``show_valid_actions``. Task ``i`` is the fold's ``i``-th valid seed, so the episode's seed does not change
the game. The gold path is the walkthrough.

JVMs: a ``TextWorldExpressEnv`` holds one JVM (0.6-9 s to start) and one current game. An episode takes a
JVM of its own from a pool and gives it back when it closes; the next episode's ``reset`` loads the game
and generates it anew from its seed, which replaces all of the previous game's state (the test checks a
reused JVM plays exactly like a fresh one). So concurrent episodes never share a JVM; the pool grows to
the largest number of episodes open at once. An episode that raised gives its JVM up instead.
"""

from __future__ import annotations

from typing import Any

from arl_envhost.backends.base import Backend, ConfigError, Episode, SignalValue, Step
from arl_envhost.backends.knobs import choice, collect, import_library, knob, unknown_knobs, words

KNOBS = ("game", "game_params", "fold", "step_limit", "show_valid_actions")
FOLDS = ("train", "dev", "test")


def _params(config: dict[str, Any]) -> str:
    """The game parameters as the library takes them: ``"name=value,name=value"``."""
    params = knob(config, "game_params", dict, {})
    for name, value in params.items():
        knob({f"game_params.{name}": value}, f"game_params.{name}", int)
    return ",".join(f"{name}={value}" for name, value in sorted(params.items()))


class TextWorldExpressEpisode(Episode):
    def __init__(self, backend: TextWorldExpressBackend, env: Any, config: dict[str, Any], game_seed: int) -> None:
        self._backend = backend
        self._env = env
        self._config = config
        self._seed = game_seed
        self._show = knob(config, "show_valid_actions", bool, False)
        self._healthy = True
        self._outcome: dict[str, SignalValue] = {"score": 0.0, "won": False, "lost": False, "moves": 0}

    def _guard(self, fn: Any) -> Any:
        try:
            return fn()
        except BaseException:
            self._healthy = False  # a JVM left mid-call is not handed to another episode
            raise

    def _text(self, observation: str, infos: dict[str, Any]) -> str:
        if not self._show:
            return observation
        return f"{observation}\nValid actions: {', '.join(sorted(infos.get('validActions', [])))}"

    def reset(self) -> Step:
        observation, infos = self._guard(lambda: self._backend._reset(self._env, self._config, self._seed))
        return Step(observation=self._text(observation, infos))

    def step(self, action: str) -> Step:
        observation, reward, done, infos = self._guard(lambda: self._env.step(action))
        self._outcome = {
            "score": float(infos["score"]),
            "won": bool(infos["tasksuccess"]),
            "lost": bool(infos["taskfailure"]),
            "moves": int(infos["numMoves"]),
        }
        return Step(observation=self._text(observation, infos), signals={**self._outcome, "reward": float(reward)}, done=bool(done))

    def outcome(self) -> dict[str, SignalValue]:
        return dict(self._outcome)

    def close(self) -> None:
        env, self._env = self._env, None
        if env is not None:
            self._backend._release(env, self._healthy)


class TextWorldExpressBackend(Backend):
    name = "textworld_express"

    def __init__(self) -> None:
        self._idle: dict[int, list[Any]] = {}
        self._seeds: dict[str, list[int]] = {}

    def _library(self) -> Any:
        return import_library("textworld_express", "textworld-express", self.setup_hint)

    def _take(self, step_limit: int) -> Any:
        idle = self._idle.setdefault(step_limit, [])
        return idle.pop() if idle else self._library().TextWorldExpressEnv(envStepLimit=step_limit)

    def _release(self, env: Any, healthy: bool) -> None:
        if healthy:
            self._idle.setdefault(env.envStepLimit, []).append(env)
        else:
            env.close()

    def close(self) -> None:
        """Stops the pooled JVMs (they also exit with the host: py4j's die_on_exit)."""
        for envs in self._idle.values():
            for env in envs:
                env.close()
        self._idle.clear()

    def _reset(self, env: Any, config: dict[str, Any], game_seed: int) -> tuple[str, dict[str, Any]]:
        game = knob(config, "game", str, required=True)
        fold = choice(config, "fold", FOLDS, "train")
        # Always passing the game and its parameters makes the library load them anew (a fresh generator).
        return env.reset(seed=game_seed, gameFold=fold, gameName=game, gameParams=_params(config), generateGoldPath=True)

    def _step_limit(self, config: dict[str, Any]) -> int:
        limit = knob(config, "step_limit", int, 100)
        if limit < 1:
            raise ConfigError("step_limit", f"must be at least 1, not {limit}")
        return limit

    def _fold_seeds(self, config: dict[str, Any]) -> list[int]:
        key = f"{knob(config, 'game', str, required=True)}|{_params(config)}|{choice(config, 'fold', FOLDS, 'train')}"
        if key not in self._seeds:
            env = self._take(self._step_limit(config))
            try:
                self._reset(env, config, 0)
                fold = choice(config, "fold", FOLDS, "train")
                getter = {"train": env.getValidSeedsTrain, "dev": env.getValidSeedsDev, "test": env.getValidSeedsTest}[fold]
                self._seeds[key] = [int(s) for s in getter()]
            finally:
                self._release(env, True)
        return self._seeds[key]

    def _game_seed(self, config: dict[str, Any], task: int) -> int:
        seeds = self._fold_seeds(config)
        if not 0 <= task < len(seeds):
            raise ConfigError("task", f"task {task} is outside the fold's {len(seeds)} games")
        return seeds[task]

    def check(self, config: dict[str, Any]) -> list[ConfigError]:
        constants = import_library("textworld_express.constants", "textworld-express", self.setup_hint)
        errors = unknown_knobs(config, KNOBS)
        errors += collect(
            lambda: choice(config, "fold", FOLDS, "train"),
            lambda: self._step_limit(config),
            lambda: knob(config, "show_valid_actions", bool, False),
        )
        game = None
        try:
            game = knob(config, "game", str, required=True, hint=f"one of {', '.join(constants.GAME_NAMES)}")
            if game not in constants.GAME_NAMES:
                raise ConfigError("game", f"TextWorldExpress has no game {game!r}", f"one of {', '.join(constants.GAME_NAMES)}")
            _params(config)
        except ConfigError as e:
            errors.append(e)
        if errors:
            return errors
        # The JVM knows each game's parameters and their ranges: one game is generated to ask it.
        env = self._take(self._step_limit(config))
        try:
            observation, _ = self._reset(env, config, self._fold_seeds(config)[0])
        except ValueError as e:
            return [ConfigError("game_params", str(e).strip(), "see docs/env-libraries.md for each game's parameters")]
        finally:
            self._release(env, True)
        if observation.startswith("ERROR"):
            return [ConfigError("game_params", observation.strip(), "each parameter an integer the game accepts")]
        return []

    def open(self, config: dict[str, Any], task: int, seed: int, data_root: str) -> Episode:
        game_seed = self._game_seed(config, task)
        return TextWorldExpressEpisode(self, self._take(self._step_limit(config)), config, game_seed)

    def task_count(self, config: dict[str, Any]) -> int | None:
        return len(self._fold_seeds(config))

    def _gold(self, config: dict[str, Any], task: int) -> tuple[list[str], list[str]]:
        """The gold path and the observations met along it."""
        env = self._take(self._step_limit(config))
        try:
            observation, infos = self._reset(env, config, self._game_seed(config, task))
            path = [str(a) for a in env.getGoldActionSequence()]
            texts = [observation, infos.get("taskDescription", ""), *infos.get("validActions", [])]
            for action in path:
                observation, _, _, infos = env.step(action)
                texts += [observation, *infos.get("validActions", [])]
        finally:
            self._release(env, True)
        return path, texts

    def walkthrough(self, config: dict[str, Any], task: int, data_root: str) -> list[str] | None:
        return self._gold(config, task)[0]

    def vocabulary(self, config: dict[str, Any], tasks: list[int], data_root: str) -> list[str]:
        texts = ["Valid actions"]
        for task in tasks:
            path, seen = self._gold(config, task)
            texts += path + seen
        return words(texts)
