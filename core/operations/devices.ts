/**
 * Operations on the deck's devices (DESIGN.md §7 "Temporary devices", §15): the drivers it can connect, a
 * module or deck imported from a path on the server (admins; audited `import.module|deck`, and
 * `….failed` with the message when it is refused), and a temporary device connected (audited `device.connect`).
 */
import type { DriverInfo } from '../deck/index.js';
import { LabError, isLabError } from '../errors.js';
import type { Caller } from './caller.js';
import { audit, type Lab } from './lab.js';

export function deviceOperations(lab: Lab) {
  const { deck } = lab;
  return {
    drivers(): DriverInfo[] {
      return deck.drivers();
    },

    /** What an imported file added to the deck: its instruments and drivers. */
    addedBy(file: string): { instruments: string[]; drivers: string[] } {
      return deck.addedBy(file);
    },

    /** Import a module (its drivers) or a deck (its devices) from a path on the server: the file, and what it added. */
    async import(caller: Caller, kind: 'module' | 'deck', given: string): Promise<{ file: string; instruments: string[]; drivers: string[] }> {
      const filepath = given.trim();
      try {
        if (!filepath) throw new LabError('invalid_input', 'filepath is required: the path of a .py, .ts or .js module on the server.', [{ field: 'filepath', message: 'required' }]);
        const names = kind === 'module' ? await deck.importModule(filepath) : await deck.importDeck(filepath);
        await audit(lab, caller, `import.${kind}`, { filepath, names });
        const file = deck.fileOf(kind, names, filepath);
        return { file, ...deck.addedBy(file) };
      } catch (e) {
        await audit(lab, caller, `import.${kind}.failed`, { filepath, error: isLabError(e) ? e.message : e instanceof Error ? e.message : String(e) });
        throw e;
      }
    },

    /** Connect a temporary device of `driver` named `name` with its options (409 when the name is taken). */
    async connect(caller: Caller, driver: string, name: string, options: Record<string, unknown>): Promise<void> {
      await deck.connect(driver, name, options);
      await audit(lab, caller, 'device.connect', { driver, device: name, options });
    },
  };
}
