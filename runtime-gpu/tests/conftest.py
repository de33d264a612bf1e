import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in (ROOT, os.path.dirname(os.path.abspath(__file__))):
    if p not in sys.path:
        sys.path.insert(0, p)

try:
    import torch

    torch.set_num_threads(min(2, torch.get_num_threads() or 1))
except ImportError:  # the suite reports the missing torch per test (importorskip)
    pass
