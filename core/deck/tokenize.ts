/**
 * A small JavaScript/TypeScript tokenizer and parameter-list parser for zero-config introspection.
 *
 * It reads function source text (Function.prototype.toString or a module's source file) and never evaluates
 * it: no eval, no Function. Default values are parsed as JSON-like literals only; anything else is reported
 * as "has a default we cannot read". It is deliberately forgiving: on text it does not understand it gives
 * up on that item rather than throwing.
 */

export type TokenType = 'ident' | 'num' | 'str' | 'tpl' | 'punct' | 'regex' | 'comment';

export interface Token {
  type: TokenType;
  /** Source text of the token (for `str`/`tpl`/`comment`: the decoded value or the comment text). */
  text: string;
  /** Decoded string value (`str`, and `tpl` without substitutions). */
  value?: string;
  /** For comments: true when it is a `/** ... *\/` doc comment. */
  doc?: boolean;
}

const PUNCT3 = ['===', '!==', '...', '**=', '<<=', '>>=', '>>>', '&&=', '||=', '??='];
const PUNCT2 = ['=>', '==', '!=', '<=', '>=', '&&', '||', '??', '?.', '**', '++', '--', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<<', '>>'];
const REGEX_AFTER_PUNCT = new Set(['(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^', '=>', '==', '===', '!=', '!==', '&&', '||', '??', '+=', '-=', '*=', '%=']);
const REGEX_AFTER_WORD = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);

const isIdStart = (c: string) => /[A-Za-z_$\u00c0-\uffff]/.test(c);
const isIdPart = (c: string) => /[A-Za-z0-9_$\u00c0-\uffff]/.test(c);

function decodeEscape(src: string, i: number): [string, number] {
  // src[i] is the character after the backslash; returns [decoded, next index]
  const c = src[i];
  const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', '0': '\0' };
  if (c in simple) return [simple[c], i + 1];
  if (c === 'x') return [String.fromCharCode(parseInt(src.slice(i + 1, i + 3), 16)), i + 3];
  if (c === 'u') {
    if (src[i + 1] === '{') {
      const end = src.indexOf('}', i);
      return [String.fromCodePoint(parseInt(src.slice(i + 2, end), 16)), end + 1];
    }
    return [String.fromCharCode(parseInt(src.slice(i + 1, i + 5), 16)), i + 5];
  }
  if (c === '\n') return ['', i + 1]; // line continuation
  return [c ?? '', i + 1];
}

/**
 * Tokenize `src`. With `untilBrace`, stops at the `}` closing an already-open `${` (used for template
 * substitutions) and returns its index in `end`.
 */
