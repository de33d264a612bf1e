"""The TextArena backend (arl_envhost/backends/textarena.py) against the real library: single-player games
played to their end, their reward the one TextArena's own close() reports for the same moves."""
from __future__ import annotations

import re

import pytest
from env_libraries import library, missing_library_message

from arl_envhost.backends.textarena import TextArenaBackend


@pytest.fixture(scope="module")
def ta():
    return library("textarena")


def _binary_search(episode, low: int = 1, high: int = 20):
    """Guesses by the game's own 'higher'/'lower' hints until the game ends; returns the guesses and the last step."""
    guesses = []
    while True:
        guess = (low + high) // 2
        guesses.append(guess)
        step = episode.step(f"[{guess}]")
        if step.done:
            return guesses, step
        hint = re.findall(r"target number is (higher|lower)", step.observation)[-1]
        low, high = (guess + 1, high) if hint == "higher" else (low, guess - 1)


def _direct_rewards(ta, env_id: str, seed: int, actions: list[str]):
    env = ta.make(env_id)
    env.reset(num_players=1, seed=seed)
    for action in actions:
        done, _ = env.step(action)
        if done:
            break
    return env.close()


def test_a_game_played_to_its_end_scores_textarenas_own_reward(ta, tmp_path):
    backend = TextArenaBackend()
    config = {"env_id": "GuessTheNumber-v0-raw"}
    assert backend.check(config) == []
    episode = backend.open(config, 0, seed=4, data_root=str(tmp_path))
    assert "guess" in episode.reset().observation.lower()
    guesses, last = _binary_search(episode)
    rewards, info = _direct_rewards(ta, "GuessTheNumber-v0-raw", 4, [f"[{g}]" for g in guesses])
    assert rewards == {0: 1}
    assert last.done and last.signals == {"reward": 1.0, "invalid_move": False, "turns": len(guesses), "finished": True}
    assert episode.outcome() == last.signals
    assert info[0]["turn_count"] == len(guesses)


def test_a_lost_game_reports_the_invalid_move_and_textarenas_reward(ta, tmp_path):
    backend = TextArenaBackend()
    config = {"env_id": "GuessTheNumber-v0-raw"}
    episode = backend.open(config, 0, seed=4, data_root=str(tmp_path))
    episode.reset()
    actions = ["no number", "still none"]  # the second invalid move ends the game (error allowance 1)
    steps = [episode.step(a) for a in actions]
    assert [s.done for s in steps] == [False, True]
    rewards, _ = _direct_rewards(ta, "GuessTheNumber-v0-raw", 4, actions)
    assert steps[-1].signals["reward"] == float(rewards[0]) and steps[-1].signals["invalid_move"] is True


def test_interleaved_episodes_keep_their_own_dice(ta, tmp_path):
    """2048 draws a new tile from Python's global random after every move: two games stepped in turn
    must each see what they see when played alone."""
    backend = TextArenaBackend()
    config = {"env_id": "2048-v0-raw"}
    moves = ["[up]", "[left]", "[down]", "[right]", "[up]", "[left]"]

    def alone(seed):
        episode = backend.open(config, 0, seed=seed, data_root=str(tmp_path))
        return [episode.reset().observation] + [episode.step(m).observation for m in moves]

    solo_a, solo_b = alone(1), alone(2)
    assert solo_a != solo_b
    a = backend.open(config, 0, seed=1, data_root=str(tmp_path))
    b = backend.open(config, 0, seed=2, data_root=str(tmp_path))
    seen_a, seen_b = [a.reset().observation], [b.reset().observation]
    for move in moves:
        seen_a.append(a.step(move).observation)
        seen_b.append(b.step(move).observation)
    assert seen_a == solo_a and seen_b == solo_b


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"env_id": "Sudoku-v9"}, "has no env 'Sudoku-v9'"),
        ({"env_id": 2048}, "must be a string"),
        ({"env_id": "TicTacToe-v0"}, "single-player"),
        ({"env_id": "Wordle-v0"}, "NLTK"),
        ({"env_id": "TwentyQuestions-v0"}, "OPENROUTER_API_KEY"),
        ({"env_id": "LightsOut-v0-train"}, "does not run as a single-player game here"),
    ],
)
def test_check_refuses_what_cannot_run_here(ta, config, words):
    errors = TextArenaBackend().check(config)
    assert [e.field for e in errors] == ["env_id"], errors
    assert words in str(errors[0])


def test_a_missing_library_is_one_line_naming_the_setup_command():
    message = missing_library_message("textarena", "textarena", "TextArenaBackend", "{'env_id': 'Sudoku-v0'}")
    assert message.startswith("BackendMissing: the Python library textarena is not installed")
    assert message.endswith("run: npm run setup:envs")
