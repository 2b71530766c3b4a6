import type { JSONSchema } from '../../core/contracts/index.js';
import { SchemaFields } from './fields.js';
import { Breadcrumb, ErrorList, Layout, type ViewCtx } from './layout.js';

export interface DriverView {
  name: string;
  description: string;
  origin: 'plugin' | 'imported' | 'deck';
  file: string;
  options: JSONSchema;
  inferred: boolean;
  inferredFields: string[];
}
type Err = { message: string; details?: { field?: string; message: string }[] };

/** What an import just added: the page says so (a list, or that it added nothing new). */
export interface Imported {
  file: string;
  instruments: string[];
  drivers: string[];
}

const ORIGIN: Record<DriverView['origin'], string> = { plugin: 'plugin', imported: 'imported', deck: 'from the deck' };

function ImportedNotice({ ctx, imported }: { ctx: ViewCtx; imported: Imported }) {
  const links = (names: string[], href: (n: string) => string) =>
    names.map((n, i) => (
      <span key={n}>
        {i ? ', ' : ''}
        <a href={ctx.url(href(n))}>{n}</a>
      </span>
    ));
  return (
    <div className="alert alert-success" role="status" id="imported">
      Imported <code>{imported.file}</code>. {imported.instruments.length ? <>Instruments added to the deck: {links(imported.instruments, (n) => `/instruments/${encodeURIComponent(n)}`)}. </> : null}
      {imported.drivers.length ? <>Drivers you can connect: {links(imported.drivers, (n) => `/instruments/new/${encodeURIComponent(n)}`)}.</> : null}
      {!imported.instruments.length && !imported.drivers.length ? 'It added no instrument and no driver.' : null}
    </div>
  );
}

export function NewDevicePage({ ctx, drivers, error, filepath, imported }: { ctx: ViewCtx; drivers: DriverView[]; error?: Err; filepath?: string; imported?: Imported }) {
  const admin = ctx.user?.role === 'admin';
  return (
    <Layout ctx={ctx} title="Connect a device">
      <h1 className="h3">Connect a device</h1>
      <p className="text-body-secondary">Pick a driver to connect a new device for this session of the server (it is gone after a restart; put it in the deck module to keep it).</p>
      {imported ? <ImportedNotice ctx={ctx} imported={imported} /> : null}
      <ErrorList error={error} />
      <div className="list-group mb-4">
        {drivers.map((d) => (
          <a className="list-group-item list-group-item-action" href={ctx.url(`/instruments/new/${encodeURIComponent(d.name)}`)} key={d.name}>
            <div className="d-flex justify-content-between">
              <strong>{d.name}</strong>
              <span className="small text-body-secondary">
                {ORIGIN[d.origin]}
                {d.inferred ? <span className="badge text-bg-info ms-1">inferred</span> : null}
              </span>
            </div>
            <div className="small text-body-secondary">{d.description || d.file}</div>
          </a>
        ))}
      </div>
      {admin ? (
        <div className="row g-4">
          <div className="col-md-6">
            <h2 className="h6">Import a driver module</h2>
            <p className="small text-body-secondary">A .py, .ts or .js file on this machine; its classes and drivers become connectable.</p>
            <form method="post" action={ctx.url('/instruments/new/module')} className="d-flex gap-2">
              <input className="form-control form-control-sm" name="filepath" placeholder="/home/lab/drivers/stirrer.py" defaultValue={filepath} aria-label="Module path" required />
              <button className="btn btn-sm btn-primary">Import</button>
            </form>
          </div>
          <div className="col-md-6">
            <h2 className="h6">Import a deck module</h2>
            <p className="small text-body-secondary">A Python deck script (its top-level instruments), or a .ts/.js module (its exported devices): they join the deck at once.</p>
            <form method="post" action={ctx.url('/instruments/new/deck-python')} className="d-flex gap-2">
              <input className="form-control form-control-sm" name="filepath" placeholder="/home/lab/decks/bench2.py" aria-label="Deck path" required />
              <button className="btn btn-sm btn-primary">Import</button>
            </form>
          </div>
        </div>
      ) : (
        <p className="small text-body-secondary">Only an admin can import modules and connect devices.</p>
      )}
    </Layout>
  );
}

export function ConnectPage({ ctx, driver, error, deviceName }: { ctx: ViewCtx; driver: DriverView; error?: Err; deviceName?: string }) {
  const action = ctx.url(`/instruments/new/${encodeURIComponent(driver.name)}`);
  return (
    <Layout ctx={ctx} title={`Connect ${driver.name}`}>
      <Breadcrumb links={[{ href: ctx.url('/instruments/new/'), label: 'Connect a device' }]} current={driver.name} />
      <h1 className="h3">Connect a {driver.name}</h1>
      {driver.description ? <p>{driver.description}</p> : null}
      <ErrorList error={error} />
      <div className="col-lg-6">
        <form method="post" action={action}>
          <div className="mb-3">
            <label className="form-label" htmlFor="device_name">
              Device name <span className="text-danger">*</span>
            </label>
            <input className="form-control" id="device_name" name="device_name" required pattern="[A-Za-z_][A-Za-z0-9_\-]*" defaultValue={deviceName} />
            <div className="form-text">How the device is called in the deck, workflows and the API.</div>
          </div>
          <SchemaFields schema={driver.options} idPrefix="opt" inferred={driver.inferredFields} />
          <button className="btn btn-primary mt-2" disabled={ctx.user?.role !== 'admin'}>
            Connect
          </button>
        </form>
      </div>
    </Layout>
  );
}
