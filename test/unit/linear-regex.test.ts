/**
 * The linear-time matcher for patterns from other PCs (issue 26 item 6): it answers as JavaScript's engine
 * does on the syntax it speaks, refuses what it cannot run in linear time, and a pattern that backtracks
 * exponentially in JavaScript (`^(a+)+$`) answers at once.
 */
import { mulberry32 } from '../../plugins/sim/bench.js';
import { compileLinear, MAX_PATTERN_LENGTH } from '../../core/workflow/linear-regex.js';
import { checkValue, MAX_PATTERN_INPUT } from '../../core/workflow/jsonschema.js';

const PATTERNS = [
  '^[A-Za-z_][A-Za-z0-9_-]*$',
  'abc',
  '^a|b$',
  '(ab|a)(c|bcd)d',
  '^\\d{2,4}-\\d{2}$',
  'x{3}',
  'a{2,}b',
  '^(?:a|b)*c?$',
  '\\bfoo\\b',
  '\\Bo',
  '[^\\s,]+',
  '^.+$',
  '\\w+@\\w+\\.com',
  '^[\\d.]+$',
  '(?<year>\\d{4})-(?<m>\\d\\d)',
  '^\\u0041\\x42\\u{43}$',
  '[\\-a]',
  '^$',
  '',
  'a*?b+?c??',
  '^(a+)+$',
  '^(a|aa)+$',
  '^(\\d*)*x$',
  '[\\b]',
  '\\t\\n',
  '^[^]$',
  '[]',
  '\\cJ',
  '^\\ud83d\\ude00$',
  '😀+',
  '^.$',
  '\\S\\W\\D',
  '^(a?){10}a{10}$',
];
const ALPHABET = ['a', 'b', 'c', 'd', 'x', '1', '2', '-', '.', '_', ' ', '\n', '@', 'A', 'B', 'C', '😀', '\ud83d', '\b', ',', 'o', 'f', '\t'];

describe('the linear-time matcher', () => {
  it('answers as JavaScript does, on random inputs', () => {
    const rnd = mulberry32(26);
    for (const p of PATTERNS) {
      const c = compileLinear(p);
      if (!c.ok) throw new Error(`${p}: ${c.reason}`);
      const native = new RegExp(p, 'u');
      const samples = ['', 'foo', 'aaaa', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '2024-05', 'ABC', 'a@b.com', '😀😀'];
      for (let k = 0; k < 300; k++) samples.push(Array.from({ length: Math.floor(rnd() * 12) }, () => ALPHABET[Math.floor(rnd() * ALPHABET.length)]).join(''));
      for (const s of samples) {
        if (p === '^(a+)+$' || p === '^(a|aa)+$' || p === '^(\\d*)*x$') if (s.length > 20) continue; // JavaScript itself would take forever
        expect([p, s, c.regex.test(s)]).toEqual([p, s, native.test(s)]);
      }
    }
  });

  it('answers at once where JavaScript backtracks for ever', () => {
    const c = compileLinear('^(a+)+$');
    if (!c.ok) throw new Error(c.reason);
    expect(c.regex.test(`${'a'.repeat(5000)}!`)).toBe(false);
    expect(c.regex.test('a'.repeat(5000))).toBe(true);
    // (JavaScript's own engine would not finish this test: 2^5000 ways to split the a's)
    expect(c.regex.size).toBeLessThan(16);
  });

  it.each([
    ['(?=a)b', /lookaround/],
    ['(?<!a)b', /lookaround/],
    ['(a)\\1', /backreference/],
    ['(?<x>a)\\k<x>', /backreference/],
    ['\\p{L}', /Unicode property/],
    ['a{1001}', /repetition of more than 1000/],
    ['(a{1,1000}){1,1000}', /more than 2000 states/],
    ['(a', /not a regular expression/],
    ['a'.repeat(MAX_PATTERN_LENGTH + 1), /longer than 256/],
  ])('refuses %s, saying why', (p, why) => {
    const c = compileLinear(p);
    expect(c.ok).toBe(false);
    if (!c.ok) expect(c.reason).toMatch(why);
  });
});

describe('checking a value against a schema with a pattern', () => {
  it('runs a pattern the linear matcher speaks with it: an exponential one answers at once', () => {
    const schema = { type: 'string', pattern: '^(a+)+$' };
    expect(checkValue(schema, `${'a'.repeat(5000)}!`)).toBe('must match the pattern ^(a+)+$');
    expect(checkValue(schema, 'aaa')).toBeNull();
    // longer strings are left to the instrument's host, which checks its own arguments
    expect(checkValue(schema, `${'a'.repeat(MAX_PATTERN_INPUT + 1)}!`)).toBeNull();
  });

  it("runs the lab's own drivers' other patterns with JavaScript", () => {
    expect(checkValue({ type: 'string', pattern: '^(?!tmp)\\w+$' }, 'tmpfile')).toMatch(/must match/);
    expect(checkValue({ type: 'string', pattern: '^(?!tmp)\\w+$' }, 'data')).toBeNull();
  });
});
