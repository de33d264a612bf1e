"""SWE tasks generated from PyPI source distributions (docs/envs.md, "Coding tasks")."""
