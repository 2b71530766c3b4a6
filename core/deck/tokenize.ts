/**
 * A small JavaScript/TypeScript tokenizer for zero-config introspection; what reads its tokens is beside it:
 * literal.ts (default values), params.ts (parameter lists), jsdoc.ts (a class's documentation).
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
const REGEX_AFTER_PUNCT = new Set([
  '(',
  ',',
  '=',
  ':',
  '[',
  '!',
  '&',
  '|',
  '?',
  '{',
  '}',
  ';',
  '+',
  '-',
  '*',
  '%',
  '<',
  '>',
  '~',
  '^',
  '=>',
  '==',
  '===',
  '!=',
  '!==',
  '&&',
  '||',
  '??',
  '+=',
  '-=',
  '*=',
  '%=',
]);
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
      const regexOk = !prev || (prev.type === 'punct' && REGEX_AFTER_PUNCT.has(prev.text)) || (prev.type === 'ident' && REGEX_AFTER_WORD.has(prev.text));
      if (regexOk) {
        let j = i + 1;
        let inClass = false;
        let ok = false;
        while (j < src.length && src[j] !== '\n') {
          if (src[j] === '\\') j += 2;
          else if (src[j] === '[' || src[j] === ']') {
            inClass = src[j] === '[';
            j++;
          } else if (src[j] === '/' && !inClass) {
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
