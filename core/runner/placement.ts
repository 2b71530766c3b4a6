/**
 * Can any one labdeck start this task? (DESIGN.md §12: a task is claimed only by a host that drives all of
 * its instruments.) With a deck split between two `lab serve` on one database, a workflow that uses the pump
 * of one and the balance of the other would wait in the queue for ever, no host ever taking it; it is refused
 * when queued instead, naming each instrument and the labdeck that drives it.
 */
import { LabError } from '../errors.js';

/** Who drives each instrument: that labdeck (its id in the hosts table and its name); absent when none does now. */
export type Drivers = Map<string, { id: string; name: string }>;

/**
 * Null when one labdeck drives every instrument of `needs` (and, for a runner that takes only its own tasks,
 * that labdeck is `self`); otherwise the conflict to refuse the task with.
 */
export function placementProblem(needs: string[], drivers: Drivers, opts: { self: { id: string; name: string }; ownOnly: boolean; task: string }): LabError | null {
  if (!needs.length) return null;
  const by = needs.map((name) => ({ name, driver: drivers.get(name) ?? null, host: drivers.get(name)?.name ?? null }));
  const ids = new Set(by.map((b) => b.driver?.id ?? null));
  const one = ids.size === 1 && !ids.has(null) ? by[0].driver! : null;
  if (one !== null && (!opts.ownOnly || one.id === opts.self.id)) return null;
  const who = by.map((b) => `${b.name} (${b.host ?? 'no labdeck drives it now'})`).join(', ');
  const why =
    opts.ownOnly && one !== null
      ? `every instrument it uses is driven by ${one.name}, not by this labdeck (${opts.self.name}), which runs only what is queued through it: queue it on ${one.name}`
      : 'no labdeck on this database drives all of its instruments, so none could start it: connect them to one labdeck, or split the workflow';
  return new LabError(
    'conflict',
    `${opts.task} cannot be queued: ${why}. Its instruments: ${who}.`,
    by.map((b) => ({ field: b.name, message: b.host ? `driven by ${b.host}` : 'driven by no labdeck now' })),
    { instruments: Object.fromEntries(by.map((b) => [b.name, b.host])) },
  );
}
