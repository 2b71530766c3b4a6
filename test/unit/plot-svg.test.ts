import type { LatestPlot } from '../../core/campaign/index.js';
import { campaignPlotSvg, niceTicks, plotSvg, xmlEscape } from '../../server/views/plot-svg.js';

const ENTITY = /&(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g;

/**
 * A tiny well-formedness check (enough for what plotSvg writes): tags balance, attributes are quoted and
 * unique, no stray `<` or `&`, one root element. Returns the element names in document order.
 */
function checkXml(xml: string): string[] {
  const stack: string[] = [];
  const names: string[] = [];
  let roots = 0;
  const token = /<\/([A-Za-z][\w:.-]*)\s*>|<([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>|([^<]+)|(<)/g;
  for (let m = token.exec(xml); m; m = token.exec(xml)) {
    const [, close, open, attrs, selfClosing, body, stray] = m;
    if (stray) throw new Error(`stray "<" at ${m.index}: ${xml.slice(m.index, m.index + 40)}`);
    if (body !== undefined) {
      if (body.replace(ENTITY, '').includes('&')) throw new Error(`bare & in text: ${body}`);
      if (!stack.length && body.trim()) throw new Error(`text outside the root: ${body}`);
      continue;
    }
    if (close) {
      if (stack.pop() !== close) throw new Error(`</${close}> closes nothing open at ${m.index}`);
      continue;
    }
    const seen = new Set<string>();
    for (const a of attrs.matchAll(/([\w:.-]+)\s*=\s*("[^"]*"|'[^']*')/g)) {
      if (seen.has(a[1])) throw new Error(`attribute ${a[1]} twice in <${open}>`);
      seen.add(a[1]);
      if (a[2].replace(ENTITY, '').includes('&')) throw new Error(`bare & in attribute ${a[1]}`);
    }
    if (!stack.length && ++roots > 1) throw new Error('more than one root element');
    names.push(open);
    if (!selfClosing) stack.push(open);
  }
  if (stack.length) throw new Error(`unclosed: ${stack.join(' > ')}`);
  return names;
}

function plot(over: Partial<LatestPlot> = {}): LatestPlot {
  return {
    campaign: { task_id: 3, run_id: 7, name: 'reactor sweep', workflow: 'reactor', optimizer: 'gp', status: 'running', budget: 10, batch_size: 1 },
    parameters: [
      { name: 'temperature', type: 'range', bounds: [20, 120] },
      { name: 'time', type: 'range', bounds: [1, 60] },
    ],
    objectives: [{ name: 'yield', minimize: false }],
    points: [
      { iteration: null, params: { temperature: 50, time: 10 }, values: { yield: 0.3 } },
      { iteration: 0, params: { temperature: 70, time: 20 }, values: { yield: 0.5 } },
      { iteration: 1, params: { temperature: 90, time: 30 }, values: { yield: 0.8 } },
      { iteration: 2, params: { temperature: 110, time: 40 }, values: { yield: null } },
      { iteration: 3, params: { temperature: 85, time: 25 }, values: { yield: 0.7 } },
    ],
    best_so_far: [
      { iteration: 0, value: 0.5 },
      { iteration: 1, value: 0.8 },
      { iteration: 3, value: 0.8 },
    ],
    model: null,
    ...over,
  };
}

const count = (svg: string, re: RegExp) => (svg.match(re) ?? []).length;

describe('plotSvg', () => {
  it('is a well-formed SVG document with one dot per numeric measurement and the warm start drawn apart', () => {
    const svg = plotSvg(plot());
    const names = checkXml(svg);
    expect(names[0]).toBe('svg');
    expect(svg).toContain('xmlns="http://www.w3.org/2000/svg"');
    // 3 numeric measurements of this campaign (the null one is left out), 1 warm-start row
    expect(count(svg, /<circle class="point"/g)).toBe(3);
    expect(count(svg, /<circle class="warm"/g)).toBe(1);
    expect(svg).toContain('warm start (before iteration 1)');
    expect(svg).toContain('>warm<'); // the x tick of the warm-start column
    // best so far: a step line through each improvement (2 points for the first, 2 more per later one)
    const best = /<polyline class="best" points="([^"]+)"/.exec(svg);
    expect(best?.[1].split(' ')).toHaveLength(5);
    expect(svg).toContain('Campaign: reactor sweep');
    expect(svg).toContain('yield (maximize)');
    expect(svg).toContain('4 of 10 measured');
    expect(svg).not.toMatch(/<script|javascript:|href=/i);
  });

  it('places the dots by iteration and value: higher yield is higher up, later iterations further right', () => {
    const svg = plotSvg(plot());
    const dots = [...svg.matchAll(/<circle class="point" cx="([\d.]+)" cy="([\d.]+)"/g)].map((m) => ({ x: Number(m[1]), y: Number(m[2]) }));
    expect(dots).toHaveLength(3);
    expect(dots[1].x).toBeGreaterThan(dots[0].x);
    expect(dots[1].y).toBeLessThan(dots[0].y); // 0.8 above 0.5 (SVG y grows downwards)
    expect(dots[2].y).toBeGreaterThan(dots[1].y); // 0.7 below 0.8
    const warm = /<circle class="warm" cx="([\d.]+)"/.exec(svg);
    expect(Number(warm?.[1])).toBeLessThan(dots[0].x);
  });

  it('escapes names that come from users', () => {
    const evil = '<script>alert("x")</script> & \'q\'';
    const svg = plotSvg(
      plot({
        campaign: { ...plot().campaign, name: evil, workflow: '</svg><svg onload=alert(1)>' },
        objectives: [{ name: '<b>yield</b>', minimize: true }],
        points: [{ iteration: 0, params: { '<img src=x>': 'a&b' }, values: { '<b>yield</b>': 1 } }],
        best_so_far: [{ iteration: 0, value: 1 }],
      }),
    );
    expect(() => checkXml(svg)).not.toThrow();
    expect(svg).not.toContain('<script');
    expect(svg).not.toContain('<b>');
    expect(svg).not.toContain('<img');
    expect(svg).not.toContain('<svg onload');
    expect(svg).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;');
    expect(svg).toContain('&lt;b&gt;yield&lt;/b&gt; (minimize)');
    expect(count(svg, /<circle class="point"/g)).toBe(1);
  });

  it('drops characters XML cannot carry', () => {
    expect(xmlEscape('a\u0000b\u001bc\ud800d')).toBe('abcd');
    expect(xmlEscape('ok 😀')).toBe('ok 😀');
    expect(() => checkXml(plotSvg(plot({ campaign: { ...plot().campaign, name: 'bad\u0007name' } })))).not.toThrow();
  });

  it('handles an empty campaign: axes, a message, no dots and no line', () => {
    const svg = plotSvg(plot({ points: [], best_so_far: [], campaign: { ...plot().campaign, status: 'pending', run_id: null } }));
    checkXml(svg);
    expect(count(svg, /<circle class="(point|warm)"/g)).toBe(0);
    expect(svg).not.toContain('class="best"');
    expect(svg).toContain('No measurement of yield yet');
    expect(svg).toContain('>iteration<');
    expect(svg).not.toContain('NaN');
  });

  it('handles a single value (flat range) without NaN', () => {
    const svg = plotSvg(plot({ points: [{ iteration: 0, params: {}, values: { yield: 0 } }], best_so_far: [{ iteration: 0, value: 0 }] }));
    checkXml(svg);
    expect(svg).not.toContain('NaN');
    expect(svg).not.toContain('Infinity');
    expect(count(svg, /<circle class="point"/g)).toBe(1);
  });
});

describe('niceTicks', () => {
  it('gives round steps covering the range', () => {
    expect(niceTicks(0, 10, 5)).toEqual({ ticks: [0, 2, 4, 6, 8, 10], step: 2 });
    const t = niceTicks(0.23, 0.97, 6);
    expect(t.step).toBeCloseTo(0.2);
    expect(t.ticks).toEqual([0.4, 0.6, 0.8]);
    expect(niceTicks(-3, 3, 6).ticks).toEqual([-3, -2, -1, 0, 1, 2, 3]);
  });
});

describe('people in the plots (issue 31)', () => {
  it("latest_plot: a point measured by hand is drawn after the iterations, a person's as a diamond, not as a warm start", () => {
    const base = plot();
    const svg = plotSvg(
      plot({
        points: [
          ...base.points,
          { iteration: null, n: 1, params: { temperature: 60, time: 5 }, values: { yield: 0.9 }, suggested_by: 'person:ada', measured_by: 'person:ada' },
          { iteration: null, n: 2, params: { temperature: 61, time: 6 }, values: { yield: 0.6 }, suggested_by: 'optimizer:gp', measured_by: 'person:bea' },
        ],
      }),
    );
    checkXml(svg);
    expect(count(svg, /<circle class="warm"/g)).toBe(1); // only the warm-start row
    expect(count(svg, /<path class="person"/g)).toBe(1);
    expect(count(svg, /<circle class="point"/g)).toBe(4); // 3 iterations and the optimizer's point measured by hand
    const dots = [...svg.matchAll(/<circle class="point" cx="([\d.]+)"/g)].map((m) => Number(m[1]));
    const diamond = Number(/<path class="person" d="M([\d.]+) /.exec(svg)![1]);
    expect(diamond).toBeGreaterThan(Math.max(...dots.slice(0, 3))); // after the campaign's own iterations
    expect(svg).toContain('suggested by person:ada, measured by person:ada');
    expect(svg).toContain('chosen by a person');
    expect(svg).toContain('2 by hand');
  });

  it("a campaign's own plot: each point at its x, the optimizer's as dots, a person's as diamonds, the best so far through them", () => {
    const svg = campaignPlotSvg({
      campaign: { campaign_id: 4, name: 'by hand', execution: 'manual', workflow: 'react', optimizer: 'gp', counts: { pending: 1, measured: 3, discarded: 1 } },
      parameters: [{ name: 't', type: 'range', bounds: [0, 1] }],
      objectives: [{ name: 'y', minimize: true }],
      warm_start: [],
      points: [
        { x: 1, n: 1, params: { t: 0.1 }, values: { y: 3 }, suggested_by: 'optimizer:gp', measured_by: 'person:ada', measured_at: null },
        { x: 3, n: 3, params: { t: 0.3 }, values: { y: 1 }, suggested_by: 'person:bea', measured_by: 'person:bea', measured_at: null },
        { x: 4, n: 4, params: { t: 0.4 }, values: { y: 2 }, suggested_by: 'optimizer:gp', measured_by: 'person:ada', measured_at: null },
      ],
      best_so_far: [
        { x: 1, n: 1, value: 3 },
        { x: 3, n: 3, value: 1 },
        { x: 4, n: 4, value: 1 },
      ],
    });
    checkXml(svg);
    expect(count(svg, /<circle class="point"/g)).toBe(2);
    expect(count(svg, /<path class="person"/g)).toBe(1);
    expect(/<polyline class="best" points="([^"]+)"/.exec(svg)![1].split(' ')).toHaveLength(5);
    expect(svg).toContain('>point n<');
    expect(svg).toContain('y (minimize)');
    expect(svg).toContain('point 3: y = 1 (t = 0.3) · suggested by person:bea, measured by person:bea');
    expect(svg).not.toContain('NaN');
  });
});
