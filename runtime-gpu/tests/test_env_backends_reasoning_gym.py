"""The reasoning-gym backend (arl_envhost/backends/reasoning_gym.py) against the real library: an entry's
question is the observation, and the model's answer is scored by the dataset's own score_answer."""
from __future__ import annotations

import pytest
from env_libraries import library, missing_library_message

from arl_envhost.backends.base import ConfigError
from arl_envhost.backends.reasoning_gym import ReasoningGymBackend

CONFIG = {"dataset": "chain_sum", "size": 8, "seed": 3, "config": {"min_terms": 2, "max_terms": 3}}


@pytest.fixture(scope="module")
def rg():
    return library("reasoning_gym")


def test_a_right_answer_scores_1_and_a_wrong_one_0_by_score_answer(rg, tmp_path):
    backend = ReasoningGymBackend()
    assert backend.check(CONFIG) == []
    assert backend.task_count(CONFIG) == 8
    reference = rg.create_dataset("chain_sum", size=8, seed=3, min_terms=2, max_terms=3)
    entry = reference[2]
    episode = backend.open(CONFIG, 2, seed=11, data_root=str(tmp_path))
    assert episode.reset().observation == entry["question"]
    right = episode.answer(f"The sum is <answer>{entry['answer']}</answer>")
    assert right == {"score": 1.0, "correct": True, "answered": True}
    assert episode.outcome() == right
    wrong_answer = str(int(entry["answer"]) + 1)
    wrong = backend.open(CONFIG, 2, seed=11, data_root=str(tmp_path)).answer(f"<answer>{wrong_answer}</answer>")
    assert wrong == {"score": reference.score_answer(wrong_answer, entry), "correct": False, "answered": True}
    assert wrong["score"] == 0.0
    # No <answer> tag: nothing to score, as the library's own extraction finds none.
    untagged = backend.open(CONFIG, 2, seed=11, data_root=str(tmp_path)).answer(entry["answer"])
    assert untagged == {"score": 0.0, "correct": False, "answered": False}


def test_the_answer_tool_scores_its_argument_and_ends_the_episode(rg, tmp_path):
    config = {**CONFIG, "answer": "tool"}
    backend = ReasoningGymBackend()
    entry = rg.create_dataset("chain_sum", size=8, seed=3, min_terms=2, max_terms=3)[5]
    episode = backend.open(config, 5, seed=0, data_root=str(tmp_path))
    episode.reset()
    assert episode.answer(entry["answer"]) is None  # not a single-turn task in tool mode
    step = episode.step(entry["answer"])
    assert step.done and step.signals["correct"] is True and step.signals["score"] == 1.0
    assert backend.walkthrough(config, 5, str(tmp_path)) == [entry["answer"]]
    assert backend.walkthrough(CONFIG, 5, str(tmp_path)) == [f"<answer>{entry['answer']}</answer>"]


def test_episodes_of_one_task_share_no_state(rg, tmp_path):
    backend = ReasoningGymBackend()
    first = backend.open(CONFIG, 1, seed=1, data_root=str(tmp_path))
    second = backend.open(CONFIG, 1, seed=2, data_root=str(tmp_path))
    assert first.reset().observation == second.reset().observation  # the task, not the seed, picks the entry
    answer = rg.create_dataset("chain_sum", size=8, seed=3, min_terms=2, max_terms=3)[1]["answer"]
    first.answer(f"<answer>{answer}</answer>")
    assert first.outcome()["correct"] is True
    assert second.outcome() == {"score": 0.0, "correct": False, "answered": False}
    second.answer("<answer>nonsense</answer>")
    assert first.outcome()["correct"] is True and second.outcome()["correct"] is False


def test_the_vocabulary_holds_the_tasks_words(rg, tmp_path):
    entry = rg.create_dataset("chain_sum", size=8, seed=3, min_terms=2, max_terms=3)[0]
    vocabulary = ReasoningGymBackend().vocabulary(CONFIG, [0], str(tmp_path))
    assert "arithmetic" in vocabulary and entry["answer"].lstrip("-") in vocabulary
    assert len(vocabulary) == len(set(vocabulary))


@pytest.mark.parametrize(
    ("config", "field", "words"),
    [
        ({"dataset": "chain_sums"}, "dataset", "did you mean chain_sum"),
        ({"dataset": 3}, "dataset", "must be a string"),
        ({}, "dataset", "is required"),
        ({"dataset": "chain_sum", "size": "8"}, "size", "must be an integer"),
        ({"dataset": "chain_sum", "size": 0}, "size", "at least 1"),
        ({"dataset": "chain_sum", "seed": True}, "seed", "must be an integer"),
        ({"dataset": "chain_sum", "config": {"min_term": 2}}, "config.min_term", "not a field of ChainSumConfig"),
        ({"dataset": "chain_sum", "config": {"min_terms": "2"}}, "config.min_terms", "must be an integer"),
        ({"dataset": "chain_sum", "config": {"min_terms": 5, "max_terms": 2}}, "config", "max_terms must be >= min_terms"),
        ({"dataset": "chain_sum", "answer": "speech"}, "answer", "not one of text, tool"),
        ({"dataset": "chain_sum", "tries": 2}, "tries", "not a knob"),
    ],
)
def test_check_refuses_bad_knobs_naming_the_knob(rg, config, field, words):
    errors = ReasoningGymBackend().check(config)
    assert [e.field for e in errors] == [field], errors
    assert words in str(errors[0])
    assert isinstance(errors[0], ConfigError)


def test_a_missing_library_is_one_line_naming_the_setup_command():
    message = missing_library_message("reasoning_gym", "reasoning_gym", "ReasoningGymBackend", "{'dataset': 'chain_sum'}")
    assert message.startswith("BackendMissing: the Python library reasoning-gym is not installed")
    assert message.endswith("run: npm run setup:envs")
