/**
 * The OpenAPI fuzzer's values from the API document's schemas (test/full/fuzz.test.ts): valid-looking values
 * (with real names and ids from the lab where a field is one), bodies the lab accepts for the routes whose
 * validation a schema-only body rarely passes, and values broken one way. Every choice is drawn from an `Rng`
 * (test/helpers/fuzz-tape.ts), so fast-check can shrink it.
 */
import type { Rng } from './fuzz-tape.js';
import { FILEPATHS, HUGE, HUGE_UNICODE, RAW_NUMBERS, RawJson, SPECIAL_STRINGS, isPlainObject, jsonText, nested, pointer, withKey, type Doc, type Schema } from './fuzz-values.js';

/** What the lab has: real names and ids, refreshed before each operation. */
export interface Pools {
  instruments: string[];
  methods: Record<string, string[]>;
  drivers: string[];
  workflows: string[];
  stepIds: number[];
  queueIds: number[];
  runIds: number[];
  configFiles: string[];
  historyFiles: string[];
  tokenIds: number[];
  /** Accounts the fuzzer may promote, demote, disable, delete: never the identities under test. */
  userIds: number[];
  staticFiles: string[];
}

export const decode = (x: string) => {
  try {
    return decodeURIComponent(x);
  } catch {
    return x;
  }
};
/** The instrument (or, under /instruments/new/, the driver) a URL names. */
export const pathInstrument = (url: string) => {
  const m = /\/instruments\/(?:new\/)?([^/?]+)/.exec(url)?.[1];
  return m === undefined ? undefined : decode(m);
};

