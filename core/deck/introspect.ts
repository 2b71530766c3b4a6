/**
 * Zero-config introspection: turn a plain class (a driver) or a plain object / class instance (a device)
 * into an InstrumentDriver, so existing lab code gets forms, validation and records with no changes.
 *
 * Sources of truth, strongest first:
 *   1. explicit zod schemas on the class: `static schemas = { dose: z.object({...}) }` (not "inferred");
 *   2. JSDoc above the method in the module's source (`@param {number} x desc`, `@returns`, `@hidden`,
 *      `@safety hazardous` / `@readonly` / `@idempotent`), and TypeScript annotations in that source;
 *   3. default values in the function's own text (number, string, boolean, arrays/objects of literals);
 *   4. otherwise the field accepts any JSON value (JSON schema `{}`), and is listed in `inferredFields`.
 *
 * Nothing is evaluated: parameters and defaults are read by the tokenizer in ./tokenize.ts.
 * The zod validators are built here once per method; the deck never builds schemas per call.
 */
import { readFileSync, existsSync, statSync } from 'node:fs';
import { z, defineInstrument, ContractError, type InstrumentDriver, type MethodDefinition, type Safety, type ZodObjectAny } from '../contracts/index.js';
import { classDocs, type ClassDoc, type MemberDoc } from './jsdoc.js';
import type { Literal } from './literal.js';
import { constructorParams, functionParams, type ParamInfo } from './params.js';
import { isPlainObject } from './util.js';

export { tokenize } from './tokenize.js';
export { parseLiteral } from './literal.js';
export { functionParams, constructorParams } from './params.js';
export { classDocs, parseJsDoc } from './jsdoc.js';
export type { ParamInfo } from './params.js';
export type { MemberDoc, ClassDoc } from './jsdoc.js';

/** Marks a driver built by introspection, with which fields were guessed. Read by the deck. */
export const INFERRED = Symbol.for('labdeck.inferred');

export interface InferredInfo {
  /** Option fields (constructor parameters) whose type could not be inferred. */
  optionsFields: string[];
  /** Per method: whether its schema was inferred, and which fields could not be typed. */
  methods: Record<string, { inferred: boolean; fields: string[] }>;
}

export function inferredInfo(driver: unknown): InferredInfo | undefined {
  return (driver as { [INFERRED]?: InferredInfo } | null)?.[INFERRED];
}

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** Lifecycle hook of zero-config classes: called before an instance is replaced or the deck closes. */
const LIFECYCLE = new Set(['constructor', 'dispose']);

/* ------------------------------------------------------------------- types */

export type FieldType = { kind: 'number' | 'integer' | 'string' | 'boolean' | 'object' | 'any' } | { kind: 'enum'; values: (string | number)[] } | { kind: 'array'; items: FieldType };

const ANY: FieldType = { kind: 'any' };

function splitTop(text: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  let quote = '';
  for (const c of text) {
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if ('([{<'.includes(c)) depth++;
    else if (')]}>'.includes(c)) depth--;
    if (!quote && depth === 0 && c === sep) {
      out.push(cur.trim());
      cur = '';
      continue;
    }
    cur += c;
  }
  out.push(cur.trim());
  return out;
}

