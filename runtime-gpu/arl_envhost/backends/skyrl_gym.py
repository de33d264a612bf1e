"""skyrl-gym: SkyRL's text envs by id, each episode one row of a JSON-lines dataset.

Knobs (docs/env-libraries.md, "skyrl-gym"): ``env_id`` (gsm8k, aime, gsm8k_multi_turn, text2sql: the ids
that run offline), ``rows`` (a JSON-lines file under the data root; the runtime hashes it) and
``env_config`` (the env's config) and ``db_path`` (text2sql's databases: a folder under the data root, a
path or the plan's hashed folder ``{path, files}``; it is the env config's ``db_path``). A row is
``{"prompt": [chat messages] | "text", ...}``: the rest of it is the env's ``extras`` (``reward_spec``,
``extra_info``, text2sql's ``db_id`` and ``data``), as SkyRL's own dataset rows. Task ``i`` is row ``i``.
An episode is ``skyrl_gym.make(env_id, env_config, extras=row)``, ``init(prompt)``, then ``step(text)``
until done: each action is the model's whole reply, which the env parses itself.
"""

from __future__ import annotations

import json
import os
from typing import Any

from arl_envhost.backends.base import Backend, ConfigError, Episode, SignalValue, Step
from arl_envhost.backends.knobs import collect, confined, import_library, knob, unknown_knobs, words

KNOBS = ("env_id", "rows", "env_config", "db_path")
# The envs that run offline here; search, searchcode and lcb call a retrieval server or run the model's code.
OFFLINE = ("gsm8k", "aime", "gsm8k_multi_turn", "text2sql")


def _messages(prompt: Any, line: int) -> list[dict[str, str]]:
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]

    def is_message(m: Any) -> bool:
        return isinstance(m, dict) and isinstance(m.get("content"), str) and isinstance(m.get("role"), str)

    ok = isinstance(prompt, list) and prompt and all(is_message(m) for m in prompt)
    if not ok:
        raise ConfigError("rows", f"line {line}: 'prompt' must be a string or a list of {{role, content}} messages")
    return [{"role": m["role"], "content": m["content"]} for m in prompt]


def _text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages)


