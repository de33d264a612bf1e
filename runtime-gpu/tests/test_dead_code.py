"""No dead code in the Python side: every top-level function and class of the packages is named
somewhere else under runtime-gpu/ (a call, an import, a registry, a test), as
test/architecture/unused-exports.test.ts holds every export of src/ to being imported."""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("arl_trainer", "arl_envhost", "arl_tracking")
SKIPPED = {".venv", "__pycache__", ".pytest_cache", ".ruff_cache"}


def dead_definitions(root: pathlib.Path, packages: tuple[str, ...]) -> tuple[int, list[str]]:
    """How many top-level definitions the packages have, and those named nowhere but where defined."""
    sources = [p.read_text(encoding="utf8") for p in root.rglob("*.py") if not SKIPPED.intersection(p.relative_to(root).parts)]
    seen = 0
    dead = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf8")).body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("__"):
                    seen += 1
                    word = re.compile(rf"\b{re.escape(node.name)}\b")
                    if sum(len(word.findall(text)) for text in sources) <= 1:
                        dead.append(f"{path.relative_to(root)}:{node.lineno} {node.name}")
    return seen, dead


def test_every_top_level_definition_is_named_elsewhere():
    seen, dead = dead_definitions(ROOT, PACKAGES)
    assert seen > 100, "the scan must see the packages' definitions"
    assert dead == [], "defined but named nowhere else: remove them (or use them)"


def test_the_scan_names_a_definition_nothing_uses(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "m.py").write_text("def used():\n    return 1\n\n\nclass Unused:\n    pass\n", encoding="utf8")
    (tmp_path / "caller.py").write_text("from pkg.m import used\n\nused()\n", encoding="utf8")
    assert dead_definitions(tmp_path, ("pkg",)) == (2, ["pkg/m.py:5 Unused"])
