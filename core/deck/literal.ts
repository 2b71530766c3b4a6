/**
 * JSON-like literals from tokens (tokenize.ts): the default values introspection can read without evaluating
 * anything.
 */
import type { Token } from './tokenize.js';

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
        if (toks[i]?.text === ']') return (i++, arr);
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
        if (toks[i]?.text === '}') return (i++, obj);
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