class SkyRLEpisode(Episode):
    def __init__(self, env: Any, prompt: list[dict[str, str]]) -> None:
        self._env = env
        self._prompt = prompt
        self._outcome: dict[str, SignalValue] = {"reward": 0.0, "return": 0.0, "turns": 0, "done": False}

    def reset(self) -> Step:
        messages, _metadata = self._env.init(self._prompt)
        messages = [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
        return Step(observation=messages[-1]["content"] if messages else "", messages=messages)

    def step(self, action: str) -> Step:
        out = self._env.step(action)
        reward = float(out["reward"])
        done = bool(out["done"])
        self._outcome = {
            "reward": reward,
            "return": float(self._outcome["return"]) + reward,
            "turns": int(self._outcome["turns"]) + 1,
            "done": done,
        }
        return Step(observation=_text(out.get("observations") or []), signals={"reward": reward}, done=done)

    def answer(self, text: str) -> dict[str, SignalValue] | None:
        # A single-step env (gsm8k, aime: max_turns 1) scores the reply itself; the others take steps.
        if getattr(self._env, "max_turns", None) != 1:
            return None
        self.step(text)
        return self.outcome()

    def outcome(self) -> dict[str, SignalValue]:
        return dict(self._outcome)

    def close(self) -> None:
        self._env.close()


class SkyRLGymBackend(Backend):
    name = "skyrl_gym"

    def __init__(self) -> None:
        self._rows: dict[tuple[str, float, int], list[dict[str, Any]]] = {}

    def _library(self) -> Any:
        return import_library("skyrl_gym", "skyrl-gym", self.setup_hint)

    def _env_id(self, config: dict[str, Any]) -> str:
        env_id = knob(config, "env_id", str, required=True, hint=f"one of {', '.join(OFFLINE)}")
        if env_id not in OFFLINE:
            registered = list(self._library().registry)
            what = "needs a server or runs code (not offline here)" if env_id in registered else "is not a skyrl-gym env"
            raise ConfigError("env_id", f"{env_id!r} {what}", f"one of {', '.join(OFFLINE)}")
        return env_id

    def _env_config(self, config: dict[str, Any], data_root: str) -> Any:
        env_config = dict(knob(config, "env_config", dict, {}))
        folder = config.get("db_path")
        if folder is not None:
            env_config["db_path"] = folder["path"] if isinstance(folder, dict) else folder
        if self._env_id(config) == "text2sql":
            db_path = knob(env_config, "db_path", str, required=True, hint="a folder under the data root holding spider/, bird/ or SynSQL-2.5M/")
            env_config["db_path"] = confined(data_root, db_path, "env_config.db_path")
        # SkyRL's envs read their config by attribute, as the OmegaConf DictConfig SkyRL passes them.
        return import_library("omegaconf", "skyrl-gym", self.setup_hint).OmegaConf.create(env_config)

    def _read_rows(self, config: dict[str, Any], data_root: str) -> list[dict[str, Any]]:
        relative = knob(config, "rows", str, required=True, hint="a JSON-lines file under the data root")
        path = confined(data_root, relative, "rows")
        try:
            stat = os.stat(path)
        except OSError as e:
            raise ConfigError("rows", f"cannot read {relative}: {e.strerror}", "a JSON-lines file under the data root") from None
        key = (path, stat.st_mtime, stat.st_size)
        if key not in self._rows:
            rows = []
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError as e:
                        raise ConfigError("rows", f"{relative} line {number} is not JSON: {e.msg}") from None
                    if not isinstance(row, dict) or "prompt" not in row:
                        raise ConfigError("rows", f"{relative} line {number} is not an object with a 'prompt'")
                    rows.append({"line": number, "row": row})
            if not rows:
                raise ConfigError("rows", f"{relative} has no rows")
            self._rows[key] = rows
        return self._rows[key]

    def _make(self, config: dict[str, Any], entry: dict[str, Any], env_config: Any) -> tuple[Any, list[dict[str, str]]]:
        row, line = entry["row"], entry["line"]
        env_id = self._env_id(config)
        if "env_class" in row and row["env_class"] != env_id:
            raise ConfigError("rows", f"line {line} is a row of env_class {row['env_class']!r}, not {env_id!r}")
        extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
        try:
            env = self._library().make(env_id, env_config=env_config, extras=extras)
        except (AssertionError, KeyError, FileNotFoundError, NotImplementedError) as e:
            # The env's constructor asserts the fields it needs (reward_spec.ground_truth, db_id, ...).
            why = str(e) or type(e).__name__
            raise ConfigError("rows", f"line {line}: {env_id} cannot take this row: {why}", f"see docs/env-libraries.md for {env_id}'s row fields") from None
        return env, _messages(row["prompt"], line)

    def check(self, config: dict[str, Any], data_root: str = ".") -> list[ConfigError]:
        """The rows file (under ``data_root``) is read and every row made into its env once."""
        self._library()
        errors = unknown_knobs(config, KNOBS)
        errors += collect(lambda: self._env_id(config))
        if errors:
            return errors

        def every_row() -> None:
            env_config = self._env_config(config, data_root)
            for entry in self._read_rows(config, data_root):
                env, _ = self._make(config, entry, env_config)
                env.close()

        return collect(every_row)

    def open(self, config: dict[str, Any], task: int, seed: int, data_root: str) -> Episode:
        rows = self._read_rows(config, data_root)
        if not 0 <= task < len(rows):
            raise ConfigError("task", f"task {task} is outside the {len(rows)} rows")
        env, prompt = self._make(config, rows[task], self._env_config(config, data_root))
        return SkyRLEpisode(env, prompt)

    def task_count(self, config: dict[str, Any], data_root: str = ".") -> int | None:
        return len(self._read_rows(config, data_root))

    def vocabulary(self, config: dict[str, Any], tasks: list[int], data_root: str) -> list[str]:
        rows = self._read_rows(config, data_root)
        return words([_text(_messages(rows[i]["row"]["prompt"], rows[i]["line"])) for i in tasks])
