/**
 * A regular-expression matcher that takes linear time (issue 26 item 6): JSON Schema `pattern`s that come from
 * outside labdeck (an instrument PC's `lab agent`) are tested on every call, and JavaScript's own engine
 * backtracks: `^(a+)+$` against 30 characters stalls the event loop for seconds. This one compiles a pattern to
 * a Thompson NFA and runs every alternative at once, one input character at a time: the time is at most the
 * input's length times the pattern's size, whatever the pattern.
 *
 * It speaks the part of ECMAScript's `u`-mode syntax JSON Schema patterns use: literals and escapes (`\t \n \r
 * \v \f \0 \cX \xHH \uHHHH \u{H…}` and escaped syntax characters), `.`, classes (`[a-z\d_]`, `[^…]`, `\d \w
 * \s` and their negations), groups (`(…)`, `(?:…)`, `(?<name>…)`), alternation, the quantifiers `* + ? {n}
 * {n,} {n,m}` (greedy or lazy: the same for a yes/no test) and the assertions `^ $ \b \B`. What it does not
 * speak (lookarounds, backreferences, `\p{…}`) cannot be run in linear time, or not by this small engine: such
 * a pattern is refused with the reason, and its caller decides (core/hosts/vet.ts refuses the instrument;
 * core/workflow/jsonschema.ts runs a pattern from the lab's own drivers with JavaScript's engine).
 *
 * No Node API is used: the workflow builder runs this in the browser too.
 */

/** Longest pattern compiled (characters). */
export const MAX_PATTERN_LENGTH = 256;
/** Most NFA states a pattern may compile to (a counted repetition `x{n,m}` makes up to m copies of x). */
export const MAX_STATES = 2000;
/** Largest n or m of a counted repetition. */
const MAX_COUNT = 1000;

/** Sorted, merged, inclusive code point ranges, flattened: [lo0, hi0, lo1, hi1, …]. */
type Ranges = number[];
type Node = { t: 'char'; r: Ranges } | { t: 'cat'; a: Node[] } | { t: 'alt'; a: Node[] } | { t: 'rep'; n: Node; min: number; max: number } | { t: 'assert'; k: '^' | '$' | 'b' | 'B' };

const MAX_CP = 0x10ffff;
const DIGIT: Ranges = [0x30, 0x39];
const WORD: Ranges = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
const SPACE: Ranges = union([0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff]);
const DOT: Ranges = negate([0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029]);

function union(r: Ranges): Ranges {
  const pairs: [number, number][] = [];
  for (let i = 0; i < r.length; i += 2) pairs.push([r[i], r[i + 1]]);
  pairs.sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of pairs) {
    const n = out.length;
    if (n && lo <= out[n - 1] + 1) out[n - 1] = Math.max(out[n - 1], hi);
    else out.push(lo, hi);
  }
  return out;
}

function negate(r: Ranges): Ranges {
  const u = union(r);
  const out: Ranges = [];
  let next = 0;
  for (let i = 0; i < u.length; i += 2) {
    if (u[i] > next) out.push(next, u[i] - 1);
    next = u[i + 1] + 1;
  }
  if (next <= MAX_CP) out.push(next, MAX_CP);
  return out;
}

function inRanges(r: Ranges, cp: number): boolean {
  for (let i = 0; i < r.length; i += 2) {
    if (cp < r[i]) return false;
    if (cp <= r[i + 1]) return true;
  }
  return false;
}

class Unsupported extends Error {}

/** A recursive-descent parser of a pattern JavaScript has already accepted in `u` mode. */
class Parser {
  private i = 0;
  private readonly s: number[];
  constructor(src: string) {
    this.s = Array.from(src, (c) => c.codePointAt(0)!);
  }
  private peek(k = 0): number | undefined {
    return this.s[this.i + k];
  }
  private is(ch: string, k = 0): boolean {
    return this.peek(k) === ch.codePointAt(0);
  }

  parse(): Node {
    const n = this.alt();
    if (this.i < this.s.length) throw new Unsupported('an unbalanced ")"');
    return n;
  }

  private alt(): Node {
    const branches = [this.seq()];
    while (this.is('|')) {
      this.i++;
      branches.push(this.seq());
    }
    return branches.length === 1 ? branches[0] : { t: 'alt', a: branches };
  }

  private seq(): Node {
    const items: Node[] = [];
    while (this.i < this.s.length && !this.is('|') && !this.is(')')) {
      const atom = this.atom();
      items.push(this.quantified(atom));
    }
    return items.length === 1 ? items[0] : { t: 'cat', a: items };
  }

  private quantified(atom: Node): Node {
    let min: number;
    let max: number;
    if (this.is('*')) [min, max] = [0, Infinity];
    else if (this.is('+')) [min, max] = [1, Infinity];
    else if (this.is('?')) [min, max] = [0, 1];
    else if (this.is('{')) {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(String.fromCodePoint(...this.s.slice(this.i, this.i + 24)));
      if (!m) throw new Unsupported('a "{" that is not a repetition');
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (min > MAX_COUNT || (max !== Infinity && max > MAX_COUNT)) throw new Unsupported(`a repetition of more than ${MAX_COUNT}`);
      this.i += m[0].length - 1;
    } else return atom;
    this.i++;
    if (this.is('?')) this.i++; // lazy: the same for a yes/no test
    return { t: 'rep', n: atom, min, max };
  }

