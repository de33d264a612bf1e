"""TextWorld's games made in parallel (arl_envhost/backends/textworld.py, generate_games) against the
real generator: worker processes give the same files, byte for byte, as making them one at a time,
a game in the cache is not made again, a game another process cached first is taken from the cache,
and a changed cached game stops the workers with the file named."""

from __future__ import annotations

import hashlib
import os

import pytest
from env_libraries import library

CONFIG = {"world_size": 2, "objects": 3, "quest_length": 4, "quest_breadth": 1, "challenge": None}
SEEDS = [3, 4, 5]


def _digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.fixture(scope="module")
def textworld_backend():
    library("textworld")
    from arl_envhost.backends import textworld

    return textworld


def test_parallel_workers_make_the_same_games_as_one_at_a_time(textworld_backend, tmp_path):
    one = textworld_backend.generate_games(CONFIG, SEEDS, str(tmp_path / "one"), workers=1)
    two = textworld_backend.generate_games(CONFIG, SEEDS, str(tmp_path / "two"), workers=2, per_worker=1)
    assert [os.path.relpath(p, tmp_path / "one") for p, _ in one] == [os.path.relpath(p, tmp_path / "two") for p, _ in two]
    assert [_digest(p) for p, _ in one] == [_digest(p) for p, _ in two]
    # The sha256 each game comes with is its file's.
    assert [d for _, d in two] == [_digest(p) for p, _ in two]
    # Three different seeds: three different games.
    assert len({d for _, d in two}) == 3


def test_a_cached_game_is_reused_and_a_changed_one_is_refused_by_name(textworld_backend, tmp_path):
    cache = str(tmp_path / "cache")
    first = textworld_backend.generate_games(CONFIG, SEEDS[:2], cache, workers=2, per_worker=1)
    made = [os.stat(p).st_mtime_ns for p, _ in first]
    again = textworld_backend.generate_games(CONFIG, SEEDS[:2], cache, workers=2, per_worker=1)
    assert again == first and [os.stat(p).st_mtime_ns for p, _ in again] == made
    with open(first[1][0], "ab") as f:
        f.write(b"\0")
    # The changed game is refused by name, while the game still missing is made.
    with pytest.raises(ValueError, match=r"seed-4/game\.z8 has sha256 .* it was changed"):
        textworld_backend.generate_games(CONFIG, SEEDS, cache, workers=2, per_worker=1)


def test_a_game_another_process_cached_while_this_one_made_it_is_taken_from_the_cache(textworld_backend, tmp_path, monkeypatch):
    # Two runs of arl run --jobs making the same game: the one that finishes second keeps the first's.
    cache = str(tmp_path / "cache")
    real_compile = textworld_backend.compile_game
    raced = []

    def compile_while_another_run_caches_it(game, options):
        made = real_compile(game, options)
        if not raced:
            raced.append(True)
            textworld_backend.TextWorldBackend()._generate(CONFIG, SEEDS[0], cache)
        return made

    monkeypatch.setattr(textworld_backend, "compile_game", compile_while_another_run_caches_it)
    path, digest = textworld_backend.TextWorldBackend()._generate(CONFIG, SEEDS[0], cache)
    assert raced and digest == _digest(path)
    # The cache holds the one game, and no half-made folder is left beside it.
    folder = os.path.dirname(path)
    assert os.listdir(os.path.dirname(folder)) == [os.path.basename(folder)]
