/**
 * The rule that keeps every door on core/operations (issue 27, docs/architecture.md): a door that reaches the
 * store, the runner, the deck or the audit log itself fails the lint, and every door is under the rule.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { projectRoot } from '../../core/paths.js';

const eslint = new ESLint({ cwd: projectRoot });
const lint = async (file: string, code: string) => (await eslint.lintText(code, { filePath: join(projectRoot, file) }))[0].messages.map((m) => m.message);

describe('doors on the operations', () => {
  it('a door that reaches the lab itself fails the lint, naming why', async () => {
    const door = [
      "import type { Runtime } from '../../core/runtime.js';",
      "import { openStore } from '../../core/store/index.js';",
      'export async function f(runtime: Runtime) {',
      "  await runtime.store.audit.add({ userId: null, action: 'x', detail: {} });",
      '  await runtime.safety.replace({}, null);',
      "  await runtime.deck.call('pump', 'dose', {}, { userId: null });",
      "  await runtime.audit(null, 'x', {});",
      "  await runtime.accounts.login('ada', 'secret');",
      '  const { agents } = runtime;',
      '  return [openStore, agents];',
      '}',
    ].join('\n');
    for (const file of ['server/routes/safety.tsx', 'server/routes/resources.tsx', 'server/context.ts', 'server/security.ts', 'cli/user.ts', 'cli/agent.ts']) {
      const messages = await lint(file, door);
      expect(messages.some((m) => m.includes('The store is behind the operations'))).toBe(true);
      expect(messages.filter((m) => m.startsWith('runtime.<part>')).length).toBeGreaterThanOrEqual(5);
      expect(messages.some((m) => m.startsWith('const { <part> } = runtime'))).toBe(true);
      expect(messages.some((m) => m.startsWith('An audit line is written by the operation'))).toBe(true);
      expect(messages.some((m) => m.startsWith('deck.call'))).toBe(true);
    }
    // the same code outside a door (the operations) is not held to it
    expect((await lint('core/operations/zz-example.ts', door)).filter((m) => m.includes('operations'))).toEqual([]);
  }, 60_000);

  it('every route file that reaches the lab, the page context, lab user, lab agent and lab run are under the rule', async () => {
    const config = (await eslint.calculateConfigForFile(join(projectRoot, 'server/routes/safety.tsx'))) as { rules: Record<string, unknown> };
    expect(config.rules['@typescript-eslint/no-restricted-imports']).toBeDefined();
    const notDoors = new Set(['declared.ts']); // the route list
    const routes = readdirSync(join(projectRoot, 'server/routes'))
      .filter((f) => !notDoors.has(f))
      .map((f) => `server/routes/${f}`);
    for (const file of [
      ...routes,
      'server/ivoryos/index.ts',
      'server/ivoryos/shapes.ts',
      'server/mcp/index.ts',
      'server/agents.ts',
      'server/context.ts',
      'server/security.ts',
      'cli/user.ts',
      'cli/agent.ts',
      'cli/run.ts',
    ]) {
      const rules = ((await eslint.calculateConfigForFile(join(projectRoot, file))) as { rules: Record<string, unknown[]> }).rules;
      const syntax = JSON.stringify(rules['no-restricted-syntax'] ?? []);
      expect([file, syntax.includes('runtime.<part>')]).toEqual([file, true]);
    }
  }, 60_000);
});
