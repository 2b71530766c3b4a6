/**
 * A campaign's progress as a self-contained SVG image: the latest campaign (`GET
 * /executions/latest_plot?format=svg`) and a campaign's own page (`GET /executions/campaigns/{id}/plot`,
 * issue 31). The first objective of every measurement (a dot for a point the optimizer suggested, a diamond
 * for one a person chose), the best so far (a step line), warm-start rows (hollow, at x = 0), axes with ticks
 * and labels, and the campaign's name as the title. No script, no external reference, and every piece of
 * text escaped: names come from users.
 */
import type { LatestPlot } from '../../core/campaign/index.js';
import type { CampaignPlot } from '../../core/campaign/progress.js';

const W = 720;
const H = 440;
const M = { left: 70, right: 24, top: 56, bottom: 66 };
const PW = W - M.left - M.right;
const PH = H - M.top - M.bottom;
const COLOR = { point: '#0d6efd', person: '#fd7e14', best: '#d63384', warm: '#6c757d', grid: '#dee2e6', axis: '#495057', text: '#212529' };

/** Text for XML: markup characters escaped, characters XML 1.0 forbids (controls, lone surrogates) dropped. */
export function xmlEscape(s: string): string {
  return s
    .replace(/[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const r1 = (v: number) => Math.round(v * 10) / 10;
/** A value as people read it: 4 significant digits, no exponent for everyday magnitudes. */
export const fmt = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4))));

/** Round ticks (1, 2, 5 × 10^k) covering [lo, hi], about `count` of them. */
export function niceTicks(lo: number, hi: number, count = 6): { ticks: number[]; step: number } {
  const raw = (hi - lo) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const ticks: number[] = [];
  // snap to the step's own decimals so 0.1 + 0.2 does not show as 0.30000000000000004
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toFixed(decimals)));
  return { ticks, step };
}

const tickLabel = (v: number, step: number) => (step >= 1 ? String(Math.round(v)) : v.toFixed(Math.max(0, -Math.floor(Math.log10(step)))));

function text(x: number, y: number, s: string, attrs = ''): string {
  return `<text x="${r1(x)}" y="${r1(y)}"${attrs ? ` ${attrs}` : ''}>${xmlEscape(s)}</text>`;
}

const paramsText = (params: Record<string, unknown>) =>
  Object.entries(params)
    .map(([k, v]) => `${k} = ${typeof v === 'number' ? fmt(v) : String(v)}`)
    .join(', ');