function scan(src: string, start: number, untilBrace: boolean, out: Token[]): number {
  let i = start;
  let depth = 0;
  const prevSignificant = () => {
    for (let k = out.length - 1; k >= 0; k--) if (out[k].type !== 'comment') return out[k];
    return undefined;
  };
  while (i < src.length) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v' || c === '\ufeff') {
      i++;
      continue;
    }
    // comments
    if (c === '/' && src[i + 1] === '/') {
      const end = src.indexOf('\n', i);
      const stop = end < 0 ? src.length : end;
      out.push({ type: 'comment', text: src.slice(i + 2, stop) });
      i = stop;
      continue;
    }
    if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? src.length : end;
      const doc = src[i + 2] === '*' && src[i + 3] !== '/';
      out.push({ type: 'comment', text: src.slice(i + (doc ? 3 : 2), stop), doc });
      i = stop + 2;
      continue;
    }
    // strings
    if (c === '"' || c === "'") {
      let j = i + 1;
      let value = '';
      while (j < src.length && src[j] !== c && src[j] !== '\n') {
        if (src[j] === '\\') {
          const [d, n] = decodeEscape(src, j + 1);
          value += d;
          j = n;
        } else value += src[j++];
      }
      out.push({ type: 'str', text: src.slice(i, j + 1), value });
      i = j + 1;
      continue;
    }
    // template literals (substitutions are scanned and discarded)
    if (c === '`') {
      let j = i + 1;
      let value: string | undefined = '';
      while (j < src.length && src[j] !== '`') {
        if (src[j] === '\\') {
          const [d, n] = decodeEscape(src, j + 1);
          if (value !== undefined) value += d;
          j = n;
        } else if (src[j] === '$' && src[j + 1] === '{') {
          value = undefined;
          j = scan(src, j + 2, true, []) + 1;
        } else {
          if (value !== undefined) value += src[j];
          j++;
        }
      }
      out.push({ type: 'tpl', text: src.slice(i, j + 1), value });
      i = j + 1;
      continue;
    }
    // numbers
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      let j = i;
      if (c === '0' && /[xXoObB]/.test(src[i + 1] ?? '')) {
        j += 2;
        while (j < src.length && /[0-9a-fA-F_]/.test(src[j])) j++;
      } else {
        while (j < src.length && /[0-9_.]/.test(src[j])) j++;
        if (/[eE]/.test(src[j] ?? '') && /[-+0-9]/.test(src[j + 1] ?? '')) {
          j += 2;
          while (j < src.length && /[0-9_]/.test(src[j])) j++;
        }
      }
      if (src[j] === 'n') j++; // bigint suffix: kept in text, rejected by the literal parser
      out.push({ type: 'num', text: src.slice(i, j) });
      i = j;
      continue;
    }
    if (isIdStart(c) || c === '#' || c === '@' || (c === '\\' && src[i + 1] === 'u')) {
      let j = i + 1;
      while (j < src.length && isIdPart(src[j])) j++;
      out.push({ type: 'ident', text: src.slice(i, j) });
      i = j;
      continue;
    }
    // regular expression literal, by the usual "what came before" heuristic; never spans lines
    if (c === '/') {
      const prev = prevSignificant();
      const regexOk =
        !prev ||
        (prev.type === 'punct' && REGEX_AFTER_PUNCT.has(prev.text)) ||
        (prev.type === 'ident' && REGEX_AFTER_WORD.has(prev.text));
      if (regexOk) {
        let j = i + 1;
        let inClass = false;
        let ok = false;
        while (j < src.length && src[j] !== '\n') {
          if (src[j] === '\\') j += 2;
          else if (src[j] === '[' || src[j] === ']') {
            inClass = src[j] === '[';
            j++;
          }
          else if (src[j] === '/' && !inClass) {
            ok = true;
            break;
          } else j++;
        }
        if (ok) {
          j++;
          while (j < src.length && isIdPart(src[j])) j++;
          out.push({ type: 'regex', text: src.slice(i, j) });
          i = j;
          continue;
        }
      }
    }
    if (untilBrace) {
      if (c === '{') depth++;
      else if (c === '}') {
        if (depth === 0) return i;
        depth--;
      }
    }
    const three = src.slice(i, i + 3);
    const two = src.slice(i, i + 2);
    const p = PUNCT3.includes(three) ? three : PUNCT2.includes(two) ? two : c;
    out.push({ type: 'punct', text: p });
    i += p.length;
  }
  return i;
}

export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  scan(src, 0, false, out);
  return out;
}

/* ------------------------------------------------------------------ literals */

export type Literal = null | boolean | number | string | Literal[] | { [k: string]: Literal };

const FAIL = Symbol('fail');
type Parsed = Literal | typeof FAIL | undefined;

/**
 * Parse tokens as one JSON-like literal. Returns FAIL_LITERAL when the tokens are anything else (an
 * expression, a variable, a call, ...); `undefined` for the literal `undefined`.
 */
export function parseLiteral(tokens: Token[]): { ok: true; value: Literal | undefined } | { ok: false } {
  const toks = tokens.filter((t) => t.type !== 'comment');
  let i = 0;
  const num = (t: Token, sign: number): Parsed => {
    if (t.text.endsWith('n')) return FAIL;
    const v = Number(t.text.replace(/_/g, ''));
    return Number.isFinite(v) ? sign * v : FAIL;
  };
  const value = (): Parsed => {
    const t = toks[i++];
    if (!t) return FAIL;
    if (t.type === 'num') return num(t, 1);
    if (t.type === 'punct' && (t.text === '-' || t.text === '+') && toks[i]?.type === 'num') return num(toks[i++], t.text === '-' ? -1 : 1);
    if (t.type === 'str') return t.value ?? '';
    if (t.type === 'tpl') return t.value === undefined ? FAIL : t.value;
    if (t.type === 'ident') {
      if (t.text === 'true') return true;
      if (t.text === 'false') return false;
      if (t.text === 'null') return null;
      if (t.text === 'undefined') return undefined;
      return FAIL;
    }
    if (t.type === 'punct' && t.text === '[') {
      const arr: Literal[] = [];
      for (;;) {
        if (toks[i]?.text === ']') return i++, arr;
        const v = value();
        if (v === FAIL || v === undefined) return FAIL;
        arr.push(v);
        if (toks[i]?.text === ',') i++;
        else if (toks[i]?.text !== ']') return FAIL;
      }
    }
    if (t.type === 'punct' && t.text === '{') {
      const obj: Record<string, Literal> = {};
      for (;;) {
        if (toks[i]?.text === '}') return i++, obj;
        const k = toks[i++];
        if (!k || !(k.type === 'ident' || k.type === 'str' || k.type === 'num')) return FAIL;
        if (toks[i++]?.text !== ':') return FAIL;
        const v = value();
        if (v === FAIL || v === undefined) return FAIL;
        obj[k.type === 'str' ? (k.value ?? '') : k.text] = v;
        if (toks[i]?.text === ',') i++;
        else if (toks[i]?.text !== '}') return FAIL;
      }
    }
    return FAIL;
  };
  const v = value();
  if (v === FAIL || i !== toks.length) return { ok: false };
  return { ok: true, value: v };
}

