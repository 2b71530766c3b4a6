/**
 * The attention list (issue 31, DESIGN.md §17): everything in the lab that waits for a person, each with what
 * to do and where. Read from the database, so every labdeck on one PostgreSQL shows the same list: input steps
 * waiting, failed steps waiting for a decision, interrupted runs, held queues, pending approvals, and pending
 * tasks whose instruments no live labdeck drives. Pause steps are not recorded in the database: they come from
 * the runner's status, which on PostgreSQL carries the other labdecks' running tasks as they relay them.
 *
 * Other parts add their own kinds with `addSource` (the safety guard: unknown safety states), without this
 * module knowing them.
 */
import type { Runner } from '../runner/index.js';
import { INPUT_INSTRUMENT } from '../runner/input.js';
import type { TaskPayload } from '../runner/tasks.js';
import type { Store } from '../store/types.js';
import { describeInput, type InputSchema } from '../workflow/input.js';
import { instrumentsOf } from '../workflow/validate.js';

export const ATTENTION_KINDS = ['input', 'pause', 'failed_step', 'interrupted', 'approval', 'held_queue', 'host_offline', 'safety'] as const;
export type AttentionKind = (typeof ATTENTION_KINDS)[number] | (string & {});

export interface AttentionItem {
  kind: AttentionKind;
  /** What waits, in a line. */
  title: string;
  /** What a person does about it. */
  action: string;
  /** Where to do it: a path under the mount (`/executions/config`); the doors make it a URL. */
  link: string;
  task_id?: number | null;
  run_id?: number | null;
  /** The labdeck that runs it, when known. */
  host?: string | null;
  since?: string | null;
  /** Kind-specific facts (an input's prompt, variable and schema). */
  detail?: Record<string, unknown>;
}

/** A source of more items (the safety guard's unknown states); a source that throws is reported as one item. */
export type AttentionSource = () => Promise<AttentionItem[]>;

const RUN_PAGE = '/executions/config';

export class Attention {
  private readonly sources: { name: string; source: AttentionSource }[] = [];
  private cached: { at: number; count: Promise<number> } | null = null;

  constructor(private readonly opts: { store: Store; runner: Runner }) {}

  /** Add a source of items (e.g. `safety`: states nobody can read). */
  addSource(name: string, source: AttentionSource): void {
    this.sources.push({ name, source });
  }

