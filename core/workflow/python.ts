/**
 * Workflows as Python (DESIGN.md §13). Import: the Python host reads ivoryOS-style Python with `ast` (never
 * running it; python/labdeck_host/workflow_py.py) into the workflow document, which is then validated against
 * the lab's instruments like any other. Export: a workflow as a runnable script over labdeck's generated Python
 * client (`labdeck_client.py`), in the same subset, so exporting and importing again gives the same workflow.
 */
import { LabError, type ErrorDetail } from '../errors.js';
import type { ParseWorkflowInput } from '../hosts/python.js';
import { RemoteError } from '../hosts/python.js';
import { outputName, outputSource, Workflow, type Arg, type Condition, type Parameter, type Step } from './model.js';
import { validateWorkflow, type DeckSchemas } from './validate.js';

/** What import needs of the Python host. */
export interface WorkflowParser {
  parseWorkflow(req: ParseWorkflowInput): Promise<unknown>;
}

/**
 * The workflow written in `req` (a whole script, or ivoryOS's prep / script / cleanup texts), checked against
 * the lab's instruments. Python outside the subset → invalid_input naming the line (and `data.line`);
 * an unknown instrument, method or argument → invalid_input naming the step path.
 */
export async function workflowFromPython(host: WorkflowParser, req: ParseWorkflowInput, deck: DeckSchemas): Promise<Workflow> {
  let doc: unknown;
  try {
    doc = await host.parseWorkflow(req);
  } catch (e) {
    if (!(e instanceof RemoteError) || e.payload.kind !== 'invalid_input') throw e;
    const { message, field, line } = e.payload;
    throw new LabError('invalid_input', `Python ${message}.`, [{ field: field ?? ('source' in req ? 'source' : 'script'), message }], { line });
  }
  return validateWorkflow(doc, deck);
}

/* ------------------------------------------------------------------ export */

/** A plain Python identifier (ASCII), not a keyword: what may be written into a script as code. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PY_KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
);
const plain = (name: unknown): boolean => typeof name === 'string' && IDENTIFIER.test(name) && !PY_KEYWORDS.has(name);

/**
 * The workflow as the exporters write it, or 400 naming each step and field that cannot be written as code
 * (issue 26 #7). A stored document is read again with the model first (a crafted one is not trusted: an `op`,
 * a number or a kind is checked, not pasted), then every name written as code (instruments, methods,
 * arguments, variables, parameters, outputs' variables) must be a plain identifier; text is always quoted.
 */
function exportable(doc: unknown): Workflow {
  const parsed = Workflow.safeParse(doc);
  const name = (doc as { name?: unknown } | null)?.name;
  const fail = (details: ErrorDetail[]) =>
    new LabError(
      'invalid_input',
      `The workflow ${JSON.stringify(String(name).slice(0, 100))} cannot be written as Python: ${details
        .map((d) => `${d.field} ${d.message}`)
        .slice(0, 3)
        .join('; ')}.`,
      details,
    );
  if (!parsed.success)
    throw fail(
      parsed.error.issues.map((i) => ({
        field:
          i.path
            .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
            .join('')
            .replace(/^\./, '') || 'workflow',
        message: i.message,
      })),
    );
  const wf = parsed.data;
  const bad: ErrorDetail[] = [];
  const need = (field: string, v: string) => {
    if (!plain(v)) bad.push({ field, message: `${JSON.stringify(v.slice(0, 64))} is not a plain Python identifier (letters, digits and _, not a keyword), so it cannot be written into a script` });
  };
  const arg = (field: string, a: Arg) => {
    if ('param' in a) need(field, a.param);
    else if ('var' in a) need(field, a.var);
  };
  const walk = (list: readonly Step[], at: string) =>
    list.forEach((st, i) => {
      const here = `${at}[${i}]`;
      if (st.kind === 'call') {
        need(`${here}.instrument`, st.instrument);
        need(`${here}.method`, st.method);
        for (const [k, a] of Object.entries(st.args ?? {})) {
          need(`${here}.args.${k}`, k);
          arg(`${here}.args.${k}`, a);
        }
        if (st.save_as !== undefined) need(`${here}.save_as`, st.save_as);
      } else if (st.kind === 'repeat') walk(st.steps, `${here}.steps`);
      else if (st.kind === 'if') {
        arg(`${here}.condition.left`, st.condition.left);
        arg(`${here}.condition.right`, st.condition.right);
        walk(st.then, `${here}.then`);
        walk(st.else ?? [], `${here}.else`);
      }
    });
  wf.parameters.forEach((p, i) => need(`parameters[${i}].name`, p.name));
  wf.outputs.forEach((o, i) => need(`outputs[${i}]`, outputSource(o).split('.')[0]!));
  walk(wf.prep, 'prep');
  walk(wf.main, 'main');
  walk(wf.cleanup, 'cleanup');
  if (bad.length) throw fail(bad);
  return wf;
}

