"""A verifiers v1 taskset for experiments/envs/verifiers.arl: say a given word back. Its rewards
are verifiers' own @vf.reward methods, scored by Task.score on the reply the gateway served."""

import verifiers.v1 as vf

__all__ = ["WordTaskset"]

WORDS = ["alpha", "beta", "gamma", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]


class WordData(vf.TaskData):
    word: str


class WordTask(vf.Task[WordData]):
    @vf.reward
    async def said(self, trace) -> float:
        """1 when the reply contains the word."""
        return 1.0 if self.data.word in trace.last_reply.lower() else 0.0

    @vf.reward(weight=0.1)
    async def brief(self, trace) -> float:
        """A little for a short reply (at most 20 characters)."""
        return 1.0 if len(trace.last_reply) <= 20 else 0.0


class WordTaskset(vf.Taskset[WordTask]):
    def load(self):
        for word in WORDS:
            yield WordTask(WordData(prompt=f"Say {word}.", system_prompt="Answer with one word.", word=word))