/* ------------------------------------------------------------ parameter lists */

export interface ParamInfo {
  name: string;
  /** Has a default value (whether or not we could read it). */
  hasDefault: boolean;
  /** The default, when it is a readable literal (`defaultOk`). */
  default?: Literal;
  defaultOk: boolean;
  /** `...rest` parameter. */
  rest: boolean;
  /** `x?` in TypeScript source. */
  optional: boolean;
  /** TypeScript annotation text, when reading source (types are stripped from compiled functions). */
  typeText?: string;
  /** For an object-destructuring parameter `{ a, b = 2 }`: its fields (the call passes one object). */
  fields?: ParamInfo[];
}

const MODIFIERS = new Set(['public', 'private', 'protected', 'readonly', 'override']);
const OPEN = new Set(['(', '[', '{']);
const CLOSE = new Set([')', ']', '}']);

/** Index of the token closing the bracket opened at `open`, or tokens.length. */
export function matching(tokens: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.type !== 'punct') continue;
    if (OPEN.has(t.text)) depth++;
    else if (CLOSE.has(t.text) && --depth === 0) return i;
  }
  return tokens.length;
}

/** Collect tokens from `i` up to (not including) a depth-0 token in `stops`. `<>` count as brackets in types. */
function collect(tokens: Token[], i: number, stops: Set<string>, angle: boolean): [Token[], number] {
  const out: Token[] = [];
  let depth = 0;
  for (; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.type === 'punct') {
      if (depth === 0 && stops.has(t.text)) break;
      // in types `>>` closes two generics (`Map<K, Array<V>>`)
      const closes = angle && /^>+$/.test(t.text) ? t.text.length : CLOSE.has(t.text) ? 1 : 0;
      if (OPEN.has(t.text) || (angle && t.text === '<')) depth++;
      else if (closes) {
        if (depth === 0) break; // the list's own closing bracket
        depth = Math.max(0, depth - closes);
      }
    }
    if (t.type !== 'comment') out.push(t);
  }
  return [out, i];
}

const tokensText = (toks: Token[]) => toks.map((t) => t.text).join(' ').replace(/\s*([<>[\]|,])\s*/g, '$1').trim();

/**
 * Parse a parameter list starting just after its `(` (or `{` for a destructuring pattern, with `close`
 * '}'). Returns the parameters and the index of the closing token.
 */
