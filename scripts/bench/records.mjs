import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { startServer, stop, agent, http, tokenFor, cookieFor, timePaths, median, line, built, rssOf } from './common.mjs';

export default async function records() {
  console.log('\n== records (issue 3): 100,000 runs and a 100,000-step run in SQLite, through `lab serve` ==');
  const { openStore, dataSourceOf } = await built('core/store/index.js');
  const dir = await mkdtemp(join(tmpdir(), 'labdeck-bench-'));
  const N = 100_000;
  let runId;
  let bigId;
  {
    // Filled before the server starts, in bulk (as test/unit/store-runs.test.ts does): every run carries an
    // ~800-byte workflow snapshot; run n is "Run n Titration" when n % 10 = 0, else "Run n dose".
    const store = await openStore({ dataDir: dir });
    const ds = dataSourceOf(store);
    const t = performance.now();
    await ds.query(
      `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ${N}) ` +
        `INSERT INTO "runs" ("name", "workflow_name", "workflow_version", "workflow", "parameters", "status", "started_at", "ended_at") ` +
        `SELECT 'Run ' || n || CASE WHEN n % 10 = 0 THEN ' Titration' ELSE ' dose' END, 'wf-' || (n % 50), 1, ` +
        `'{"name":"wf","main":"' || hex(zeroblob(400)) || '"}', '[{"x":1}]', 'completed', '2024-01-01 00:00:00.000', '2024-01-01 00:01:00.000' FROM seq`,
    );
    const run = await store.runs.create({
      taskId: null,
      name: 'Big export',
      workflowName: 'wf-big',
      workflowVersion: 1,
      workflow: { name: 'wf-big' },
      parameters: [],
      status: 'completed',
      userId: null,
      startedAt: new Date(),
    });
    runId = run.id;
    await ds.query(
      `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < ${N - 1}) ` +
        `INSERT INTO "steps" ("run_id", "phase", "iteration", "step_index", "instrument", "method", "args", "output", "status", "started_at", "ended_at") ` +
        `SELECT ${runId}, 'main', n / 10, n % 10, 'pump', 'dose', '{"volume_ml":1.5,"note":"=SUM(A1)"}', '{"mass_g":0.98,"raw":[1,2,3]}', 'ok', ` +
        `'2024-01-01 00:00:00.000', '2024-01-01 00:00:00.031' FROM seq`,
    );
    // a run three times as long: flat memory means the export's footprint does not grow with its length
    const big = await store.runs.create({
      taskId: null,
      name: 'Bigger export',
      workflowName: 'wf-big',
      workflowVersion: 1,
      workflow: { name: 'wf-big' },
      parameters: [],
      status: 'completed',
      userId: null,
      startedAt: new Date(),
    });
    bigId = big.id;
    await ds.query(
      `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < ${3 * N - 1}) ` +
        `INSERT INTO "steps" ("run_id", "phase", "iteration", "step_index", "instrument", "method", "args", "output", "status", "started_at", "ended_at") ` +
        `SELECT ${bigId}, 'main', n / 10, n % 10, 'pump', 'dose', '{"volume_ml":1.5,"note":"=SUM(A1)"}', '{"mass_g":0.98,"raw":[1,2,3]}', 'ok', ` +
        `'2024-01-01 00:00:00.000', '2024-01-01 00:00:00.031' FROM seq`,
    );
    console.log(
      `  (filled in ${((performance.now() - t) / 1000).toFixed(1)} s: ${N.toLocaleString('en')} runs, ${N.toLocaleString('en')} steps in run ${runId}, ${(3 * N).toLocaleString('en')} in run ${bigId})`,
    );
    await store.close();
  }
  const s = await startServer(dir);
  try {
    const token = await tokenFor(s.base);
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
    const timeGet = async (path, check) => {
      const times = [];
      for (let i = 0; i < 25; i++) {
        const t = performance.now();
        const r = await http('GET', `${s.base}${path}`, { headers });
        times.push(performance.now() - t);
        if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text.slice(0, 200)}`);
        if (i === 0) check(JSON.parse(r.text));
      }
      return { first: times[0], median: median(times.slice(1)) };
    };
    const kw = await timeGet('/executions/records?keyword=titration&page=500&format=json', (b) => {
      if (b.total !== N / 10 || b.records.length !== 20 || b.records[0].name !== 'Run 200 Titration') throw new Error(`wrong page: ${JSON.stringify(b).slice(0, 300)}`);
    });
    line('records list, keyword, page 500 (median of 24)', `${kw.median.toFixed(1)} ms`, '< 50 ms', kw.median < 50);
    console.log(`  (first request ${kw.first.toFixed(1)} ms; HTTP round trip included, bearer token, 10,000 matches of 100,000 runs)`);
    const plain = await timeGet('/executions/records?page=500&format=json', (b) => {
      if (b.total !== N + 2 || b.records.length !== 20) throw new Error('wrong page');
    });
    line('records list, no keyword, page 500', `${plain.median.toFixed(1)} ms`, '(reported)');
    const wf = await timeGet('/executions/records?keyword=WF-7&format=json', (b) => {
      if (b.total !== N / 50) throw new Error('wrong total');
    });
    line('records list, workflow-name keyword, page 1', `${wf.median.toFixed(1)} ms`, '(reported)');
    // the list page as a browser gets it against its JSON: the same session cookie, taken in turn
    const cookie = await cookieFor(s.base);
    const [html, json] = await timePaths(s.base, ['/executions/records?page=500', '/executions/records?page=500&format=json'], { cookie }, { rounds: 100 });
    line('records list page, HTML against its JSON', `+${(html - json).toFixed(1)} ms`, `<= +2 ms (${html.toFixed(1)} against ${json.toFixed(1)} ms, ${(html / json).toFixed(2)}x)`, html <= json + 2);

    // The steps CSV of the 100,000-step run, streamed; the server's RSS is sampled during the stream.
    const stream = (id) =>
      new Promise((resolve, reject) => {
        let rows = -1; // the header
        let bytes = 0;
        let peak = 0;
        const t = performance.now();
        const sampler = setInterval(
          () =>
            rssOf(s.proc.pid).then(
              (m) => (peak = Math.max(peak, m)),
              () => undefined,
            ),
          10,
        );
        const req = request(`${s.base}/executions/records/${id}/steps_data_csv`, { headers: { authorization: `Bearer ${token}` }, agent }, (res) => {
          if (res.statusCode !== 200) return reject(new Error(`steps CSV: ${res.statusCode}`));
          res.on('data', (c) => {
            bytes += c.length;
            for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) rows++;
          });
          res.on('end', () => {
            clearInterval(sampler);
            resolve({ rows, bytes, ms: performance.now() - t, peak });
          });
        });
        req.on('error', reject);
        req.end();
      });
    await new Promise((r) => setTimeout(r, 300));
    // RSS while streaming: the first stream of a fresh server also grows V8's heap headroom (a one-off);
    // then the 100,000-row export and one three times as long. Flat memory: the second does not cost more
    // than the first (a buffered export would take about three times as much).
    const measure = async (id, want) => {
      const before = await rssOf(s.proc.pid);
      const r = await stream(id);
      if (r.rows !== want) throw new Error(`the CSV has ${r.rows} rows, not ${want}`);
      return { ...r, before, growth: Math.max(0, r.peak - before), size: `${(r.bytes / 1e6).toFixed(0)} MB` };
    };
    const cold = await measure(runId, N);
    line('steps CSV, 100,000 rows: RSS growth, cold server', `+${cold.growth.toFixed(0)} MB`, '(reported: heap warm-up)');
    const warm = await measure(runId, N);
    line('steps CSV, 100,000 rows: RSS growth, warm', `+${warm.growth.toFixed(0)} MB`, `(reported; the file is ${warm.size})`);
    line(
      '  rows per second',
      `${Math.round(warm.rows / (warm.ms / 1000)).toLocaleString('en')}`,
      `(${(warm.ms / 1000).toFixed(2)} s; RSS ${warm.before.toFixed(0)} → peak ${warm.peak.toFixed(0)} MB)`,
    );
    const long = await measure(bigId, 3 * N);
    const flat = long.growth <= warm.growth + 16;
    line('steps CSV, 300,000 rows: RSS growth', `+${long.growth.toFixed(0)} MB`, `flat: ≤ the 100,000-row growth + 16 MB (file ${long.size})`, flat);
  } finally {
    await stop(s.proc);
    await rm(dir, { recursive: true, force: true });
  }
}

/* ------------------------------------------------------------------------------------------ optimizers */
