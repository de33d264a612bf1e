"""Gymnasium: any env whose action and observation spaces are text (``gymnasium.spaces.Text``).

Knobs (docs/env-libraries.md, "Gymnasium"): ``id`` (a registered id, or Gymnasium's own
``"module:EnvId"`` that imports the registering module first) or ``entry_point`` (``"module:Class"``),
``kwargs`` (the env's constructor arguments) and ``max_episode_steps``. An episode is its own env
object, ``reset(seed=seed)``, then ``step(action)`` -> (observation, reward, terminated, truncated,
info). The task is the seed (``task_count`` is None).
"""

from __future__ import annotations

from typing import Any

from arl_envhost.backends.base import Backend, ConfigError, Episode, SignalValue, Step
from arl_envhost.backends.knobs import collect, import_library, knob, unknown_knobs, words

KNOBS = ("id", "entry_point", "kwargs", "max_episode_steps")


class GymnasiumEpisode(Episode):
    def __init__(self, env: Any, seed: int) -> None:
        self._env = env
        self._seed = seed
        self._outcome: dict[str, SignalValue] = {"reward": 0.0, "return": 0.0, "steps": 0, "terminated": False, "truncated": False}

    def reset(self) -> Step:
        observation, _info = self._env.reset(seed=self._seed)
        return Step(observation=str(observation))

    def step(self, action: str) -> Step:
        observation, reward, terminated, truncated, _info = self._env.step(action)
        reward = float(reward)
        self._outcome = {
            "reward": reward,
            "return": float(self._outcome["return"]) + reward,
            "steps": int(self._outcome["steps"]) + 1,
            "terminated": bool(terminated),
            "truncated": bool(truncated),
        }
        signals: dict[str, SignalValue] = {"reward": reward, "terminated": bool(terminated), "truncated": bool(truncated)}
        return Step(observation=str(observation), signals=signals, done=bool(terminated or truncated))

    def outcome(self) -> dict[str, SignalValue]:
        return dict(self._outcome)

    def close(self) -> None:
        self._env.close()


class GymnasiumBackend(Backend):
    name = "gymnasium"

    def _make(self, config: dict[str, Any]) -> Any:
        gym = import_library("gymnasium", "gymnasium", self.setup_hint)
        env_id = knob(config, "id", str)
        entry_point = knob(config, "entry_point", str)
        if (env_id is None) == (entry_point is None):
            raise ConfigError("id", "write either id or entry_point", 'id: a registered env id; entry_point: "module:Class"')
        if entry_point is not None and ":" not in entry_point:
            raise ConfigError("entry_point", f"{entry_point!r} is not module:Class", 'e.g. "my_envs.guess:GuessEnv"')
        kwargs = knob(config, "kwargs", dict, {})
        steps = knob(config, "max_episode_steps", int)
        if steps is not None and steps < 1:
            raise ConfigError("max_episode_steps", f"must be at least 1, not {steps}")
        target = env_id if env_id is not None else gym.envs.registration.EnvSpec(id=f"arl/{entry_point}", entry_point=entry_point)
        field = "id" if env_id is not None else "entry_point"
        try:
            env = gym.make(target, max_episode_steps=steps, disable_env_checker=True, **kwargs)
        except gym.error.Error as e:
            raise ConfigError(field, str(e)[:300], "a Gymnasium env id (gymnasium.registry) or module:Class") from None
        except (ImportError, AttributeError, ValueError) as e:
            raise ConfigError(field, f"cannot make {env_id or entry_point}: {type(e).__name__}: {e}"[:300]) from None
        except TypeError as e:
            raise ConfigError("kwargs", f"the env rejects its kwargs: {e}"[:300]) from None
        text = gym.spaces.Text
        for which, space in (("action", env.action_space), ("observation", env.observation_space)):
            if not isinstance(space, text):
                env.close()
                raise ConfigError(field, f"{env_id or entry_point}'s {which} space is {space}, not Text", "ARL's actions and observations are text")
        return env

    def check(self, config: dict[str, Any]) -> list[ConfigError]:
        import_library("gymnasium", "gymnasium", self.setup_hint)
        errors = unknown_knobs(config, KNOBS)
        errors += collect(lambda: self._make(config).close())
        return errors

    def open(self, config: dict[str, Any], task: int, seed: int, data_root: str) -> Episode:
        return GymnasiumEpisode(self._make(config), seed)

    def vocabulary(self, config: dict[str, Any], tasks: list[int], data_root: str) -> list[str]:
        """The words of each seed's first observation (``tasks`` are seeds)."""
        texts = []
        for seed in tasks:
            episode = self.open(config, 0, seed, data_root)
            texts.append(episode.reset().observation)
            episode.close()
        return words(texts)
