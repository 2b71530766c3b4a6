"""The forms ivoryOS Classic's script compiler (1.6.x) writes, read as the workflow subset (workflow_py.py).

What it writes, and what each becomes (test/fixtures/ivoryos-classic has its own output):
- a module that starts with `deck = None` (no deck chosen), or `import <deck> as deck`: ignored;
- a `def pause(reason=...)` helper (printing and waiting for Enter) when the workflow has a pause step: not a
  phase; its calls, `pause('''message''')`, are pause steps;
- every call with its arguments as one literal dict, `deck.pump.dose(**{'volume_ml': volume})`: the keys are
  the argument names, the values read as any argument (a literal, a parameter, a result);
- an Enum argument as `Solvent('water')`: the value `'water'`;
- `global <name>` lines (older versions put one in every function): ignored;
- `async def` and `await deck.x.y(...)` for coroutine methods: as the plain forms;
- parameter annotations `Optional[float]`, `Literal['a', 'b']`: the type inside.
"""
import ast


def skipped_at_module_level(node):
    """`deck = None`, and the pause helper: parts of a Classic script that are not the workflow."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
            and node.targets[0].id == "deck" and isinstance(node.value, ast.Constant) and node.value.value is None:
        return True
    return is_pause_helper(node)


def is_pause_helper(node):
    """`def pause(reason=...)`: one optional argument, a body of calls only (print, input)."""
    if not isinstance(node, ast.FunctionDef) or node.name != "pause":
        return False
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or len(args.args) > 1:
        return False
    body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) else node.body
    return all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) for s in body)


def unwrap_await(node):
    """`await deck.x.y(...)` → the call."""
    return node.value if isinstance(node, ast.Await) else node


def dict_kwargs(kw):
    """The (name, value node) pairs of `**{'name': value, ...}`, or None when it is not a dict of text keys."""
    value = kw.value
    if kw.arg is not None or not isinstance(value, ast.Dict):
        return None
    if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier() for k in value.keys):
        return None
    return [(k.value, v) for k, v in zip(value.keys, value.values)]


def enum_value(node):
    """`Solvent('water')` (a class called with one literal): the literal node, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id[:1].isupper() \
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant):
        return node.args[0]
    return None


def annotation_name(annotation):
    """`float`, `Optional[float]`, `Literal[1, 2]` → 'float' / 'int' / 'str' / 'bool', or None."""
    if isinstance(annotation, ast.Name):
        return annotation.id
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        inner = annotation.slice
        if annotation.value.id == "Optional":
            return annotation_name(inner)
        if annotation.value.id == "Literal":
            values = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            kinds = {type(v.value).__name__ for v in values if isinstance(v, ast.Constant)}
            return kinds.pop() if len(kinds) == 1 else None
    return None


def pause_message(node, literal):
    """The message of `pause('''…''')` / `pause(reason='…')` (`literal` reads a node); None for `pause()`."""
    given = list(node.args) + [k.value for k in node.keywords if k.arg == "reason"]
    if len(given) > 1 or any(k.arg != "reason" for k in node.keywords):
        return False
    return literal(given[0]) if given else None