  /** Everything that waits for a person now, oldest first within each kind. */
  async list(): Promise<AttentionItem[]> {
    const { store, runner } = this.opts;
    const [steps, open, holding, approvals, catalogue, live] = await Promise.all([
      store.attention.openSteps(),
      store.queue.open(),
      store.queue.holding(),
      store.approvals.list('pending', new Date(), 100),
      store.hosts.catalogue(),
      store.hosts.live(),
    ]);
    const hostName = new Map(live.map((h) => [h.id, h.name]));
    const items: AttentionItem[] = [];

    for (const s of steps) {
      const where = { task_id: s.taskId, run_id: s.runId, host: s.hostId ? (hostName.get(s.hostId) ?? null) : null, since: s.startedAt.toISOString() };
      if (s.instrument === INPUT_INSTRUMENT && s.status !== 'error') {
        const args = (s.args ?? {}) as { prompt?: string; schema?: InputSchema };
        const expects = args.schema ? describeInput(args.schema) : 'a value';
        items.push({
          kind: 'input',
          title: `${s.runName}: ${args.prompt ?? 'a value is asked for'}`,
          action: `Give ${s.method} (${expects}) on the run page, or POST /executions/input${s.runStatus === 'interrupted' ? ' once the run has resumed' : ''}.`,
          link: RUN_PAGE,
          ...where,
          detail: { prompt: args.prompt ?? null, save_as: s.method, schema: args.schema ?? null, expects, step_id: s.id },
        });
      } else if (s.status === 'error' && s.runStatus === 'running') {
        items.push({
          kind: 'failed_step',
          title: `${s.runName}: ${s.instrument}.${s.method} failed${s.error ? `: ${s.error}` : ''}`,
          action: 'Retry it, skip it, or abort the task, on the run page.',
          link: RUN_PAGE,
          ...where,
          detail: { step_id: s.id, phase: s.phase, iteration: s.iteration },
        });
      }
    }

    // pause steps: this labdeck's, and (PostgreSQL) the other labdecks' as they relay them
    const status = runner.status();
    for (const t of status.running) {
      if (t.waiting)
        items.push({
          kind: 'pause',
          title: `${t.name}: ${t.waiting.message}`,
          action: 'Continue on the run page when it is done.',
          link: RUN_PAGE,
          task_id: t.id,
          run_id: t.run_id,
          host: runner.host.name,
        });
    }
    for (const t of status.elsewhere) {
      if (t.waiting)
        items.push({
          kind: 'pause',
          title: `${t.name}: ${t.waiting.message}`,
          action: `Continue it on the run page (it runs on ${t.host}).`,
          link: RUN_PAGE,
          task_id: t.task_id,
          run_id: t.run_id,
          host: t.host,
        });
    }

    for (const t of open.filter((x) => x.status === 'interrupted')) {
      items.push({
        kind: 'interrupted',
        title: `Task ${t.id} (${t.name}) was interrupted: labdeck stopped during it`,
        action: 'Retry its in-doubt step, skip it, or abort the task, on the run page.',
        link: t.runId ? `/executions/records/${t.runId}` : RUN_PAGE,
        task_id: t.id,
        run_id: t.runId,
        since: t.startedAt?.toISOString() ?? null,
      });
    }
    for (const t of holding.filter((x) => x.status !== 'interrupted')) {
      items.push({
        kind: 'held_queue',
        title: `The queue is held after task ${t.id} (${t.name}) was ${t.status}`,
        action: 'Release the queue on the run page when the lab is ready.',
        link: RUN_PAGE,
        task_id: t.id,
        run_id: t.runId,
        since: t.endedAt?.toISOString() ?? null,
      });
    }
    for (const a of approvals) {
      items.push({
        kind: 'approval',
        title: `An agent asks: ${a.summary}`,
        action: 'Approve or reject it in the approval inbox.',
        link: '/approvals',
        since: a.createdAt.toISOString(),
        detail: { approval_id: a.id },
      });
    }

    // pending tasks that need instruments no live labdeck drives (their labdeck is offline)
    const driven = new Set(catalogue.map((c) => c.name));
    for (const t of open.filter((x) => x.status === 'pending')) {
      let needs: string[] = [];
      try {
        needs = instrumentsOf((t.payload as TaskPayload).definition);
      } catch {
        continue;
      }
      const missing = needs.filter((n) => !driven.has(n));
      if (missing.length) {
        items.push({
          kind: 'host_offline',
          title: `Task ${t.id} (${t.name}) waits for ${missing.join(', ')}, which no labdeck drives now`,
          action: 'Start (or reconnect) the labdeck or agent that drives them, or delete the task.',
          link: RUN_PAGE,
          task_id: t.id,
          since: t.createdAt.toISOString(),
        });
      }
    }

    for (const { name, source } of this.sources) {
      try {
        items.push(...(await source()));
      } catch (e) {
        items.push({
          kind: name,
          title: `The ${name} check could not be read: ${e instanceof Error ? e.message : String(e)}`,
          action: 'Look at it before going on: what cannot be checked is not safe.',
          link: '/',
        });
      }
    }
    return items;
  }

  /** How many items wait (the navigation's badge), read at most every 2 s. */
  count(): Promise<number> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at > 2000) {
      const count = this.list().then(
        (l) => l.length,
        () => 0,
      );
      this.cached = { at: now, count };
    }
    return this.cached.count;
  }
}
