/**
 * A campaign's run loop (DESIGN.md §3, §7): the runner's iteration source for a campaign task. Its optimizer
 * is rebuilt from the records (the warm start plus the run's finished iterations) each time the task starts,
 * so a campaign survives a restart like a workflow run does; each iteration's parameters are its suggestion,
 * each measurement is told back to it, and stop_when ends the campaign early. Points people add to the
 * campaign (issue 31) join it: measured ones as observations, pending ones never suggested again.
 */
import { checkOutcomeConstraints, type Observation, type Optimizer, type OptimizerInstance } from '../contracts/index.js';
import { LabError } from '../errors.js';
import type { IterationSource, SourceFactory, TaskPayload } from '../runner/index.js';
import type { Store } from '../store/types.js';
import { sourceOf } from '../workflow/model.js';
import { outputValue } from '../workflow/interpreter.js';
import type { CampaignPoints } from './manual.js';
import { freshSuggestions, pointKey } from './points.js';
import { campaignRecord, limitMet, measuredNames, observation, type CampaignPayload } from './record.js';

/** The campaign being run or last run, for the plot. */
export interface Live {
  taskId: number;
  runId: number | null;
  payload: CampaignPayload;
  instance: OptimizerInstance;
  /** Set when a measurement met stop_when: the iterations the campaign ends after, and why. */
  stopped: { iteration: number; reason: string } | null;
}

export interface RunContext {
  store: Store;
  /** The optimizer plugin of that name. */
  optimizer: (name: string) => Optimizer;
  /** Points people add to campaigns, once the runtime has set them up. */
  points: () => CampaignPoints | null;
  /** Told the campaign that starts (or resumes): it is the one the plot shows while it is in memory. */
  started: (live: Live) => void;
}

/** The runner's iteration source for campaign tasks. */
export function campaignSource(ctx: RunContext): SourceFactory {
  return Object.assign(
    async ({ task, runId, payload, done, log }: Parameters<SourceFactory>[0]) => {
      const p = payload as CampaignPayload;
      const opt = ctx.optimizer(p.optimizer);
      let instance = opt.create({ space: p.space, objectives: p.objectives, config: p.config, seed: p.seed, constraints: p.constraints, outcomeConstraints: p.outcome_constraints });
      const measured = done.map((ph) => observation(p, ph.params as Record<string, unknown>, ph.outputs as Record<string, unknown>)).filter((o): o is Observation => o !== null);
      const history = [...p.existing, ...measured];
      if (history.length) await instance.observe(history);
      if (done.length) await log(`Optimizer ${p.optimizer} rebuilt from ${p.existing.length} warm-start row(s) and ${measured.length} measurement(s) of this run.`);
      const live: Live = { taskId: task.id, runId, payload: p, instance, stopped: null };
      ctx.started(live);
      const stopWhen = checkOutcomeConstraints(p.stop_when ?? [], 'stop_when');
      const met = (outputs: Record<string, unknown> | null) => limitMet(stopWhen, outputs);
      // a resumed campaign that had met its condition has no next iteration either
      const before = done.filter((ph) => ph.phase === 'main' && ph.status === 'ok').find((ph) => met(ph.outputs as Record<string, unknown>));
      if (before) live.stopped = { iteration: (before.iteration ?? 0) + 1, reason: met(before.outputs as Record<string, unknown>)! };
      let buffer: Record<string, number | string>[] = [];
      // points people added to this campaign (issue 31): once there are any, the optimizer is rebuilt with them
      // (measured ones observed, pending ones told) whenever they change, and never repeats a pending one
      const robotObs = [...measured];
      const hand = { campaign: undefined as number | null | undefined, signature: '', taken: null as Set<string> | null };
      const syncHand = async () => {
        const points = ctx.points();
        if (!points) return;
        if (hand.campaign === undefined) hand.campaign = (await ctx.store.campaigns.ofTask(task.id))?.id ?? null;
        if (hand.campaign === null) return;
        const rows = await ctx.store.campaigns.points(hand.campaign);
        const signature = rows.map((x) => `${x.n}:${x.state}`).join(',');
        if (signature === hand.signature) return;
        hand.signature = signature;
        instance = await points.rebuild(p, rows, robotObs);
        live.instance = instance;
        hand.taken = new Set(rows.filter((x) => x.state === 'pending').map((x) => pointKey(p.space, x.parameters)));
      };
      const source: IterationSource = {
        // the runner reads this before each iteration: stop_when ends the campaign early
        get total() {
          return live.stopped ? Math.min(live.stopped.iteration, p.budget) : p.budget;
        },
        params: async (i, recorded) => {
          if (recorded) return recorded;
          if (buffer.length === 0) {
            await syncHand();
            const k = Math.min(p.batch_size, p.budget - i);
            buffer = hand.taken ? await freshSuggestions(instance, p, k, hand.taken) : [...(await instance.suggest(k))];
          }
          const next = buffer.shift();
          if (!next) throw new LabError('internal', `The optimizer ${p.optimizer} suggested nothing.`);
          return { ...p.fixed, ...next };
        },
        measured: async (i, params, outputs) => {
          const obs = observation(p, params, outputs);
          if (obs) robotObs.push(obs);
          if (obs) await instance.observe([obs]);
          else await log(`Iteration ${i + 1} gave no numeric ${measuredNames(p).join('/')}: not told to the optimizer.`);
          const reason = live.stopped ? null : met(outputs);
          if (reason) {
            live.stopped = { iteration: i + 1, reason };
            await log(`Campaign stopped early after iteration ${i + 1} of ${p.budget}: ${reason}.`);
          }
        },
        // an objective (or a constrained output) that is not a number fails the step that saved it: the operator retries, skips or aborts
        checkSaved: (name, value) => {
          for (const o of measuredNames(p)) {
            const source = sourceOf(p.definition.outputs, o) ?? o;
            if (source.split('.')[0] !== name) continue;
            const v = outputValue({ [name]: value }, source);
            if (typeof v !== 'number' || !Number.isFinite(v)) {
              return `the campaign's ${p.objectives.some((x) => x.name === o) ? 'objective' : 'outcome constraint on'} "${o}" must be a number, and it is ${v === null ? 'missing' : JSON.stringify(v).slice(0, 100)}`;
            }
          }
          return null;
        },
      };
      return source;
    },
    { runParameters: (payload: TaskPayload) => campaignRecord(payload as CampaignPayload) },
  );
}
