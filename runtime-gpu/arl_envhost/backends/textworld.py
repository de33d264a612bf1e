"""TextWorld (docs/env-host.md, "TextWorld"): games made by TextWorld's own generator, or the user's own game files.

Generated games come from the plan's knobs (world size, objects, quest length, quest breadth) and
one seed a task, and are cached on disk under a key of the textworld version, the knobs and the
seed: ``<cache_dir>/textworld/<key>/game.z8`` with TextWorld's ``game.json`` and a ``sha256``
file written after the game compiled. A cached game is used only when its bytes still hash to
what was recorded, by the cache and by the run (``recorded``): anything else is a refusal that
names the file, and nothing is regenerated over it.

With ``challenge`` set, the games come from that TextWorld challenge's own generator instead
(``tw-simple``, ``tw-cooking``, ...: ``textworld.challenges.CHALLENGES``) with its settings
(tw-simple's ``rewards``: dense, balanced or sparse; ``goal``: detailed, brief or none), one seed a
task; the size knobs do not apply there (the challenge fixes its layout).

Signals: ``won``, ``lost``, ``score``, ``max_score``, ``moves`` (TextWorld's own), ``score_fraction``
(score / max_score: the game's own reward density, normalised to 1 on a win), TextWorld's
``intermediate_reward`` of the last command (1 closer to winning, 0, -1 further), and
``progress``, a potential for shaping: 1 - (commands left in TextWorld's winning policy) / (its
length at the start), clipped to [0, 1].
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import json
import multiprocessing
import os
import re
import shutil
import tempfile
from typing import Any

from arl_envhost.backends.base import Backend, BackendMissing, ConfigError, Episode, SignalValue, Step

try:
    import textworld
    import textworld.challenges
    import textworld.text_utils
    from textworld.generator import compile_game, make_game
except ImportError as _missing:  # one line naming the setup command, never a traceback
    raise BackendMissing(f"TextWorld is not installed in this Python ({_missing.msg}); install it with 'npm run setup:envs' (into .venv)") from None

GAME_EXTENSIONS = (".z8", ".ulx")
# The fewest games still to make per extra worker process (generate_games).
GAMES_PER_WORKER = 8
# Lines of the ASCII-art banner TextWorld prints on reset: nothing but these characters.
_BANNER = re.compile(r"^[\s_|\\/$<>]*[_|\\/$][\s_|\\/$<>]*$")
_RESTART = "Would you like to RESTART"
_INFOS = {name: True for name in ("admissible_commands", "policy_commands", "won", "lost", "score", "max_score", "moves", "objective", "intermediate_reward")}


def clean_observation(text: str) -> str:
    """TextWorld's feedback without its banner, its prompt and status line, the restart question and the padding."""
    lines = [line.strip() for line in text.replace("\r", "").split("\n")]
    kept = [line for line in lines if not (_BANNER.match(line) or line.startswith(">") or line.startswith(_RESTART))]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def typed_command(action: str) -> str:
    """The action as one line of printable text, as a player types it: a backslash is dumb-frotz's
    escape character (``\\help`` loops printing its help forever), a control character can hang
    frotz too (a sampled Ctrl-S, ``\\x13``, spins without returning), and a line break would send a
    second command; each run of them becomes a space. No game command uses any of them."""
    return re.sub(r"[\\\x00-\x1f\x7f-\x9f]+", " ", action).strip()


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _seeds(config: dict[str, Any]) -> list[int]:
    seeds = config.get("seeds")
    if seeds:
        return [int(s) for s in seeds]
    return [int(config.get("first_seed", 0)) + i for i in range(int(config["tasks"]))]


def _cache_key(config: dict[str, Any], seed: int) -> str:
    challenge = config.get("challenge")
    if challenge:
        settings = "-".join(f"{k}={v}" for k, v in sorted((config.get("challenge_settings") or {}).items()))
        knobs = f"{challenge}-{settings}" if settings else challenge
    else:
        knobs = f"w{config['world_size']}-o{config['objects']}-q{config['quest_length']}-b{config['quest_breadth']}"
    return f"textworld-{textworld.__version__}/{knobs}/seed-{seed}"


class TextWorldEpisode(Episode):
    def __init__(self, game_file: str, show_admissible: bool) -> None:
        self._env = textworld.start(game_file, request_infos=textworld.EnvInfos(**_INFOS))
        self._show_admissible = show_admissible
        self._state: Any = None
        self._plan_length = 1

    def _signals(self, reward: float | None = None) -> dict[str, SignalValue]:
        s = self._state
        left = len(s.policy_commands or [])
        progress = 1.0 if s.won else max(0.0, min(1.0, 1 - left / self._plan_length))
        signals: dict[str, SignalValue] = {
            "won": bool(s.won),
            "lost": bool(s.lost),
            "score": float(s.score),
            "max_score": float(s.max_score),
            "moves": int(s.moves),
            "score_fraction": float(s.score) / float(s.max_score) if s.max_score else 0.0,
            "intermediate_reward": float(s.intermediate_reward or 0),
            "progress": progress,
        }
        return signals

    def _step(self) -> Step:
        text = clean_observation(self._state.feedback or "")
        if self._show_admissible and not (self._state.won or self._state.lost):
            text += "\n\nAdmissible commands: " + ", ".join(self._state.admissible_commands or [])
        return Step(observation=text, signals=self._signals(), done=bool(self._state.won or self._state.lost))

    def reset(self) -> Step:
        self._state = self._env.reset()
        self._plan_length = max(1, len(self._state.policy_commands or []))
        return self._step()

    def step(self, action: str) -> Step:
        self._state, _score, _done = self._env.step(typed_command(action))
        return self._step()

    def outcome(self) -> dict[str, SignalValue]:
        signals = self._signals()
        return {**signals, "success": signals["won"]}

    def close(self) -> None:
        self._env.close()


