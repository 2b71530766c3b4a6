"""Workflows written as Python (DESIGN.md §13): ivoryOS-style scripts read with `ast` into labdeck's workflow
document (core/workflow/model.ts). The code is parsed, never executed; anything outside the subset below is an
error naming its line and construct.

The subset: functions `prep` / `<name>_prep`, the main one (`script` or `<name>`, its arguments are the
workflow's parameters) and `cleanup` / `<name>_cleanup`; in their bodies, calls on an instrument
(`deck.pump.dose(volume_ml=1.5)`, `lab.pump.dose(...)` or `pump.dose(...)`) with keyword arguments that are
literals, parameters (a function argument, or the text `"#name"`) or variables (a result assigned earlier),
`x = <call>`, `time.sleep(s)`, `input("message")` (a pause), `x = input("prompt")` (an input step; `float(…)`/`int(…)` around it for a number), `if <a> <op> <b>:` / `else`,
`for _ in range(n):`, `pass`, and in the main function a final `return {"output": var, "o2": var["field"]}`
(its keys name the outputs: `{"power": cell["power_mw"]}` is the output `power`, the field power_mw of cell).
Module level: imports, a docstring, the functions, and an `if __name__ == "__main__":` block (ignored).
What ivoryOS Classic's compiler writes is read too (`deck = None`, the `pause()` helper and its calls,
`**{'name': value}` arguments, ...): workflow_classic.py lists it.

Hostile text is answered, never hung on: nesting deeper than MAX_DEPTH (brackets, chains of unary operators)
is refused naming its line before `ast` recurses into it, any other failure (a RecursionError, an unhashable
dict key) is an error naming the statement's line, and a number that JSON cannot carry (1e999) is refused.
The runtime runs this in its own processes with a time limit (python/parse_workflow.py).
"""
import ast
import contextlib
import io
import math
import re
import tokenize

from . import workflow_classic as classic

PREFIXES = ("deck", "lab")
COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
TYPES = {bool: "boolean", int: "integer", float: "number", str: "string"}
OUTPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*\Z")
ANNOTATIONS = {"bool": "boolean", "int": "integer", "float": "number", "str": "string"}
MAX_DEPTH = 100
UNARY = {"-", "+", "~", "not", "await"}


class OutsideSubset(Exception):
    """Python the workflow subset does not have: `line` and `construct` name it."""

    def __init__(self, node, construct, hint):
        self.line = getattr(node, "lineno", 1)
        self.construct = construct
        self.field = None
        super().__init__("line %s: %s is outside the workflow subset: %s" % (self.line, construct, hint))


NAMES = {
    ast.While: "a while loop", ast.Try: "try", ast.With: "with", ast.ClassDef: "a class", ast.Return: "return",
    ast.AugAssign: "an augmented assignment", ast.Raise: "raise", ast.Global: "global", ast.Delete: "del",
}


def _construct(node):
    """What a construct is called in a message: its name, or its text (cut at 80 characters)."""
    if type(node) in NAMES:
        return NAMES[type(node)]
    return "%s (%s)" % (_text(ast.get_source_segment(_SOURCE[0], node) or "?"), type(node).__name__)


def _src(node):
    return _text(ast.unparse(node))


def _text(text, limit=80):
    return text if len(text) <= limit else text[:limit] + "…"


# the text the nodes being read come from (one request at a time per process: see parse_workflow.py)
_SOURCE = [""]
_LINE = [1]


def _tree(source, field=None):
    if not isinstance(source, str):
        err = OutsideSubset(None, "%s" % type(source).__name__, "the Python is text")
        err.args = ("%s is not text (%s): send the Python as a string" % (field or "the source", type(source).__name__),)
        raise err
    _SOURCE[0] = source
    _check_depth(source)
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        err = OutsideSubset(exc, "a syntax error", exc.msg)
        err.args = ("line %s: %s" % (exc.lineno, exc.msg),)
        raise err
    except (RecursionError, MemoryError):
        raise _too_deep(_deepest_line(source))


def _too_deep(line):
    err = OutsideSubset(None, "nesting", "")
    err.line = line
    err.args = ("line %s: nesting too deep (at most %d levels of brackets or unary operators): write the value out" % (line, MAX_DEPTH),)
    return err