  private atom(): Node {
    const c = this.s[this.i++];
    switch (String.fromCodePoint(c)) {
      case '^':
        return { t: 'assert', k: '^' };
      case '$':
        return { t: 'assert', k: '$' };
      case '.':
        return { t: 'char', r: DOT };
      case '[':
        return { t: 'char', r: this.cls() };
      case '\\':
        return this.escape();
      case '(': {
        if (this.is('?')) {
          if (this.is(':', 1)) this.i += 2;
          else if (this.is('<', 1) && !this.is('=', 2) && !this.is('!', 2)) {
            while (this.i < this.s.length && !this.is('>')) this.i++;
            this.i++;
          } else throw new Unsupported('a lookaround ((?=, (?!, (?<=, (?<!)');
        }
        const inner = this.alt();
        if (!this.is(')')) throw new Unsupported('an unclosed group');
        this.i++;
        return inner;
      }
      default:
        return { t: 'char', r: [c, c] };
    }
  }

  /** After a backslash outside a class. */
  private escape(): Node {
    const c = String.fromCodePoint(this.peek() ?? 0);
    if (c === 'b' || c === 'B') {
      this.i++;
      return { t: 'assert', k: c };
    }
    if (/[1-9]/.test(c) || c === 'k') throw new Unsupported('a backreference (\\1, \\k<name>)');
    const set = this.classEscape();
    if (set) return { t: 'char', r: set };
    const cp = this.charEscape();
    return { t: 'char', r: [cp, cp] };
  }

  /** `\d \D \w \W \s \S` (the backslash read), or null. */
  private classEscape(): Ranges | null {
    const c = String.fromCodePoint(this.peek() ?? 0);
    const sets: Record<string, Ranges> = { d: DIGIT, w: WORD, s: SPACE };
    const lower = c.toLowerCase();
    if (!(lower in sets) || !'dDwWsS'.includes(c)) {
      if (c === 'p' || c === 'P') throw new Unsupported('a Unicode property escape (\\p{…})');
      return null;
    }
    this.i++;
    return c === lower ? sets[lower] : negate(sets[lower]);
  }

  /** A single-character escape (the backslash read): its code point. */
  private charEscape(): number {
    const c = this.s[this.i++];
    const ch = String.fromCodePoint(c);
    const simple: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13, '0': 0 };
    if (ch in simple) return simple[ch];
    if (ch === 'c') return this.s[this.i++] % 32;
    if (ch === 'x') return this.hex(2);
    if (ch === 'u') {
      if (this.is('{')) {
        this.i++;
        let v = 0;
        while (!this.is('}')) v = v * 16 + parseInt(String.fromCodePoint(this.s[this.i++]), 16);
        this.i++;
        return v;
      }
      const lead = this.hex(4);
      // in u mode an escaped surrogate pair is one code point
      if (lead >= 0xd800 && lead <= 0xdbff && this.is('\\') && this.is('u', 1) && !this.is('{', 2)) {
        const save = this.i;
        this.i += 2;
        const trail = this.hex(4);
        if (trail >= 0xdc00 && trail <= 0xdfff) return (lead - 0xd800) * 0x400 + (trail - 0xdc00) + 0x10000;
        this.i = save;
      }
      return lead;
    }
    return c; // an escaped syntax character, "/" or "-"
  }

  private hex(n: number): number {
    const v = parseInt(String.fromCodePoint(...this.s.slice(this.i, this.i + n)), 16);
    this.i += n;
    return v;
  }

  /** After `[`: the class's ranges (negated for `[^`). */
  private cls(): Ranges {
    const neg = this.is('^');
    if (neg) this.i++;
    const r: Ranges = [];
    while (!this.is(']')) {
      const lo = this.classAtom();
      if (this.is('-') && !this.is(']', 1) && typeof lo === 'number') {
        this.i++;
        const hi = this.classAtom();
        if (typeof hi !== 'number') throw new Unsupported('a range to a class escape');
        r.push(lo, hi);
      } else if (typeof lo === 'number') r.push(lo, lo);
      else r.push(...lo);
    }
    this.i++;
    return neg ? negate(r) : union(r);
  }

  private classAtom(): number | Ranges {
    const c = this.s[this.i++];
    if (c !== 0x5c) return c;
    if (this.is('b')) {
      this.i++;
      return 8; // backspace, inside a class
    }
    return this.classEscape() ?? this.charEscape();
  }
}

// NFA state kinds
const CHAR = 0;
const SPLIT = 1;
const ASSERT = 2;
const MATCH = 3;

/** A compiled pattern: `test` finds a match anywhere in the input, as RegExp.prototype.test does. */
export interface LinearRegex {
  readonly source: string;
  /** The number of NFA states: the cost of one input character. */
  readonly size: number;
  test(input: string): boolean;
}

