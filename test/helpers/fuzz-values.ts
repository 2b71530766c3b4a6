/**
 * What the OpenAPI fuzzer (test/full/fuzz.test.ts) sends, as plain data: hostile values, segments, files and
 * whole bodies; the parts of the API document it reads; a request (`Case`) and how it is reported.
 */
import { fileURLToPath } from 'node:url';
import type { Response } from 'supertest';
import { mulberry32 } from '../../plugins/sim/bench.js';

export const J = 'application/json';

/**
 * What only an admin may do (docs/security.md): the console, imports, connecting devices, the logo, sign-up,
 * managing accounts.
 */
export const ADMIN_ONLY = new Set([
  'POST /app/instruments/console/execute',
  'POST /app/instruments/new/module',
  'POST /app/instruments/new/deck-python',
  'POST /app/instruments/new/{instrument}',
  'POST /app/customize-logo',
  'POST /app/account/signup',
  'GET /app/account/users',
  'POST /app/account/users/{user_id}/role',
  'POST /app/account/users/{user_id}/password',
  'POST /app/account/users/{user_id}/disable',
  'POST /app/account/users/{user_id}/enable',
  'POST /app/account/users/{user_id}/delete',
  'POST /app/approvals/policy',
  'GET /app/notifications',
  'PUT /app/notifications',
  'POST /app/notifications',
  'POST /app/notifications/test',
  'PUT /app/safety',
  'POST /app/safety/file',
]);

// ---------------------------------------------------------------------------------------------------------
// Hostile values

export const HUGE = 'A'.repeat(100 * 1024);
export const HUGE_UNICODE = 'ü🧪'.repeat((100 * 1024) / 6);
export const SPECIAL_STRINGS = [
  '../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  'ünïcødé 🧪 ‮drowssap',
  'null\u0000byte',
  '',
  ' ',
  '\t\n',
  "' OR 1=1 --",
  '${7*7}{{7*7}}',
  '%2e%2e%2f',
  'NaN',
  '-1',
  '1e999',
  'x'.repeat(1000),
  '\ud800', // a lone surrogate
];
/** Number literals written into the JSON text as they are (1e999 parses as Infinity, -0 as minus zero). */
export const RAW_NUMBERS = ['-1', '0', '-0', '1e999', '-1e999', '9007199254740993', '1.7976931348623157e308', '0.5', '123456789012345678901234567890', '-99999999999', '99999999999', '2147483648'];
/** Every path parameter gets each of these once (the other junk is drawn at random). */
export const SWEEP_SEGMENTS = ['0', '-1', '99999999999', '2147483648', 'abc', '%2e%2e', '%00', 'a%00b', '%ZZ', 'constructor', '__proto__', '1.5', 'a'.repeat(2000)];
export const JUNK_SEGMENTS = [
  '0',
  '-1',
  '99999999999',
  '9223372036854775808',
  'abc',
  '%2e%2e',
  '..%2f..%2fsession-secret',
  'constructor',
  '__proto__',
  'toString',
  '%00',
  '%ZZ',
  '1.5',
  '1e3',
  '%F0%9F%A7%AA',
  'new',
  'a'.repeat(2000),
  '%3Cscript%3E',
];

/** A number written into JSON text verbatim. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of `depth` levels of nesting, arrays and objects alternating (built flat: no recursion). */
export function nested(depth: number, leaf = '1'): RawJson {
  let open = '';
  const closers: string[] = [];
  for (let i = 0; i < depth; i++) {
    open += i % 2 ? '{"a":' : '[';
    closers.push(i % 2 ? '}' : ']');
  }
  return new RawJson(open + leaf + closers.reverse().join(''));
}

