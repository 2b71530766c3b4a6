/**
 * The line reader of a child's stdout (core/hosts/lines.ts, issue 26 #11): lines split across chunks in any
 * way come out whole and in order, a huge line is joined once, and a line over the limit is dropped and
 * reported with its head and length while the lines after it are read as usual.
 */
import { LineReader, maxReplyBytes } from '../../core/hosts/lines.js';

function reader(maxBytes = 1024) {
  const lines: string[] = [];
  const tooLong: { head: string; bytes: number }[] = [];
  const r = new LineReader((l) => lines.push(l), { maxBytes, onTooLong: (head, bytes) => tooLong.push({ head, bytes }) });
  return { r, lines, tooLong };
}

describe('LineReader', () => {
  it('gives every line whole, however the bytes are split (also inside a UTF-8 character)', () => {
    const text = 'first\nsecond é ✓ 😀\n\nlast one\n';
    const bytes = Buffer.from(text, 'utf8');
    for (let size = 1; size <= bytes.length; size++) {
      const { r, lines } = reader();
      for (let i = 0; i < bytes.length; i += size) r.push(bytes.subarray(i, i + size));
      expect(lines).toEqual(['first', 'second é ✓ 😀', '', 'last one']);
      expect(r.pending).toBe(0);
    }
  });

  it('keeps an unfinished line until its newline comes', () => {
    const { r, lines } = reader();
    r.push(Buffer.from('{"id":1,'));
    r.push(Buffer.from('"value":2}'));
    expect(lines).toEqual([]);
    expect(r.pending).toBe(18);
    r.push(Buffer.from('\n{"id":2}\n{"id'));
    expect(lines).toEqual(['{"id":1,"value":2}', '{"id":2}']);
    expect(r.pending).toBe(4);
  });

  it('joins a 20 MB line sent in 64 kB chunks into one line', () => {
    const { r, lines, tooLong } = reader(32 * 1024 * 1024);
    const line = Buffer.alloc(20 * 1024 * 1024, 'x');
    const all = Buffer.concat([line, Buffer.from('\nafter\n')]);
    for (let i = 0; i < all.length; i += 65_536) r.push(all.subarray(i, i + 65_536));
    expect(tooLong).toEqual([]);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toHaveLength(line.length);
    expect(lines[1]).toBe('after');
  });

  it('drops a line over the limit, reports its head and length once, and reads the next lines', () => {
    const { r, lines, tooLong } = reader(100);
    const long = `{"id":7,"type":"result","value":"${'y'.repeat(500)}"}`;
    r.push(Buffer.from('{"id":6}\n'));
    // over the limit in the middle of a chunk, then more of it across chunks
    r.push(Buffer.from(long.slice(0, 90)));
    r.push(Buffer.from(long.slice(90, 300)));
    expect(r.pending).toBe(300);
    r.push(Buffer.from(`${long.slice(300)}\n{"id":8}\n`));
    expect(lines).toEqual(['{"id":6}', '{"id":8}']);
    expect(tooLong).toHaveLength(1);
    expect(tooLong[0]!.bytes).toBe(Buffer.byteLength(long));
    expect(tooLong[0]!.head.startsWith('{"id":7,"type":"result"')).toBe(true);
    expect(tooLong[0]!.head.length).toBeLessThanOrEqual(256);
    // a line exactly at the limit is taken
    r.push(Buffer.from(`${'z'.repeat(100)}\n`));
    expect(lines[2]).toHaveLength(100);
  });

  it('a line over the limit inside one chunk', () => {
    const { r, lines, tooLong } = reader(10);
    r.push(Buffer.from('short\n0123456789ABC\nok\n'));
    expect(lines).toEqual(['short', 'ok']);
    expect(tooLong).toEqual([{ head: '0123456789ABC', bytes: 13 }]);
  });

  it('the reply limit is 16 MB unless LABDECK_PYTHON_MAX_REPLY says otherwise', () => {
    const before = process.env.LABDECK_PYTHON_MAX_REPLY;
    try {
      delete process.env.LABDECK_PYTHON_MAX_REPLY;
      expect(maxReplyBytes()).toBe(16 * 1024 * 1024);
      process.env.LABDECK_PYTHON_MAX_REPLY = '1000';
      expect(maxReplyBytes()).toBe(1000);
      process.env.LABDECK_PYTHON_MAX_REPLY = 'lots';
      expect(maxReplyBytes()).toBe(16 * 1024 * 1024);
    } finally {
      if (before === undefined) delete process.env.LABDECK_PYTHON_MAX_REPLY;
      else process.env.LABDECK_PYTHON_MAX_REPLY = before;
    }
  });
});