/** What a progress chart draws, whatever campaign it is of. */
interface Chart {
  name: string;
  /** The line under the title (workflow, optimizer, state, counts). */
  subtitle: string;
  /** The image's description (for screen readers). */
  desc: string;
  objective: { name: string; minimize: boolean } | undefined;
  xLabel: string;
  /** The axis reaches at least this far (a campaign's budget). */
  xMax: number;
  warm: { value: number; tip: string }[];
  /** `person`: a person chose the point (drawn as a diamond), else the optimizer did (a dot). */
  points: { x: number; value: number; tip: string; person: boolean }[];
  best: { x: number; value: number }[];
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const byPerson = (suggestedBy: string | null | undefined) => typeof suggestedBy === 'string' && suggestedBy.startsWith('person:');
const who = (p: { suggested_by?: string | null; measured_by?: string | null }) => (p.suggested_by ? ` · suggested by ${p.suggested_by}${p.measured_by ? `, measured by ${p.measured_by}` : ''}` : '');

export function plotSvg(plot: LatestPlot): string {
  const c = plot.campaign;
  const obj = plot.objectives[0];
  const value = (p: LatestPlot['points'][number]) => {
    const v = obj ? p.values[obj.name] : null;
    return finite(v) ? v : null;
  };
  // warm-start rows carry no suggested_by; points measured by hand (iteration null too) come after the iterations
  const warm = plot.points.filter((p) => p.iteration === null && !p.suggested_by && value(p) !== null);
  const own = plot.points.filter((p) => p.iteration !== null && value(p) !== null);
  const hand = plot.points.filter((p) => p.iteration === null && p.suggested_by && value(p) !== null);
  const measured = plot.points.filter((p) => p.iteration !== null).length;
  const after = Math.max(c.budget, ...own.map((p) => (p.iteration as number) + 1));
  return chartSvg({
    name: c.name,
    subtitle: `${c.workflow} · ${c.optimizer} · ${c.status} · ${measured} of ${c.budget} measured${hand.length ? ` · ${hand.length} by hand` : ''}${warm.length ? ` · ${warm.length} warm-start` : ''}`,
    desc: `${obj ? `${obj.name} (${obj.minimize ? 'minimize' : 'maximize'})` : 'objective'} per iteration and best so far: ${measured} of ${c.budget} measured`,
    objective: obj,
    xLabel: 'iteration',
    xMax: after + hand.length,
    warm: warm.map((p) => ({ value: value(p)!, tip: `warm start: ${obj!.name} = ${fmt(value(p)!)} (${paramsText(p.params)})` })),
    points: [
      ...own.map((p) => ({
        x: (p.iteration as number) + 1,
        value: value(p)!,
        tip: `iteration ${(p.iteration as number) + 1}: ${obj!.name} = ${fmt(value(p)!)} (${paramsText(p.params)})${byPerson(p.suggested_by) ? who(p) : ''}`,
        person: byPerson(p.suggested_by),
      })),
      ...hand.map((p, i) => ({
        x: after + i + 1,
        value: value(p)!,
        tip: `point ${p.n ?? ''} measured by hand: ${obj!.name} = ${fmt(value(p)!)} (${paramsText(p.params)})${who(p)}`,
        person: byPerson(p.suggested_by),
      })),
    ],
    best: plot.best_so_far.filter((b) => Number.isFinite(b.value)).map((b) => ({ x: b.iteration + 1, value: b.value })),
  });
}

/** A campaign's own progress plot (its page): each measured point at its row of the campaign's table. */
export function campaignPlotSvg(plot: CampaignPlot): string {
  const c = plot.campaign;
  const obj = plot.objectives[0];
  const value = (values: Record<string, number | null>) => {
    const v = obj ? values[obj.name] : null;
    return finite(v) ? v : null;
  };
  const warm = plot.warm_start.filter((w) => value(w.values) !== null);
  const points = plot.points.filter((p) => value(p.values) !== null);
  const people = points.filter((p) => byPerson(p.suggested_by)).length;
  const total = c.counts.pending + c.counts.measured + c.counts.discarded;
  return chartSvg({
    name: c.name,
    subtitle: `${c.workflow} · ${c.optimizer} · ${c.execution === 'manual' ? 'carried out by people' : 'robot'} · ${c.counts.measured} measured, ${c.counts.pending} pending${people ? ` · ${people} chosen by people` : ''}${warm.length ? ` · ${warm.length} warm-start` : ''}`,
    desc: `${obj ? `${obj.name} (${obj.minimize ? 'minimize' : 'maximize'})` : 'objective'} per point and best so far: ${points.length} measured`,
    objective: obj,
    xLabel: c.execution === 'manual' ? 'point n' : 'point (iterations, then points measured by hand)',
    xMax: Math.max(total, ...points.map((p) => p.x)),
    warm: warm.map((w) => ({ value: value(w.values)!, tip: `warm start: ${obj!.name} = ${fmt(value(w.values)!)} (${paramsText(w.params)})` })),
    points: points.map((p) => ({
      x: p.x,
      value: value(p.values)!,
      tip: `${p.measured_by?.startsWith('run:') ? `iteration ${p.n}` : `point ${p.n}`}: ${obj!.name} = ${fmt(value(p.values)!)} (${paramsText(p.params)})${who(p)}`,
      person: byPerson(p.suggested_by),
    })),
    best: plot.best_so_far.map((b) => ({ x: b.x, value: b.value })),
  });
}

/** A diamond of half-width r around (x, y): a point a person chose. */
const diamond = (x: number, y: number, r: number) => `M${r1(x)} ${r1(y - r)} L${r1(x + r)} ${r1(y)} L${r1(x)} ${r1(y + r)} L${r1(x - r)} ${r1(y)} Z`;

function chartSvg(ch: Chart): string {
  const obj = ch.objective;
  const { warm, points: own, best } = ch;
  // x: 0 (warm start) … the budget (counted from 1, as on the record page), half a step of room
  const xMax = Math.max(1, ch.xMax, ...own.map((p) => p.x), ...best.map((b) => b.x)) + 0.5;
  const xMin = warm.length ? -0.5 : 0.5;
  const ys = [...warm, ...own].map((p) => p.value).concat(best.map((b) => b.value));
  let yLo = ys.length ? Math.min(...ys) : 0;
  let yHi = ys.length ? Math.max(...ys) : 1;
  if (yHi - yLo < 1e-12) {
    const pad = Math.abs(yLo) > 1e-12 ? Math.abs(yLo) * 0.1 : 1;
    yLo -= pad;
    yHi += pad;
  } else {
    const pad = (yHi - yLo) * 0.06;
    yLo -= pad;
    yHi += pad;
  }
  const yt = niceTicks(yLo, yHi, 6);
  yLo = Math.min(yLo, yt.ticks[0] ?? yLo);
  yHi = Math.max(yHi, yt.ticks[yt.ticks.length - 1] ?? yHi);
  const xt = niceTicks(Math.ceil(xMin), Math.floor(xMax), Math.min(10, Math.floor(xMax)));
  const X = (x: number) => M.left + ((x - xMin) / (xMax - xMin)) * PW;
  const Y = (y: number) => M.top + PH - ((y - yLo) / (yHi - yLo)) * PH;

  const out: string[] = [];
  const objLabel = obj ? `${obj.name} (${obj.minimize ? 'minimize' : 'maximize'})` : 'objective';
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="plot-title plot-desc" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" font-size="12" fill="${COLOR.text}">`,
    `<title id="plot-title">${xmlEscape(`Campaign ${ch.name}`)}</title>`,
    `<desc id="plot-desc">${xmlEscape(ch.desc)}</desc>`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    text(M.left, 22, clip(`Campaign: ${ch.name}`, 64), 'font-size="16" font-weight="600"'),
    text(M.left, 40, clip(ch.subtitle, 95), `fill="${COLOR.axis}"`),
  );

