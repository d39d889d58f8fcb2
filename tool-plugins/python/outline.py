"""Outline of a Python source file: classes, functions and methods with their signatures,
line ranges and docstring first lines. Pure Python (only `ast`), so it runs the same in the
component and under a native interpreter (see test_outline.py)."""

import ast

# Signatures longer than this are cut, so one huge annotation cannot flood the outline.
MAX_SIGNATURE = 200
# Entries after this many are dropped with a note.
MAX_ENTRIES = 2000


# componentize-py snapshots the interpreter after importing the app, and the component has no
# filesystem to import further modules from at run time: exercise ast.unparse now, which
# imports its implementation (`_ast_unparse` on 3.14) on first use.
ast.unparse(ast.parse("async def f(a: int, *b, c=1, **d) -> None: pass"))


class OutlineError(Exception):
    """A failure to report to the model as an error tool result."""


def is_private(name):
    """`_x` and `__x` are private; dunder names such as `__init__` are not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _count(n, noun):
    plural = noun + ("es" if noun.endswith("s") else "s")
    return f"{n} {noun if n == 1 else plural}"


def _shorten(text, limit):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _docstring_line(node):
    # clean=False: cleaning imports `inspect` lazily, and only the first line is kept anyway.
    try:
        doc = ast.get_docstring(node, clean=False)
    except TypeError:
        return None
    if not doc or not doc.strip():
        return None
    return _shorten(doc.strip().splitlines()[0].strip(), 120)


def _decorators(node):
    names = []
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.append("@" + _shorten(ast.unparse(target), 60))
    return names


def _lines(node):
    # From the first decorator, so that the range covers everything that belongs to the definition.
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    end = getattr(node, "end_lineno", None) or start
    return f"L{start}" if end == start else f"L{start}-{end}"


def _function_header(node):
    keyword = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    type_params = getattr(node, "type_params", None)
    generics = f"[{', '.join(ast.unparse(p) for p in type_params)}]" if type_params else ""
    signature = f"{node.name}{generics}({ast.unparse(node.args)})"
    if node.returns is not None:
        signature += f" -> {ast.unparse(node.returns)}"
    return f"{keyword} {_shorten(signature, MAX_SIGNATURE)}"


def _class_header(node):
    type_params = getattr(node, "type_params", None)
    generics = f"[{', '.join(ast.unparse(p) for p in type_params)}]" if type_params else ""
    bases = [ast.unparse(b) for b in node.bases]
    bases += [ast.unparse(k) for k in node.keywords]
    header = f"{node.name}{generics}"
    if bases:
        header += f"({', '.join(bases)})"
    return f"class {_shorten(header, MAX_SIGNATURE)}"


# Statements whose bodies hold definitions at the same nesting level (e.g. `if TYPE_CHECKING:`,
# `try: ... except ImportError:`).
_COMPOUND = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)
if hasattr(ast, "TryStar"):
    _COMPOUND += (ast.TryStar,)


def _child_blocks(node):
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list):
            yield block
    for handler in getattr(node, "handlers", []) or []:
        yield handler.body
    for case in getattr(node, "cases", []) or []:
        yield case.body


class _Collector:
    def __init__(self, include_private):
        self.include_private = include_private
        self.lines = []
        self.classes = 0
        self.functions = 0
        self.methods = 0
        self.truncated = False

    def visit_block(self, statements, depth, in_class):
        for statement in statements:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.visit_definition(statement, depth, in_class)
            elif isinstance(statement, _COMPOUND) or type(statement).__name__ == "Match":
                for block in _child_blocks(statement):
                    self.visit_block(block, depth, in_class)

    def visit_definition(self, node, depth, in_class):
        if not self.include_private and is_private(node.name):
            return
        is_class = isinstance(node, ast.ClassDef)
        if is_class:
            self.classes += 1
            header = _class_header(node)
        else:
            if in_class:
                self.methods += 1
            else:
                self.functions += 1
            header = _function_header(node)
        decorators = _decorators(node)
        if decorators:
            header = " ".join(decorators) + " " + header
        line = f"{'  ' * depth}{header}  [{_lines(node)}]"
        doc = _docstring_line(node)
        if doc:
            line += f"  # {doc}"
        if len(self.lines) < MAX_ENTRIES:
            self.lines.append(line)
        else:
            self.truncated = True
        self.visit_block(node.body, depth + 1, in_class=is_class)


def outline(path, source, include_private=False):
    """Returns the outline of `source` (bytes or str) as text; raises OutlineError on a
    syntax error."""
    try:
        # On a syntax error CPython tries to open `filename` to quote the line; in the component
        # (no preopened directories) that fails cleanly and it quotes the source instead.
        tree = ast.parse(source, filename=path)
    except SyntaxError as error:
        where = f"line {error.lineno}" if error.lineno else "unknown line"
        if error.lineno and error.offset:
            where += f", column {error.offset}"
        detail = f"syntax error in {path} at {where}: {error.msg}"
        if error.text:
            detail += f"\n    {error.text.rstrip()}"
        raise OutlineError(detail) from None
    except ValueError as error:  # e.g. null bytes in the source
        raise OutlineError(f"cannot parse {path}: {error}") from None

    collector = _Collector(include_private)
    collector.visit_block(tree.body, 0, in_class=False)

    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    total_lines = len(text.splitlines())
    summary = (
        f"{path}: {_count(total_lines, 'line')}, {_count(collector.classes, 'class')}, "
        f"{_count(collector.functions, 'function')}, {_count(collector.methods, 'method')}"
    )
    if not include_private:
        summary += " (private names hidden)"
    out = [summary]
    doc = _docstring_line(tree)
    if doc:
        out.append(f"module docstring: {doc}")
    out.append("")
    if collector.lines:
        out.extend(collector.lines)
    else:
        out.append("(no classes or functions)")
    if collector.truncated:
        out.append(f"... truncated after {MAX_ENTRIES} entries")
    return "\n".join(out)
