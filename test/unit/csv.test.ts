/** CSV reading (line numbers a person counts, the type row, BOM, quotes) and writing (formula neutralisation). */
import { jest } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { LabError } from '../../core/errors.js';
import { cellText, csvChunks, csvLine, neutralise, parseCsv, parseCsvAsync, scanCsv, scanCsvAsync, toCsv, writeCsv, type CsvTable, type ParseOptions } from '../../core/files/csv.js';
import { waitFor } from '../helpers/wait.js';

/** The LabError a call throws or rejects with (fails the test when there is none). */
async function errorOf(fn: () => unknown): Promise<LabError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof LabError) return e;
    throw e;
  }
  throw new Error('expected a LabError');
}

type Parse = (input: Buffer | string, options?: ParseOptions) => Promise<CsvTable>;
const PARSERS: [string, Parse][] = [
  ['parseCsv', async (input, options) => parseCsv(input, options)],
  ['parseCsvAsync', parseCsvAsync],
];

describe.each(PARSERS)('%s', (_name, parse) => {
  it('reads a header and rows, keeping every value a string, with the line each row starts on', async () => {
    const t = await parse('volume,solvent\n1.5,water\n-2,ethanol\n');
    expect(t.columns).toEqual(['volume', 'solvent']);
    expect(t.rows).toEqual([
      { volume: '1.5', solvent: 'water' },
      { volume: '-2', solvent: 'ethanol' },
    ]);
    expect(t.lines).toEqual([2, 3]);
    expect(t.types).toBeUndefined();
  });

  it('recognises and drops a second row of type names, returning it as types', async () => {
    const t = await parse('volume,count,solvent,stir\nfloat,int,str,bool\n1,2,water,true\n');
    expect(t.types).toEqual(['float', 'int', 'str', 'bool']);
    expect(t.rows).toEqual([{ volume: '1', count: '2', solvent: 'water', stir: 'true' }]);
    expect(t.lines).toEqual([3]);
    // a row that is only partly type names is data
    const d = await parse('a,b\nnumber,7\n');
    expect(d.types).toBeUndefined();
    expect(d.rows).toEqual([{ a: 'number', b: '7' }]);
  });

  it('strips a byte-order mark, from a Buffer and from a string', async () => {
    const buf = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('volume,mass\n1,2\n')]);
    expect((await parse(buf)).columns).toEqual(['volume', 'mass']);
    expect((await parse('\uFEFFvolume\n1\n')).columns).toEqual(['volume']);
  });

  it('handles quotes: separators, doubled quotes and line breaks inside a cell; lines still counted', async () => {
    const t = await parse('note,x\n"a, b",1\n"say ""hi""",2\n"two\nlines",3\nlast,4\n');
    expect(t.rows.map((r) => r.note)).toEqual(['a, b', 'say "hi"', 'two\nlines', 'last']);
    expect(t.lines).toEqual([2, 3, 4, 6]);
  });

  it('skips blank lines and rows of empty cells anywhere, and trims around separators', async () => {
    const t = await parse('a, b \r\n1, x\r\n\r\n,\r\n2,"  y "\r\n\r\n\r\n');
    expect(t.columns).toEqual(['a', 'b']);
    expect(t.rows).toEqual([
      { a: '1', b: 'x' },
      { a: '2', b: '  y ' },
    ]);
    expect(t.lines).toEqual([2, 5]);
  });

  it('accepts old Mac line endings, semicolons and tabs (when the header has no comma), and Latin-1 text', async () => {
    expect((await parse('a,b\r1,2\r3,4')).rows).toEqual([
      { a: '1', b: '2' },
      { a: '3', b: '4' },
    ]);
    expect((await parse('a;b\n1,5;2\n')).rows).toEqual([{ a: '1,5', b: '2' }]);
    expect((await parse('a\tb\n1\t2\n')).rows).toEqual([{ a: '1', b: '2' }]);
    expect((await parse(Buffer.from('unit\nµl\n', 'latin1'))).rows).toEqual([{ unit: 'µl' }]);
  });

  it('counts a line break inside quotes once, \\r\\n included, across chunks and multi-byte characters', async () => {
    // 1009-byte rows of 2- and 3-byte characters: chunk edges fall inside characters and line breaks
    const row = `${'µ€'.repeat(200)},"a\r\nb"\r\n`;
    const t = await parse(`long,q\r\n${row.repeat(200)}bad\r\n`).catch((e: LabError) => e);
    expect(t).toBeInstanceOf(LabError);
    expect((t as LabError).details).toEqual([{ field: `line ${2 + 200 * 2}`, message: 'has 1 cell, but the header has 2 columns' }]);
    const ok = await parse(`long,q\r\n${row.repeat(200)}`);
    expect(ok.rows).toHaveLength(200);
    expect(ok.rows[199]).toEqual({ long: 'µ€'.repeat(200), q: 'a\r\nb' });
    expect(ok.lines.slice(0, 3)).toEqual([2, 4, 6]);
    expect(ok.lines[199]).toBe(2 + 199 * 2);
    expect((await parse('a,b\r\n1,"x\ny"\r\n2,"p\rq"\r\n3,z\r\n')).lines).toEqual([2, 4, 6]);
  });

  it('names the line of a row with more or fewer cells than the header, listing every such row', async () => {
    const e = await errorOf(() => parse('a,b\n1,2\n3\n\n4,5,6\n7,8\n'));
    expect(e.code).toBe('invalid_input');
    expect(e.message).toContain('line 3');
    expect(e.details).toEqual([
      { field: 'line 3', message: 'has 1 cell, but the header has 2 columns' },
      { field: 'line 5', message: 'has 3 cells, but the header has 2 columns' },
    ]);
  });

  it('names the line an unclosed quote starts on, and the line of text after a closing quote', async () => {
    const open = await errorOf(() => parse('a,b\n1,2\n"never closed,3\n4,5\n6,7\n'));
    expect(open.message).toContain('line 3');
    expect(open.details).toEqual([{ field: 'line 3', message: expect.stringContaining('never closed') }]);
    const after = await errorOf(() => parse('a,b\n1,2\n3,4\n5,"x"y\n'));
    expect(after.details?.[0]?.field).toBe('line 4');
    // a quote inside a cell that does not start with one is text (the fuzzer's formula cell was a 500)
    expect((await parse('x,y\n=cmd|"/c calc"!A1,5" tube\n')).rows).toEqual([{ x: '=cmd|"/c calc"!A1', y: '5" tube' }]);
  });

  it('refuses empty and duplicate column names, naming line 1 and the column', async () => {
    const dup = await errorOf(() => parse('volume,mass,volume\n1,2,3\n'));
    expect(dup.details).toEqual([{ field: 'line 1, column 3', message: '"volume" is also the name of column 1: column names must differ' }]);
    const empty = await errorOf(() => parse('volume,,mass\n1,2,3\n'));
    expect(empty.details?.[0]?.field).toBe('line 1, column 2');
    // trimming makes " volume" the same name as "volume"
    expect((await errorOf(() => parse('volume, volume\n1,2\n'))).details?.[0]?.field).toBe('line 1, column 2');
  });

  it('refuses an empty file, a binary file, and files over the row or column limits', async () => {
    expect((await errorOf(() => parse(''))).details).toEqual([{ field: 'line 1', message: 'no header row' }]);
    expect((await errorOf(() => parse('\n\n'))).code).toBe('invalid_input');
    expect((await errorOf(() => parse(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00])))).message).toContain('not a CSV text file');
    const rows = `x\n${Array.from({ length: 6 }, (_, i) => i).join('\n')}\n`;
    expect((await parse(rows, { maxRows: 6 })).rows).toHaveLength(6);
    const tooMany = await errorOf(() => parse(rows, { maxRows: 5 }));
    expect(tooMany.message).toContain('more than 5 rows');
    expect(tooMany.details?.[0]?.field).toBe('line 7');
    // a type row does not count as a row
    expect((await parse(`x\nint\n${Array.from({ length: 5 }, (_, i) => i).join('\n')}\n`, { maxRows: 5 })).rows).toHaveLength(5);
    expect((await errorOf(() => parse('a,b,c\n1,2,3\n', { maxColumns: 2 }))).message).toContain('3 columns');
  });

  it('keeps a column named __proto__ as a plain key', async () => {
    const t = await parse('__proto__,a\n1,2\n');
    expect(Object.getPrototypeOf(t.rows[0])).toBe(Object.prototype);
    expect(Object.keys(t.rows[0]!)).toEqual(['__proto__', 'a']);
  });
});

