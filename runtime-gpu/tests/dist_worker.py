"""Worker of the multi-rank tests (torch.multiprocessing.spawn, gloo on CPU)."""
import os


def batches(vocab_size):
    from helpers import make_batch

    return {
        "seven": make_batch(vocab_size, seed=21, n=7, critic=True),
        # one sequence: rank 1 has nothing and runs zero-weighted microbatches
        "one": make_batch(vocab_size, seed=22, n=1, groups=1, min_len=9, critic=True),
    }


def cases():
    from helpers import REDUCTIONS

    out = []
    for name in ("seven", "one"):
        for red in REDUCTIONS:
            for micro in (1, 3):
                out.append((name, red, micro))
    return out


def case_key(name, red, micro):
    return f"{name}-{red['mode']}-{micro}"


def compute(trainer, vocab_size):
    """{key: (result, grads)} for every case, on this rank."""
    from helpers import grads

    bs = batches(vocab_size)
    out = {}
    for name, red, micro in cases():
        res = trainer.compute_gradients({**bs[name], "reduction": red, "microbatches": micro})
        g = grads(trainer.state.conf.weights.policy)
        g.update({"critic." + k: v for k, v in grads(trainer.state.conf.weights.critic).items()})
        out[case_key(name, red, micro)] = (res, g)
    return out


def new_trainer(dist=None):
    from helpers import configure_params, tiny_model

    from arl_trainer.trainer import Trainer

    t = Trainer(dist)
    kl = {"coef": 0.05, "estimator": "k3", "placement": "loss", "reference": {"kind": "initial"}}
    t.configure(configure_params(tiny_model("float64"), critic=True, kl=kl))
    return t


def worker(rank, world, init_file, out_dir):
    import torch

    torch.set_num_threads(1)
    from arl_trainer.distributed import init_for_test

    dist = init_for_test(rank, world, f"file://{init_file}")
    t = new_trainer(dist)
    results = compute(t, t.state.conf.weights.handle.vocab_size)
    # one real optimizer step on the "seven" batch
    step = t.train_step({**batches(t.state.conf.weights.handle.vocab_size)["seven"], "reduction": {"mode": "group_token_mean"}, "microbatches": 2})
    params = {k: v.detach().numpy().copy() for k, v in t.state.conf.weights.handle.module.state_dict().items()}
    import pickle

    with open(os.path.join(out_dir, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump({"results": results, "step": step, "params": params}, f)
    import torch.distributed as tdist

    tdist.barrier()
    tdist.destroy_process_group()
