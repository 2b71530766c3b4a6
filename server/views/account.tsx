import { tokenScope, type PublicUser } from '../../core/accounts/index.js';
import type { TokenRow } from '../../core/store/types.js';
import { Alert, Layout, LocalTime, type ViewCtx } from './layout.js';

export function AccountPage(props: { ctx: ViewCtx; user: PublicUser; tokens: TokenRow[]; signup_open: boolean; users?: PublicUser[]; newToken?: string }) {
  const u = props.ctx.url;
  return (
    <Layout ctx={props.ctx} title="Account">
      <h1 className="h3">
        {props.user.username} <span className="badge text-bg-secondary">{props.user.role}</span>
      </h1>
      <p>
        <a href={u('/auth/change-password')}>Change password</a>
      </p>
      <h2 className="h5 mt-4">API tokens</h2>
      <p className="text-body-secondary">
        Scripts and notebooks send <code>Authorization: Bearer &lt;token&gt;</code>. A token is shown once, when it is made. An <strong>MCP</strong> token is for an AI assistant (docs/agents.md): it
        opens labdeck's MCP server and nothing else, and what needs approval waits in the <a href={u('/approvals')}>approval inbox</a>. An <strong>agent</strong> token (admins) serves an instrument
        PC's deck through <code>lab agent</code>.
      </p>
      {props.newToken ? (
        <Alert kind="success">
          New token (copy it now): <code id="new-token">{props.newToken}</code>
        </Alert>
      ) : null}
      <table className="table table-sm">
        <thead>
          <tr>
            <th>Name</th>
            <th>Starts with</th>
            <th>Scope</th>
            <th>Created</th>
            <th>Last used</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {props.tokens.map((t) => (
            <tr key={t.id}>
              <td>{t.name}</td>
              <td>
                <code>{t.prefix}…</code>
              </td>
              <td>{tokenScope(t.prefix)}</td>
              <td>
                <LocalTime iso={t.createdAt.toISOString()} />
              </td>
              <td>{t.lastUsedAt ? <LocalTime iso={t.lastUsedAt.toISOString()} /> : 'never'}</td>
              <td>
                <form method="post" action={u(`/account/tokens/${t.id}/delete`)} className="m-0">
                  <button className="btn btn-sm btn-outline-danger">Revoke</button>
                </form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form method="post" action={u('/account/tokens')} className="row g-2 align-items-end">
        <div className="col-auto">
          <label className="form-label" htmlFor="token-name">
            Token name
          </label>
          <input className="form-control" id="token-name" name="name" placeholder="notebook" />
        </div>
        <div className="col-auto">
          <label className="form-label" htmlFor="token-scope">
            Scope
          </label>
          <select className="form-select" id="token-scope" name="scope" defaultValue="user">
            <option value="user">user: a script acting as you</option>
            <option value="mcp">mcp: an AI assistant</option>
            {props.users ? <option value="agent">agent: an instrument PC (lab agent)</option> : null}
          </select>
        </div>
        {props.users ? (
          <div className="col-auto">
            <label className="form-label" htmlFor="token-agent-name">
              Agent name (agent tokens)
            </label>
            <input className="form-control" id="token-agent-name" name="agent_name" placeholder="hplc-pc" aria-describedby="token-agent-name-help" />
            <div id="token-agent-name-help" className="form-text">
              Only this token may then serve under that name.
            </div>
          </div>
        ) : null}
        <div className="col-auto">
          <button className="btn btn-primary">Make a token</button>
        </div>
      </form>
      {props.users ? (
        <>
          <h2 className="h5 mt-4">Lab settings (admin)</h2>
          <form method="post" action={u('/account/signup')} className="mb-3">
            <input type="hidden" name="open" value={props.signup_open ? 'false' : 'true'} />
            Sign-up is <strong>{props.signup_open ? 'open' : 'closed'}</strong>. <button className="btn btn-sm btn-outline-secondary">{props.signup_open ? 'Close sign-up' : 'Open sign-up'}</button>
          </form>
          <form method="post" action={u('/customize-logo')} encType="multipart/form-data" className="row g-2 align-items-end mb-3">
            <div className="col-auto">
              <label className="form-label" htmlFor="logo">
                Logo (PNG, JPEG, GIF or WebP, 1 MB max)
              </label>
              <input className="form-control" type="file" id="logo" name="logo" accept="image/png,image/jpeg,image/gif,image/webp" />
            </div>
            <div className="col-auto">
              <label className="form-label" htmlFor="mode">
                Mode
              </label>
              <select className="form-select" id="mode" name="mode" defaultValue={props.ctx.mode}>
                <option value="light">light</option>
                <option value="dark">dark</option>
              </select>
            </div>
            <div className="col-auto">
              <button className="btn btn-primary">Save</button>
            </div>
          </form>
          <h2 className="h5">Users</h2>
          <p>
            {props.users.length} {props.users.length === 1 ? 'account' : 'accounts'} ({props.users.filter((x) => x.role === 'admin').length} admin). <a href={u('/account/users')}>Manage users</a>:
            make admins or operators, reset a password, disable or delete an account.
          </p>
        </>
      ) : null}
    </Layout>
  );
}