def _depths(source):
    """(line, depth) of each token: open brackets plus the unary operators in a row before it."""
    depth, run = 0, 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth = max(0, depth - 1)
            if tok.string in UNARY and tok.type in (tokenize.OP, tokenize.NAME):
                run += 1
            elif tok.type not in (tokenize.NL, tokenize.COMMENT):
                run = 0
            yield tok.start[0], depth + run
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return  # ast.parse names the syntax error


def _check_depth(source):
    for line, depth in _depths(source):
        if depth > MAX_DEPTH:
            raise _too_deep(line)


def _deepest_line(source):
    """The line of the deepest nesting, or else the one with the most tokens (a chain of `a + a + …`)."""
    best, tokens = (0, 1), {}
    for line, depth in _depths(source):
        best = max(best, (depth, -line))
        tokens[line] = tokens.get(line, 0) + 1
    if best[0] > MAX_DEPTH or not tokens:
        return -best[1]
    return max(tokens, key=lambda n: (tokens[n], -n))


def guarded(read):
    """`read` (parse or parse_parts) answering OutsideSubset for anything it raises: a recursion or memory
    error names the line of the statement being read, as does any other failure (its type and message)."""
    def run(*args):
        _LINE[0] = 1
        try:
            return read(*args)
        except OutsideSubset:
            raise
        except (RecursionError, MemoryError):
            raise _too_deep(_LINE[0])
        except Exception as exc:  # noqa: B902 - the parse answers, whatever the text
            err = OutsideSubset(None, type(exc).__name__, "")
            err.line = _LINE[0]
            err.args = ("line %s: cannot be read as a workflow (%s: %s)" % (_LINE[0], type(exc).__name__, _text(str(exc))),)
            raise err
    run.__doc__ = read.__doc__
    return run


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _phase_of(fn):
    if fn.name == "prep" or fn.name.endswith("_prep"):
        return "prep"
    return "cleanup" if fn.name == "cleanup" or fn.name.endswith("_cleanup") else "main"


@guarded
def parse(source, name=None):
    """The workflow document of `source` (a Python text); `name` overrides the main function's name."""
    return _whole(_tree(source), source, name)


def _whole(tree, source, name):
    """A whole script's tree: its functions are the phases."""
    phases, description = {}, ""
    for i, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)) or classic.skipped_at_module_level(node):
            continue
        if i == 0 and _is_docstring(node):
            description = node.value.value
            continue
        if isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') == '__name__ == "__main__"':
            continue
        if not isinstance(node, FUNCTIONS):
            raise OutsideSubset(node, _construct(node), "at module level only imports, the prep / script / cleanup functions and an `if __name__ == \"__main__\":` block")
        phase = _phase_of(node)
        if phase in phases:
            raise OutsideSubset(node, "a second %s function (%s)" % (phase, node.name), "a workflow has one prep, one main and one cleanup function")
        phases[phase] = node
    if "main" not in phases:
        raise OutsideSubset(tree, "a script without a main function", "define the main function (`def script(...):` or `def <workflow name>(...):`)")
    return _document(phases, name, description, sources={p: source for p in phases})


FIELDS = {"prep": "prep", "main": "script", "cleanup": "cleanup"}