/** JSON text of a value: own keys only (so a `__proto__` key is sent as a key), RawJson as written. */
export function jsonText(v: unknown): string {
  if (v instanceof RawJson) return v.text;
  if (v === undefined) return 'null';
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  return `{${Object.keys(v)
    .map((k) => `${JSON.stringify(k)}:${jsonText((v as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

/** An object with a real own `__proto__` key (a literal would set the prototype instead). */
export function withKey(obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  return obj;
}

/** A lookup by name with no prototype: a device may well be called `constructor`. */
export const byName = <T>(entries: [string, T][]): Record<string, T> => Object.assign(Object.create(null) as Record<string, T>, Object.fromEntries(entries));

export const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof RawJson);

// ---------------------------------------------------------------------------------------------------------
// The OpenAPI document, as far as the fuzzer reads it

export type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  contentMediaType?: string;
};
export interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  schema: Schema;
}
export interface Operation {
  operationId: string;
  parameters?: Param[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, unknown>;
  security?: Record<string, string[]>[];
  'x-labdeck-admin'?: boolean;
  'x-labdeck-live'?: boolean;
}
export interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

export function pointer(doc: unknown, ref: string): unknown {
  let node: unknown = doc;
  for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return node;
}

export const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
export const FILEPATHS = [
  here('../fixtures/api/thermostat.ts'),
  here('../fixtures/api/broken-module.ts'),
  here('../fixtures/api/extra-deck.ts'),
  here('../fixtures/api/reserved-deck.ts'),
  here('../../examples/python/instruments.py'),
  here('../../examples/python/deck.py'),
  here('../../server/static/app.css'),
  'no/such/module.ts',
  'no-such.py',
  '../../etc/passwd',
  '/etc/passwd',
  '/etc',
  'constructor',
];

// ---------------------------------------------------------------------------------------------------------
// Requests

export type Identity = 'anonymous' | 'operator' | 'admin' | 'token' | 'bad-token' | 'spare';
export type Body =
  | { kind: 'none' }
  | { kind: 'json'; text: string; wellFormed: boolean }
  | { kind: 'form'; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'raw'; contentType: string; text: string }
  | { kind: 'multipart'; fields: [string, string][]; files: { field: string; name: string; data: Buffer }[] };

export interface Case {
  identity: Identity;
  method: string;
  url: string;
  accept?: string;
  headers: Record<string, string>;
  body: Body;
  /** What the fuzzer meant (for the report). */
  note: string;
  /** Check the login/admin rules on this request (the body is well formed and under the size limit). */
  checkAuth: boolean;
}

export const excerpt = (s: string, n = 160) => {
  const flat = s.replace(/\s+/g, ' ');
  return flat.length > n ? `${flat.slice(0, n)}… (${s.length} chars)` : flat;
};

export function bodyExcerpt(b: Body): string {
  switch (b.kind) {
    case 'none':
      return '(no body)';
    case 'json':
      return `json ${excerpt(b.text)}`;
    case 'form':
      return `form ${excerpt(b.text)}`;
    case 'text':
      return `text ${excerpt(b.text)}`;
    case 'raw':
      return `${b.contentType} ${excerpt(b.text)}`;
    case 'multipart':
      return `multipart fields=${excerpt(JSON.stringify(b.fields), 100)} files=${JSON.stringify(b.files.map((f) => ({ field: f.field, name: excerpt(f.name, 40), bytes: f.data.length, head: excerpt(f.data.subarray(0, 60).toString('latin1'), 60) })))}`;
  }
}

/** The error message of an answer: the JSON error, or the alert of an error page, or the start of the text. */
export function messageOf(res: Response | undefined): string {
  if (!res) return '';
  const body = res.body as { error?: { message?: string } } | undefined;
  if (body?.error?.message) return body.error.message;
  const text = typeof res.text === 'string' ? res.text : '';
  const alert = /class="alert[^"]*"[^>]*>([\s\S]*?)<\/div>/.exec(text)?.[1];
  if (alert) return excerpt(alert.replace(/<[^>]+>/g, ' '), 200);
  return excerpt(text, 200);
}

// ---------------------------------------------------------------------------------------------------------
// Whole bodies, query values, files

/** A whole body that is not the right kind of thing at all. */
export const WHOLE_BODIES: [string, string, boolean][] = [
  // express.json is strict: a bare null, string, number or boolean is a malformed body (400 before login)
  ['null', 'null body', false],
  ['[]', 'array body', true],
  ['[1,"a",{}]', 'mixed array body', true],
  ['"just a string"', 'string body', false],
  ['42', 'number body', false],
  ['true', 'boolean body', false],
  ['{}', 'empty object', true],
  ['{', 'truncated JSON', false],
  ['{"a":1,}', 'trailing comma', false],
  ['', 'empty JSON body', false],
  ['{"a": NaN}', 'NaN literal', false],
  [nested(200).text, '200 levels at the root', true],
  [nested(3000).text, '3000 levels at the root', true],
  ['{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"polluted":1}}}', 'prototype keys', true],
];

export const QUERY_HINTS: Record<string, string[]> = {
  format: ['json', 'html', 'svg', 'xml'],
  next: ['/app/instruments/', '//evil.example', 'http://evil.example/', '/\\evil.example', '/app/../../etc'],
  signed_up: ['1', ''],
  version: ['1', '2', '0', '-1', 'abc', '99999999999', '1.5'],
  keyword: ['fz', '%', '_', "'", '\\', '%%', 'a'.repeat(5000)],
  page: ['1', '2', '0', '-1', 'abc', '99999999999', '1e3', '9007199254740993'],
  per_page: ['1', '20', '200', '201', '0', '-5', 'abc', '99999999999'],
  lang: ['python', 'typescript', 'rust', ''],
};

// ---- multipart uploads -----------------------------------------------------------------------
/** CSV files, valid and hostile (the binary one from a fixed seed). */
const noise = mulberry32(0x1ab_dec);
export const CSV_FILES: [string, Buffer][] = [
  ['config', Buffer.from('x\n0.1\n0.2\n')],
  ['history', Buffer.from('x,y\n0.1,1\n0.2,2\n')],
  ['type row', Buffer.from('x,out\nnumber,number\n1,2\n')],
  ['empty', Buffer.alloc(0)],
  ['BOM only', Buffer.from('\ufeff')],
  ['binary', Buffer.from(Array.from({ length: 4096 }, () => Math.floor(noise() * 256)))],
  ['formula', Buffer.from('x,y\n=cmd|"/c calc"!A1,+1\n@SUM(1),-2\n')],
  ['broken quote', Buffer.from('x,"y\n1,2\n')],
  ['2000 columns', Buffer.from(`${Array.from({ length: 2000 }, (_, i) => `c${i}`).join(',')}\n${Array.from({ length: 2000 }, () => '1').join(',')}\n`)],
  ['20000 rows', Buffer.from(`x,y\n${Array.from({ length: 20000 }, (_, i) => `${i},${i * 2}`).join('\n')}\n`)],
  ['prototype headers', Buffer.from('__proto__,constructor,toString\n1,2,3\n')],
  ['duplicate headers', Buffer.from('x,x\n1,2\n')],
  ['NUL bytes', Buffer.from('x,y\n1\u0000,2\n')],
  ['unicode', Buffer.from('ünï,🧪\n‮1,2\n')],
  ['ragged', Buffer.from('x,y\n1\n1,2,3\n')],
  ['huge cell', Buffer.from(`x\n${HUGE}\n`)],
  ['CR only', Buffer.from('x,y\r1,2\r')],
];
export const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082', 'hex');
export const LOGOS: [string, Buffer][] = [
  ['png', PNG],
  ['gif header', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1')],
  ['svg with script', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')],
  ['junk', Buffer.from('not an image at all')],
  ['empty', Buffer.alloc(0)],
  ['png header then junk', Buffer.concat([PNG.subarray(0, 8), Buffer.alloc(64, 0xff)])],
];
export const FILE_NAMES = ['c.csv', '../../etc/passwd', '<script>.csv', 'ünï 🧪.csv', '', 'a'.repeat(1000) + '.csv', 'con.csv', '.csv', 'x.exe'];

export const MALFORMED_MULTIPART: [string, string][] = [
  ['multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nx\n1\n'],
  ['multipart/form-data', 'no boundary at all'],
  ['multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: garbage\r\n\r\nx\r\n--XyZ--\r\n'],
  ['multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\nx\n1\n\r\n--WRONG--\r\n'],
  ['multipart/form-data; boundary=' + 'b'.repeat(300), `--${'b'.repeat(300)}--\r\n`],
];
