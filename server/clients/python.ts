/**
 * The Python client (labdeck_client.py): standard library only. Its runtime (the errors, the HTTP client) and
 * the Lab class's waiting are real Python files beside this one (python-runtime.py, python-lab-methods.py);
 * this writes around them one class per instrument, one method per instrument method, and the runner's
 * route methods. Every string from a schema reaches the code as an escaped literal, a sanitised identifier
 * or neutralised comment text.
 */
import type { InstrumentSchema, JSONSchema, MethodSchema } from '../../core/contracts/index.js';
import { clientRoutes, described, header, paramsOf, schemaTypes, unique, wrap, type Arg, type ProxyOptions, type RouteMethod } from './common.js';
import { pyLabMethods, pyRuntime } from './runtimes.js';

function pyRouteMethod(m: RouteMethod): string[] {
  const used = new Set(['self']);
  const arg = (a: Arg) => ({ ...a, py: unique(pyIdent(a.name), used) });
  const path = m.pathArgs.map(arg);
  const body = (m.body ?? []).map(arg);
  const query = m.query.map(arg);
  const optional = (a: Arg) => {
    const t = pyType(a.schema);
    return `${t === 'Any' || t.startsWith('Optional[') ? t : `Optional[${t}]`} = None`;
  };
  const first = [
    ...path.map((a) => `${a.py}: ${pyType(a.schema)}`),
    ...body.filter((a) => a.required).map((a) => `${a.py}: ${pyType(a.schema)}`),
    ...m.positional.flatMap((n) => body.filter((a) => a.wire === n && !a.required)).map((a) => `${a.py}: ${optional(a)}`),
  ];
  const keywords = [...body.filter((a) => !a.required && !m.positional.includes(a.wire)), ...query].map((a) => `${a.py}: ${optional(a)}`);
  const sig = ['self', ...first, ...(keywords.length ? ['*', ...keywords] : [])].join(', ');
  const documented = [...path, ...body, ...query].filter(described);
  const doc = [wrap(`${m.doc} (${m.method} ${m.path})`, 100), ...(documented.length ? ['', 'Args:', ...documented.map((a) => `    ${a.py}: ${described(a)}`)] : [])].join('\n');
  const pathExpr = path.length
    ? `${pyStr(m.path.replace(/\{[^}]+\}/g, '%s'))} % (${path.map((a) => `urllib.parse.quote(str(${a.py}), safe="")`).join(', ')}${path.length === 1 ? ',' : ''})`
    : pyStr(m.path);
  const bodyExpr = m.body === null ? 'None' : body.length ? `_fields({${body.map((a) => `${pyStr(a.wire)}: ${a.py}`).join(', ')}})` : '{}';
  const queryExpr = query.length ? `, query={${query.map((a) => `${pyStr(a.wire)}: ${a.py}`).join(', ')}}` : '';
  return [`    def ${m.name}(${sig}) -> Dict[str, Any]:`, ...pyDocstring(doc, '        '), `        return self._labdeck_client.request(${pyStr(m.method)}, ${pathExpr}, ${bodyExpr}${queryExpr})`];
}

/** The Lab class's route methods (Python). */
const pyRouteMethods = (methods: RouteMethod[]) => methods.flatMap((m) => ['', ...pyRouteMethod(m)]);

const PY_KEYWORDS = new Set(
  (
    'False None True and as assert async await break class continue def del elif else except finally for ' + 'from global if import in is lambda nonlocal not or pass raise return try while with yield'
  ).split(' '),
);

/** A safe ASCII Python identifier; keywords get a trailing `_`, dunder-like names a leading `x`. */
function pyIdent(name: string): string {
  let n = name.replace(/[^A-Za-z0-9_]/g, '_') || '_';
  if (/^[0-9]/.test(n)) n = `_${n}`;
  if (n.startsWith('__')) n = `x${n}`; // `__x` would be name-mangled, `__x__` is Python's
  if (PY_KEYWORDS.has(n)) n += '_';
  return n;
}

/** A Python string literal. A JSON string literal is one (same escapes, \uXXXX included). */
const pyStr = (s: string) => JSON.stringify(s);

