/**
 * Loading TypeScript/JavaScript modules at run time, and finding the instrument drivers they export.
 *
 * Modules are loaded with jiti 2 with its module cache off, so loading a file again after an edit runs the
 * new code (and re-reads the files it imports). jiti works inside jest's ESM vm mode too, so the same path
 * is used in tests. labdeck's own compiled modules (dist/: the first-party plugins, the demo deck) are
 * imported as they are: they change only with labdeck, and jiti is then loaded only for a lab's own plugins
 * (start-up). Every failure becomes LabError('invalid_input') naming the file and the loader's message.
 */
import { existsSync, statSync } from 'node:fs';
import { extname, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { createJiti } from 'jiti';
import { defineInstrument, isInstrumentDriver, type InstrumentDriver } from '../contracts/index.js';
import { LabError } from '../errors.js';
import { introspectClass, isClass, moduleSource } from '../deck/introspect.js';
import { errorText, isErrorClass } from '../deck/util.js';
import { codeRoot, ownModule, projectRoot } from '../paths.js';

export const MODULE_EXTENSIONS = ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'];

/**
 * Bare specifiers a plugin may import from any folder, mapped to files of this labdeck: a plugin folder
 * outside the package has no node_modules, so `import { defineInstrument, z } from 'labdeck/contracts'`
 * resolves here, to the very module the first-party plugins use.
 */
export function pluginAliases(): Record<string, string> {
  return { 'labdeck/contracts': ownModule('core/contracts/index') };
}

let jiti: ReturnType<typeof createJiti> | null = null;
async function jitiImport(abs: string): Promise<unknown> {
  // moduleCache off: every import re-evaluates (real reload); interopDefault off: a plain namespace back.
  jiti ??= (await import('jiti')).createJiti(import.meta.url, { moduleCache: false, interopDefault: false, alias: pluginAliases() });
  return jiti.import(abs);
}

/** A module labdeck itself compiled (running from dist/, where nothing but labdeck's own files are). */
export const isOwnCompiled = (abs: string): boolean => codeRoot !== projectRoot && abs.endsWith('.js') && abs.startsWith(codeRoot + sep);

const fail = (file: string, message: string) => new LabError('invalid_input', `Cannot load ${file}: ${message}`, [{ field: 'filepath', message }], { file });

/** Check that `file` names a module file; returns its absolute path. */
export function checkModuleFile(file: string): string {
  const abs = resolve(file);
  if (!existsSync(abs)) throw fail(abs, 'no such file');
  if (!statSync(abs).isFile()) throw fail(abs, 'not a file');
  if (!MODULE_EXTENSIONS.includes(extname(abs))) {
    throw fail(abs, `not a JavaScript or TypeScript module (expected ${MODULE_EXTENSIONS.join(', ')})`);
  }
  return abs;
}

export interface LoadedModule {
  file: string;
  /** Export name → value (`default` included when present). */
  exports: Record<string, unknown>;
}

/** Load (or load again, fresh) a module file. */
export async function loadModule(file: string): Promise<LoadedModule> {
  const abs = checkModuleFile(file);
  let mod: unknown;
  try {
    mod = isOwnCompiled(abs) ? await import(pathToFileURL(abs).href) : await jitiImport(abs);
  } catch (e) {
    const msg = errorText(e);
    throw fail(abs, msg.replace(/\s+/g, ' ').trim());
  }
  const exports: Record<string, unknown> = {};
  if (mod && (typeof mod === 'object' || typeof mod === 'function')) {
    for (const k of Object.keys(mod)) {
      if (k !== '__esModule') exports[k] = (mod as Record<string, unknown>)[k];
    }
  }
  return { file: abs, exports };
}

/** Iterate exports with `default` last, skipping values already seen (a driver exported twice). */
function* uniqueExports(exports: Record<string, unknown>): Generator<[string, unknown]> {
  const seen = new Set<unknown>();
  const keys = Object.keys(exports).filter((k) => k !== 'default');
  if ('default' in exports) keys.push('default');
  for (const k of keys) {
    const v = exports[k];
    if (v === undefined || v === null || seen.has(v)) continue;
    seen.add(v);
    yield [k, v];
  }
}

/** Does the module export anything tagged by a labdeck contract (a driver, an optimizer, ...)? */
export function hasTaggedExports(exports: Record<string, unknown>): boolean {
  return Object.values(exports).some((v) => !!v && typeof v === 'object' && Object.getOwnPropertySymbols(v).some((s) => Symbol.keyFor(s)?.startsWith('labdeck.')));
}

export interface FoundDrivers {
  drivers: InstrumentDriver[];
}

/**
 * The instrument drivers a module exports: `defineInstrument` results (re-checked here: contract version,
 * names, schemas) and plain classes with public methods (zero-config). With `classes: 'untagged-only'`,
 * classes count only in modules that export no tagged item, so helper classes beside a real driver (or an
 * optimizer) are not mistaken for instruments. Throws LabError invalid_input when a driver fails its checks.
 */
export function findDrivers(mod: LoadedModule, classes: 'always' | 'untagged-only' = 'always'): InstrumentDriver[] {
  const out: InstrumentDriver[] = [];
  const useClasses = classes === 'always' || !hasTaggedExports(mod.exports);
  let source: string | null | undefined;
  for (const [name, v] of uniqueExports(mod.exports)) {
    try {
      if (isInstrumentDriver(v)) {
        defineInstrument({ ...v }); // the same checks as at definition, against this host's contract
        out.push(v);
      } else if (useClasses && isClass(v)) {
        source ??= moduleSource(mod.file);
        if (isErrorClass(v)) continue;
        try {
          out.push(introspectClass(v, { name: v.name || name, source }));
        } catch (e) {
          if (/has no public methods/.test(errorText(e))) continue; // a helper class: not an instrument
          throw e;
        }
      }
    } catch (e) {
      throw fail(mod.file, `export "${name}": ${errorText(e)}`);
    }
  }
  return out;
}