export function parseParamList(tokens: Token[], start: number, close = ')'): [ParamInfo[], number] {
  const params: ParamInfo[] = [];
  let i = start;
  let index = 0;
  const stopsType = new Set([',', '=', close]);
  const stopsDefault = new Set([',', close]);
  while (i < tokens.length) {
    while (tokens[i]?.type === 'comment') i++;
    const t = tokens[i];
    if (!t || (t.type === 'punct' && t.text === close)) break;
    if (t.type === 'punct' && CLOSE.has(t.text)) break; // unbalanced text: stop rather than loop
    const p: ParamInfo = { name: `arg${index}`, hasDefault: false, defaultOk: false, rest: false, optional: false };
    // TS constructor parameter properties: `private port = 'COM1'`
    while (tokens[i]?.type === 'ident' && MODIFIERS.has(tokens[i].text) && ['ident', 'punct'].includes(tokens[i + 1]?.type ?? '') && tokens[i + 1]?.text !== ',' && tokens[i + 1]?.text !== '=' && tokens[i + 1]?.text !== ':' && tokens[i + 1]?.text !== close) i++;
    if (tokens[i]?.text === '...') {
      p.rest = true;
      i++;
    }
    const head = tokens[i];
    if (head?.type === 'ident' || head?.type === 'str' || head?.type === 'num') {
      const key = head.type === 'str' ? (head.value ?? '') : head.text;
      p.name = key;
      i++;
      // in an object pattern `key: alias` renames (we keep the key: it is what the caller passes)
      if (close === '}' && tokens[i]?.text === ':') {
        i++;
        if (tokens[i]?.text === '{' || tokens[i]?.text === '[') i = matching(tokens, i) + 1;
        else i++;
      }
    } else if (head?.type === 'punct' && head.text === '{') {
      const end = matching(tokens, i);
      const [fields] = parseParamList(tokens, i + 1, '}');
      p.fields = fields;
      p.name = close === '}' ? p.name : `arg${index}`;
      i = end + 1;
    } else if (head?.type === 'punct' && head.text === '[') {
      i = matching(tokens, i) + 1;
    } else {
      // something we do not understand: skip to the next parameter
      const [, j] = collect(tokens, i, stopsDefault, false);
      i = j;
    }
    if (tokens[i]?.text === '?') {
      p.optional = true;
      i++;
    }
    if (close === ')' && tokens[i]?.text === ':') {
      const [typeToks, j] = collect(tokens, i + 1, stopsType, true);
      p.typeText = tokensText(typeToks);
      i = j;
    }
    if (tokens[i]?.text === '=') {
      const [defToks, j] = collect(tokens, i + 1, stopsDefault, false);
      p.hasDefault = true;
      const lit = parseLiteral(defToks);
      if (lit.ok && lit.value !== undefined) {
        p.default = lit.value;
        p.defaultOk = true;
      }
      i = j;
    }
    params.push(p);
    index++;
    if (tokens[i]?.text === ',') i++;
  }
  return [params, i];
}

/**
 * Parameters of a function from its source text: methods (`name(a, b = 1) {}`, `async`, generators,
 * getters), `function` expressions, arrows (`(a) => ...`, `a => ...`). Returns null when the text is not
 * a recognisable function (e.g. native code).
 */
export function functionParams(src: string): ParamInfo[] | null {
  const tokens = tokenize(src).filter((t) => t.type !== 'comment');
  if (tokens.some((t) => t.text === 'native') && /\[native code\]/.test(src)) return null;
  // `a => ...` / `async a => ...`
  const k = tokens[0]?.text === 'async' ? 1 : 0;
  if (tokens[k]?.type === 'ident' && tokens[k + 1]?.text === '=>') {
    return [{ name: tokens[k].text, hasDefault: false, defaultOk: false, rest: false, optional: false }];
  }
  const open = tokens.findIndex((t) => t.type === 'punct' && t.text === '(');
  if (open < 0) return null;
  // computed names `[Symbol.iterator]()` put a bracket before the list; the first depth-0 `(` is right
  return parseParamList(tokens, open + 1)[0];
}

/**
 * Constructor parameters of a class from its source text (`class X extends Y { constructor(a = 1) {} }`).
 * Returns null when the class declares no constructor (the caller then looks at the parent class).
 */
export function constructorParams(classSrc: string): ParamInfo[] | null {
  const tokens = tokenize(classSrc).filter((t) => t.type !== 'comment');
  const body = classBodyStart(tokens, 0);
  if (body < 0) return null;
  const end = matching(tokens, body);
  let depth = 0;
  for (let i = body + 1; i < end; i++) {
    const t = tokens[i];
    if (t.type === 'punct') {
      if (OPEN.has(t.text)) depth++;
      else if (CLOSE.has(t.text)) depth--;
      continue;
    }
    if (depth === 0 && t.type === 'ident' && t.text === 'constructor' && tokens[i + 1]?.text === '(' && tokens[i - 1]?.text !== '.') {
      return parseParamList(tokens, i + 2)[0];
    }
  }
  return null;
}

/** Index of the `{` opening the body of the class whose `class` keyword is at or after `from`. */
function classBodyStart(tokens: Token[], from: number): number {
  let i = tokens.findIndex((t, k) => k >= from && t.type === 'ident' && t.text === 'class');
  if (i < 0) return -1;
  for (i++; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.type !== 'punct') continue;
    if (t.text === '{') return i;
    if (t.text === '(' || t.text === '[') i = matching(tokens, i); // `extends mixin({...})`
  }
  return -1;
}

/* ----------------------------------------------------------- source documents */

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
    while (tokens[j]?.type === 'ident' && ['public', 'async', 'static', 'override', 'readonly', 'protected', 'private', 'get', 'set', 'declare', 'abstract'].includes(tokens[j].text) && tokens[j + 1]?.type === 'ident') j++;
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
