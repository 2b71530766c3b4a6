/**
 * Deck versions (issue 32): what the deck offers (instruments, methods, their arguments and types), as a
 * snapshot; a new numbered version whenever it changes (a driver reloaded, a device connected, an agent's
 * instruments changed), with what changed per method: added, removed, an argument added, removed, renamed
 * or retyped.
 */
import type { InstrumentSchema } from '../contracts/index.js';

/** instrument → { driver, methods: method → { arg → type text }, required } */
export type DeckSnapshot = Record<string, { driver: string; methods: Record<string, { args: Record<string, string>; required: string[] }> }>;

export interface MethodChange {
  instrument: string;
  method?: string;
  change: 'instrument added' | 'instrument removed' | 'added' | 'removed' | 'argument added' | 'argument removed' | 'argument renamed' | 'argument retyped';
  argument?: string;
  /** A renamed argument's new name; a retyped one's types. */
  to?: string;
  from?: string;
}

function typeText(s: unknown): string {
  if (!s || typeof s !== 'object') return 'any';
  const o = s as Record<string, unknown>;
  if (Array.isArray(o.enum)) return `enum(${o.enum.map(String).join('|')})`;
  if (typeof o.type === 'string') return o.type === 'array' ? `array<${typeText(o.items)}>` : o.type;
  if (Array.isArray(o.type)) return o.type.join('|');
  for (const k of ['anyOf', 'oneOf'] as const) if (Array.isArray(o[k])) return (o[k] as unknown[]).map(typeText).join('|');
  return 'any';
}

export function snapshotOf(list: readonly InstrumentSchema[]): DeckSnapshot {
  const out: DeckSnapshot = {};
  for (const i of [...list].sort((a, b) => a.name.localeCompare(b.name))) {
    const methods: DeckSnapshot[string]['methods'] = {};
    for (const m of [...i.methods].sort((a, b) => a.name.localeCompare(b.name))) {
      const props = ((m.params as { properties?: Record<string, unknown> }).properties ?? {}) as Record<string, unknown>;
      const args: Record<string, string> = {};
      for (const k of Object.keys(props).sort()) args[k] = typeText(props[k]);
      methods[m.name] = { args, required: [...(((m.params as { required?: string[] }).required ?? []) as string[])].sort() };
    }
    out[i.name] = { driver: i.driver, methods };
  }
  return out;
}

/** What changed from `a` to `b`, per method. */
export function diffDecks(a: DeckSnapshot, b: DeckSnapshot): MethodChange[] {
  const out: MethodChange[] = [];
  // own keys only: an instrument may be called "constructor" or "toString"
  const own = <T>(o: Record<string, T> | undefined, k: string): T | undefined => (o && Object.hasOwn(o, k) ? o[k] : undefined);
  for (const name of Object.keys(a)) if (!own(b, name)) out.push({ instrument: name, change: 'instrument removed' });
  for (const name of Object.keys(b)) {
    const before = own(a, name);
    if (!before?.methods) {
      out.push({ instrument: name, change: 'instrument added' });
      continue;
    }
    const after = b[name]!;
    for (const m of Object.keys(before.methods)) if (!own(after.methods, m)) out.push({ instrument: name, method: m, change: 'removed' });
    for (const m of Object.keys(after.methods)) {
      const x = own(before.methods, m);
      if (!x?.args) {
        out.push({ instrument: name, method: m, change: 'added' });
        continue;
      }
      const y = after.methods[m]!;
      const gone = Object.keys(x.args).filter((k) => !(k in y.args));
      const fresh = Object.keys(y.args).filter((k) => !(k in x.args));
      // one argument out and one in, of the same type: a rename
      if (gone.length === 1 && fresh.length === 1 && x.args[gone[0]!] === y.args[fresh[0]!]) {
        out.push({ instrument: name, method: m, change: 'argument renamed', argument: gone[0], to: fresh[0] });
      } else {
        for (const k of gone) out.push({ instrument: name, method: m, change: 'argument removed', argument: k });
        for (const k of fresh) out.push({ instrument: name, method: m, change: 'argument added', argument: k });
      }
      for (const k of Object.keys(y.args)) {
        if (k in x.args && x.args[k] !== y.args[k]) out.push({ instrument: name, method: m, change: 'argument retyped', argument: k, from: x.args[k], to: y.args[k] });
      }
    }
  }
  return out;
}

/** One line for a change: `pump.dose: argument volume renamed to volume_ml`. */
export function changeText(c: MethodChange): string {
  const where = c.method ? `${c.instrument}.${c.method}` : c.instrument;
  switch (c.change) {
    case 'argument renamed':
      return `${where}: argument ${c.argument} renamed to ${c.to}`;
    case 'argument retyped':
      return `${where}: argument ${c.argument} is now ${c.to} (was ${c.from})`;
    case 'argument added':
    case 'argument removed':
      return `${where}: ${c.change} ${c.argument}`;
    default:
      return `${where}: ${c.change}`;
  }
}
