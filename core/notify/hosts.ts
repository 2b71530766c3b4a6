/**
 * host_lost: a labdeck whose lease expired is marked stopped by the first host that sees it (core/runner/
 * hosts.ts); with work in flight (a run it was executing), that stop and its alert are one transaction. The
 * same labdeck (machine and kind) registering again resolves it.
 */
import type { HostRow, Store } from '../store/types.js';
import { alerting, alertingWhen, keys, open, resolve } from './events.js';

/** Mark an expired host stopped; true for the one caller that did it. */
export function hostLost(store: Store, h: HostRow, seenBy: string): Promise<boolean> {
  return alertingWhen(store, async (tx) => {
    if (!(await tx.hosts.stop(h.id))) return { result: false, ops: [] };
    const runs = (await tx.runs.orphaned()).filter((r) => r.hostId === h.id);
    if (runs.length === 0) return { result: true, ops: [] };
    const ids = runs.map((r) => r.id).join(', ');
    const message = `${h.name} stopped answering with ${runs.length === 1 ? `run ${ids}` : `runs ${ids}`} in flight (seen by ${seenBy}): its runs are interrupted and wait for a decision.`;
    return { result: true, ops: [open('host_lost', keys.hostLost(h.machine, h.kind), { host: h.name, run_id: runs[0]!.id, task_id: runs[0]!.taskId, message, runs: runs.map((r) => r.id) })] };
  });
}

/** Register this host; a lost one of the same machine and kind is back: its alert resolved. */
export async function hostBack(store: Store, h: Pick<HostRow, 'id' | 'name' | 'kind' | 'machine' | 'pid'>): Promise<void> {
  await alerting(store, [resolve(keys.hostLost(h.machine, h.kind), `${h.name} is back online`)], async (tx) => {
    await tx.hosts.register(h);
  });
}
