/**
 * A person's value for an input step (issue 31): `POST /executions/input`. Thin: parse, give it to the runner
 * through the operation (runs.input: checked against the step's schema, passed on to the labdeck that runs the
 * task, audited), answer.
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import { MAX_INPUT_FILE_BYTES } from '../../core/workflow/input.js';
import { callerOf } from '../caller.js';
import { multipart } from '../uploads.js';
import { error, json, redirect } from '../api-doc.js';
import { url } from '../http.js';
import { redirectTo } from '../respond.js';
import { ID, handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';

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
      "A value that does not fit is a 400 naming `value`, and the run keeps waiting. The value is recorded with who gave it and when (the step of the run), and saved as the step's variable.",
    body: {
      name: 'InputBody',
      kinds: ['json', 'form', 'multipart'],
      schema: z.object({
        value: z.union([z.string(), z.number(), z.boolean()]).optional().describe('The value: a number, a text, true/false (a form sends text)'),
        file: z
          .custom<Express.Multer.File>((v) => typeof v === 'object' && v !== null, 'must be an uploaded file')
          .optional()
          .meta({ type: 'string', contentMediaType: 'application/octet-stream', description: 'A file input\'s file: the multipart field "file"' }),
        task_id: ID.optional().describe('The task whose input this is; needed while several tasks wait for input'),
      }),
    },
    responses: {
      200: json('Given: the task, the value as it was saved, and the status after', 'InputGiven'),
      302: redirect('A form: back to the page it came from'),
      400: error("The value does not fit the step's schema (details name `value` and what fits), or a field the route does not take"),
      404: error('task_id names no task'),
      409: error('No input is waiting (or not in that task), or several wait and no task_id says which'),
    },
  }),
};

export function inputRoutes(runtime: Runtime): Router {
  const r = Router();
  const upload = multipart({ limits: { fileSize: MAX_INPUT_FILE_BYTES, files: 1, fields: 3, fieldSize: 1024, parts: 4 } }, 'file');
  /** A multipart body: the file joins the fields as `file`; multer's errors name the field. */
  const receive = (req: Request, res: Response) =>
    new Promise<void>((resolve, reject) => {
      if (!req.is('multipart/form-data')) return resolve();
      upload(req, res, (e?: unknown) => {
        if (!e) {
          if (req.file) req.body = { ...req.body, file: req.file };
          return resolve();
        }
        const m = e as { code?: string; message?: string };
        if (m.code === 'LIMIT_FILE_SIZE') return reject(new LabError('payload_too_large', `The file is over ${MAX_INPUT_FILE_BYTES} bytes.`, [{ field: 'file', message: 'too large' }]));
        reject(new LabError('invalid_input', `Send one file, in the multipart field "file" (${m.message ?? 'malformed upload'}).`, [{ field: 'file', message: 'one file, in the field "file"' }]));
      });
    });
  handle(
    r,
    INPUT_ROUTES.give,
    async (req, res, { body }) => {
      const caller = callerOf(req, 'app');
      const given = body.file
        ? await runtime.ops.runs.inputFile(caller, { data: body.file.buffer, name: body.file.originalname, type: body.file.mimetype }, body.task_id)
        : await runtime.ops.runs.input(caller, body.value, body.task_id);
      await redirectTo(req, res, url(req, '/executions/config'), given);
    },
    { receive },
  );
  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const INPUTS_GROUP = routeGroup({ name: 'inputs', routes: INPUT_ROUTES, mount: inputRoutes });
