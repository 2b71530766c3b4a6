/**
 * Instruments that live in another process (a PythonHost), seen by the Deck as ordinary drivers: every
 * method validates its arguments here, against the JSON Schema the host described, before the host is
 * asked (400 naming the field, the instrument never touched), then becomes a `call` request.
 *
 * The schemas shown (forms, OpenAPI, clients) are the host's own JSON Schemas, handed to the Deck through
 * `remoteInfo` rather than rebuilt from zod, so nothing the host said is lost in a round trip.
 */
import {
  DEVICE_TAG,
  INSTRUMENT_TAG,
  consumptionProblem,
  z,
  type CallContext,
  type DeviceSpec,
  type InstrumentDriver,
  type JSONSchema,
  type MethodDefinition,
  type Safety,
  type DeclaredSafety,
} from '../contracts/index.js';
import type { HostClass, HostInstrument, HostMethod } from '../contracts/host.js';
import { LabError } from '../errors.js';
import { checkValue } from '../workflow/jsonschema.js';
import { RemoteError, type CallEvents, type PythonHost } from './python.js';

/** Marks a driver whose instances live in a host process. Read by the deck. */
export const REMOTE = Symbol.for('labdeck.remote');

/** What a remote driver needs of the process its instruments live in: a PythonHost, or an agent's link. */
export interface HostLink {
  call(instrument: string, method: string, args: Record<string, unknown>, events?: CallEvents): Promise<unknown>;
  dispose(name: string): Promise<void>;
}

export interface RemoteInfo {
  host: HostLink;
  options: JSONSchema;
  optionsFields: string[];
  methods: Record<string, { params: JSONSchema; returns?: JSONSchema; inferred: boolean; inferredFields: string[] }>;
}

export function remoteInfo(driver: unknown): RemoteInfo | undefined {
  return (driver as { [REMOTE]?: RemoteInfo } | null)?.[REMOTE];
}

/** The handle a remote device's instance is: the host and the instrument's name there. */
export interface RemoteHandle {
  host: HostLink;
  name: string;
}

export { LABWARE_VIEW } from '../contracts/host.js';

/** One labware of a worktable as its page shows it. */
export interface LabwareItem {
  name: string;
  label: string;
  category: string | null;
  site: string | null;
  /** position names, rows of columns */
  grid: string[][];
  /** what a position holds: `{ volume_ul, liquids }`, or `{ tip }` on a tip rack */
  contents: Record<string, Record<string, unknown>>;
  tips_left?: number;
}

/** An instrument's worktable: `worktable: false` when it has none (or it could not be read: `error`). */
export interface LabwareView {
  worktable: boolean;
  deck?: { name?: string; kind?: string; label?: string };
  labware?: LabwareItem[];
  sites?: string[];
  editable?: boolean;
  catalog?: boolean;
  error?: string;
}

const SAFETIES = new Set<Safety>(['readonly', 'idempotent', 'hazardous']);
const declared = (s: unknown): DeclaredSafety | undefined => (SAFETIES.has(s as Safety) ? (s as DeclaredSafety) : undefined);

/** Whether a method described by a host declares what it consumes, in a shape that fits (./vet.ts logs one that does not). */
export function declaredUses(m: Pick<HostMethod, 'consumes' | 'params'>): boolean {
  return (
    m.consumes !== undefined && m.consumes !== null && (m.consumes as unknown[]).length > 0 && consumptionProblem(m.consumes, Object.keys((m.params?.properties as object | undefined) ?? {})) === null
  );
}

/**
 * A zod object that checks each argument against its JSON Schema property (types, enums, bounds, required,
 * nested objects and lists) and refuses unknown names, so remote methods fail the same way as local ones.
 */
