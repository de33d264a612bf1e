"""Bug candidates for a Python source file: small, single-site edits of the code inside functions.

Four kinds, as SWE-smith's procedural modifiers make them (this is our own code):

- ``flip_comparison``: ``==`` <-> ``!=``, ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``in`` <-> ``not in``, ``is`` <-> ``is not``;
- ``off_by_one``: an integer literal in an index, a slice, a comparison, arithmetic or a call's
  argument, one more or one less;
- ``swap_operands``: ``a - b`` -> ``b - a`` (any binary operator whose operands are simple);
- ``drop_statement``: one statement of a block that has more than one, removed with its lines.

Each candidate is the whole new text of the file (the edit is spliced into the source by the
positions ``ast`` gives, so the rest of the file keeps its bytes) and what it changed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

MUTATION_KINDS = ("flip_comparison", "off_by_one", "swap_operands", "drop_statement")

_FLIPS = {
    ast.Eq: ("==", "!="),
    ast.NotEq: ("!=", "=="),
    ast.Lt: ("<", "<="),
    ast.LtE: ("<=", "<"),
    ast.Gt: (">", ">="),
    ast.GtE: (">=", ">"),
    ast.In: ("in", "not in"),
    ast.NotIn: ("not in", "in"),
    ast.Is: ("is", "is not"),
    ast.IsNot: ("is not", "is"),
}

_SIMPLE = (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript)


@dataclass(frozen=True)
class Candidate:
    kind: str
    function: str
    line: int
    what: str
    text: str


def _offsets(source: str) -> list[int]:
    """The character offset of each line's start (ast gives UTF-8 byte columns; see _at)."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


class _Source:
    def __init__(self, source: str) -> None:
        self.text = source
        self.lines = source.splitlines(keepends=True)
        self.starts = _offsets(source)

    def at(self, line: int, col: int) -> int:
        """The character offset of (line, UTF-8 byte column)."""
        raw = self.lines[line - 1].encode("utf-8")[:col]
        return self.starts[line - 1] + len(raw.decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.at(node.lineno, node.col_offset), self.at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined,arg-type]

    def splice(self, start: int, end: int, new: str) -> str:
        return self.text[:start] + new + self.text[end:]


