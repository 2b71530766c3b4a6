/**
 * The OpenAPI fuzzer's requests (test/full/fuzz.test.ts): path parameters from real names and ids and junk,
 * query strings, and bodies of every kind an operation takes (or not): JSON, forms, text, multipart uploads,
 * valid-looking and broken. Every choice is drawn from an `Rng` (test/helpers/fuzz-tape.ts).
 */
import type { Rng } from './fuzz-tape.js';
import { decode, pathInstrument, schemaValues, type Pools } from './fuzz-schema.js';
import {
  CSV_FILES,
  FILE_NAMES,
  HUGE,
  JUNK_SEGMENTS,
  LOGOS,
  MALFORMED_MULTIPART,
  QUERY_HINTS,
  SPECIAL_STRINGS,
  WHOLE_BODIES,
  jsonText,
  type Body,
  type Doc,
  type Operation,
  type Param,
  type Schema,
} from './fuzz-values.js';

export const contentOf = (op: Operation) => op.requestBody?.content ?? {};

/**
 * The request generator over `doc`; `pools` is the lab's state (refreshed in place); `tokenId` is the fuzzer's
 * own API token, never revoked (its requests would all become 401).
 */
export function requestValues(doc: Doc, pools: Pools, driverOptions: Record<string, Schema>, tokenId: number) {
  const { deref, hintFor, valid, template, mutate, formPairs, formText, callForm } = schemaValues(doc, pools, driverOptions);

  // ---- path and query parameters ---------------------------------------------------------------
  const pathValue = (rng: Rng, name: string, path: string, preferReal = false): string => {
    const real = (): (string | number)[] => {
      switch (name) {
        case 'instrument':
          return path.includes('/instruments/new/') ? pools.drivers : pools.instruments;
        case 'function':
          return Object.values(pools.methods).flat();
        case 'task_id':
          return path.includes('/executions/') ? pools.queueIds : pools.stepIds;
        case 'id':
          return pools.tokenIds;
        case 'user_id':
          return pools.userIds;
        case 'name':
          return pools.workflows;
        case 'workflow_id':
          return pools.runIds;
        case 'filename':
          return [...pools.configFiles, ...pools.historyFiles, ...pools.runIds.map((i) => `run-${i}.csv`)];
        case 'file':
          return path.includes('/vendor/') ? ['bootstrap.min.css', 'htmx.min.js', 'Sortable.min.js', 'uPlot.min.css'] : pools.staticFiles;
        default:
          return [];
      }
    };
    const r = real();
    if (r.length && (preferReal || rng.chance(0.6))) return encodeURIComponent(String(rng.pick(r)));
    const junk = [...JUNK_SEGMENTS];
    if (name === 'filename') junk.push('run-0.csv', 'run-99999999999.csv', 'run-1e3.csv', 'cfg-.csv', '.csv', 'run-99999999999999999999.csv');
    return rng.pick(junk);
  };

  /**
   * A path with its parameters filled in: real names and ids or junk; a method of the instrument the path
   * names; `junk` forces one parameter to a value. The fuzzer's own API token is never revoked (its
   * requests would all become 401).
   */
  function fillPath(rng: Rng, path: string, preferReal: boolean, junk?: { name: string; value: string }): string {
    const chosen: Record<string, string> = {};
    return path.replace(/\{(\w+)\}/g, (_, name: string) => {
      let v: string;
      if (junk?.name === name) v = junk.value;
      else if (name === 'function' && pools.methods[decode(chosen.instrument ?? '')]?.length && (preferReal || rng.chance(0.7)))
        v = encodeURIComponent(rng.pick(pools.methods[decode(chosen.instrument ?? '')]));
      else if (name === 'id' && path.includes('/account/tokens/')) {
        v = preferReal && pools.tokenIds.length ? String(rng.pick(pools.tokenIds)) : pathValue(rng, name, path);
        if (v === String(tokenId)) v = '99999999999';
      } else v = pathValue(rng, name, path, preferReal);
      chosen[name] = v;
      return v;
    });
  }

  const queryString = (rng: Rng, params: Param[]): string => {
    const parts: string[] = [];
    for (const p of params.filter((x) => x.in === 'query')) {
      if (!rng.chance(0.45)) continue;
      let v: string;
      if (p.name === 'workflow') v = rng.chance(0.7) ? rng.pick(pools.workflows) : rng.pick(SPECIAL_STRINGS);
      else if (QUERY_HINTS[p.name] && rng.chance(0.75)) v = rng.pick(QUERY_HINTS[p.name]);
      else if (p.schema?.enum && rng.chance(0.5)) v = String(rng.pick(p.schema.enum));
      else v = rng.pick(SPECIAL_STRINGS);
      const enc = encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '?'));
      parts.push(`${p.name}=${enc}`);
      if (rng.chance(0.12)) parts.push(`${p.name}=${enc}x`); // a repeated key: an array
    }
    if (rng.chance(0.05)) parts.push(`${rng.pick(['format', 'page', 'workflow'])}=%ZZ`);
    return parts.length ? `?${parts.join('&')}` : '';
  };

  const multipartBody = (rng: Rng, path: string, wantValid: boolean): [Body, string, boolean] => {
    const logo = path.endsWith('/customize-logo');
    const fields: [string, string][] = [];
    const files: { field: string; name: string; data: Buffer }[] = [];
    const notes: string[] = [];
    if (logo) {
      if (rng.chance(0.7)) {
        const [what, data] = rng.pick(LOGOS);
        files.push({ field: rng.chance(0.85) ? 'logo' : 'file', name: rng.pick(['logo.png', '../../logo.png', '']), data });
        notes.push(`logo ${what}`);
      }
      if (rng.chance(0.6)) fields.push(['mode', String(hintFor(rng, 'mode', {}))]);
    } else if (wantValid) {
      // a file the route takes: a config for fz_ping, or a history (parameter x, output out)
      const config = path.endsWith('/batch-configs');
      files.push({ field: 'file', name: rng.pick(FILE_NAMES), data: Buffer.from(config ? 'x\n0.1\n0.2\n' : 'x,out\n0.1,1\n0.2,2\n') });
      if (rng.chance(0.5)) fields.push(['workflow', 'fz_ping']);
      return [{ kind: 'multipart', fields, files }, `a valid ${config ? 'config' : 'history'} CSV`, true];
    } else {
      if (rng.chance(0.85)) {
        const [what, data] = rng.pick(CSV_FILES);
        files.push({ field: rng.chance(0.85) ? 'file' : rng.pick(['files', 'upload', 'file[]']), name: rng.pick(FILE_NAMES), data });
        notes.push(`csv ${what}`);
      }
      if (rng.chance(0.5)) fields.push(['workflow', rng.chance(0.7) ? rng.pick(pools.workflows) : rng.pick(SPECIAL_STRINGS)]);
      if (rng.chance(0.1)) {
        files.push({ field: 'file', name: 'second.csv', data: Buffer.from('x\n1\n') });
        notes.push('two files');
      }
    }
    if (rng.chance(0.1)) {
      for (let i = 0; i < 12; i++) fields.push([`f${i}`, 'x']);
      notes.push('12 fields');
    }
    if (rng.chance(0.1)) {
      fields.push([rng.pick(['__proto__', 'constructor', 'workflow']), rng.chance(0.5) ? 'x'.repeat(5000) : 'x']);
      notes.push('odd field');
    }
    return [{ kind: 'multipart', fields, files }, notes.join(', ') || 'empty multipart', true];
  };

  /** A body for the operation: valid-looking or broken, of one of the kinds it takes (or not). */
  function makeBody(rng: Rng, opKey: string, op: Operation, path: string, url: string, wantValid: boolean): [Body, string, boolean] {
    const content = contentOf(op);
    const kinds = Object.keys(content);
    if (!kinds.length) {
      // no body documented: mostly none, sometimes junk anyway
      if (wantValid || rng.chance(0.6)) return [{ kind: 'none' }, 'no body', true];
      const [text, note, ok] = rng.pick(WHOLE_BODIES);
      return [{ kind: 'json', text, wellFormed: ok }, `unexpected body: ${note}`, ok];
    }
    // sometimes a kind the operation does not take
    if (!wantValid && rng.chance(0.12)) {
      const other = rng.pick(['application/json', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data', 'application/xml'].filter((k) => !kinds.includes(k)));
      if (other === 'application/json') return [{ kind: 'json', text: jsonText({ method: 'ping', x: 1 }), wellFormed: true }, 'JSON where not taken', true];
      if (other === 'application/x-www-form-urlencoded') return [{ kind: 'form', text: 'method=ping&x=1&workflow=fz_ping' }, 'form where not taken', true];
      if (other === 'text/plain') return [{ kind: 'text', text: rng.pick(['1+1', 'hello', HUGE]) }, 'text where not taken', true];
      if (other === 'multipart/form-data')
        return [{ kind: 'multipart', fields: [['x', '1']], files: [{ field: 'file', name: 'a.csv', data: Buffer.from('x\n1\n') }] }, 'multipart where not taken', true];
      return [{ kind: 'raw', contentType: other, text: '<x>1</x>' }, `${other} where not taken`, true];
    }
    const kind = rng.pick(kinds);
    const schema = content[kind].schema;
    const ctx = { instrument: pathInstrument(url) };
    if (kind === 'multipart/form-data') {
      if (!wantValid && rng.chance(0.2)) {
        const [ct, text] = rng.pick(MALFORMED_MULTIPART);
        return [{ kind: 'raw', contentType: ct, text }, 'malformed multipart', false];
      }
      return multipartBody(rng, path, wantValid);
    }
    if (kind === 'text/plain') {
      const code = wantValid ? String(hintFor(rng, 'code', {})) : rng.pick([...SPECIAL_STRINGS, HUGE]);
      return [{ kind: 'text', text: code }, 'text body', true];
    }
    if (kind === 'application/x-www-form-urlencoded') {
      let pairs: [string, string][];
      const isCall = /\/instruments\/(\{instrument\}|)$/.test(path) || op['x-labdeck-live'];
      if (isCall) pairs = callForm(rng, ctx.instrument, path.endsWith('/instruments/'));
      else if (path.endsWith('/instruments/new/{instrument}')) {
        const driver = pathInstrument(url) ?? '';
        pairs = [['device_name', String(hintFor(rng, 'device_name', {}))], ...formPairs(valid(rng, driverOptions[driver] ?? { type: 'object' }, 1))];
      } else if (path.endsWith('/executions/config')) {
        // the page's form: a repeat count, or typed rows `rows[i][param]`
        const good = wantValid || rng.chance(0.5);
        pairs = good ? [['workflow', 'fz_ping']] : formPairs(valid(rng, schema, 0, undefined, ctx)).filter(([k]) => k !== 'repeat');
        if (rng.chance(0.5)) pairs.push(['repeat', good ? String(rng.int(1, 3)) : rng.pick(['0', '-1', 'abc', '99999999999', '1e3', ' '])]);
        else
          for (let i = 0; i < rng.int(1, 3); i++)
            pairs.push(
              good
                ? [`rows[${i}][x]`, String(rng.int(0, 9) / 10)]
                : [`rows[${rng.pick([0, 1, 99999, 100000])}][${rng.pick(['x', 'y', '__proto__', 'constructor'])}]`, rng.pick(['0.5', 'abc', '', HUGE])],
            );
      } else if (path.endsWith('/executions/campaign')) {
        // the page's form: the short text forms, or the structured fields param.<name>.* and objective.<name>
        const good = wantValid || rng.chance(0.5);
        pairs = good
          ? [
              ['workflow', 'fz_camp'],
              ['repeat', String(rng.int(1, 3))],
              ['optimizer_type', rng.pick(['random', 'sobol', 'gp'])],
              ['parameters', 'x: 0..1'],
              ['objectives', 'y:max'],
            ]
          : formPairs(valid(rng, schema, 0, undefined, ctx));
        if (rng.chance(0.5)) {
          pairs = pairs.filter(([k]) => k !== 'parameters' && k !== 'objectives' && k !== 'config');
          if (good) pairs.push(['param.x.use', 'on'], ['param.x.type', 'range'], ['param.x.low', '0'], ['param.x.high', '1'], ['objective.y', rng.pick(['max', 'min'])]);
          else {
            pairs.push(
              ['param.x.use', rng.pick(['on', 'true', 'off'])],
              ['param.x.type', rng.pick(['range', 'int', 'choice', 'bogus'])],
              ['param.x.low', rng.pick(['0', '-1', 'abc', ''])],
              ['param.x.high', rng.pick(['1', '1e999', 'abc'])],
            );
            pairs.push([`objective.${rng.pick(['y', 'out', '__proto__', 'constructor'])}`, rng.pick(['max', 'min', 'sideways'])]);
          }
          if (rng.chance(0.5)) pairs.push([`config.${rng.pick(['seed', 'initial_points', '__proto__', 'xi'])}`, good ? '1' : rng.pick(['abc', '-5', '1e999'])]);
        }
      } else pairs = formPairs((rng.chance(0.5) ? template(rng, opKey, url) : undefined) ?? valid(rng, schema, 0, undefined, ctx));
      let note = 'form';
      if (!wantValid) {
        const m = rng.int(0, 6);
        if (m === 0 && pairs.length) {
          const i = rng.int(0, pairs.length - 1);
          pairs.push([pairs[i][0], rng.pick(SPECIAL_STRINGS)]);
          note = `form, ${pairs[i][0]} repeated (an array)`;
        } else if (m === 1 && pairs.length) {
          pairs.splice(rng.int(0, pairs.length - 1), 1);
          note = 'form, a field missing';
        } else if (m === 2) {
          pairs.push([rng.pick(['__proto__', 'constructor', 'prototype', 'a[b]', 'toString', '__proto__[isAdmin]']), rng.pick(['1', 'true', HUGE])]);
          note = 'form, odd extra field';
        } else if (m === 3 && pairs.length) {
          const i = rng.int(0, pairs.length - 1);
          pairs[i] = [pairs[i][0], rng.chance(0.5) ? HUGE : rng.pick(SPECIAL_STRINGS)];
          note = `form, hostile ${pairs[i][0]}`;
        } else if (m === 4) {
          // over 1000 fields is refused by the body parser (400), before the login check
          const text = rng.pick(['%ZZ=%ZZ', '=&=&&', 'a', '&&&', `${'k=v&'.repeat(1200)}`]);
          return [{ kind: 'form', text }, 'form, malformed', text.length < 1000];
        } else if (m === 5) {
          pairs = [];
          note = 'form, empty';
        } else {
          pairs = pairs.map(([k, v]) => [k, rng.chance(0.5) ? rng.pick(SPECIAL_STRINGS) : v]);
          note = 'form, hostile values';
        }
      }
      return [{ kind: 'form', text: formText(pairs) }, note, true];
    }
    // JSON
    const known = rng.chance(0.5) ? template(rng, opKey, url) : undefined;
    let value = known ?? valid(rng, schema, 0, undefined, ctx);
    let note = 'valid-looking JSON';
    if (!wantValid) {
      if (rng.chance(0.2)) {
        const [text, what, ok] = rng.pick(WHOLE_BODIES);
        return [{ kind: 'json', text, wellFormed: ok }, what, ok];
      }
      [value, note] = mutate(rng, value, schema);
    }
    return [{ kind: 'json', text: jsonText(value), wellFormed: true }, note, true];
  }

  return { deref, valid, template, makeBody, fillPath, queryString };
}