class TextWorldBackend(Backend):
    name = "textworld"
    version = textworld.__version__

    def __init__(self) -> None:
        # The prepared games of each config: task -> game file.
        self._games: dict[str, list[str]] = {}

    @staticmethod
    def _key(config: dict[str, Any]) -> str:
        return json.dumps(config, sort_keys=True)

    def check(self, config: dict[str, Any]) -> list[ConfigError]:
        if config.get("games"):
            return []
        challenge = config.get("challenge")
        if challenge:
            if challenge not in textworld.challenges.CHALLENGES:
                return [ConfigError("challenge", f"TextWorld has no challenge {challenge!r}", f"one of {', '.join(sorted(textworld.challenges.CHALLENGES))}")]
            try:
                self._make(config, _seeds(config)[0], None)
            except Exception as e:  # noqa: BLE001 - the challenge's own refusal of its settings
                last = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
                settings = config.get("challenge_settings") or {}
                message = f"TextWorld's {challenge} cannot make a game with {settings} ({last})"
                return [ConfigError("challenge_settings", message, "see its settings in docs/env-host.md")]
            return []
        problems = []
        for knob, least in (("world_size", 1), ("objects", 0), ("quest_length", 1), ("quest_breadth", 1)):
            value = config.get(knob)
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                problems.append(ConfigError(knob, f"must be an integer of at least {least}, not {value!r}"))
        if problems:
            return problems
        # The generator itself says whether the size can be made: the first seed's game, not compiled.
        try:
            make_game(self._options(config, _seeds(config)[0], None))
        except Exception as e:  # noqa: BLE001 - the generator's own refusal, whatever its type
            last = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
            size = f"{config['world_size']} rooms with {config['objects']} objects and a quest of {config['quest_length']} commands"
            problems.append(ConfigError("quest_length", f"TextWorld cannot generate a world of {size} ({last})", "shorten the quest or add rooms and objects"))
        return problems

    @staticmethod
    def _options(config: dict[str, Any], seed: int, path: str | None) -> Any:
        options = textworld.GameOptions()
        options.nb_rooms = config["world_size"]
        options.nb_objects = config["objects"]
        options.quest_length = config["quest_length"]
        options.quest_breadth = config["quest_breadth"]
        options.seeds = seed
        if path is not None:
            options.path = path
        return options

    def _make(self, config: dict[str, Any], seed: int, path: str | None) -> Any:
        """The game of ``seed``: from the challenge's generator when the config names one, else from the size knobs."""
        options = self._options(config, seed, path)
        challenge = config.get("challenge")
        if not challenge:
            return make_game(options)
        _description, make, add_arguments = textworld.challenges.CHALLENGES[challenge]
        # The challenge's own defaults (what tw-make would use: tw-simple's test=False), then the plan's settings.
        parser = argparse.ArgumentParser(add_help=False)
        add_arguments(parser)
        defaults = {action.dest: action.default for action in parser._actions if not action.required and action.dest != "help"}
        settings = {**defaults, **(config.get("challenge_settings") or {})}
        return make(settings, options)

    def _generate(self, config: dict[str, Any], seed: int, cache_dir: str) -> tuple[str, str]:
        """The game of ``seed`` in the cache, made there when missing, with its sha256 (a cached game's checked against its stamp)."""
        folder = os.path.join(cache_dir, _cache_key(config, seed))
        game_file, stamp = os.path.join(folder, "game.z8"), os.path.join(folder, "sha256")
        if os.path.isfile(stamp):
            with open(stamp, encoding="utf-8") as f:
                expected = f.read().strip()
            actual = _sha256(game_file) if os.path.isfile(game_file) else "(missing)"
            if actual != expected:
                raise ValueError(
                    f"the cached game {game_file} has sha256 {actual}, but the cache recorded {expected} when it was generated: "
                    f"it was changed; delete {folder} to generate it again"
                )
            return game_file, actual
        # Made in a fresh folder beside it and moved in whole, so a half-made game is never cached.
        os.makedirs(os.path.dirname(folder), exist_ok=True)
        scratch = tempfile.mkdtemp(prefix=".making-", dir=os.path.dirname(folder))
        try:
            options = self._options(config, seed, os.path.join(scratch, "game.z8"))
            made = compile_game(self._make(config, seed, os.path.join(scratch, "game.z8")), options)
            digest = _sha256(made)
            with open(os.path.join(scratch, "sha256"), "w", encoding="utf-8") as f:
                f.write(digest + "\n")
            try:
                os.replace(scratch, folder)
            except OSError as error:
                # Another process (a run beside this one) moved the same game in first; its folder is complete.
                if error.errno not in (errno.ENOTEMPTY, errno.EEXIST) or not os.path.isfile(stamp):
                    raise
                return self._generate(config, seed, cache_dir)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return game_file, digest

    def prepare(self, config: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        data_root, cache_dir = str(context.get("data_root", ".")), str(context.get("cache_dir", ""))
        if config.get("games"):
            folder = config["games"]
            files = [os.path.join(data_root, f["path"]) for f in folder["files"] if f["path"].endswith(GAME_EXTENSIONS)]
            expected = {os.path.join(data_root, f["path"]): f["sha256"] for f in folder["files"]}
            seeds: list[int | None] = [None] * len(files)
            digests = {path: _sha256(path) for path in files}
        else:
            if not cache_dir:
                raise ValueError("no cache folder for generated games (context.cache_dir)")
            seeds = list(_seeds(config))
            games = generate_games(config, seeds, cache_dir)
            files = [path for path, _ in games]
            digests = dict(games)
            expected = {}
        recorded = {r["task"]: r["sha256"] for r in (context.get("recorded") or [])}
        out = []
        for task, (seed, path) in enumerate(zip(seeds, files, strict=True)):
            digest = digests[path]
            want = expected.get(path) or recorded.get(task)
            if want is not None and digest != want:
                who = "the plan" if path in expected else "this run"
                raise ValueError(f"game {task} ({path}) has sha256 {digest}, but {who} recorded {want}: the file changed since; restore it, or start a new run")
            out.append({"task": task, "seed": seed, "path": path, "sha256": digest})
        self._games[self._key(config)] = files
        return {"task_count": len(files), "files": out, "version": self.version}

    def _game(self, config: dict[str, Any], task: int) -> str:
        files = self._games.get(self._key(config))
        if files is None:
            raise ValueError("the games of this env were not prepared (backend.prepare) in this host")
        if not 0 <= task < len(files):
            raise ValueError(f"task {task} is beyond the env's {len(files)} games")
        return files[task]

    def task_count(self, config: dict[str, Any]) -> int | None:
        return len(_seeds(config)) if not config.get("games") else None

    def open(self, config: dict[str, Any], task: int, seed: int, data_root: str) -> Episode:
        # A TextWorld game is deterministic: the seed chose the game (the task), not the play.
        return TextWorldEpisode(self._game(config, task), bool(config.get("admissible_commands")))

    def walkthrough(self, config: dict[str, Any], task: int, data_root: str) -> list[str] | None:
        env = textworld.start(self._game(config, task), request_infos=textworld.EnvInfos(extras=["walkthrough"]))
        try:
            walkthrough = env.reset().get("extra.walkthrough")
        finally:
            env.close()
        return list(walkthrough) if walkthrough else None

    def vocabulary(self, config: dict[str, Any], tasks: list[int], data_root: str) -> list[str]:
        return list(textworld.text_utils.extract_vocab_from_gamefiles([self._game(config, t) for t in tasks]))


def _generate_one(job: tuple[dict[str, Any], int, str]) -> str:
    """One game in a worker process (module-level, so a spawned worker can unpickle it)."""
    config, seed, cache_dir = job
    return TextWorldBackend()._generate(config, seed, cache_dir)[0]


def generate_games(
    config: dict[str, Any], seeds: list[int], cache_dir: str, workers: int | None = None, per_worker: int = GAMES_PER_WORKER
) -> list[tuple[str, str]]:
    """The game file of each seed with its sha256, in seed order: from the cache (checked), else generated and cached.

    The games still missing are made by up to ``workers`` processes at once (default: one a CPU
    this process may use, and one per ``per_worker`` games still to make), since a game takes
    seconds of one core and the paper's sizes ask for thousands. Each game depends on its seed
    alone and is moved into the cache whole, so the files and their sha256 are those of making
    them one at a time. Workers are spawned, not forked: a host serving other libraries may hold
    their threads (TextWorldExpress's JVM gateway), which a fork would copy half-way. A time limit
    (SIGALRM) or any failure terminates them.
    """
    missing = [seed for seed in seeds if not os.path.isfile(os.path.join(cache_dir, _cache_key(config, seed), "sha256"))]
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    # A spawned worker first imports TextWorld (seconds), so it pays only over several games each.
    workers = max(1, min(workers, len(missing) // per_worker))
    if workers > 1:
        pool = multiprocessing.get_context("spawn").Pool(workers)
        try:
            pool.map(_generate_one, [(config, seed, cache_dir) for seed in missing], chunksize=1)
            pool.close()
        except BaseException:
            pool.terminate()
            raise
        finally:
            pool.join()
    backend = TextWorldBackend()
    # Every game again in order: cached ones are found (and their recorded sha256 checked), any left are made here.
    return [backend._generate(config, seed, cache_dir) for seed in seeds]