describe.each([
  ['scanCsv', async (input: string, options: Parameters<typeof scanCsv>[1]) => scanCsv(input, options)],
  ['scanCsvAsync', scanCsvAsync],
])('%s', (_name, scan) => {
  it('hands each row to onRow as it is read, after onHead, keeping none of them', async () => {
    const seen: unknown[] = [];
    const r = await scan('volume,solvent\nnumber,string\n1,water\n\n2,ethanol\n', {
      onHead: (h) => seen.push(h),
      onRow: (cells, line) => seen.push([cells, line]),
    });
    expect(seen).toEqual([{ columns: ['volume', 'solvent'], types: ['number', 'string'] }, [['1', 'water'], 3], [['2', 'ethanol'], 5]]);
    expect(r).toEqual({ columns: ['volume', 'solvent'], types: ['number', 'string'], rows: 2, truncated: false });
    // a header alone: onHead still comes, with no rows
    const head: unknown[] = [];
    expect(await scan('a,b\n', { onHead: (h) => head.push(h) })).toMatchObject({ rows: 0 });
    expect(head).toEqual([{ columns: ['a', 'b'] }]);
  });

  it('stops at limit rows: what follows is neither read nor checked (a preview of a huge or broken file)', async () => {
    const rows: string[][] = [];
    const text = `a,b\n1,2\n3,4\n5,6\nbroken row with "quote\n${'7,8\n'.repeat(1000)}`;
    const r = await scan(text, { limit: 2, onRow: (c) => rows.push(c) });
    expect(rows).toEqual([
      ['1', '2'],
      ['3', '4'],
    ]);
    expect(r).toMatchObject({ rows: 2, truncated: true });
    expect(await scan('a\n1\n', { limit: 5 })).toMatchObject({ rows: 1, truncated: false });
  });

  it('an error thrown by onHead stops the reading before any row', async () => {
    const onRow = jest.fn();
    await expect(
      scan('a,b\n1,2\n', {
        onHead: () => {
          throw new LabError('invalid_input', 'not these columns');
        },
        onRow,
      }),
    ).rejects.toThrow('not these columns');
    expect(onRow).not.toHaveBeenCalled();
  });
});

