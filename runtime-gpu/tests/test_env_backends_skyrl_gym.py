"""The skyrl-gym backend (arl_envhost/backends/skyrl_gym.py) against the real library: SkyRL's own envs
made from JSON-lines rows under the data root and stepped with the model's replies."""
from __future__ import annotations

import json
import sqlite3

import pytest
from env_libraries import library, missing_library_message

from arl_envhost.backends.skyrl_gym import SkyRLGymBackend

QUESTION = "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did she sell?"


@pytest.fixture(scope="module")
def skyrl():
    return library("skyrl_gym")


def _rows(folder, rows, name="rows.jsonl"):
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return name


def _gsm8k_row(answer="72"):
    return {"prompt": [{"role": "system", "content": "Think, then answer after ####."}, {"role": "user", "content": QUESTION}],
            "env_class": "gsm8k", "reward_spec": {"method": "rule", "ground_truth": answer}}


def test_a_gsm8k_row_answered_right_scores_1_and_wrong_0(skyrl, tmp_path):
    config = {"env_id": "gsm8k", "rows": _rows(tmp_path, [_gsm8k_row()])}
    backend = SkyRLGymBackend()
    assert backend.check(config, str(tmp_path)) == []
    assert backend.task_count(config, str(tmp_path)) == 1
    episode = backend.open(config, 0, seed=0, data_root=str(tmp_path))
    first = episode.reset()
    assert first.observation == QUESTION and first.messages[0]["role"] == "system"
    from skyrl_gym.envs.gsm8k.utils import compute_score

    right = "48 + 24 = 72\n#### 72"
    assert episode.answer(right) == {"reward": compute_score(right, "72"), "return": 1.0, "turns": 1, "done": True}
    wrong = backend.open(config, 0, seed=0, data_root=str(tmp_path))
    wrong.reset()
    assert wrong.answer("#### 71") == {"reward": 0.0, "return": 0.0, "turns": 1, "done": True}


def test_multi_turn_gsm8k_steps_until_right_and_episodes_share_no_state(skyrl, tmp_path):
    row = {**_gsm8k_row(), "env_class": "gsm8k_multi_turn", "extra_info": {"max_turns": 3}}
    config = {"env_id": "gsm8k_multi_turn", "rows": _rows(tmp_path, [row])}
    backend = SkyRLGymBackend()
    assert backend.check(config, str(tmp_path)) == []
    first = backend.open(config, 0, seed=1, data_root=str(tmp_path))
    second = backend.open(config, 0, seed=2, data_root=str(tmp_path))
    first.reset()
    second.reset()
    assert first.answer("#### 70") is None  # several turns: each reply is a step
    miss = first.step("#### 70")
    assert not miss.done and "####" in miss.observation
    assert miss.signals["reward"] == pytest.approx(0.2 / 3)  # the library's format score per turn
    hit = first.step("#### 72")
    assert hit.done and hit.signals["reward"] == 1.0
    assert first.outcome()["turns"] == 2 and first.outcome()["return"] == pytest.approx(1 + 0.2 / 3)
    assert second.outcome() == {"reward": 0.0, "return": 0.0, "turns": 0, "done": False}
    assert not second.step("#### 1").done  # its own turn count: the first episode's two turns are not its


def test_text2sql_runs_on_a_local_sqlite_file(skyrl, tmp_path):
    db = tmp_path / "sql" / "spider" / "database" / "shop" / "shop.sqlite"
    db.parent.mkdir(parents=True)
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE items (name TEXT, price REAL)")
        connection.executemany("INSERT INTO items VALUES (?, ?)", [("pen", 2.0), ("lamp", 30.0), ("desk", 120.0)])
    gold = "SELECT name FROM items WHERE price > 10"
    row = {"prompt": "Which items cost more than 10?", "db_id": "shop", "data": "spider", "reward_spec": {"ground_truth": gold}}
    config = {"env_id": "text2sql", "rows": _rows(tmp_path, [row]), "env_config": {"db_path": "sql"}}
    backend = SkyRLGymBackend()
    assert backend.check(config, str(tmp_path)) == []
    episode = backend.open(config, 0, seed=0, data_root=str(tmp_path))
    episode.reset()
    explored = episode.step("<think>Look at the prices.</think><sql>SELECT name, price FROM items</sql>")
    assert not explored.done and "lamp" in explored.observation
    solved = episode.step(f"<think>Over 10: lamp, desk.</think><solution>{gold}</solution>")
    assert solved.done and solved.signals["reward"] == 1.0
    # The library's format rule: a solution without its <think> scores -1.
    unformatted = backend.open(config, 0, seed=0, data_root=str(tmp_path))
    unformatted.reset()
    assert unformatted.step(f"<solution>{gold}</solution>").signals["reward"] == -1.0


@pytest.mark.parametrize(
    ("config", "field", "words"),
    [
        ({"env_id": "search", "rows": "rows.jsonl"}, "env_id", "not offline"),
        ({"env_id": "gsm9k", "rows": "rows.jsonl"}, "env_id", "not a skyrl-gym env"),
        ({"env_id": "gsm8k", "rows": 3}, "rows", "must be a string"),
        ({"env_id": "gsm8k", "rows": "../rows.jsonl"}, "rows", "leaves the data root"),
        ({"env_id": "gsm8k", "rows": "missing.jsonl"}, "rows", "cannot read missing.jsonl"),
        ({"env_id": "gsm8k", "rows": "bad.jsonl"}, "rows", "line 2: gsm8k cannot take this row: reward_spec field is required"),
        ({"env_id": "aime", "rows": "rows.jsonl"}, "rows", "reward_model field is required"),
        ({"env_id": "gsm8k", "rows": "rows.jsonl", "turns": 2}, "turns", "not a knob"),
        ({"env_id": "text2sql", "rows": "rows.jsonl", "env_config": {"db_path": "/srv/sql"}}, "env_config.db_path", "is absolute"),
    ],
)
def test_check_refuses_bad_knobs_and_rows(skyrl, tmp_path, config, field, words):
    _rows(tmp_path, [{k: v for k, v in _gsm8k_row().items() if k != "env_class"}])
    _rows(tmp_path, [_gsm8k_row(), {"prompt": "no reward spec"}], "bad.jsonl")
    errors = SkyRLGymBackend().check(config, str(tmp_path))
    assert [e.field for e in errors] == [field], errors
    assert words in str(errors[0])


def test_a_missing_library_is_one_line_naming_the_setup_command():
    message = missing_library_message("skyrl_gym", "skyrl_gym", "SkyRLGymBackend", "{'env_id': 'gsm8k', 'rows': 'x.jsonl'}")
    assert message.startswith("BackendMissing: the Python library skyrl-gym is not installed")
    assert message.endswith("run: npm run setup:envs")
