// `npm run bench [section…]`: the figures the issues ask for, measured on this machine against a real `lab serve`.
// Each figure is printed with its target; nothing here is a test (no pass/fail exit code).
// One file per section in scripts/bench/, sharing scripts/bench/common.mjs.
import { agent } from './bench/common.mjs';

const names = ['foundation', 'records', 'orchestration', 'optimizers', 'python', 'hardening', 'flood', 'lab', 'notify', 'preflight', 'safety'];
const only = process.argv.slice(2);
const unknown = only.filter((n) => !names.includes(n));
if (unknown.length) {
  console.error(`No bench section ${unknown.join(', ')}; the sections are: ${names.join(', ')}.`);
  process.exit(2);
}
for (const name of names) {
  if (only.length && !only.includes(name)) continue;
  const { default: run } = await import(`./bench/${name}.mjs`);
  await run();
}
agent.destroy();
