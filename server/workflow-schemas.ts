/**
 * The workflow routes' answers (server/routes/workflows.tsx), as zod: the answer check (server/answer-check.ts)
 * parses them, and server/openapi.ts turns them into the document's components, where a document in them is
 * a reference to the `Workflow` component (the zod model of core/workflow/model.ts).
 */
import { z } from 'zod';
import { Workflow } from '../core/workflow/model.js';

const version = z.int().min(1).describe('Every save makes a new version; the latest is the current one');
const saved = {
  updated_at: z.string().describe('ISO 8601 date-time: when this version was saved').optional(),
  updated_by: z.string().nullable().describe('Who saved it (null: unknown)').optional(),
};

const Broken = z.object({
  field: z.string().describe('The field (main[0].args.to)'),
  message: z.string(),
  step: z.string().describe('The step (main[0])'),
  call: z.string().optional().describe('The call the step makes (mover.move_sample)'),
  change: z.string().optional().describe('What changed in the deck (argument to renamed to target)'),
  deck_version: z.int().optional().describe('The deck version that changed it (GET /app/deck/versions/{id})'),
});

export const WORKFLOW_SCHEMAS = {
  WorkflowSaved: z.object({ name: z.string(), version, workflow: Workflow }),
  WorkflowVersion: z.object({ name: z.string(), version, ...saved, workflow: Workflow }),
  WorkflowList: z.object({
    workflows: z.array(
      z.object({
        name: z.string(),
        version,
        ...saved,
        description: z.string().optional(),
        parameters: Workflow.shape.parameters.optional(),
        outputs: z.array(z.string()).optional(),
        instruments: z.array(z.string()).optional().describe('The instruments its steps call'),
        steps: z.object({ prep: z.int().optional(), main: z.int().optional(), cleanup: z.int().optional() }).optional().describe('Top-level steps per phase'),
        broken: z.array(Broken).optional().describe('What the current deck breaks in it (empty: it fits the deck): each step and field, and the deck change that did it'),
      }),
    ),
  }),
  WorkflowBuilder: z
    .object({
      name: z.string().nullable().optional(),
      version: z.int().nullable().optional(),
      workflow: z.looseObject({ name: z.string() }).optional().describe('The document being edited (the Workflow component; a new one is empty: its name "", no steps)'),
      instruments: z.array(z.object({ name: z.string().optional(), driver: z.string().optional(), description: z.string().optional(), methods: z.array(z.looseObject({})).optional() })).optional(),
      urls: z.object({ list: z.string().optional(), base: z.string().optional(), run: z.string().optional() }).optional(),
    })
    .describe("What the builder page embeds: the document (an empty one for a new workflow) and the deck's methods"),
};
