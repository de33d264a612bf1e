"""reasoning-gym: procedural reasoning datasets, each entry a question scored by the dataset's own ``score_answer``.

Knobs (docs/env-libraries.md, "reasoning-gym"): ``dataset`` (a name the library registers), ``size``,
``seed``, ``config`` (the dataset's own config fields), ``answer`` (``text``: the model's reply is the
answer, scored by ``Episode.answer``; ``tool``: an answer tool whose argument ``step`` scores) and
``answer_tag`` (text mode: score the last ``<answer>...</answer>`` of the reply, as the library's own
evaluation does). Task ``i`` is the dataset's entry ``i``: the entry depends on (dataset, config, seed,
i) alone, so the episode's seed does not change it.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
from typing import Any

from arl_envhost.backends.base import Backend, ConfigError, Episode, SignalValue, Step
from arl_envhost.backends.knobs import choice, collect, import_library, knob, unknown_knobs, words

KNOBS = ("dataset", "size", "seed", "config", "answer", "answer_tag")
_TOP_LEVEL = ("seed", "size")  # knobs of their own, not entries of ``config``


class ReasoningGymEpisode(Episode):
    def __init__(self, dataset: Any, entry: dict[str, Any], text_mode: bool, answer_tag: bool, extract: Any) -> None:
        self._dataset = dataset
        self._entry = entry
        self._text_mode = text_mode
        self._answer_tag = answer_tag
        self._extract = extract
        self._outcome: dict[str, SignalValue] = {"score": 0.0, "correct": False, "answered": False}

    def reset(self) -> Step:
        return Step(observation=self._entry["question"])

    def _score(self, answer: str | None) -> dict[str, SignalValue]:
        score = float(self._dataset.score_answer(answer, self._entry))
        self._outcome = {"score": score, "correct": score >= 1.0, "answered": answer is not None and answer != ""}
        return dict(self._outcome)

    def step(self, action: str) -> Step:
        signals = self._score(action)
        return Step(observation=f"Answer recorded (score {signals['score']:g}).", signals=signals, done=True)

    def answer(self, text: str) -> dict[str, SignalValue] | None:
        if not self._text_mode:
            return None
        return self._score(self._extract(text) if self._answer_tag else text)

    def outcome(self) -> dict[str, SignalValue]:
        return dict(self._outcome)


class ReasoningGymBackend(Backend):
    name = "reasoning_gym"

    def __init__(self) -> None:
        self._datasets: dict[str, Any] = {}

    def _library(self) -> Any:
        return import_library("reasoning_gym", "reasoning-gym", self.setup_hint)

    def _config_class(self, config: dict[str, Any]) -> tuple[str, type]:
        registry = import_library("reasoning_gym.factory", "reasoning-gym", self.setup_hint).DATASETS
        name = knob(config, "dataset", str, required=True, hint="a reasoning-gym dataset name, e.g. chain_sum")
        if name not in registry:
            close = difflib.get_close_matches(name, list(registry), n=3)
            hint = f"did you mean {', '.join(close)}?" if close else f"one of its {len(registry)} datasets, e.g. {', '.join(sorted(registry)[:5])}"
            raise ConfigError("dataset", f"reasoning-gym has no dataset {name!r}", hint)
        return name, registry[name][1]

    def _entries(self, config: dict[str, Any], config_class: type) -> dict[str, Any]:
        """The dataset config's keyword arguments, each checked against the config dataclass's field."""
        entries = knob(config, "config", dict, {})
        fields = {f.name: f for f in dataclasses.fields(config_class) if f.name not in _TOP_LEVEL}
        for key, value in entries.items():
            if key not in fields:
                raise ConfigError(f"config.{key}", f"is not a field of {config_class.__name__}", f"its fields: {', '.join(fields)}")
            default = fields[key].default
            if default is not dataclasses.MISSING and default is not None:
                # The default's type is the field's (float fields take integers too).
                expected = list if isinstance(default, tuple | list) else float if isinstance(default, float) else type(default)
                if expected in (bool, int, float, str, list, dict):
                    knob({f"config.{key}": value}, f"config.{key}", expected, hint=f"its default is {default!r}")
        return entries

    def _kwargs(self, config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        name, config_class = self._config_class(config)
        kwargs = dict(self._entries(config, config_class))
        kwargs["seed"] = knob(config, "seed", int, 0)
        size = knob(config, "size", int)
        if size is not None:
            if size < 1:
                raise ConfigError("size", f"must be at least 1, not {size}")
            kwargs["size"] = size
        return name, kwargs

    def _dataset(self, config: dict[str, Any]) -> Any:
        name, kwargs = self._kwargs(config)
        key = json.dumps([name, kwargs], sort_keys=True)
        if key not in self._datasets:
            try:
                self._datasets[key] = self._library().create_dataset(name, **kwargs)
            except (AssertionError, ValueError, TypeError) as e:
                # The dataset's own validate() asserts its config's ranges.
                raise ConfigError("config", f"{name} rejects this config: {e or type(e).__name__}", "see the dataset's config class") from None
        return self._datasets[key]

    def check(self, config: dict[str, Any]) -> list[ConfigError]:
        self._library()
        errors = unknown_knobs(config, KNOBS)
        errors += collect(
            lambda: choice(config, "answer", ("text", "tool"), "text"),
            lambda: knob(config, "answer_tag", bool, True),
        )
        errors += collect(lambda: self._dataset(config))
        return errors

    def open(self, config: dict[str, Any], task: int, seed: int, data_root: str) -> Episode:
        dataset = self._dataset(config)
        if not 0 <= task < len(dataset):
            raise ConfigError("task", f"task {task} is outside the dataset's {len(dataset)} entries")
        utils = import_library("reasoning_gym.utils", "reasoning-gym", self.setup_hint)
        # A deep copy: a scorer that mutates its entry cannot reach another episode of the same task.
        entry = copy.deepcopy(dataset[task])
        text_mode = choice(config, "answer", ("text", "tool"), "text") == "text"
        return ReasoningGymEpisode(dataset, entry, text_mode, knob(config, "answer_tag", bool, True), utils.extract_answer)

    def task_count(self, config: dict[str, Any]) -> int | None:
        return len(self._dataset(config))

    def walkthrough(self, config: dict[str, Any], task: int, data_root: str) -> list[str] | None:
        answer = str(self._dataset(config)[task]["answer"])
        text_mode = choice(config, "answer", ("text", "tool"), "text") == "text"
        return [f"<answer>{answer}</answer>" if text_mode and knob(config, "answer_tag", bool, True) else answer]

    def vocabulary(self, config: dict[str, Any], tasks: list[int], data_root: str) -> list[str]:
        dataset = self._dataset(config)
        texts = [t for i in tasks for t in (dataset[i]["question"], str(dataset[i]["answer"]))]
        return words(["Answer recorded score answer", *texts])