@guarded
def parse_parts(parts, name):
    """ivoryOS's submit_python: the texts of prep, script (main) and cleanup, each a function or its body.
    Errors name the field as well as the line."""
    if not isinstance(parts, dict):
        raise _not_text("the parts", parts)
    script = parts.get("script") or ""
    if not (parts.get("prep") or parts.get("cleanup")) and isinstance(script, str):
        # a whole script in the script part (a file ivoryOS compiled, pasted): read as a whole script
        with _in_field("script"):
            tree = _tree(script, "script")
            if sum(isinstance(n, FUNCTIONS) and not classic.is_pause_helper(n) for n in tree.body) > 1:
                return _whole(tree, script, name)
    phases, sources = {}, {}
    for phase, field in FIELDS.items():
        with _in_field(field):
            sources[phase] = parts.get(field) or ""
            body = [n for n in _tree(sources[phase], field).body if not isinstance(n, (ast.Import, ast.ImportFrom)) and not classic.skipped_at_module_level(n)]
            if len(body) == 1 and isinstance(body[0], FUNCTIONS):
                phases[phase] = body[0]
            else:
                phases[phase] = ast.FunctionDef(name=phase, args=ast.arguments(
                    posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
                    body=body, decorator_list=[], lineno=1)
    return _document(phases, name, "", fields=FIELDS, sources=sources)


def _not_text(what, value):
    err = OutsideSubset(None, type(value).__name__, "")
    err.args = ("%s must be an object of texts (prep, script, cleanup), not %s" % (what, type(value).__name__),)
    return err


@contextlib.contextmanager
def _in_field(field):
    """Prefix the error of a part with its field (`script line 3: …`); no field, no prefix."""
    try:
        yield
    except OutsideSubset as exc:
        if field and not exc.field:
            exc.field = field
            exc.args = ("%s %s" % (field, exc.args[0]),)
        raise


def _document(phases, name, description, fields=None, sources=None):
    main = phases["main"]
    with _in_field(fields and fields["main"]):
        _SOURCE[0] = sources["main"]
        reader = Reader(main)
    doc = {"name": name or main.name, "description": description or (ast.get_docstring(main) or ""),
           "parameters": reader.parameters, "outputs": [], "prep": [], "main": [], "cleanup": []}
    for phase in ("prep", "main", "cleanup"):
        fn = phases.get(phase)
        if fn is None:
            continue
        with _in_field(fields and fields[phase]):
            _SOURCE[0] = sources[phase]
            if phase != "main" and (fn.args.args or fn.args.kwonlyargs):
                raise OutsideSubset(fn, "arguments of %s" % fn.name, "only the main function takes the workflow's parameters")
            body = fn.body[1:] if fn.body and _is_docstring(fn.body[0]) else fn.body
            returns = phase == "main" and body and isinstance(body[-1], ast.Return)
            doc[phase] = reader.steps(body[:-1] if returns else body)
            if returns:
                doc["outputs"] = reader.outputs(body[-1])
    return doc


def _not_json(value):
    """What in a literal JSON cannot carry (inf, nan, a set, bytes, a complex number, a key that is not text), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return "a number here is finite (1e999 and nan are not numbers a workflow can hold)"
    if isinstance(value, (set, frozenset, bytes, complex)):
        return "a value here is a number, text, True/False, None, a list or a dict (not a %s)" % type(value).__name__
    if isinstance(value, (list, tuple)):
        return next((p for p in map(_not_json, value) if p), None)
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return "the keys of a dict here are text"
        return next((p for p in map(_not_json, value.values()) if p), None)
    return None


def _is_docstring(node):
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


class Reader:
    def __init__(self, main):
        self.params = {}
        self.parameters = []
        self.variables = set()
        args = main.args
        if args.vararg or args.kwarg or args.posonlyargs:
            raise OutsideSubset(main, "*args / **kwargs / positional-only arguments", "name each parameter")
        plain = args.args + args.kwonlyargs
        defaults = [None] * (len(args.args) - len(args.defaults)) + list(args.defaults) + list(args.kw_defaults)
        for arg, default in zip(plain, defaults):
            self.add_parameter(arg.arg, arg, default)

    def add_parameter(self, name, node, default=None):
        if name in self.params:
            return
        p = {"name": name, "type": "number"}
        if default is not None:
            value = self.literal(default)
            p["type"] = TYPES.get(type(value), "number")
            p["default"] = value
        annotation = classic.annotation_name(getattr(node, "annotation", None))
        if annotation in ANNOTATIONS:
            p["type"] = ANNOTATIONS[annotation]
        self.params[name] = p
        self.parameters.append(p)

    def literal(self, node):
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError):  # TypeError: {[]: 1}, an unhashable key
            raise OutsideSubset(node, _construct(node), "a value here must be a literal (a number, text, True/False, None, a list or a dict of them)")
        problem = _not_json(value)
        if problem:
            raise OutsideSubset(node, _construct(node), problem)
        return value

    def steps(self, body):
        return [s for node in body for s in self.statement(node)]

    def statement(self, node):
        _LINE[0] = getattr(node, "lineno", _LINE[0])
        if isinstance(node, (ast.Pass, ast.Global)):  # `global <name>`: older ivoryOS wrote one in each function
            return []
        value = classic.unwrap_await(getattr(node, "value", None))
        if isinstance(node, ast.Expr) and isinstance(value, ast.Call):
            return [self.call(value)]
        asked = self.asked(value) if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(value, ast.Call) else None
        if asked is not None:
            # a person's value: `x = input("prompt")`, `float(input(...))`, `int(input(...))` (an input step)
            self.variables.add(node.targets[0].id)
            return [dict(asked, save_as=node.targets[0].id)]
        if isinstance(node, ast.Assign) and isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id != "pause":
            if value.func.id == "input":
                raise OutsideSubset(node, "an answer read with input", "an input step saves its answer to one name: `x = input('…')` (`float(input('…'))` for a number)")
            raise OutsideSubset(node, "an assignment of %s" % _src(value), "labdeck has no variables of its own: make the value a parameter of the main function (with it as the default), or write it where it is used")
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(value, ast.Call):
            step = self.call(value)
            if step["kind"] != "call":
                raise OutsideSubset(node, "assigning the result of %s" % _src(value.func), "only an instrument call has a result (to ask a person for a value: `x = input('…')`)")
            step["save_as"] = node.targets[0].id
            self.variables.add(node.targets[0].id)
            return [step]
        if isinstance(node, ast.If):
            step = {"kind": "if", "condition": self.condition(node.test), "then": self.steps(node.body)}
            if node.orelse:
                step["else"] = self.steps(node.orelse)
            return [step]
        if isinstance(node, ast.For):
            return [self.loop(node)]
        if isinstance(node, ast.While):
            raise OutsideSubset(node, "a while loop", "a labdeck loop runs a number of times written out, `for _ in range(3):`; to go on until a result says so, run the workflow again from a campaign or a config")
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript) and isinstance(node.value.value, ast.Name) and node.value.value.id in self.variables:
            raise OutsideSubset(node, "an assignment of %s" % _src(node.value), "a result is kept whole: use %s itself, and report a field of it as an output (return {'name': %s})" % (node.value.value.id, _src(node.value)))
        if isinstance(node, ast.Assign):
            raise OutsideSubset(node, "an assignment of %s" % _src(node.value), "assign only the result of an instrument call to one name (`x = deck.pump.dose(...)`); a value of your own is a parameter of the main function, or written where it is used")
        raise OutsideSubset(node, _construct(node), "a step is an instrument call, an assignment of its result, time.sleep, input, if, for … in range or pass")

    def asked(self, node):
        """An input step for `input("prompt")`, `float(input(...))` or `int(input(...))`; None for any other call."""
        types = {"float": "number", "int": "integer"}
        kind = "string"
        if isinstance(node.func, ast.Name) and node.func.id in types and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Call):
            kind = types[node.func.id]
            node = node.args[0]
        if not (isinstance(node.func, ast.Name) and node.func.id == "input"):
            return None
        if node.keywords or len(node.args) > 1:
            raise OutsideSubset(node, "input with these arguments", "input takes the prompt to show")
        prompt = self.literal(node.args[0]) if node.args else None
        return {"kind": "input", "prompt": str(prompt) if prompt else "Enter a value", "schema": {"type": kind}}

    def loop(self, node):
        it = node.iter
        if isinstance(it, ast.Name) and it.id == "param_list":
            raise OutsideSubset(node, "for … in param_list (ivoryOS's batch mode)", "compile the workflow without batch mode: labdeck runs the main function once per row of a config")
        if node.orelse or not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and len(it.args) == 1 and not it.keywords):
            raise OutsideSubset(node, "for … in %s" % _src(it), "loop with `for _ in range(n):`, n a whole number")
        times = self.literal(it.args[0])
        if not isinstance(times, int) or isinstance(times, bool) or times < 0:
            raise OutsideSubset(node, "range(%s)" % _src(it.args[0]), "the count is a whole number written out")
        target = node.target.id if isinstance(node.target, ast.Name) else None
        if target is None:
            raise OutsideSubset(node, "for %s in" % _src(node.target), "the loop variable is one name")
        steps = self.steps(node.body)
        for sub in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if isinstance(sub, ast.Name) and sub.id == target and target != "_":
                raise OutsideSubset(sub, "the loop variable %s in the loop" % target, "a repeat has no counter: the body does the same each time")
        return {"kind": "repeat", "times": times, "steps": steps}

    def call(self, node):
        func = ast.unparse(node.func)
        if func == "time.sleep" or func == "sleep":
            if len(node.args) != 1 or node.keywords:
                raise OutsideSubset(node, "%s with these arguments" % _text(func), "time.sleep takes the seconds")
            seconds = self.literal(node.args[0])
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
                raise OutsideSubset(node, "time.sleep(%s)" % _src(node.args[0]), "the seconds are a number written out (time.sleep(5)): a wait does not take a parameter")
            return {"kind": "wait", "seconds": seconds}
        if func == "input":
            if node.keywords or len(node.args) > 1:
                raise OutsideSubset(node, "input with these arguments", "input takes the message to show")
            message = self.literal(node.args[0]) if node.args else None
            return {"kind": "pause", "message": str(message)} if message else {"kind": "pause"}
        if func == "pause":  # ivoryOS Classic's pause step, over the helper it defines
            message = classic.pause_message(node, self.literal)
            if message is False:
                raise OutsideSubset(node, "pause with these arguments", "pause takes the message to show: pause('Check the vial')")
            return {"kind": "pause", "message": str(message)} if message else {"kind": "pause"}
        if func == "print":
            raise OutsideSubset(node, "print(…)", "printing is no step: remove it (a comment is kept nowhere; a pause('…') shows a message and waits)")
        parts = func.split(".")
        if not isinstance(node.func, ast.Attribute) or not all(p.isidentifier() for p in parts):
            raise OutsideSubset(node, "the call %s(…)" % _text(func), "call a method of an instrument: deck.<instrument>.<method>(name=value, …)")
        if parts[0] in PREFIXES and len(parts) == 3:
            parts = parts[1:]
        if len(parts) != 2:
            raise OutsideSubset(node, "the call %s(…)" % _text(func), "call a method of an instrument: deck.<instrument>.<method>(name=value, …)")
        if node.args:
            raise OutsideSubset(node, "a positional argument of %s" % _text(func), "name every argument (%s(name=value))" % _text(func))
        step = {"kind": "call", "instrument": parts[0], "method": parts[1]}
        args = {}
        for kw in node.keywords:
            if kw.arg is not None:
                args[kw.arg] = self.arg(kw.value)
                continue
            pairs = classic.dict_kwargs(kw)  # ivoryOS Classic: deck.pump.dose(**{'volume_ml': volume})
            if pairs is None:
                raise OutsideSubset(node, "**%s" % _src(kw.value), "name every argument: name=value, or **{'name': value, …} with the names written out")
            for key, value in pairs:
                args[key] = self.arg(value)
        if args:
            step["args"] = args
        return step

    def arg(self, node):
        if isinstance(node, ast.Name) and node.id not in ("True", "False", "None"):
            if node.id in self.params:
                return {"param": node.id}
            if node.id in self.variables:
                return {"var": node.id}
            raise OutsideSubset(node, "the name %s" % node.id, "it is neither a parameter of the main function nor a result assigned before")
        node = classic.enum_value(node) or node  # an Enum argument, Solvent('water'): its value
        value = self.literal(node)
        if isinstance(value, str) and value.startswith("#") and value[1:].isidentifier():
            self.add_parameter(value[1:], None)
            return {"param": value[1:]}
        return {"value": value}

    def condition(self, node):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE):
            raise OutsideSubset(node, "the condition %s" % _src(node), "compare two values once: `if x > 1.5:` (==, !=, <, <=, >, >=)")
        return {"left": self.arg(node.left), "op": COMPARE[type(node.ops[0])], "right": self.arg(node.comparators[0])}

    def outputs(self, node):
        if not isinstance(node.value, ast.Dict) or None in node.value.keys:
            raise OutsideSubset(node, "return %s" % (_src(node.value) if node.value else ""), "return the outputs as a dict: return {\"yield\": run[\"yield\"]}")
        out = []
        for key, value in zip(node.value.keys, node.value.values):
            field = None
            if isinstance(value, ast.Subscript):
                field, value = self.literal(value.slice), value.value
            if not (isinstance(value, ast.Name) and value.id in self.variables):
                raise OutsideSubset(value, "the output %s" % _src(value), "an output is a result assigned before, or a field of one (run[\"yield\"])")
            source = value.id if field is None else "%s.%s" % (value.id, field)
            # the key names the output: {"power": cell["power_mw"]} is the output "power", from cell.power_mw
            name = self.literal(key)
            if not isinstance(name, str) or not OUTPUT_NAME.match(name):
                raise OutsideSubset(key, "the output name %s" % _src(key), "name an output with text: letters, digits, _ or - (\"power\")")
            out.append(source if name == source else {"name": name, "from": source})
        return out
