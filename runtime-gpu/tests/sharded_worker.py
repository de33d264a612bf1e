"""One training sequence, run by every rank of a real torchrun world (or by one process alone):

    python -m torch.distributed.run --standalone --nproc_per_node 2 tests/sharded_worker.py OUT MODEL
    python tests/sharded_worker.py OUT MODEL                       (the single-process reference)

MODEL is a builtin: spec or a local Hugging Face directory (tests/hf_models.py). The data-parallel
strategy comes from ARL_TRAINER_PARALLEL (fsdp or ddp), as for `python -m arl_trainer`. For every
reduction in turn the worker measures compute_gradients (loss, statistics, grad norm) and then
takes one train_step on the same batch; after each step rank 0 saves the full (unsharded) weights.
Rank 0 writes OUT/result.pkl; test_sharded_torchrun.py compares it with the single-process run.
"""
import os
import pickle
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

BATCHES = {"seven": dict(seed=31, n=7), "two": dict(seed=32, n=2, groups=1, min_len=9)}


def params_for(model: str) -> dict:
    from helpers import configure_params

    p = configure_params(model, kl={"coef": 0.05, "estimator": "k3", "placement": "loss", "reference": {"kind": "initial"}}, critic=True, lr=1e-3)
    if not model.startswith("builtin:"):
        p["vocabulary"] = None
        p["options"]["dtype"] = "float64"  # exact comparisons: the saved float32 weights, computed in float64
    return p


def run(trainer) -> dict:
    from helpers import REDUCTIONS, make_batch

    from arl_trainer.weights import full_state

    state = trainer.state
    vocab = state.conf.weights.handle.vocab_size
    out: dict = {"steps": [], "weights": []}
    for name, shape in BATCHES.items():
        batch = make_batch(vocab, critic=True, **shape)
        for red in REDUCTIONS:
            req = {**batch, "reduction": red, "microbatches": 3}
            grads = trainer.compute_gradients(req)
            step = trainer.train_step(req)
            out["steps"].append({"case": f"{name}-{red['mode']}", "gradients": grads, "step": step})
            full = full_state(state, state.conf.weights.policy)
            if state.dist.is_main:
                out["weights"].append({k: v.detach().double().cpu().numpy().copy() for k, v in full.items()})
    out["parallel"] = state.dist.strategy
    out["world_size"] = state.dist.world_size
    return out


def main() -> int:
    import torch

    torch.set_num_threads(1)
    from arl_trainer.distributed import init_from_env
    from arl_trainer.trainer import Trainer

    out_dir, model = sys.argv[1], sys.argv[2]
    dist = init_from_env("cpu")
    trainer = Trainer(dist)
    trainer.configure(params_for(model))
    result = run(trainer)
    if dist.is_main:
        with open(os.path.join(out_dir, "result.pkl"), "wb") as f:
            pickle.dump(result, f)
    if dist.distributed:
        import torch.distributed as tdist

        dist.barrier()
        tdist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