class Nfa implements LinearRegex {
  readonly kind: number[] = [];
  readonly out1: number[] = [];
  readonly out2: number[] = [];
  readonly ranges: (Ranges | null)[] = [];
  readonly asserts: string[] = [];
  readonly start: number;

  constructor(
    readonly source: string,
    node: Node,
  ) {
    const match = this.state(MATCH, -1, -1, null, '');
    this.start = this.compile(node, match);
  }

  get size(): number {
    return this.kind.length;
  }

  private state(kind: number, o1: number, o2: number, r: Ranges | null, a: string): number {
    if (this.kind.length >= MAX_STATES) throw new Unsupported(`more than ${MAX_STATES} states (a long pattern, or large repetitions)`);
    this.kind.push(kind);
    this.out1.push(o1);
    this.out2.push(o2);
    this.ranges.push(r);
    this.asserts.push(a);
    return this.kind.length - 1;
  }

  /** The start state of `node` followed by `next` (compiled back to front, so nothing needs patching). */
  private compile(node: Node, next: number): number {
    switch (node.t) {
      case 'char':
        return this.state(CHAR, next, -1, node.r, '');
      case 'assert':
        return this.state(ASSERT, next, -1, null, node.k);
      case 'cat': {
        let s = next;
        for (let i = node.a.length - 1; i >= 0; i--) s = this.compile(node.a[i], s);
        return s;
      }
      case 'alt': {
        let s = this.compile(node.a[node.a.length - 1], next);
        for (let i = node.a.length - 2; i >= 0; i--) s = this.state(SPLIT, this.compile(node.a[i], next), s, null, '');
        return s;
      }
      case 'rep': {
        let s = next;
        if (node.max === Infinity) {
          const loop = this.state(SPLIT, -1, next, null, '');
          this.out1[loop] = this.compile(node.n, loop);
          s = loop;
        } else {
          for (let k = node.min; k < node.max; k++) s = this.state(SPLIT, this.compile(node.n, s), next, null, '');
        }
        for (let k = 0; k < node.min; k++) s = this.compile(node.n, s);
        return s;
      }
    }
  }

  test(input: string): boolean {
    const cps = Array.from(input, (c) => c.codePointAt(0)!);
    const n = cps.length;
    const mark = new Int32Array(this.kind.length).fill(-1);
    const stack: number[] = [];
    let cur: number[] = [];
    let nxt: number[] = [];
    const isWord = (cp: number) => cp >= 0 && inRanges(WORD, cp);
    /** Add `s` and what it reaches without reading (at position `pos`) to `list`; true when that reaches the end. */
    const add = (list: number[], s: number, pos: number): boolean => {
      stack.push(s);
      let matched = false;
      while (stack.length) {
        const x = stack.pop()!;
        if (mark[x] === pos) continue;
        mark[x] = pos;
        switch (this.kind[x]) {
          case SPLIT:
            stack.push(this.out2[x], this.out1[x]);
            break;
          case ASSERT: {
            const a = this.asserts[x];
            const prev = pos > 0 ? cps[pos - 1] : -1;
            const here = pos < n ? cps[pos] : -1;
            const ok = a === '^' ? pos === 0 : a === '$' ? pos === n : (isWord(prev) !== isWord(here)) === (a === 'b');
            if (ok) stack.push(this.out1[x]);
            break;
          }
          case MATCH:
            matched = true;
            break;
          default:
            list.push(x);
        }
      }
      return matched;
    };
    if (add(cur, this.start, 0)) return true;
    for (let pos = 0; pos < n; pos++) {
      const cp = cps[pos];
      nxt.length = 0;
      for (const x of cur) {
        if (inRanges(this.ranges[x]!, cp) && add(nxt, this.out1[x], pos + 1)) return true;
      }
      if (add(nxt, this.start, pos + 1)) return true; // a match may start anywhere
      [cur, nxt] = [nxt, cur];
    }
    return false;
  }
}

/**
 * Compile `source` (a JSON Schema pattern, ECMAScript `u` mode) to a linear-time matcher, or say why not:
 * `syntax` when JavaScript itself refuses it, otherwise what this engine does not run.
 */
export function compileLinear(source: string): { ok: true; regex: LinearRegex } | { ok: false; reason: string; syntax: boolean } {
  if (source.length > MAX_PATTERN_LENGTH) return { ok: false, reason: `it is longer than ${MAX_PATTERN_LENGTH} characters`, syntax: false };
  try {
    new RegExp(source, 'u');
  } catch (e) {
    return { ok: false, reason: `it is not a regular expression (${e instanceof Error ? e.message : String(e)})`, syntax: true };
  }
  try {
    return { ok: true, regex: new Nfa(source, new Parser(source).parse()) };
  } catch (e) {
    if (e instanceof Unsupported) return { ok: false, reason: `it uses ${e.message}, which labdeck does not run for a pattern from another PC`, syntax: false };
    throw e;
  }
}
