/** What the campaign panel's charts share: the colours, the model's surface, finite numbers. */
import type { LatestPlot } from '../../../core/campaign/index.js';

/** The gp plugin's model surface (snapshot().surface): a curve over one parameter, or a grid over two. */
export interface Surface {
  parameters: string[];
  objective: string;
  x: number[];
  y?: number[];
  mean: number[] | number[][];
  sd: number[] | number[][];
}

export const C = { point: '#0d6efd', best: '#d63384', warm: '#6c757d', band: 'rgba(13,110,253,0.15)', mean: '#0d6efd' };

export const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export function surfaceOf(model: unknown): Surface | null {
  const s = (model as { surface?: unknown } | null)?.surface as Surface | null | undefined;
  if (!s || !Array.isArray(s.parameters) || !Array.isArray(s.x) || !Array.isArray(s.mean)) return null;
  if (s.parameters.length === 1 && s.mean.length === s.x.length) return s;
  if (s.parameters.length === 2 && Array.isArray(s.y) && s.mean.length === s.y.length) return s;
  return null;
}

/** Why no model is drawn, in words. */
export function modelNote(plot: LatestPlot): string {
  const m = plot.model as Record<string, unknown> | null;
  if (!m) return plot.campaign.status === 'pending' ? 'The campaign waits in the queue.' : '';
  if (!('surface' in m)) return `${plot.campaign.optimizer} builds no model: the plot shows the measurements.`;
  if (m.phase === 'initial') return `The model takes over after the initial design (${String(m.initial_points ?? '')} points); its surface is drawn then.`;
  return 'The model surface is drawn for one or two numeric parameters.';
}
