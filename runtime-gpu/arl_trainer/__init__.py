"""arl_trainer: the PyTorch trainer process of arl (trainer protocol v1, docs/protocol.md).

Run `python3 -m arl_trainer` (or under `torchrun`); it reads request frames on stdin and writes
response frames on stdout, logs on stderr. Importing this package does not import torch.
"""
__version__ = "0.1.0"
MIN_TORCH = (1, 13)
