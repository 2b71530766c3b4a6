/** campaign_finished carries the campaign's best: the best measured value of its first objective, and where. */
import type { Store } from '../store/types.js';

export interface CampaignBest {
  objective: string;
  minimize: boolean;
  value: number;
  iteration: number;
  params: unknown;
}

/** The best iteration of a campaign's run (finished iterations; null when none measured its first objective). */
export async function campaignBest(store: Store, runId: number, payload: unknown): Promise<CampaignBest | null> {
  const first = (payload as { objectives?: { name?: unknown; minimize?: unknown }[] } | null)?.objectives?.[0];
  if (!first || typeof first.name !== 'string') return null;
  const minimize = first.minimize === true;
  let best: CampaignBest | null = null;
  for (const ph of await store.phases.list(runId)) {
    if (ph.phase !== 'main' || ph.status !== 'ok') continue;
    const v = (ph.outputs as Record<string, unknown> | null)?.[first.name];
    if (typeof v !== 'number' || !Number.isFinite(v)) continue;
    if (!best || (minimize ? v < best.value : v > best.value)) best = { objective: first.name, minimize, value: v, iteration: ph.iteration ?? 0, params: ph.params };
  }
  return best;
}

export function bestText(b: CampaignBest | null): string {
  if (!b) return 'No iteration measured its objective.';
  return `Best ${b.objective} (${b.minimize ? 'min' : 'max'}): ${b.value} at iteration ${b.iteration + 1} ${JSON.stringify(b.params)}.`;
}