/** A Python literal for a JSON scalar, or null when the value is not a scalar (lists/dicts are mutable defaults). */
function pyLiteral(v: unknown): string | null {
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : null;
  if (typeof v === 'string') return pyStr(v);
  return null;
}

/** Body of a triple-quoted docstring: backslashes and every quote escaped, control characters as \xNN. */
function pyDocText(s: string): string {
  return s
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

function pyDocstring(text: string, indent: string): string[] {
  const body = pyDocText(text.trim()).split('\n');
  if (body.length === 1) return [`${indent}"""${body[0]}"""`];
  return [`${indent}"""${body[0]}`, ...body.slice(1).map((l) => (l ? indent + l : '')), `${indent}"""`];
}

function pyType(s: JSONSchema, depth = 0): string {
  if (!s || typeof s !== 'object' || depth > 4) return 'Any';
  if (Array.isArray(s.enum)) {
    const lits = s.enum.map(pyLiteral);
    return lits.every((l) => l !== null) && lits.length ? `Literal[${lits.join(', ')}]` : 'Any';
  }
  const union = (s.anyOf ?? s.oneOf) as JSONSchema[] | undefined;
  const parts = Array.isArray(union) ? union.map((u) => pyType(u, depth + 1)) : schemaTypes(s).map((t) => pyType({ ...s, type: t }, depth + 1));
  if (parts.length > 1) {
    const nonNull = [...new Set(parts.filter((p) => p !== 'None'))];
    if (nonNull.includes('Any')) return 'Any';
    const core = nonNull.length === 1 ? nonNull[0] : `Union[${nonNull.join(', ')}]`;
    return parts.includes('None') ? `Optional[${core}]` : core;
  }
  switch (s.type) {
    case 'string':
      return 'str';
    case 'integer':
      return 'int';
    case 'number':
      return 'float';
    case 'boolean':
      return 'bool';
    case 'null':
      return 'None';
    case 'array':
      return `List[${s.items ? pyType(s.items as JSONSchema, depth + 1) : 'Any'}]`;
    case 'object':
      return 'Dict[str, Any]';
    default:
      return 'Any';
  }
}

/** A short human type for docstrings, from the JSON Schema. */
function docType(s: JSONSchema): string {
  if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  const union = (s.anyOf ?? s.oneOf) as JSONSchema[] | undefined;
  if (Array.isArray(union)) return union.map(docType).join(' or ');
  const t = schemaTypes(s);
  if (t.includes('array') && s.items) return `array of ${docType(s.items as JSONSchema)}`;
  return t.join(' or ') || 'any';
}

function pyMethod(inst: InstrumentSchema, m: MethodSchema, name: string): string[] {
  const params = paramsOf(m);
  const used = new Set(['self']);
  const named = params.map((p) => ({ ...p, py: unique(pyIdent(p.name), used) }));
  const sig: string[] = [];
  const dropIfNone: string[] = [];
  for (const p of [...named.filter((p) => p.required), ...named.filter((p) => !p.required)]) {
    const ann = pyType(p.schema);
    if (p.required) {
      sig.push(`${p.py}: ${ann}`);
      continue;
    }
    const lit = p.hasDefault ? pyLiteral(p.schema.default) : null;
    if (lit === null) dropIfNone.push(p.name); // no default, or a list/dict one: None means "server default"
    sig.push(`${p.py}: ${lit === null && !ann.startsWith('Optional[') && ann !== 'Any' ? `Optional[${ann}]` : ann} = ${lit ?? 'None'}`);
  }
  const doc: string[] = [m.description || `Call ${inst.name}.${m.name}.`];
  if (m.safety === 'hazardous') doc.push('', 'Hazardous: this moves hardware or consumes material.');
  if (named.length) {
    doc.push('', 'Args:');
    for (const p of named) {
      const extra = p.required ? 'required' : p.hasDefault ? `default ${JSON.stringify(p.schema.default)}` : 'optional';
      const desc = typeof p.schema.description === 'string' ? `: ${p.schema.description}` : '';
      doc.push(`    ${p.py} (${docType(p.schema)}, ${extra})${desc}`);
    }
  }
  if (m.returns) doc.push('', `Returns: ${docType(m.returns)}`);
  const args = named.map((p) => `${pyStr(p.name)}: ${p.py}`).join(', ');
  const drop = dropIfNone.length ? `, (${dropIfNone.map(pyStr).join(', ')},)` : '';
  return [
    `    def ${name}(self${sig.map((s) => `, ${s}`).join('')}) -> ${m.returns ? pyType(m.returns) : 'Any'}:`,
    ...pyDocstring(doc.join('\n'), '        '),
    `        return self._labdeck_client.call(${pyStr(inst.name)}, ${pyStr(m.name)}, {${args}}${drop})`,
  ];
}

/** The names the Lab class (Python) and the Lab object (TypeScript) use for themselves. */
const pyLabNames = (methods: RouteMethod[]) => ['_labdeck_client', ...methods.map((m) => m.name), ...[...pyLabMethods().matchAll(/^ {4}def ([a-z_]+)\(/gm)].map((m) => m[1])];

export function python(instruments: InstrumentSchema[], opts: ProxyOptions): string {
  const methods = clientRoutes(opts.routes);
  const out: string[] = [
    ...header('python', instruments, opts),
    '',
    'from __future__ import annotations',
    '',
    'import json',
    'import time',
    'import urllib.error',
    'import urllib.parse',
    'import urllib.request',
    'from typing import Any, Dict, List, Literal, Optional, Tuple, Union',
    '',
    '__all__ = ["Lab", "LabError", "RunError", "WaitTimeout", "DEFAULT_BASE_URL"]',
    '',
    `DEFAULT_BASE_URL = ${pyStr(opts.defaultBaseUrl)}`,
    '',
    pyRuntime(),
  ];
  const classNames = new Set<string>();
  const reserved = pyLabNames(methods);
  const attrs = new Set(reserved);
  const lab: string[] = [];
  const renamed: string[] = [];
  for (const inst of instruments) {
    const cls = unique(`_Instrument_${pyIdent(inst.name).replace(/^x?_+/, '')}`, classNames);
    out.push('', `class ${cls}:`, ...pyDocstring(inst.description || `The ${inst.name} instrument.`, '    '), '');
    out.push('    def __init__(self, client: _Client) -> None:', '        self._labdeck_client = client');
    const methods = new Set(['_labdeck_client']);
    for (const m of [...inst.methods].sort((a, b) => a.order - b.order)) {
      out.push('', ...pyMethod(inst, m, unique(pyIdent(m.name), methods)));
    }
    out.push('');
    const attr = unique(pyIdent(inst.name), attrs);
    if (reserved.includes(pyIdent(inst.name))) renamed.push(`The instrument '${inst.name}' is lab.${attr}: ${pyIdent(inst.name)} is a Lab method.`);
    lab.push(`        self.${attr} = ${cls}(self._labdeck_client)`);
  }
  const doc = [
    'The lab: one attribute per instrument, one method per instrument method; and the runner: queue a run',
    'of a workflow (queue_run) or a campaign (start_campaign), wait for it (wait_for_run), read the runner',
    'status, the queue and the run records.',
    ...(renamed.length ? ['', ...renamed] : []),
  ];
  out.push(
    '',
    'class Lab:',
    ...pyDocstring(doc.join('\n'), '    '),
    '',
    '    def __init__(self, base_url: str = DEFAULT_BASE_URL, token: Optional[str] = None, timeout: Optional[float] = None) -> None:',
    '        """base_url: labdeck with its /app mount; token: an API token from your account page; timeout:',
    '        seconds one HTTP request may take (None: no limit)."""',
    '        self._labdeck_client = _Client(base_url, token, timeout)',
    ...lab,
    '',
    '    def __repr__(self) -> str:',
    '        return "Lab(%r)" % self._labdeck_client.base_url',
    ...pyRouteMethods(methods),
    pyLabMethods(),
  );
  return out.join('\n');
}