/** A TypeScript or JSDoc type expression → a field type, or null when we cannot tell. */
export function typeFromText(text: string | undefined): FieldType | null {
  if (!text) return null;
  let t = text.trim();
  while (t.startsWith('(') && t.endsWith(')')) t = t.slice(1, -1).trim();
  const members = splitTop(t, '|').filter((m) => m && !['undefined', 'null', 'void'].includes(m));
  if (members.length === 0) return null;
  if (members.length > 1) {
    if (members.every((m) => /^(['"]).*\1$/.test(m))) return { kind: 'enum', values: members.map((m) => m.slice(1, -1)) };
    if (members.every((m) => /^-?\d+(\.\d+)?$/.test(m))) return { kind: 'enum', values: members.map(Number) };
    if (members.every((m) => m === 'true' || m === 'false')) return { kind: 'boolean' };
    return null;
  }
  const m = members[0];
  const lower = m.toLowerCase();
  if (['number', 'float', 'double'].includes(lower)) return { kind: 'number' };
  if (['int', 'integer'].includes(lower)) return { kind: 'integer' };
  if (lower === 'string') return { kind: 'string' };
  if (['boolean', 'bool'].includes(lower)) return { kind: 'boolean' };
  if (['any', 'unknown', '*', 'json'].includes(lower)) return ANY;
  if (lower === 'object' || m.startsWith('{') || /^Record</.test(m)) return { kind: 'object' };
  if (/^(['"]).*\1$/.test(m)) return { kind: 'enum', values: [m.slice(1, -1)] };
  if (m.endsWith('[]')) return { kind: 'array', items: typeFromText(m.slice(0, -2)) ?? ANY };
  const arr = /^(?:Readonly)?Array<(.*)>$/i.exec(m);
  if (arr) return { kind: 'array', items: typeFromText(arr[1]) ?? ANY };
  if (lower === 'array') return { kind: 'array', items: ANY };
  return null;
}

function typeOfLiteral(v: Literal): FieldType {
  if (typeof v === 'number') return { kind: 'number' };
  if (typeof v === 'string') return { kind: 'string' };
  if (typeof v === 'boolean') return { kind: 'boolean' };
  if (Array.isArray(v)) {
    const items = v.length > 0 && v.every((x) => typeof x === 'number') ? ({ kind: 'number' } as const) : ANY;
    return { kind: 'array', items };
  }
  if (v && typeof v === 'object') return { kind: 'object' };
  return ANY;
}

export function zodFor(t: FieldType): z.ZodType {
  switch (t.kind) {
    case 'number':
      return z.number();
    case 'integer':
      return z.number().int();
    case 'string':
      return z.string();
    case 'boolean':
      return z.boolean();
    case 'object':
      return z.record(z.string(), z.unknown());
    case 'enum': {
      const vals = t.values;
      if (vals.every((v) => typeof v === 'string')) return z.enum(vals as [string, ...string[]]);
      return z.union(vals.map((v) => z.literal(v)) as unknown as [z.ZodLiteral, z.ZodLiteral]);
    }
    case 'array':
      return z.array(zodFor(t.items));
    default:
      return z.unknown();
  }
}

/* --------------------------------------------------------------- signatures */

interface Field {
  name: string;
  schema: z.ZodType;
  /** Type unknown: any JSON accepted. */
  untyped: boolean;
}

/** How a validated args object is turned into the function's arguments. */
type CallShape = { mode: 'positional'; names: string[]; rest: string | null } | { mode: 'object' };

interface Signature {
  shape: Record<string, z.ZodType>;
  untyped: string[];
  call: CallShape;
}

/**
 * One form field from a parameter as the running code shows it (`p`: name, literal default), its JSDoc,
 * and the same parameter as the module's source writes it (`src`: TypeScript type and `?`, which compiled
 * code no longer has).
 */
function buildField(p: ParamInfo, doc: MemberDoc | undefined, src: ParamInfo | undefined): Field {
  const d = doc?.params.get(p.name);
  let type = typeFromText(d?.type) ?? typeFromText(src?.typeText);
  const def: Literal | undefined = p.defaultOk ? p.default : d?.default;
  if (!type && def !== undefined) type = typeOfLiteral(def);
  if (p.rest) type = { kind: 'array', items: type && type.kind === 'array' ? type.items : ANY };
  const untyped = !type || type.kind === 'any';
  let schema = zodFor(type ?? ANY);
  if (def !== undefined) schema = schema.default(def as never);
  else if (p.hasDefault || p.optional || src?.optional || d?.optional || p.rest) schema = schema.optional();
  if (d?.description) schema = schema.describe(d.description);
  return { name: p.name, schema, untyped };
}

function signatureOf(params: ParamInfo[], doc: MemberDoc | undefined): Signature {
  const src = doc?.sourceParams;
  const shape: Record<string, z.ZodType> = {};
  const untyped: string[] = [];
  const add = (f: Field) => {
    shape[f.name] = f.schema;
    if (f.untyped) untyped.push(f.name);
  };
  // a single destructured parameter `{ rate = 2, volume }`: its keys are the fields; call with one object
  if (params.length === 1 && params[0].fields && !params[0].rest) {
    const srcFields = src?.[0]?.fields;
    for (const f of params[0].fields)
      add(
        buildField(
          f,
          doc,
          srcFields?.find((s) => s.name === f.name),
        ),
      );
    return { shape, untyped, call: { mode: 'object' } };
  }
  const names: string[] = [];
  let rest: string | null = null;
  for (const p of params) {
    add(
      buildField(
        p,
        doc,
        src?.find((s) => s.name === p.name),
      ),
    );
    if (p.rest) rest = p.name;
    else names.push(p.name);
  }
  return { shape, untyped, call: { mode: 'positional', names, rest } };
}

function callWith(shape: CallShape, method: string) {
  if (shape.mode === 'object') {
    return (inst: unknown, args: Record<string, unknown>) => (inst as Record<string, (...a: unknown[]) => unknown>)[method](args);
  }
  const { names, rest } = shape;
  return (inst: unknown, args: Record<string, unknown>) => {
    const values = names.map((n) => args[n]);
    if (rest) values.push(...((args[rest] as unknown[] | undefined) ?? []));
    return (inst as Record<string, (...a: unknown[]) => unknown>)[method](...values);
  };
}

/** Shape for an explicit zod schema: positional by parameter name, or the whole object for `fn(opts)`. */
function explicitCall(params: ParamInfo[] | null, schema: ZodObjectAny): CallShape {
  const keys = Object.keys(schema.shape);
  if (!params || params.length === 0) return { mode: 'object' };
  if (params.length === 1 && (params[0].fields || !keys.includes(params[0].name))) return { mode: 'object' };
  return { mode: 'positional', names: params.filter((p) => !p.rest).map((p) => p.name), rest: params.find((p) => p.rest)?.name ?? null };
}

/* ------------------------------------------------------------------ sources */

const sourceCache = new Map<string, { mtimeMs: number; text: string | null }>();

/**
 * The source text of a module file, for JSDoc and TypeScript annotations. For compiled `.js` with a
 * sibling source map carrying `sourcesContent` (esbuild's default), the original source is used.
 */
export function moduleSource(file: string | null | undefined): string | null {
  if (!file || !existsSync(file)) return null;
  try {
    const mtimeMs = statSync(file).mtimeMs;
    const hit = sourceCache.get(file);
    if (hit && hit.mtimeMs === mtimeMs) return hit.text;
    let text: string | null = readFileSync(file, 'utf8');
    if (/\.[mc]?js$/.test(file) && existsSync(file + '.map')) {
      try {
        const map = JSON.parse(readFileSync(file + '.map', 'utf8')) as { sourcesContent?: string[] };
        if (map.sourcesContent?.length === 1 && typeof map.sourcesContent[0] === 'string') text = map.sourcesContent[0];
      } catch {
        /* keep the compiled text */
      }
    }
    sourceCache.set(file, { mtimeMs, text });
    return text;
  } catch {
    return null;
  }
}

/* ---------------------------------------------------------- classes/objects */

type AnyFn = (...args: unknown[]) => unknown;
type Ctor = abstract new (...args: never[]) => unknown;

export function isClass(v: unknown): v is Ctor {
  return typeof v === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(v));
}

const isNative = (fn: AnyFn) => /\{\s*\[native code\]\s*\}\s*$/.test(Function.prototype.toString.call(fn));

/** Public method names of an object, in declaration order: own properties first, then up the prototype chain. */
export function publicMethods(obj: object, includeOwn: boolean): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const levels: object[] = [];
  if (includeOwn) levels.push(obj);
  // walk up through user classes only: stop at Object, and at library/builtin bases (EventEmitter, ...)
  for (let p = includeOwn ? Object.getPrototypeOf(obj) : obj; p && isClass((p as { constructor?: unknown }).constructor); p = Object.getPrototypeOf(p)) {
    if (Object.prototype.hasOwnProperty.call(p, 'constructor')) levels.push(p);
  }
  for (const level of levels) {
    for (const name of Object.getOwnPropertyNames(level)) {
      if (seen.has(name)) continue;
      seen.add(name);
      if (LIFECYCLE.has(name) || name.startsWith('_') || !NAME_RE.test(name)) continue;
      const desc = Object.getOwnPropertyDescriptor(level, name);
      if (!desc || desc.get || desc.set || typeof desc.value !== 'function') continue;
      if (isClass(desc.value) || isNative(desc.value as AnyFn)) continue;
      out.push(name);
    }
  }
  return out;
}

function docsFor(cls: Ctor | null, source: string | null | undefined): ClassDoc | null {
  if (!cls || !source || !cls.name) return null;
  try {
    return classDocs(source, cls.name);
  } catch {
    return null; // documentation is a bonus: never fail a load over it
  }
}

/** Merge member docs found on the class and its ancestors that live in the same source. */
function memberDoc(docs: ClassDoc[], name: string): MemberDoc | undefined {
  for (const d of docs) {
    const m = d.members.get(name);
    if (m) return m;
  }
  return undefined;
}

function explicitSchemas(cls: Ctor | null): Record<string, ZodObjectAny> {
  const out: Record<string, ZodObjectAny> = {};
  for (let c = cls as (Ctor & { schemas?: unknown }) | null; isClass(c); c = Object.getPrototypeOf(c)) {
    const s = c.schemas;
    if (!s || typeof s !== 'object') continue;
    for (const [k, v] of Object.entries(s as Record<string, unknown>)) {
      if (!(k in out) && v instanceof z.ZodObject) out[k] = v as ZodObjectAny;
    }
  }
  return out;
}

interface Built {
  methods: Record<string, MethodDefinition<unknown>>;
  info: InferredInfo['methods'];
}

function buildMethods(target: object, names: string[], cls: Ctor | null, docs: ClassDoc[]): Built {
  const explicit = explicitSchemas(cls);
  const methods: Record<string, MethodDefinition<unknown>> = {};
  const info: InferredInfo['methods'] = {};
  for (const name of names) {
    const fn = (target as Record<string, AnyFn>)[name];
    const params = functionParams(Function.prototype.toString.call(fn));
    const doc = memberDoc(docs, name);
    const base = { description: doc?.description ?? '', safety: doc?.safety, hidden: doc?.hidden };
    const ex = explicit[name];
    if (ex) {
      methods[name] = { ...base, params: ex, run: callWith(explicitCall(params, ex), name) };
      info[name] = { inferred: false, fields: [] };
      continue;
    }
    // unreadable source (native or bound): one positional JSON field per declared parameter
    const ps = params ?? Array.from({ length: fn.length }, (_, i) => ({ name: `arg${i}`, hasDefault: false, defaultOk: false, rest: false, optional: false }));
    const sig = signatureOf(ps, doc);
    const returns = typeFromText(doc?.returns?.type);
    methods[name] = { ...base, params: z.object(sig.shape), ...(returns ? { returns: zodFor(returns) } : {}), run: callWith(sig.call, name) };
    info[name] = { inferred: true, fields: sig.untyped };
  }
  return { methods, info };
}

function classChainDocs(cls: Ctor | null, source: string | null | undefined): ClassDoc[] {
  const out: ClassDoc[] = [];
  for (let c = cls; isClass(c) && c.name; c = Object.getPrototypeOf(c)) {
    const d = docsFor(c, source);
    if (d) out.push(d);
  }
  return out;
}

function staticString(cls: Ctor | null, key: string): string | undefined {
  const v = cls ? (cls as unknown as Record<string, unknown>)[key] : undefined;
  return typeof v === 'string' ? v : undefined;
}

function tag(driver: InstrumentDriver, info: InferredInfo): InstrumentDriver {
  Object.defineProperty(driver, INFERRED, { value: info, enumerable: false });
  return driver;
}

function disposeHook(inst: unknown): void | Promise<void> {
  const d = (inst as { dispose?: unknown } | null)?.dispose;
  if (typeof d === 'function') return (d as () => void | Promise<void>).call(inst);
}

export interface IntrospectOptions {
  /** Driver name; default the class name. */
  name?: string;
  /** Source text of the module the class comes from (for JSDoc and TS annotations). */
  source?: string | null;
}

/**
 * A plain class as an instrument driver: constructor parameters become its options, public methods its
 * methods. Throws ContractError when the class has no public method (nothing to control).
 */
export function introspectClass(cls: Ctor, opts: IntrospectOptions = {}): InstrumentDriver {
  const name = opts.name ?? cls.name;
  const docs = classChainDocs(cls, opts.source);
  const names = publicMethods(cls.prototype as object, false);
  if (names.length === 0) throw new ContractError(`class ${name} has no public methods`);
  const built = buildMethods(cls.prototype as object, names, cls, docs);

  // options: constructor parameters (of the nearest class that declares a constructor)
  let ctorParams: ParamInfo[] = [];
  let ctorDoc: MemberDoc | undefined;
  for (let c: unknown = cls; isClass(c); c = Object.getPrototypeOf(c)) {
    const ps = constructorParams(Function.prototype.toString.call(c));
    if (ps) {
      ctorParams = ps;
      ctorDoc = docs.find((d) => d.members.has('constructor'))?.members.get('constructor');
      break;
    }
  }
  const sig = signatureOf(ctorParams, ctorDoc);
  const call = sig.call;
  const driver = defineInstrument<ZodObjectAny, unknown>({
    name,
    version: staticString(cls, 'version') ?? '0.0.0',
    description: staticString(cls, 'description') ?? docs[0]?.description ?? '',
    options: z.object(sig.shape),
    create: (o: Record<string, unknown>) => {
      const C = cls as unknown as new (...a: unknown[]) => unknown;
      if (call.mode === 'object') return new C(o);
      const values = call.names.map((n) => o[n]);
      if (call.rest) values.push(...((o[call.rest] as unknown[] | undefined) ?? []));
      return new C(...values);
    },
    methods: built.methods,
    dispose: disposeHook,
  });
  return tag(driver, { optionsFields: sig.untyped, methods: built.info });
}

/**
 * A plain object or class instance as a device: its driver's `create` returns the object itself (it cannot
 * be re-created, so a reload never replaces it). Throws ContractError when it has no public method.
 */
export function introspectObject(obj: object, opts: IntrospectOptions = {}): InstrumentDriver {
  const ctor = (obj as { constructor?: unknown }).constructor;
  const cls = isClass(ctor) ? ctor : null;
  const name = opts.name ?? (cls?.name || 'object');
  const docs = classChainDocs(cls, opts.source);
  const names = publicMethods(obj, true);
  if (names.length === 0) throw new ContractError(`${name} has no public methods`);
  const built = buildMethods(obj, names, cls, docs);
  const driver = defineInstrument<ZodObjectAny, unknown>({
    name: NAME_RE.test(name) ? name : 'object',
    version: staticString(cls, 'version') ?? '0.0.0',
    description: staticString(cls, 'description') ?? docs[0]?.description ?? '',
    options: z.object({}),
    create: () => obj,
    methods: built.methods,
    dispose: disposeHook,
  });
  return tag(driver, { optionsFields: [], methods: built.info });
}

/**
 * Sort export names by where the module's source declares them (namespace objects list exports
 * alphabetically, but a deck reads better in the order it was written). Unknown positions go last.
 */
export function sourceOrder(names: string[], source: string | null | undefined): string[] {
  if (!source) return names;
  const esc = (n: string) => n.replace(/[$]/g, '\\$&');
  const pos = (n: string) => {
    const decl = new RegExp(`export\\s+(?:const|let|var|class|function\\*?|async\\s+function)\\s+${esc(n)}\\b`).exec(source);
    if (decl) return decl.index;
    const list = new RegExp(`export\\s*\\{[^}]*\\b${esc(n)}\\b`).exec(source);
    if (list) return list.index + list[0].length;
    const prop = new RegExp(`^\\s*${esc(n)}\\s*[:,(]`, 'm').exec(source); // a key of a default-exported object
    return prop ? prop.index : Number.MAX_SAFE_INTEGER;
  };
  const at = new Map(names.map((n) => [n, pos(n)]));
  return [...names].sort((a, b) => at.get(a)! - at.get(b)!);
}

/** True for values a deck module may export as a zero-config device: an object with public methods. */
export function looksLikeDevice(v: unknown): v is object {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  if (!isPlainObject(v) && !isClass((v as { constructor?: unknown }).constructor)) return false; // zod schemas, Maps, ...
  return publicMethods(v, true).length > 0;
}

export type { Safety };