/** The schema-driven value generator over `doc`, drawing real values from `pools` (refreshed in place). */
export function schemaValues(doc: Doc, pools: Pools, driverOptions: Record<string, Schema>) {
  const deref = (s: Schema | undefined): Schema => {
    let x: Schema | undefined = s;
    for (let i = 0; x?.$ref && i < 32; i++) x = pointer(doc, x.$ref) as Schema | undefined;
    return x ?? {};
  };
  const MAX_DEPTH = 5;

  /** Real values for fields whose name says what they are. */
  const hintFor = (rng: Rng, key: string | undefined, ctx: { instrument?: string }): unknown => {
    switch (key) {
      case 'instrument':
        return rng.pick(pools.instruments);
      case 'method': {
        const inst = ctx.instrument && pools.methods[ctx.instrument] ? ctx.instrument : rng.pick(pools.instruments);
        return rng.pick(pools.methods[inst]?.length ? pools.methods[inst] : ['ping']);
      }
      case 'workflow':
        return rng.pick(pools.workflows.length ? pools.workflows : ['fz_ping']);
      case 'optimizer_type':
        return rng.pick(['random', 'sobol', 'gp', 'random', 'nope']);
      case 'config_file':
        return rng.pick(pools.configFiles.length ? pools.configFiles : ['cfg-none.csv']);
      case 'existing_data':
        return rng.pick(pools.historyFiles.length ? pools.historyFiles : ['hist-none.csv']);
      case 'id':
        return rng.pick(pools.queueIds.length ? pools.queueIds : [1]);
      case 'filepath':
        return rng.pick(FILEPATHS);
      case 'device_name':
        return rng.pick(['fz_dev_' + rng.word(4), 'constructor', '__proto__', 'toString', 'new', 'proxy', 'pump', 'a'.repeat(300)]);
      case 'parameters':
        return rng.pick(['x: 0..1', 'x: 0..1, n: int 1..10', 'x: 1..0', 'x: 0..1e309', 'x: a|b|c', 'x:', '..', 'x: 0..1, x: 0..1']);
      case 'objectives':
        return rng.pick(['y:max', 'out:min', 'y:max, y:min', 'nope:max', ':max', 'y:sideways']);
      case 'repeat':
        return rng.pick([1, 2, '1', '2', 3]);
      case 'code':
        return rng.pick(['1 + 1', 'await deck.noop.ping()', 'console.log("hi"); 42', 'const x: number = 3; x * 2', 'throw new Error("boom")', '<script>', 'deck.nope.nothing()', 'process.exit(3)']);
      case 'username':
        return rng.pick(['ada', 'olga', 'nobody_' + rng.word(3), 'x'.repeat(65), 'bad name!', '']);
      case 'password':
      case 'old_password':
        return rng.pick(['wrong password', 'short', '', 'x'.repeat(2000)]);
      case 'new_password':
        return rng.pick(['a new long password', 'short', 'x'.repeat(1025)]);
      case 'mode':
        return rng.pick(['light', 'dark', 'neon']);
      case 'order': {
        const ms = pools.methods[ctx.instrument ?? ''] ?? Object.values(pools.methods).flat();
        return ms.filter(() => rng.chance(0.5));
      }
      case 'direction':
        return rng.pick(['up', 'down', 'top', 'bottom', 'sideways']);
      default:
        return undefined;
    }
  };

  function valid(rng: Rng, s0: Schema | undefined, depth: number, key?: string, ctx: { instrument?: string } = {}): unknown {
    const s = deref(s0);
    if ('const' in s) return s.const;
    if (s.enum) return rng.pick(s.enum);
    if (key && rng.chance(0.75)) {
      const h = hintFor(rng, key, ctx);
      if (h !== undefined) return h;
    }
    const alts = s.oneOf ?? s.anyOf;
    if (alts) return valid(rng, rng.pick(alts), depth, key, ctx);
    if (s.allOf) {
      const parts = s.allOf.map((p) => valid(rng, p, depth, key, ctx));
      return parts.every(isPlainObject) ? Object.assign({}, ...parts) : parts[parts.length - 1];
    }
    let type = s.type;
    if (Array.isArray(type)) type = rng.pick(type);
    if (!type) type = s.properties ? 'object' : s.items ? 'array' : rng.pick(['string', 'integer', 'boolean', 'array', 'object']);
    switch (type) {
      case 'object': {
        const out: Record<string, unknown> = {};
        const req = new Set(s.required ?? []);
        const props = Object.entries(s.properties ?? {});
        // a call body names its instrument first, so its method and args can follow it
        props.sort(([a], [b]) => Number(b === 'instrument') - Number(a === 'instrument'));
        const inner = { ...ctx };
        for (const [k, ps] of props) {
          if (k === 'instrument' && typeof out.instrument === 'string') continue;
          if (req.has(k) || (depth < MAX_DEPTH && rng.chance(0.5))) {
            out[k] = valid(rng, ps, depth + 1, k, inner);
            if (k === 'instrument' && typeof out[k] === 'string') inner.instrument = out[k] as string;
          }
        }
        const extra = s.additionalProperties;
        if (extra && typeof extra === 'object' && depth < MAX_DEPTH && rng.chance(0.3)) out[rng.word(4)] = valid(rng, extra, depth + 1);
        return out;
      }
      case 'array': {
        const n = depth >= MAX_DEPTH ? (s.minItems ?? 0) : rng.int(s.minItems ?? 0, Math.min(s.maxItems ?? 3, 3));
        return Array.from({ length: n }, () => valid(rng, s.items, depth + 1));
      }
      case 'integer':
      case 'number': {
        const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (type === 'integer' ? 1 : 0.001) : undefined);
        const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (type === 'integer' ? 1 : 0.001) : undefined);
        let v: number;
        if (lo !== undefined && hi !== undefined && hi - lo <= 1000) v = lo + rng.float() * (hi - lo);
        else if (lo !== undefined) v = lo + rng.float() * 10;
        else if (hi !== undefined) v = hi - rng.float() * 10;
        else v = rng.pick([0, 1, 2.5, 10, -3, 100]);
        return type === 'integer' ? Math.round(v) : Math.round(v * 1000) / 1000;
      }
      case 'boolean':
        return rng.chance(0.5);
      case 'null':
        return null;
      default: {
        if (s.pattern === '^[A-Za-z_][A-Za-z0-9_-]*$' || key === 'name' || key === 'save_as') return `fz_${rng.word(5)}`;
        let v = rng.pick(['alpha', 'x', 'y', 'mass', 'out', rng.word(), `${rng.word()} ${rng.word()}`]);
        if (s.minLength && v.length < s.minLength) v = v.padEnd(s.minLength, 'x');
        if (s.maxLength !== undefined) v = v.slice(0, s.maxLength);
        return v;
      }
    }
  }

  /**
   * Bodies the lab accepts, for operations where a schema-only body rarely gets past validation (a run needs
   * a saved workflow, a campaign a search space over its parameters): half of the valid-looking bodies, and
   * the starting point of half of the broken ones, so the fuzz reaches the code behind the validation.
   */
  const template = (rng: Rng, opKey: string, url: string): unknown => {
    const inst = pathInstrument(url) ?? '';
    const methods = pools.methods[inst] ?? [];
    const wfDoc = (name?: string) => ({
      ...(name ? { name } : {}),
      description: rng.pick(['', 'fuzzed', '<b>bold</b>']),
      parameters: [{ name: 'x', type: 'number', default: 1 }],
      outputs: ['out'],
      main: [
        { kind: 'call', instrument: 'noop', method: 'ping', save_as: 'out' },
        ...(rng.chance(0.5) ? [{ kind: 'repeat', times: rng.int(0, 2), steps: [{ kind: 'call', instrument: 'stirrer', method: 'set_speed', args: { rpm: { param: 'x' } } }] }] : []),
      ],
    });
    switch (opKey) {
      case 'POST /app/executions/config':
        return rng.pick([
          { workflow: 'fz_ping', repeat: rng.int(1, 3) },
          { workflow: 'fz_ping', config: [{ x: 0.1 }, { x: 2 }], name: `fz run ${rng.word(3)}` },
          { workflow: 'fz_ping', config_file: rng.pick(pools.configFiles.length ? pools.configFiles : ['none.csv']) },
          { workflow: 'fz_olga', repeat: 1 },
        ]);
      case 'POST /app/executions/campaign':
        return {
          workflow: 'fz_camp',
          repeat: rng.int(1, 3),
          optimizer_type: rng.pick(['random', 'sobol', 'gp']),
          parameters: rng.pick(['x: 0..1', [{ name: 'x', type: 'range', bounds: [0, 1] }]]),
          objectives: rng.pick(['y:max', [{ name: 'y', minimize: true }]]),
          ...(rng.chance(0.3) ? { existing_data: rng.pick(pools.historyFiles.length ? pools.historyFiles : ['none.csv']) } : {}),
          ...(rng.chance(0.3) ? { batch_size: rng.int(1, 2), seed: rng.int(0, 9) } : {}),
        };
      case 'POST /app/executions/optimizer_schema':
        return rng.pick([{}, { optimizer_type: rng.pick(['random', 'sobol', 'gp']) }]);
      case 'POST /app/workflows':
        return wfDoc(`fz_wf_${rng.word(5)}`);
      case 'PUT /app/workflows/{name}': {
        const name = decode(/\/workflows\/([^/?]+)/.exec(url)?.[1] ?? '');
        return wfDoc(rng.chance(0.5) ? name : undefined);
      }
      case 'POST /app/instruments/{instrument}/actions/order': {
        const order = [...methods];
        for (let i = order.length - 1; i > 0; i--) {
          const j = rng.int(0, i);
          [order[i], order[j]] = [order[j], order[i]];
        }
        return { order: order.slice(0, rng.int(0, order.length)) };
      }
      // each takes its own fields only (another is refused by name)
      case 'POST /app/executions/queue/delete':
        return { id: rng.pick(pools.queueIds.length ? pools.queueIds : [1]) };
      case 'POST /app/executions/queue/reorder':
        return { id: rng.pick(pools.queueIds.length ? pools.queueIds : [1]), direction: rng.pick(['up', 'down', 'top', 'bottom']) };
      case 'POST /app/executions/queue/task/rename':
        return { id: rng.pick(pools.queueIds.length ? pools.queueIds : [1]), new_name: `renamed ${rng.word(4)}` };
      case 'POST /app/auth/signup':
        return { username: `fz_${rng.word(6)}`, password: 'a long enough password' };
      case 'POST /app/instruments/new/{instrument}':
        return { device_name: `fz_dev_${rng.word(5)}`, kwargs: valid(rng, driverOptions[inst] ?? { type: 'object' }, 1) };
      default:
        return undefined;
    }
  };

  /** Every path into a value (objects and arrays), to pick a place to break. */
  const pathsOf = (v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] => {
    if (at.length > 6) return out;
    const children: [string | number, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : isPlainObject(v) ? Object.entries(v) : [];
    for (const [k, x] of children) {
      out.push([...at, k]);
      pathsOf(x, [...at, k], out);
    }
    return out;
  };
  const setAt = (root: unknown, path: (string | number)[], value: unknown): unknown => {
    if (!path.length) return value;
    let node = root as Record<string | number, unknown>;
    for (const p of path.slice(0, -1)) node = node[p] as Record<string | number, unknown>;
    const last = path[path.length - 1];
    if (isPlainObject(node)) withKey(node, String(last), value);
    else (node as unknown as unknown[])[last as number] = value;
    return root;
  };
  const wrongValue = (rng: Rng, old: unknown): unknown => {
    const choices: unknown[] = [null, true, 0, -1, 'text', [], {}, [1, 'a'], { nested: { deeper: 1 } }, new RawJson(rng.pick(RAW_NUMBERS)), rng.pick(SPECIAL_STRINGS)];
    return rng.pick(choices.filter((c) => typeof c !== typeof old || Array.isArray(c) !== Array.isArray(old)));
  };

  type Mutation = 'wrong-type' | 'drop-required' | 'extra-field' | 'huge-string' | 'deep-nesting' | 'bad-number' | 'special-string';
  const MUTATIONS: Mutation[] = ['wrong-type', 'drop-required', 'extra-field', 'huge-string', 'deep-nesting', 'bad-number', 'special-string'];

  /** A valid-looking value broken one way; returns the value and what was done. */
  function mutate(rng: Rng, value: unknown, schema: Schema): [unknown, string] {
    const s = deref(schema);
    const m = rng.pick(MUTATIONS);
    const v = isPlainObject(value) || Array.isArray(value) ? value : {};
    const paths = pathsOf(v);
    // fields the schema knows but the value lacks are places to break too
    for (const k of Object.keys(s.properties ?? {})) if (!paths.some((p) => p.length === 1 && p[0] === k)) paths.push([k]);
    const at = paths.length ? rng.pick(paths) : ['field'];
    const where = at.join('.');
    const old = paths.length ? at.reduce<unknown>((n, p) => (n as Record<string | number, unknown> | undefined)?.[p], v) : undefined;
    switch (m) {
      case 'wrong-type':
        return [setAt(v, at, wrongValue(rng, old)), `wrong type at ${where}`];
      case 'drop-required': {
        const req = s.required ?? [];
        if (isPlainObject(v) && req.length) {
          const drop = rng.chance(0.5) ? req : [rng.pick(req)];
          for (const k of drop) delete v[k];
          return [v, `missing ${drop.join(', ')}`];
        }
        return [{}, 'empty object'];
      }
      case 'extra-field': {
        const key = rng.pick(['__proto__', 'constructor', 'prototype', 'unknown_field', '$where', 'toString', 'a'.repeat(300)]);
        const val = rng.pick<unknown>([{ polluted: true, isAdmin: true }, 'x', 1, null, [1]]);
        if (isPlainObject(v)) return [withKey(v, key, val), `extra field ${key.slice(0, 20)}`];
        return [withKey({}, key, val), `object with only ${key.slice(0, 20)}`];
      }
      case 'huge-string':
        return [setAt(v, at, rng.chance(0.7) ? HUGE : HUGE_UNICODE), `100 kB string at ${where}`];
      case 'deep-nesting':
        return [setAt(v, at, nested(200, rng.pick(['1', '"x"', 'null', '{}']))), `200 levels of nesting at ${where}`];
      case 'bad-number':
        return [setAt(v, at, rng.chance(0.7) ? new RawJson(rng.pick(RAW_NUMBERS)) : rng.pick(['NaN', 'Infinity', '-Infinity', '1e3', '0x10', ' 1 ', '1_000'])), `hostile number at ${where}`];
      case 'special-string':
        return [setAt(v, at, rng.pick(SPECIAL_STRINGS)), `hostile string at ${where}`];
    }
  }

  /** Form fields of a value: strings as they are, arrays as repeated keys, objects as JSON text. */
  const formPairs = (v: unknown): [string, string][] => {
    if (!isPlainObject(v)) return [['value', typeof v === 'string' ? v : jsonText(v)]];
    const out: [string, string][] = [];
    for (const [k, x] of Object.entries(v)) {
      if (Array.isArray(x)) for (const e of x) out.push([k, typeof e === 'string' ? e : jsonText(e)]);
      else if (x === undefined) continue;
      else out.push([k, typeof x === 'string' ? x : x instanceof RawJson ? x.text : isPlainObject(x) ? jsonText(x) : String(x)]);
    }
    return out;
  };
  const formText = (pairs: [string, string][]) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '?'))}`).join('&');

  /** A call body as a form: method + one text field per parameter (the page's form). */
  const callForm = (rng: Rng, instrument: string | undefined, withInstrument: boolean): [string, string][] => {
    const inst = instrument && pools.methods[instrument] ? instrument : rng.pick(pools.instruments);
    const method = rng.pick(pools.methods[inst]?.length ? pools.methods[inst] : ['ping']);
    const args = valid(rng, doc.components.schemas[`Args.${inst}.${method}`] ?? { type: 'object' }, 1);
    return [...(withInstrument ? [['instrument', inst] as [string, string]] : []), ['method', method], ...formPairs(args)];
  };

  return { deref, hintFor, valid, template, mutate, formPairs, formText, callForm };
}
export type SchemaValues = ReturnType<typeof schemaValues>;
