/**
 * A class's documentation from its module's source: its JSDoc, and each member's JSDoc and parameter list as
 * written (TypeScript types included), read from tokens (tokenize.ts) without evaluating anything.
 */
import { parseLiteral, type Literal } from './literal.js';
import { CLOSE, OPEN, matching, parseParamList, type ParamInfo } from './params.js';
import { tokenize, type Token } from './tokenize.js';

export interface DocParam {
  type?: string;
  description?: string;
  optional?: boolean;
  default?: Literal;
}

export interface MemberDoc {
  description?: string;
  params: Map<string, DocParam>;
  returns?: { type?: string; description?: string };
  safety?: 'readonly' | 'idempotent' | 'hazardous';
  hidden?: boolean;
  /** The parameter list as written in the source (with TypeScript annotations). */
  sourceParams?: ParamInfo[];
}

export interface ClassDoc {
  description?: string;
  members: Map<string, MemberDoc>;
}

function prevSignificant(tokens: Token[], i: number): number {
  for (let k = i - 1; k >= 0; k--) if (tokens[k].type !== 'comment') return k;
  return -1;
}

/** Parse the text of a `/** ... *\/` comment: description, @param, @returns, @hidden, @safety/@readonly/... */
export function parseJsDoc(text: string): MemberDoc {
  const clean = text
    .split('\n')
    .map((l) => l.replace(/^\s*\*?\s?/, ''))
    .join('\n');
  const doc: MemberDoc = { params: new Map() };
  // tags start at "@word" after whitespace (so e-mail addresses stay text), also mid-line: `/** Add. @param x */`
  const chunks = clean.split(/(?:^|\s+)(?=@[A-Za-z]+\b)/);
  const d = chunks[0].startsWith('@') ? '' : chunks.shift()!.trim();
  if (d) doc.description = d;
  const tags = chunks.map((c) => c.replace(/\s+/g, ' ').trim()).filter((c) => c.startsWith('@'));
  for (const tag of tags) {
    const m = /^@(\w+)\s*(.*)$/s.exec(tag);
    if (!m) continue;
    const [, name, rest0] = m;
    let rest = rest0.trim();
    let type: string | undefined;
    if (rest.startsWith('{')) {
      // balanced braces: `{{a: number}}` is legal JSDoc
      let depth = 0;
      let j = 0;
      for (; j < rest.length; j++) {
        if (rest[j] === '{') depth++;
        else if (rest[j] === '}' && --depth === 0) break;
      }
      type = rest.slice(1, j).trim();
      rest = rest.slice(j + 1).trim();
    }
    if (name === 'param' || name === 'arg' || name === 'argument') {
      const pm = /^(\[[^\]]*\]|[\w$.]+)\s*(?:-\s*)?(.*)$/s.exec(rest);
      if (!pm) continue;
      let pname = pm[1];
      const p: DocParam = { type, description: pm[2].trim() || undefined };
      if (pname.startsWith('[')) {
        p.optional = true;
        const inner = pname.slice(1, -1);
        const eq = inner.indexOf('=');
        pname = (eq < 0 ? inner : inner.slice(0, eq)).trim();
        if (eq >= 0) {
          const lit = parseLiteral(tokenize(inner.slice(eq + 1)));
          if (lit.ok && lit.value !== undefined) p.default = lit.value;
        }
      }
      // `opts.rate` documents a field of a destructured/options parameter
      doc.params.set(pname.includes('.') ? pname.slice(pname.lastIndexOf('.') + 1) : pname, p);
    } else if (name === 'returns' || name === 'return') {
      doc.returns = { type, description: rest || undefined };
    } else if (name === 'hidden') doc.hidden = true;
    else if (name === 'readonly' || name === 'idempotent' || name === 'hazardous') doc.safety = name;
    else if (name === 'safety' && ['readonly', 'idempotent', 'hazardous'].includes(rest.split(/\s/)[0])) {
      doc.safety = rest.split(/\s/)[0] as MemberDoc['safety'];
    } else if (name === 'description') doc.description = rest;
  }
  return doc;
}

