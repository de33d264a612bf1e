"""The TextWorldExpress backend (arl_envhost/backends/textworld_express.py) against the real library and its
JVM (Java 17): the gold path wins, a reused JVM plays exactly like a fresh one, bad knobs are refused."""
from __future__ import annotations

import shutil

import pytest
from env_libraries import library, missing_library_message

from arl_envhost.backends.textworld_express import TextWorldExpressBackend

CONFIG = {"game": "coin", "game_params": {"numLocations": 3, "includeDoors": 0}, "step_limit": 30}


@pytest.fixture(scope="module")
def backend():
    library("textworld_express")
    if shutil.which("java") is None:
        pytest.fail("TextWorldExpress needs Java 17 (Debian: apt-get install openjdk-17-jre-headless)")
    backend = TextWorldExpressBackend()
    yield backend
    backend.close()


def _play(backend, config, task, actions, tmp_path):
    episode = backend.open(config, task, seed=0, data_root=str(tmp_path))
    seen = [episode.reset().observation]
    steps = [episode.step(a) for a in actions]
    episode.close()
    return seen + [s.observation for s in steps], steps


def test_the_gold_path_wins(backend, tmp_path):
    assert backend.check(CONFIG) == []
    assert backend.task_count(CONFIG) > 100
    path = backend.walkthrough(CONFIG, 3, str(tmp_path))
    assert path and path[-1] == "take coin"
    _, steps = _play(backend, CONFIG, 3, path, tmp_path)
    assert steps[-1].done and steps[-1].signals["won"] is True and steps[-1].signals["score"] == 1.0
    assert steps[-1].signals["moves"] == len(path)
    assert not any(s.done for s in steps[:-1])


def test_a_wrong_sequence_does_not_win(backend, tmp_path):
    _, steps = _play(backend, CONFIG, 3, ["inventory", "look around", "take coin"], tmp_path)
    assert not any(s.signals["won"] for s in steps) and steps[-1].signals["score"] < 1.0


def test_a_reused_jvm_plays_like_a_fresh_one_and_open_episodes_do_not_share_one(backend, tmp_path):
    path = backend.walkthrough(CONFIG, 5, str(tmp_path))
    first, _ = _play(backend, CONFIG, 5, path[:3], tmp_path)
    # Another game, half played, on the pooled JVM, then task 5 again on it.
    _play(backend, {**CONFIG, "game": "arithmetic", "game_params": {}}, 1, ["look around"], tmp_path)
    again, _ = _play(backend, CONFIG, 5, path[:3], tmp_path)
    fresh = TextWorldExpressBackend()
    try:
        alone, _ = _play(fresh, CONFIG, 5, path[:3], tmp_path)
    finally:
        fresh.close()
    assert first == again == alone
    a = backend.open(CONFIG, 5, seed=1, data_root=str(tmp_path))
    b = backend.open(CONFIG, 6, seed=2, data_root=str(tmp_path))
    a.reset()
    b.reset()
    assert a._env is not b._env
    a.step(path[0])
    assert b.outcome()["moves"] == 0 and a.outcome()["moves"] == 1
    a.close()
    b.close()


def test_the_vocabulary_holds_the_gold_paths_words(backend, tmp_path):
    vocabulary = backend.vocabulary(CONFIG, [3], str(tmp_path))
    assert {"take", "coin", "kitchen"} <= set(vocabulary)


@pytest.mark.parametrize(
    ("config", "field", "words"),
    [
        ({"game": "zork"}, "game", "no game 'zork'"),
        ({"game": "coin", "game_params": {"numLocations": "3"}}, "game_params.numLocations", "must be an integer"),
        ({"game": "coin", "game_params": {"rooms": 3}}, "game_params", "Unrecognized property name (rooms)"),
        ({"game": "coin", "fold": "valid"}, "fold", "not one of train, dev, test"),
        ({"game": "coin", "step_limit": 0}, "step_limit", "at least 1"),
        ({"game": "coin", "seed": 3}, "seed", "not a knob"),
    ],
)
def test_check_refuses_bad_knobs(backend, config, field, words):
    errors = backend.check(config)
    assert [e.field for e in errors] == [field], errors
    assert words in str(errors[0])


def test_a_missing_library_is_one_line_naming_the_setup_command():
    message = missing_library_message("textworld_express", "textworld_express", "TextWorldExpressBackend", "{'game': 'coin'}")
    assert message.startswith("BackendMissing: the Python library textworld-express is not installed")
