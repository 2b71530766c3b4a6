/**
 * Parameter lists from tokens (tokenize.ts): a function's or a constructor's parameters as written, with their
 * defaults when they are readable literals (literal.ts) and their TypeScript annotations when read from source.
 */
import { parseLiteral, type Literal } from './literal.js';
import { tokenize, type Token } from './tokenize.js';

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
export const OPEN = new Set(['(', '[', '{']);
export const CLOSE = new Set([')', ']', '}']);

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

const tokensText = (toks: Token[]) =>
  toks
    .map((t) => t.text)
    .join(' ')
    .replace(/\s*([<>[\]|,])\s*/g, '$1')
    .trim();

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
    while (
      tokens[i]?.type === 'ident' &&
      MODIFIERS.has(tokens[i].text) &&
      ['ident', 'punct'].includes(tokens[i + 1]?.type ?? '') &&
      tokens[i + 1]?.text !== ',' &&
      tokens[i + 1]?.text !== '=' &&
      tokens[i + 1]?.text !== ':' &&
      tokens[i + 1]?.text !== close
    )
      i++;
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
