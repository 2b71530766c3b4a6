/** The result bound's pure parts (core/result-limit.ts): when a value is cut, its marker, and the words for it. */
import { DEFAULT_MAX_RESULT_BYTES, boundResult, cutJson, cutText, headOf, isCutResult, maxResultBytes, setMaxResultBytes } from '../../core/result-limit.js';

afterEach(() => setMaxResultBytes(null));

describe('the result bound', () => {
  it('keeps a value up to the bound whole, and cuts one over it to its marker', () => {
    expect(maxResultBytes()).toBe(DEFAULT_MAX_RESULT_BYTES);
    const fits = 'x'.repeat(DEFAULT_MAX_RESULT_BYTES - 2); // its JSON is exactly the bound
    expect(boundResult(fits)).toBe(fits);
    const over = boundResult(`${fits}x`);
    expect(over).toEqual({ truncated: true, bytes: DEFAULT_MAX_RESULT_BYTES + 1, limit: DEFAULT_MAX_RESULT_BYTES, preview: `"${'x'.repeat(1023)}` });
    expect(isCutResult(over)).toBe(true);
    expect(boundResult({ a: [1, 2, 3] })).toEqual({ a: [1, 2, 3] });
    for (const v of [null, 3, true]) expect(boundResult(v)).toBe(v);
  });

  it('counts UTF-8 bytes, never ends a preview in half a surrogate pair, and says the sizes in words', () => {
    setMaxResultBytes(4096);
    // 1,500 characters of 3 bytes each: 4,502 bytes of JSON, over 4,096 although it has fewer characters
    const cut = cutJson(JSON.stringify('€'.repeat(1500)))!;
    expect(cut).toMatchObject({ bytes: 4502, limit: 4096 });
    expect(cutJson(JSON.stringify('€'.repeat(1300)))).toBeNull();
    expect(headOf('a😀b', 2)).toBe('a');
    expect(headOf('ab', 5)).toBe('ab');
    expect(cutText({ truncated: true, bytes: 15 * 1024 * 1024, limit: 262144, preview: '' })).toBe('15 MB of JSON, cut at 256 KB');
  });

  it('knows its marker by its four fields only, and reads LABDECK_MAX_RESULT_BYTES (at least 4 KB)', () => {
    expect(isCutResult({ truncated: true, bytes: 1, limit: 1, preview: '', more: 1 })).toBe(false);
    expect(isCutResult({ truncated: 'yes', bytes: 1, limit: 1, preview: '' })).toBe(false);
    expect(isCutResult([])).toBe(false);
    const before = process.env.LABDECK_MAX_RESULT_BYTES;
    try {
      process.env.LABDECK_MAX_RESULT_BYTES = '1048576';
      setMaxResultBytes(null);
      expect(maxResultBytes()).toBe(1048576);
      process.env.LABDECK_MAX_RESULT_BYTES = '10';
      setMaxResultBytes(null);
      expect(maxResultBytes()).toBe(DEFAULT_MAX_RESULT_BYTES);
    } finally {
      if (before === undefined) delete process.env.LABDECK_MAX_RESULT_BYTES;
      else process.env.LABDECK_MAX_RESULT_BYTES = before;
    }
  });
});
