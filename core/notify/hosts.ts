/**
 * host_lost: a labdeck whose lease expired is marked stopped by the first host that sees it (core/runner/
 * hosts.ts); with work in flight (a run it was executing), that stop and its alert are one transaction, and so
 * is the release of the deliveries its deliverer had claimed. The same labdeck (machine and kind) registering
 * again resolves it.
 */
import type { HostRow, Store } from '../store/types.js';
import { alerting, alertingWhen, alertOnly, keys, open, resolve } from './events.js';

/** Mark an expired host stopped; true for the one caller that did it. */
export function hostLost(store: Store, h: HostRow, seenBy: string): Promise<boolean> {
  return alertingWhen(store, async (tx) => {
    if (!(await tx.hosts.stop(h.id))) return { result: false, ops: [] };
    // what its deliverer had claimed and not marked goes out again now, not once the claims run out
    await tx.outbox.release(h.id, new Date());
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

/**
 * A `lab agent` whose connection ended with calls in flight (core/hosts/agent.ts). The disconnect is no
 * database write, so the alert is written on its own; the calls fail in-doubt and their steps raise
 * step_failed as any failed step does. A run with a step on one of the agent's `instruments` in flight is
 * named (its page is the link, and its end resolves the alert: the work is settled); else the link is the
 * instruments page, which shows them offline.
 */
export async function agentLost(store: Store, agent: string, instruments: string[], calls: number, reason: string): Promise<void> {
  const names = new Set(instruments);
  const steps = names.size ? (await store.attention.openSteps()).filter((s) => names.has(s.instrument) && s.runStatus === 'running') : [];
  const runs = [...new Set(steps.map((s) => s.runId))];
  const last = steps.at(-1);
  const where = runs.length === 0 ? '' : runs.length === 1 ? ` (run ${runs[0]})` : ` (runs ${runs.join(', ')})`;
  const message = `The agent ${agent} went away with ${calls === 1 ? 'a call' : `${calls} calls`} in flight${where} (${reason}): its instruments are offline and the calls are in doubt.`;
  const ctx = last
    ? { host: agent, run_id: last.runId, task_id: last.taskId, message, runs, instruments, instrument: last.instrument, method: last.method }
    : { host: agent, message, instruments, link: '/app/instruments/' };
  await alertOnly(store, [open('host_lost', keys.agentLost(agent), ctx)]);
}

/** The agent connected again: its host_lost alert (if any) resolved. */
export function agentBack(store: Store, agent: string): Promise<void> {
  return alertOnly(store, [resolve(keys.agentLost(agent), `the agent ${agent} is connected again`)]);
}
