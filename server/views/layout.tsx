import type { ReactNode } from 'react';
import type { PublicUser } from '../../core/accounts/index.js';

/** What every page needs to know about the request it answers. */
export interface ViewCtx {
  url: (path: string) => string;
  user?: PublicUser;
  mode: 'light' | 'dark';
  logo: boolean;
  path: string;
  /** How many things wait for a person (the navigation's Attention badge). */
  attention?: number;
}

const NAV: [string, string][] = [
  ['/instruments/', 'Instruments'],
  ['/instruments/new/', 'Connect device'],
  ['/workflows', 'Workflows'],
  ['/executions/config', 'Run'],
  ['/executions/records', 'Records'],
  ['/approvals', 'Approvals'],
  ['/resources', 'Resources'],
  ['/safety', 'Safety'],
  ['/attention', 'Attention'],
  ['/help', 'Help'],
];

export function Layout({ ctx, title, children }: { ctx: ViewCtx; title: string; children: ReactNode }) {
  const u = ctx.url;
  // the longest nav path the page is under is the active one (/instruments/new/ over /instruments/)
  const active = NAV.filter(([p]) => ctx.path.startsWith(p)).sort((a, b) => b[0].length - a[0].length)[0]?.[0];
  return (
    <html lang="en" data-bs-theme={ctx.mode}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta
          name="htmx-config"
          content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"responseHandling":[{"code":"204","swap":false},{"code":"[2345]..","swap":true}]}'
        />
        <title>{`${title} · labdeck`}</title>
        <link rel="icon" href={u('/static/favicon.svg')} type="image/svg+xml" />
        <link rel="stylesheet" href={u('/static/vendor/bootstrap.min.css')} />
        <link rel="stylesheet" href={u('/static/app.css')} />
        <script src={u('/static/vendor/htmx.min.js')} defer />
        <script src={u('/static/vendor/bootstrap.bundle.min.js')} defer />
        <script src={u('/static/vendor/Sortable.min.js')} defer />
        <script src={u('/static/app.js')} defer />
      </head>
      <body data-base={u('/')}>
        <nav className="navbar navbar-expand-md border-bottom mb-3">
          <div className="container-fluid">
            <a className="navbar-brand d-flex align-items-center gap-2" href={u('/')}>
              {ctx.logo ? <img src={u('/logo')} alt="" height={28} /> : null}
              <span>labdeck</span>
            </a>
            <button className="navbar-toggler" type="button" data-bs-toggle="collapse" data-bs-target="#nav" aria-label="Menu">
              <span className="navbar-toggler-icon" />
            </button>
            <div className="collapse navbar-collapse" id="nav">
              <ul className="navbar-nav me-auto">
                {NAV.map(([p, label]) => (
                  <li className="nav-item" key={p}>
                    <a className={`nav-link${p === active ? ' active' : ''}`} href={u(p)} aria-current={p === active ? 'page' : undefined}>
                      {label}
                      {p === '/attention' && ctx.attention ? (
                        <span className="badge text-bg-warning ms-1" id="attention-count" aria-label={`${ctx.attention} waiting`}>
                          {ctx.attention}
                        </span>
                      ) : null}
                    </a>
                  </li>
                ))}
              </ul>
              {ctx.user ? (
                <div className="d-flex align-items-center gap-2">
                  <a className="nav-link" href={u('/account')}>
                    {ctx.user.username}
                    {ctx.user.role === 'admin' ? <span className="badge text-bg-secondary ms-1">admin</span> : null}
                  </a>
                  {ctx.user.role === 'admin' ? (
                    <a className="nav-link" href={u('/account/users')}>
                      Users
                    </a>
                  ) : null}
                  <a className="nav-link" href={u(ctx.user.role === 'admin' ? '/notifications' : '/notifications/me')}>
                    Notifications
                  </a>
                  <form method="post" action={u('/auth/logout')} className="m-0">
                    <button className="btn btn-sm btn-outline-secondary" type="submit">
                      Log out
                    </button>
                  </form>
                </div>
              ) : (
                <a className="nav-link" href={u('/auth/login')}>
                  Log in
                </a>
              )}
            </div>
          </div>
        </nav>
        <main className="container-fluid pb-5">{children}</main>
      </body>
    </html>
  );
}

/**
 * A moment, one way everywhere: `2024-05-01 14:03:07 UTC` from the server, which the browser script
 * (server/client/time.ts) rewrites in the viewer's own time zone, with its name (`2024-05-01 16:03:07 CEST`).
 */
export function LocalTime({ iso }: { iso: string | null }) {
  if (!iso) return <span className="text-body-secondary">—</span>;
  return (
    <time dateTime={iso} data-local="">
      {iso.slice(0, 19).replace('T', ' ')} UTC
    </time>
  );
}

export function Alert({ kind, children }: { kind: 'danger' | 'success' | 'info' | 'warning'; children: ReactNode }) {
  return (
    <div className={`alert alert-${kind}`} role={kind === 'danger' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

export function ErrorList({ error }: { error?: { message: string; details?: { field?: string; message: string }[] } }) {
  if (!error) return null;
  return (
    <Alert kind="danger">
      <strong className="error-message">{error.message}</strong>
      {error.details?.length ? (
        <ul className="mb-0 mt-1">
          {error.details.map((d, i) => (
            <li key={i}>
              {d.field ? <code>{d.field}</code> : null} {d.message}
            </li>
          ))}
        </ul>
      ) : null}
    </Alert>
  );
}

/** A breadcrumb trail: links to the pages above this one, then this page's name. */
export function Breadcrumb({ links, current, className }: { links: { href: string; label: string }[]; current: string; className?: string }) {
  return (
    <nav aria-label="breadcrumb">
      <ol className={className ? `breadcrumb ${className}` : 'breadcrumb'}>
        {links.map((l) => (
          <li className="breadcrumb-item" key={l.href}>
            <a href={l.href}>{l.label}</a>
          </li>
        ))}
        <li className="breadcrumb-item active">{current}</li>
      </ol>
    </nav>
  );
}

/**
 * The GET form that chooses the workflow a page is about (`?workflow=NAME`). With `selectId` the select
 * has that id and a hidden label, else an aria-label; `autosubmit` submits it on change (page script).
 */
export function WorkflowPicker(props: { action: string; id: string; workflows: { name: string; version: number }[]; current?: string; selectId?: string; autosubmit?: boolean }) {
  const { selectId } = props;
  return (
    <form method="get" action={props.action} className="d-flex gap-2 mb-3" id={props.id}>
      {selectId ? (
        <label className="visually-hidden" htmlFor={selectId}>
          Workflow
        </label>
      ) : null}
      <select className="form-select" id={selectId} name="workflow" defaultValue={props.current} aria-label={selectId ? undefined : 'Workflow'} data-autosubmit={props.autosubmit ? 'true' : undefined}>
        {props.workflows.map((w) => (
          <option key={w.name} value={w.name}>
            {w.name} (v{w.version})
          </option>
        ))}
      </select>
      <button className="btn btn-outline-secondary">Choose</button>
    </form>
  );
}

export function ErrorPage({ ctx, status, error }: { ctx: ViewCtx; status: number; error: { message: string; details?: { field?: string; message: string }[] } }) {
  return (
    <Layout ctx={ctx} title={`Error ${status}`}>
      <h1 className="h3">Error {status}</h1>
      <ErrorList error={error} />
      <a href={ctx.url('/')}>Back to the home page</a>
    </Layout>
  );
}