def _functions(tree: ast.AST) -> list[tuple[str, ast.AST]]:
    """Every function and method with its qualified name."""
    out: list[tuple[str, ast.AST]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                out.append((name, child))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def _own_nodes(fn: ast.AST) -> list[ast.AST]:
    """The nodes of a function's body, not those of functions or classes nested in it."""
    out: list[ast.AST] = []
    stack = list(getattr(fn, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def candidates(source: str, kinds: tuple[str, ...] | list[str] = MUTATION_KINDS) -> list[Candidate]:
    """Every single-site bug of `kinds` in the functions of `source`, in source order, each once."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    src = _Source(source)
    out: list[Candidate] = []
    seen: set[str] = set()

    def add(kind: str, fn: str, node: ast.AST, what: str, text: str) -> None:
        if text == source or text in seen:
            return
        try:
            ast.parse(text)
        except SyntaxError:
            return
        seen.add(text)
        out.append(Candidate(kind, fn, node.lineno, what, text))  # type: ignore[attr-defined]

    for fn, node in _functions(tree):
        own = _own_nodes(node)
        own.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
        parents: dict[int, ast.AST] = {}
        for n in own:
            for c in ast.iter_child_nodes(n):
                parents[id(c)] = n
        for n in own:
            if "flip_comparison" in kinds and isinstance(n, ast.Compare) and len(n.ops) == 1 and n.lineno == n.end_lineno:
                flip = _FLIPS.get(type(n.ops[0]))
                if flip:
                    a = src.span(n.left)[1]
                    b = src.span(n.comparators[0])[0]
                    middle = source[a:b]
                    old, new = flip
                    if middle.strip() == old:
                        add("flip_comparison", fn, n, f"{old} -> {new}", src.splice(a, b, middle.replace(old, new, 1)))
            if "off_by_one" in kinds and isinstance(n, ast.Constant) and type(n.value) is int and n.lineno == n.end_lineno:
                parent = parents.get(id(n))
                if isinstance(parent, ast.UnaryOp):
                    parent = parents.get(id(parent))
                if isinstance(parent, (ast.Subscript, ast.Slice, ast.Compare, ast.BinOp, ast.Call)):
                    a, b = src.span(n)
                    if source[a:b].isdigit():
                        for delta in (1, -1):
                            value = n.value + delta
                            if value >= 0:
                                add("off_by_one", fn, n, f"{n.value} -> {value}", src.splice(a, b, str(value)))
            if "swap_operands" in kinds and isinstance(n, ast.BinOp) and n.lineno == n.end_lineno:
                if isinstance(n.left, _SIMPLE) and isinstance(n.right, _SIMPLE):
                    a, b = src.span(n)
                    la, lb = src.span(n.left)
                    ra, rb = src.span(n.right)
                    if la == a and rb == b:
                        left, middle, right = source[la:lb], source[lb:ra], source[ra:rb]
                        if left != right:
                            add("swap_operands", fn, n, f"{left}{middle}{right} -> {right}{middle}{left}", src.splice(a, b, right + middle + left))
            if "drop_statement" in kinds:
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(n, field, None)
                    if not isinstance(block, list) or len(block) < 2 or not isinstance(block[0], ast.stmt):
                        continue
                    for stmt in block:
                        if _is_docstring(stmt) or isinstance(stmt, ast.Pass):
                            continue
                        first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
                        head = src.lines[first - 1].encode("utf-8")[: stmt.col_offset].decode("utf-8", errors="replace")
                        tail = src.lines[last - 1].encode("utf-8")[stmt.end_col_offset :].decode("utf-8", errors="replace")
                        if head.strip() or tail.strip().startswith(";") or (tail.strip() and not tail.strip().startswith("#")):
                            continue
                        text = "".join(src.lines[: first - 1] + src.lines[last:])
                        what = src.lines[first - 1].strip()
                        add("drop_statement", fn, stmt, f"removed `{what[:60]}`", text)
        # Function bodies themselves (the loop above covers the blocks of the nodes inside).
        body = getattr(node, "body", [])
        if "drop_statement" in kinds and len(body) >= 2:
            for stmt in body:
                if _is_docstring(stmt) or isinstance(stmt, ast.Pass):
                    continue
                first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
                head = src.lines[first - 1].encode("utf-8")[: stmt.col_offset].decode("utf-8", errors="replace")
                tail = src.lines[last - 1].encode("utf-8")[stmt.end_col_offset :].decode("utf-8", errors="replace")
                if head.strip() or (tail.strip() and not tail.strip().startswith("#")):
                    continue
                # A body of a docstring and one statement would be left with the docstring alone: fine.
                text = "".join(src.lines[: first - 1] + src.lines[last:])
                add("drop_statement", fn, stmt, f"removed `{src.lines[first - 1].strip()[:60]}`", text)
    return out


def fix_snippet(gold: str, buggy: str) -> tuple[str, str]:
    """The smallest run of whole lines of `buggy` around the change that occurs once in it, and the gold lines it stands for."""
    g, b = gold.splitlines(keepends=True), buggy.splitlines(keepends=True)
    start = 0
    while start < min(len(g), len(b)) and g[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(g), len(b)) - start and g[-1 - end] == b[-1 - end]:
        end += 1
    context = 0 if len(b) - end > start else 1
    while True:
        lo = max(0, start - context)
        old = "".join(b[lo : len(b) - end + context])
        new = "".join(g[lo : len(g) - end + context])
        if (old and buggy.count(old) == 1) or (lo == 0 and len(b) - end + context >= len(b)):
            return old, new
        context += 1