  // grid, ticks and their labels
  out.push(`<g class="grid" stroke="${COLOR.grid}" stroke-width="1">`);
  for (const t of yt.ticks) out.push(`<line x1="${M.left}" x2="${M.left + PW}" y1="${r1(Y(t))}" y2="${r1(Y(t))}"/>`);
  for (const t of xt.ticks) out.push(`<line x1="${r1(X(t))}" x2="${r1(X(t))}" y1="${M.top}" y2="${M.top + PH}"/>`);
  out.push('</g>', `<g class="ticks" fill="${COLOR.axis}" font-size="11">`);
  for (const t of yt.ticks) out.push(text(M.left - 6, Y(t) + 4, tickLabel(t, yt.step), 'text-anchor="end"'));
  for (const t of xt.ticks) out.push(text(X(t), M.top + PH + 16, t === 0 ? 'warm' : tickLabel(t, xt.step), 'text-anchor="middle"'));
  out.push('</g>');
  out.push(
    `<rect x="${M.left}" y="${M.top}" width="${PW}" height="${PH}" fill="none" stroke="${COLOR.axis}" stroke-width="1"/>`,
    text(M.left + PW / 2, M.top + PH + 34, ch.xLabel, 'text-anchor="middle"'),
    text(16, M.top + PH / 2, clip(objLabel, 60), `text-anchor="middle" transform="rotate(-90 16 ${r1(M.top + PH / 2)})"`),
  );

  if (!warm.length && !own.length) {
    out.push(text(M.left + PW / 2, M.top + PH / 2, obj ? `No measurement of ${obj.name} yet` : 'No measurement yet', `text-anchor="middle" font-size="14" fill="${COLOR.axis}" class="empty"`));
  }

  // best so far: a step line, level until the next improvement
  if (best.length) {
    const pts: string[] = [];
    best.forEach((b, i) => {
      const x = X(b.x);
      if (i > 0) pts.push(`${r1(x)},${r1(Y(best[i - 1].value))}`);
      pts.push(`${r1(x)},${r1(Y(b.value))}`);
    });
    out.push(`<polyline class="best" points="${pts.join(' ')}" fill="none" stroke="${COLOR.best}" stroke-width="2"/>`);
  }
  for (const p of warm) {
    out.push(`<circle class="warm" cx="${r1(X(0))}" cy="${r1(Y(p.value))}" r="4" fill="#ffffff" stroke="${COLOR.warm}" stroke-width="1.5"><title>${xmlEscape(p.tip)}</title></circle>`);
  }
  for (const p of own) {
    const tip = `<title>${xmlEscape(p.tip)}</title>`;
    out.push(
      p.person
        ? `<path class="person" d="${diamond(X(p.x), Y(p.value), 5.5)}" fill="${COLOR.person}">${tip}</path>`
        : `<circle class="point" cx="${r1(X(p.x))}" cy="${r1(Y(p.value))}" r="4" fill="${COLOR.point}">${tip}</circle>`,
    );
  }

  // legend, a row under the axis label
  const people = own.some((p) => p.person);
  const items: { mark: (x: number, y: number) => string; label: string }[] = [
    { mark: (x, y) => `<circle cx="${r1(x)}" cy="${y}" r="4" fill="${COLOR.point}"/>`, label: people ? 'suggested by the optimizer' : 'measured' },
    ...(people ? [{ mark: (x: number, y: number) => `<path d="${diamond(x, y, 5)}" fill="${COLOR.person}"/>`, label: 'chosen by a person' }] : []),
    { mark: (x, y) => `<line x1="${r1(x - 6)}" x2="${r1(x + 6)}" y1="${y}" y2="${y}" stroke="${COLOR.best}" stroke-width="2"/>`, label: 'best so far' },
    ...(warm.length
      ? [
          {
            mark: (x: number, y: number) => `<circle cx="${r1(x)}" cy="${y}" r="4" fill="#ffffff" stroke="${COLOR.warm}" stroke-width="1.5"/>`,
            label: `warm start (before ${ch.xLabel === 'iteration' ? 'iteration' : 'point'} 1)`,
          },
        ]
      : []),
  ];
  const width = (label: string) => 22 + label.length * 6;
  const ly = H - 12;
  let lx = M.left + PW / 2 - items.reduce((w, it) => w + width(it.label), 0) / 2;
  out.push(`<g class="legend" font-size="11">`);
  for (const it of items) {
    out.push(it.mark(lx, ly - 4), text(lx + 10, ly, it.label));
    lx += width(it.label);
  }
  out.push('</g>', '</svg>');
  return out.join('\n');
}