it('parseCsvAsync lets the event loop run while it reads a large file', async () => {
  const text = `a,b\n${'1.5,water\n'.repeat(50_000)}`;
  let ticks = 0;
  const timer = setInterval(() => ticks++, 0);
  const t = await parseCsvAsync(text);
  clearInterval(timer);
  expect(t.rows).toHaveLength(50_000);
  expect(ticks).toBeGreaterThan(2);
});

describe('neutralisation and writing', () => {
  it('prefixes text cells a spreadsheet would run as a formula', () => {
    for (const risky of ['=1+1', '+cmd', '-rm', '@SUM(A1)', '\tx', '\rx', '=HYPERLINK("http://x")', '-', '-1+1', '--1']) {
      expect(neutralise(risky)).toBe(`'${risky}`);
    }
  });

  it('leaves plain numbers (negative, signed, exponent) and ordinary text alone', () => {
    for (const safe of ['-1.5', '+2', '-3e-4', '-.5', '12', 'water', ' =not at start', "'already"]) expect(neutralise(safe)).toBe(safe);
    expect(cellText(-1.5)).toBe('-1.5');
    expect(cellText(-Infinity)).toBe('-Infinity');
    expect(cellText(true)).toBe('true');
    expect(cellText(null)).toBe('');
    expect(cellText(undefined)).toBe('');
    expect(cellText(new Date('2024-01-02T03:04:05Z'))).toBe('2024-01-02T03:04:05.000Z');
    expect(cellText({ a: 1 })).toBe('{"a":1}');
    expect(cellText(['=x'])).toBe('["=x"]');
  });

  it('quotes cells with separators, quotes, line breaks or edge spaces', () => {
    expect(csvLine(['a,b', 'say "hi"', 'two\nlines', ' pad', 'plain', 3])).toBe('"a,b","say ""hi""","two\nlines"," pad",plain,3\r\n');
  });

  it('toCsv writes the header and rows by column, missing cells empty, and parses back', () => {
    const text = toCsv([{ volume: -1.5, note: '=cmd()', extra: 'ignored' }, { volume: 2, note: 'a, "b"' }, { note: null }], ['volume', 'note']);
    expect(text).toBe('volume,note\r\n-1.5,\'=cmd()\r\n2,"a, ""b"""\r\n,\r\n');
    expect(parseCsv(text).rows).toEqual([
      { volume: '-1.5', note: "'=cmd()" },
      { volume: '2', note: 'a, "b"' },
    ]);
  });

  it('streams batches with csvChunks and writeCsv, the same text as toCsv', async () => {
    async function* batches() {
      yield [{ x: 1 }, { x: '@x' }];
      yield [];
      yield [{ x: 3 }];
    }
    const chunks: string[] = [];
    for await (const c of csvChunks(['x'], batches())) chunks.push(c);
    expect(chunks).toEqual(['x\r\n', "1\r\n'@x\r\n", '3\r\n']);
    const out = new PassThrough();
    let written = '';
    out.on('data', (d: Buffer) => (written += d.toString()));
    await writeCsv(out, ['x'], batches());
    expect(written).toBe(toCsv([{ x: 1 }, { x: '@x' }, { x: 3 }], ['x']));
  });

  it('writeCsv stops reading batches when the output is closed', async () => {
    let produced = 0;
    let closed = false;
    async function* endless() {
      try {
        for (;;) {
          produced++;
          yield [{ x: 'y'.repeat(1000) }];
        }
      } finally {
        closed = true;
      }
    }
    const out = new PassThrough({ highWaterMark: 1024 });
    const done = writeCsv(out, ['x'], endless());
    // nobody reads: it waits for the output to drain instead of reading on
    await waitFor(() => produced > 0 && out.writableNeedDrain, 'the output to be full');
    out.destroy();
    await expect(done).rejects.toThrow();
    // the batches were let go (the generator returned), so none is read after
    expect(closed).toBe(true);
    expect(produced).toBeLessThan(100);
  });
});
