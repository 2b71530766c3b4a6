import type { ReactNode } from 'react';
import type { PublicUser } from '../../core/accounts/index.js';

/** What every page needs to know about the request it answers. */
export interface ViewCtx {
  url: (path: string) => string;
  user?: PublicUser;
  mode: 'light' | 'dark';
  logo: boolean;
  path: string;
}

const NAV: [string, string][] = [
  ['/instruments/', 'Instruments'],
  ['/instruments/new/', 'Connect device'],
  ['/workflows', 'Workflows'],
  ['/executions/config', 'Run'],
  ['/executions/records', 'Records'],
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
        <meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"responseHandling":[{"code":"204","swap":false},{"code":"[2345]..","swap":true}]}' />
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
      <strong>{error.message}</strong>
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

export function ErrorPage({ ctx, status, error }: { ctx: ViewCtx; status: number; error: { message: string; details?: { field?: string; message: string }[] } }) {
  return (
    <Layout ctx={ctx} title={`Error ${status}`}>
      <h1 className="h3">Error {status}</h1>
      <ErrorList error={error} />
      <a href={ctx.url('/')}>Back to the home page</a>
    </Layout>
  );
}
