/**
 * A person's value for an input step (issue 31): `POST /executions/input`. Thin: parse, give it to the runner
 * (which checks it against the step's schema and passes it on to the labdeck that runs the task), audit, answer.
 */
import { Router } from 'express';
import { z } from 'zod';
import type { Runtime } from '../../core/runtime.js';
import { error, json, redirect } from '../api-doc.js';
import { url, wantsJson } from '../http.js';
import { ID, handle, route } from '../route.js';

const SECTION = 'Workflow execution';

export const INPUT_ROUTES = {
  give: route({
    method: 'POST',
    path: '/executions/input',
    section: SECTION,
    summary: 'Give the value an input step waits for: { value, task_id? }',
    operationId: 'giveInput',
    client: {
      name: 'give_input',
      doc: 'Give the value a waiting input step asks for (GET /executions/status: `input` says what it asks and what fits). A value that does not fit is a 400 naming the field; the run keeps waiting.',
    },
    description:
      'The run waits in the state `waiting_input` (GET /app/executions/status: `input` has the prompt, the variable and the schema). ' +
      'JSON or a form: `value` (a form\'s text is read into the schema\'s type: "7.2" is a number), `task_id` while several tasks wait. ' +
      'A value that does not fit is a 400 naming `value`, and the run keeps waiting. The value is recorded with who gave it and when (the step of the run), and saved as the step\'s variable.',
    body: {
      name: 'InputBody',
      schema: z.object({
        value: z.union([z.string(), z.number(), z.boolean()]).describe('The value: a number, a text, true/false (a form sends text)'),
        task_id: ID.optional().describe('The task whose input this is; needed while several tasks wait for input'),
      }),
    },
    responses: {
      200: json('Given: the task, the value as it was saved, and the status after', 'InputGiven'),
      302: redirect('A form: back to the page it came from'),
      400: error('The value does not fit the step\'s schema (details name `value` and what fits), or a field the route does not take'),
      404: error('task_id names no task'),
      409: error('No input is waiting (or not in that task), or several wait and no task_id says which'),
    },
  }),
};

export function inputRoutes(runtime: Runtime): Router {
  const r = Router();
  handle(r, INPUT_ROUTES.give, async (req, res, { body }) => {
    const user = req.user!;
    const given = await runtime.runner.input(body.value, { taskId: body.task_id, by: { id: user.id, username: user.username } });
    await runtime.audit(user.id, 'runner.input', { task_id: given.task_id, value: given.value });
    if (wantsJson(req)) return res.json(given);
    res.redirect(302, url(req, '/executions/config'));
  });
  return r;
}