/** Text for a `#` comment: one line, whatever it holds. */
const comment = (text: string): string => text.replace(/[\s\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ');

const PY_TYPES: Record<Parameter['type'], string> = { number: 'float', integer: 'int', string: 'str', boolean: 'bool' };
const INDENT = '    ';

/** A Python literal of a JSON value (a JSON string literal is a Python one). */
function literal(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (Array.isArray(v)) return `[${v.map(literal).join(', ')}]`;
  if (typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${literal(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v);
}

const arg = (a: Arg): string => ('value' in a ? literal(a.value) : 'param' in a ? a.param : a.var);
const condition = (c: Condition): string => `${arg(c.left)} ${c.op} ${arg(c.right)}`;

/** The steps as Python lines at `depth`; instrument calls on `on` (`lab` over labdeck's client, `deck` as ivoryOS writes). */
function steps(list: readonly Step[], depth: number, on = 'lab'): string[] {
  const pad = INDENT.repeat(depth);
  if (!list.length) return [`${pad}pass`];
  return list.flatMap((s): string[] => {
    const label = s.label ? [`${pad}# ${comment(s.label)}`] : [];
    switch (s.kind) {
      case 'call': {
        const args = Object.entries(s.args ?? {}).map(([k, a]) => `${k}=${arg(a)}`);
        return [...label, `${pad}${s.save_as ? `${s.save_as} = ` : ''}${on}.${s.instrument}.${s.method}(${args.join(', ')})`];
      }
      case 'wait':
        return [...label, `${pad}time.sleep(${s.seconds})`];
      case 'pause':
        return [...label, `${pad}input(${s.message ? literal(s.message) : ''})`];
      case 'input':
        return [
          ...label,
          `${pad}${s.save_as} = ${s.schema.type === 'number' ? 'float(' : s.schema.type === 'integer' ? 'int(' : ''}input(${literal(s.prompt)})${s.schema.type === 'number' || s.schema.type === 'integer' ? ')' : ''}`,
        ];
      case 'repeat':
        return [...label, `${pad}for _ in range(${s.times}):`, ...steps(s.steps, depth + 1, on)];
      case 'if':
        return [...label, `${pad}if ${condition(s.condition)}:`, ...steps(s.then, depth + 1, on), ...(s.else ? [`${pad}else:`, ...steps(s.else, depth + 1, on)] : [])];
    }
  });
}

/** `run.yield` → `run["yield"]`: an output is a variable or a field of one. */
function output(name: string): string {
  const [root, ...path] = name.split('.');
  return root + path.map((p) => `[${/^\d+$/.test(p) ? p : JSON.stringify(p)}]`).join('');
}

/** The main function's name: the workflow's, unless that cannot be one (then `script`, and import takes the name). */
function mainName(wf: Workflow): string {
  const plain = /^[A-Za-z_][A-Za-z0-9_]*$/.test(wf.name) && !/(^|_)(prep|cleanup)$/.test(wf.name) && !PY_RESERVED.has(wf.name);
  return plain ? wf.name : 'script';
}

const PY_RESERVED = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield lab time labdeck_client input range argparse os params parser'.split(
    ' ',
  ),
);

/**
 * The script's command line: one `--name` option per parameter (its type; required when it has no default),
 * read before prep, so a missing value is a usage message (exit 2) with no instrument touched.
 */
function commandLine(wf: Workflow): string[] {
  if (!wf.parameters.length) return [];
  const option = (p: Parameter) => {
    const type = p.type === 'boolean' ? 'lambda text: text.strip().lower() in ("1", "true", "yes", "on")' : PY_TYPES[p.type];
    const given = p.default === undefined ? 'required=True' : `default=${literal(p.default)}`;
    const help = p.default === undefined ? `${p.type} (required)` : `${p.type}, default ${JSON.stringify(p.default)}`;
    return `${INDENT}parser.add_argument(${literal(`--${p.name}`)}, dest=${literal(p.name)}, type=${type}, ${given}, help=${literal(help)})`;
  };
  return [`${INDENT}parser = argparse.ArgumentParser(description=${literal(`Run the labdeck workflow "${wf.name}".`)})`, ...wf.parameters.map(option), `${INDENT}params = vars(parser.parse_args())`];
}

/** The workflow as a runnable Python script over labdeck's generated client (`clientUrl`: where to get it). */
export function workflowToPython(stored: Workflow, clientUrl: string): string {
  const wf = exportable(stored);
  const fn = mainName(wf);
  const params = wf.parameters.map((p) => `${p.name}: ${PY_TYPES[p.type]}${p.default === undefined ? '' : ` = ${literal(p.default)}`}`);
  const returns = wf.outputs.length ? [`${INDENT}return {${wf.outputs.map((o) => `${JSON.stringify(outputName(o))}: ${output(outputSource(o))}`).join(', ')}}`] : [];
  // a docstring: backslashes and every quote escaped (a closing quote would end it early)
  const doc = wf.description.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  return [
    ...(doc ? [`"""${doc}"""`] : []),
    `# Exported from labdeck (workflow "${comment(wf.name)}"). It runs over labdeck's Python client: download`,
    `# ${comment(clientUrl)} as labdeck_client.py beside this file, set LABDECK_TOKEN to an API token, and run it.`,
    `# Import it back with POST /app/workflows/import/python (or the workflows page).`,
    ...(wf.parameters.length
      ? [
          `# ${comment(`Its parameters are options: python ${wf.name}.py ${wf.parameters.map((p) => `--${p.name} ${p.default === undefined ? p.type.toUpperCase() : JSON.stringify(p.default)}`).join(' ')} (--help lists them).`)}`,
          'import argparse',
        ]
      : []),
    'import os',
    'import time',
    '',
    'import labdeck_client',
    '',
    '',
    `def ${fn}_prep():`,
    ...steps(wf.prep, 1),
    '',
    '',
    `def ${fn}(${params.length ? `*, ${params.join(', ')}` : ''}):`,
    ...steps(wf.main, 1),
    ...returns,
    '',
    '',
    `def ${fn}_cleanup():`,
    ...steps(wf.cleanup, 1),
    '',
    '',
    'if __name__ == "__main__":',
    ...commandLine(wf),
    `${INDENT}lab = labdeck_client.Lab(token=os.environ.get("LABDECK_TOKEN"))`,
    `${INDENT}${fn}_prep()`,
    `${INDENT}try:`,
    `${INDENT}${INDENT}print(${fn}(${wf.parameters.length ? '**params' : ''}))`,
    `${INDENT}finally:`,
    `${INDENT}${INDENT}${fn}_cleanup()`,
    '',
  ].join('\n');
}

/**
 * The workflow as ivoryOS compiles its draft: one Python function per phase that has steps (`prep`, `script`,
 * `cleanup`), calling the deck's instruments as `deck.<instrument>.<method>(...)`, the main function's
 * arguments its parameters and its `return {...}` its outputs. Submitting these texts back
 * (POST /ivoryos/api/get_script, /ivoryos/draft/submit_python) gives the same workflow.
 */
export function workflowToPhases(doc: Workflow): { prep?: string; script?: string; cleanup?: string } {
  const wf = exportable(doc);
  const fn = mainName(wf);
  const params = wf.parameters.map((p) => `${p.name}: ${PY_TYPES[p.type]}${p.default === undefined ? '' : ` = ${literal(p.default)}`}`);
  const returns = wf.outputs.length ? [`${INDENT}return {${wf.outputs.map((o) => `${JSON.stringify(outputName(o))}: ${output(outputSource(o))}`).join(', ')}}`] : [];
  const out: { prep?: string; script?: string; cleanup?: string } = {};
  if (wf.prep.length) out.prep = [`def ${fn}_prep():`, ...steps(wf.prep, 1, 'deck'), ''].join('\n');
  if (wf.main.length || wf.parameters.length || wf.outputs.length) out.script = [`def ${fn}(${params.join(', ')}):`, ...steps(wf.main, 1, 'deck'), ...returns, ''].join('\n');
  if (wf.cleanup.length) out.cleanup = [`def ${fn}_cleanup():`, ...steps(wf.cleanup, 1, 'deck'), ''].join('\n');
  return out;
}