export function zodFromJsonSchema(params: JSONSchema): z.ZodObject<z.ZodRawShape> {
  const props = (params.properties ?? {}) as Record<string, JSONSchema>;
  const required = new Set((params.required ?? []) as string[]);
  const shape: Record<string, z.ZodType> = {};
  for (const [name, schema] of Object.entries(props)) {
    const field = z.unknown().superRefine((v, ctx) => {
      if (v === undefined) {
        if (required.has(name)) ctx.addIssue({ code: 'custom', message: 'is required' });
        return;
      }
      const problem = checkValue(schema, v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
    shape[name] = required.has(name) ? field : field.optional();
  }
  return z.object(shape).strict();
}

/** Turn what the host answered into the deck's errors: 400 for bad arguments, 503 for a lost host. */
function hostFailure(e: unknown, label: string): unknown {
  if (e instanceof RemoteError && e.payload.kind === 'invalid_args') {
    const field = e.payload.field ?? '(arguments)';
    return new LabError('invalid_input', `Invalid arguments for ${label}: ${field} ${e.payload.message}`, [{ field, message: e.payload.message }]);
  }
  if (e instanceof RemoteError && (e.payload.kind === 'safety' || e.payload.kind === 'safety_file')) {
    // refused by the lab's safety file on the PC that drives it (a lab agent, core/safety/relayed.ts): no driver was touched
    const field = e.payload.field ?? '(arguments)';
    return new LabError(e.payload.kind, e.payload.message, [{ field, message: e.payload.message }], { refused_by: 'agent' });
  }
  if (e instanceof RemoteError && e.payload.kind === 'not_found') {
    return new LabError('unavailable', `${label} is not in the Python host any more (${e.payload.message}).`);
  }
  return e;
}

function methodsOf(host: HostLink, methods: HostMethod[]) {
  const defs: Record<string, MethodDefinition<RemoteHandle>> = {};
  const info: RemoteInfo['methods'] = {};
  for (const m of methods) {
    info[m.name] = { params: m.params, ...(m.returns ? { returns: m.returns } : {}), inferred: m.inferred ?? true, inferredFields: m.inferredFields ?? [] };
    defs[m.name] = {
      description: m.description ?? '',
      params: zodFromJsonSchema(m.params),
      safety: declared(m.safety),
      ...(declaredUses(m) ? { consumes: m.consumes } : {}),
      hidden: m.hidden ?? false,
      async run(h: RemoteHandle, args: Record<string, unknown>, ctx: CallContext) {
        try {
          return await host.call(h.name, m.name, args, { onEvent: (ev) => ctx.log(ev.level && ev.level !== 'info' ? `${ev.level.toUpperCase()} ${ev.text}` : ev.text) });
        } catch (e) {
          throw hostFailure(e, `${h.name}.${m.name}`);
        }
      },
    };
  }
  return { defs, info };
}

function driverOf(
  name: string,
  description: string,
  info: RemoteInfo,
  methods: Record<string, MethodDefinition<RemoteHandle>>,
  options: z.ZodObject<z.ZodRawShape>,
  create: InstrumentDriver<z.ZodObject<z.ZodRawShape>, RemoteHandle>['create'],
): InstrumentDriver {
  const driver = {
    [INSTRUMENT_TAG]: true as const,
    [REMOTE]: info,
    contract: 1,
    name,
    version: 'python',
    description,
    options,
    create,
    methods,
    async dispose(h: RemoteHandle) {
      await h.host.dispose(h.name);
    },
    with(opts: Record<string, unknown> = {}): DeviceSpec {
      return { [DEVICE_TAG]: true, driver: driver as unknown as InstrumentDriver, options: { ...opts } };
    },
  };
  return driver as unknown as InstrumentDriver;
}

/** A live instrument of a Python deck: its "driver" only reaches that one instance. */
export function instanceDriver(host: HostLink, inst: HostInstrument): InstrumentDriver {
  const { defs, info } = methodsOf(host, inst.methods);
  return driverOf(inst.class, inst.description, { host, options: { type: 'object', properties: {} }, optionsFields: [], methods: info }, defs, z.object({}).strict(), () => ({
    host,
    name: inst.name,
  }));
}

/** A Python class: connecting a device instantiates it in the host under the device's name. */
export function classDriver(host: PythonHost, cls: HostClass): InstrumentDriver {
  const { defs, info } = methodsOf(host, cls.methods);
  return driverOf(cls.name, cls.description, { host, options: cls.options, optionsFields: cls.inferredFields ?? [], methods: info }, defs, zodFromJsonSchema(cls.options), async (options, device) => {
    if (!device) throw new Error(`${cls.name} needs a device name to be created`);
    try {
      await host.connect(cls.id, device.name, options);
    } catch (e) {
      throw hostFailure(e, cls.name);
    }
    return { host, name: device.name };
  });
}
