"""The Gymnasium backend (arl_envhost/backends/gymnasium.py) against the real library: a Text-space env
registered in the test, by id and by entry point, its reward the per-step and summed signals."""
from __future__ import annotations

import pytest
from env_libraries import library, missing_library_message

from arl_envhost.backends.gymnasium import GymnasiumBackend

ENTRY = "text_gym_envs:GuessWordEnv"


@pytest.fixture(scope="module")
def gym():
    gym = library("gymnasium")
    if "arl-test/GuessWord-v0" not in gym.registry:
        gym.register(id="arl-test/GuessWord-v0", entry_point=ENTRY, kwargs={"max_guesses": 3})
    return gym


def _secret(gym, seed):
    env = gym.make("arl-test/GuessWord-v0")
    env.reset(seed=seed)
    return env.unwrapped.secret


def test_a_registered_text_env_is_stepped_to_its_end_with_its_rewards(gym, tmp_path):
    backend = GymnasiumBackend()
    config = {"id": "arl-test/GuessWord-v0"}
    assert backend.check(config) == []
    episode = backend.open(config, 0, seed=5, data_root=str(tmp_path))
    assert episode.reset().observation.startswith("Guess a word")
    wrong = "zzz"
    miss = episode.step(wrong)
    assert not miss.done and miss.signals == {"reward": -0.1, "terminated": False, "truncated": False}
    hit = episode.step(_secret(gym, 5))
    assert hit.done and hit.signals == {"reward": 1.0, "terminated": True, "truncated": False}
    assert episode.outcome() == {"reward": 1.0, "return": pytest.approx(0.9), "steps": 2, "terminated": True, "truncated": False}


def test_an_entry_point_with_kwargs_and_a_step_limit_truncates(gym, tmp_path):
    backend = GymnasiumBackend()
    config = {"entry_point": ENTRY, "kwargs": {"max_guesses": 10}, "max_episode_steps": 2}
    assert backend.check(config) == []
    episode = backend.open(config, 0, seed=1, data_root=str(tmp_path))
    episode.reset()
    steps = [episode.step("zzz"), episode.step("zzz")]
    assert [s.done for s in steps] == [False, True] and steps[-1].signals["truncated"] is True
    assert episode.outcome()["return"] == pytest.approx(-0.2)


def test_episodes_with_different_seeds_have_their_own_env(gym, tmp_path):
    backend = GymnasiumBackend()
    config = {"id": "arl-test/GuessWord-v0"}
    seeds = [s for s in range(20) if _secret(gym, s) != _secret(gym, 0)][:1] + [0]
    a = backend.open(config, 0, seed=seeds[0], data_root=str(tmp_path))
    b = backend.open(config, 0, seed=seeds[1], data_root=str(tmp_path))
    a.reset()
    b.reset()
    assert a.step(_secret(gym, seeds[0])).done  # a's own secret
    assert not b.step(_secret(gym, seeds[0])).done  # not b's
    assert b.step(_secret(gym, seeds[1])).done and b.outcome()["steps"] == 2 and a.outcome()["steps"] == 1


@pytest.mark.parametrize(
    ("config", "field", "words"),
    [
        ({"id": "CartPole-v1"}, "id", "action space is Discrete(2), not Text"),
        ({"entry_point": "text_gym_envs:BoxEnv"}, "entry_point", "not Text"),
        ({"id": "arl-test/NoSuch-v0"}, "id", "NoSuch"),
        ({"entry_point": "text_gym_envs.GuessWordEnv"}, "entry_point", "is not module:Class"),
        ({"entry_point": "text_gym_envs:Missing"}, "entry_point", "cannot make"),
        ({}, "id", "either id or entry_point"),
        ({"id": "arl-test/GuessWord-v0", "kwargs": {"colour": 1}}, "kwargs", "rejects its kwargs"),
        ({"id": "arl-test/GuessWord-v0", "max_episode_steps": "5"}, "max_episode_steps", "must be an integer"),
        ({"id": "arl-test/GuessWord-v0", "render": True}, "render", "not a knob"),
    ],
)
def test_check_refuses_bad_knobs_and_non_text_envs(gym, config, field, words):
    errors = GymnasiumBackend().check(config)
    assert [e.field for e in errors] == [field], errors
    assert words in str(errors[0])


def test_a_missing_library_is_one_line_naming_the_setup_command():
    message = missing_library_message("gymnasium", "gymnasium", "GymnasiumBackend", "{'id': 'x'}")
    assert message.startswith("BackendMissing: the Python library gymnasium is not installed")
