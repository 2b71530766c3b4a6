/**
 * Operations on saved workflows (DESIGN.md §4, §15): list, read, save a version, delete (its creator or an
 * admin; audited), and read ivoryOS-style Python into a workflow checked against the lab's instruments.
 */
import { ownerOrAdmin } from '../accounts/index.js';
import { LabError } from '../errors.js';
import { brokenWorkflows, type BrokenStep } from '../resources/broken.js';
import type { WorkflowRow } from '../store/types.js';
import { validateWorkflow, type Workflow } from '../workflow/index.js';
import { fromIvoryosJson, toIvoryosJson } from '../workflow/ivoryos-json.js';
import { workflowFromPython } from '../workflow/python.js';
import type { Caller } from './caller.js';
import { audit, type Lab } from './lab.js';

export function workflowOperations(lab: Lab) {
  const { store, runner } = lab;
  const ops = {
    list(): Promise<WorkflowRow[]> {
      return store.workflows.list();
    },

    /** Usernames by account id, for "saved by" (one query). */
    async authors(): Promise<Map<number, string>> {
      return new Map((await store.users.list()).map((u) => [u.id, u.username]));
    },

    /** The latest version (or `version`), or null. */
    get(name: string, version?: number): Promise<WorkflowRow | null> {
      return store.workflows.get(name, version);
    },

    /** The first version (who created the workflow, and when). */
    first(name: string): Promise<WorkflowRow | null> {
      return store.workflows.first(name);
    },

    /** Check a document against the lab's instruments (this deck's and other labdecks'). */
    validate(doc: unknown): Workflow {
      return validateWorkflow(doc, runner.catalogue);
    },

    /**
     * The saved workflows the current deck breaks (issue 32), by name: each problem with its step, field, call
     * and what changed in the deck (the newest deck version that changed that method).
     */
    async broken(): Promise<Map<string, BrokenStep[]>> {
      return new Map((await brokenWorkflows(store, runner.catalogue)).map((b) => [b.workflow, b.problems]));
    },

    /** Save a new version as the caller (`expectNew`: 409 when the name exists). */
    save(caller: Caller, wf: Workflow, opts: { expectNew?: boolean } = {}): Promise<WorkflowRow> {
      return store.workflows.save(wf.name, wf, caller.userId, opts);
    },

    /** ivoryOS-style Python (a script, or its prep, script and cleanup parts) read into a checked workflow; nothing saved. */
    /** An ivoryOS workflow JSON (the next generation's, or Classic's script_dict) as a workflow, validated against the deck. */
    fromIvoryos(doc: unknown, name?: string): Workflow {
      return validateWorkflow(fromIvoryosJson(doc, name), runner.catalogue);
    },

    /** A workflow as the next generation's workflow JSON. */
    toIvoryos(workflow: Workflow): Record<string, unknown> {
      return toIvoryosJson(workflow);
    },

    fromPython(input: Parameters<typeof workflowFromPython>[1]): Promise<Workflow> {
      return workflowFromPython(lab.python.parser, input, runner.catalogue);
    },

    /** Delete every version: the workflow's creator or an admin; audited `workflow.delete`. */
    async remove(caller: Caller, name: string): Promise<void> {
      const row = await store.workflows.get(name);
      if (!row) throw new LabError('not_found', `There is no workflow "${name}".`, [{ field: 'name', message: 'not found' }]);
      const first = await store.workflows.first(name);
      if (!ownerOrAdmin(first?.createdBy ?? row.createdBy, { id: caller.userId ?? -1, role: caller.role ?? 'operator' })) {
        throw new LabError('forbidden', `The workflow "${name}" was created by another user: only they or an admin may delete it.`, [{ field: 'name', message: 'not yours' }]);
      }
      if (!(await store.workflows.delete(name))) throw new LabError('not_found', `There is no workflow "${name}".`);
      await audit(lab, caller, 'workflow.delete', { name, versions: row.version });
    },
  };
  return ops;
}

export type WorkflowOperations = ReturnType<typeof workflowOperations>;