/**
 * Read the documentation of the class `className` from a module's source: its own JSDoc, and for each
 * member (method or constructor) the JSDoc just above it and its parameter list as written (TS types).
 */
export function classDocs(source: string, className: string): ClassDoc | null {
  const tokens = tokenize(source);
  const sig = tokens.filter((t) => t.type !== 'comment');
  // find `class Name` in the significant tokens, then map back to the full token array
  let at = -1;
  for (let i = 0; i < sig.length - 1; i++) {
    if (sig[i].type === 'ident' && sig[i].text === 'class' && sig[i + 1].text === className) {
      at = tokens.indexOf(sig[i]);
      break;
    }
  }
  if (at < 0) return null;
  const result: ClassDoc = { members: new Map() };
  // class JSDoc: the last doc comment before `class` (skipping `export`, `default`, `abstract`, decorators)
  for (let k = at - 1; k >= 0; k--) {
    const t = tokens[k];
    if (t.type === 'comment') {
      if (t.doc) result.description = parseJsDoc(t.text).description;
      break;
    }
    if (!(t.type === 'ident' && ['export', 'default', 'abstract', 'declare'].includes(t.text))) break;
  }
  let body = -1;
  for (let i = at + 1; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.type !== 'punct') continue;
    if (t.text === '{') {
      body = i;
      break;
    }
    if (t.text === '(' || t.text === '[') i = matching(tokens, i);
  }
  if (body < 0) return result;
  const end = matching(tokens, body);
  let depth = 0;
  let pendingDoc: MemberDoc | undefined;
  for (let i = body + 1; i < end; i++) {
    const t = tokens[i];
    if (t.type === 'comment') {
      if (depth === 0 && t.doc) pendingDoc = parseJsDoc(t.text);
      continue;
    }
    if (t.type === 'punct') {
      if (OPEN.has(t.text)) depth++;
      else if (CLOSE.has(t.text)) depth--;
      if (depth === 0 && (t.text === ';' || t.text === '}')) pendingDoc = undefined;
      continue;
    }
    if (depth !== 0 || t.type !== 'ident') continue;
    // a member starts a class element: not after `=`, `.`, an operator or `new` (field initialisers)
    const prev = prevSignificant(tokens, i);
    if (prev !== body && !(tokens[prev].type === 'punct' ? [';', '}', ')'].includes(tokens[prev].text) : tokens[prev].text !== 'new')) continue;
    // skip modifiers to the member name
    let j = i;
    while (
      tokens[j]?.type === 'ident' &&
      ['public', 'async', 'static', 'override', 'readonly', 'protected', 'private', 'get', 'set', 'declare', 'abstract'].includes(tokens[j].text) &&
      tokens[j + 1]?.type === 'ident'
    )
      j++;
    if (tokens[j]?.text === '*') j++;
    const nameTok = tokens[j];
    let k = j + 1;
    // generic methods: `name<T>(`
    if (tokens[k]?.text === '<') {
      let d = 0;
      for (; k < end; k++) {
        if (tokens[k].text === '<') d++;
        else if (tokens[k].text === '>' && --d === 0) break;
      }
      k++;
    }
    if (nameTok?.type === 'ident' && tokens[k]?.text === '(') {
      const isStatic = tokens.slice(i, j).some((x) => x.text === 'static');
      const [params, close] = parseParamList(tokens, k + 1);
      if (!isStatic && !result.members.has(nameTok.text)) {
        result.members.set(nameTok.text, { ...(pendingDoc ?? { params: new Map() }), sourceParams: params });
      }
      pendingDoc = undefined;
      i = close; // continue after the parameter list; the body braces are then counted normally
      continue;
    }
    // a field or anything else ends the doc's scope at its `;`/`}`; move on
    i = j;
  }
  return result;
}
