import type { ManagedUser, PublicUser } from '../../core/accounts/index.js';
import type { Role } from '../../core/store/types.js';
import { Alert, Breadcrumb, ErrorList, Layout, LocalTime, type ViewCtx } from './layout.js';

export type UserAction = 'role' | 'password' | 'disable' | 'enable' | 'delete';

/** What the page says after an action, about the account it was done to. */
function noticeOf(done: { action: UserAction; username: string; role?: Role }): string {
  const who = done.username;
  switch (done.action) {
    case 'role':
      return `${who} is now ${done.role === 'admin' ? 'an admin' : 'an operator'}.`;
    case 'password':
      return `${who}'s password was reset and their sessions were ended. Give them the new password; they can change it under Account → Change password.`;
    case 'disable':
      return `${who} is disabled: they cannot log in, and their sessions and API tokens no longer work.`;
    case 'enable':
      return `${who} is enabled again: they can log in, and their API tokens work again.`;
    case 'delete':
      return `${who} was deleted. Their records, runs and workflows keep their name; the name cannot be signed up again.`;
  }
}

export function UsersPage(props: {
  ctx: ViewCtx;
  users: ManagedUser[];
  me: PublicUser;
  done?: { action: UserAction; username: string; role?: Role };
  error?: { message: string; details?: { field?: string; message: string }[] };
}) {
  const u = props.ctx.url;
  const admins = props.users.filter((x) => x.role === 'admin' && !x.disabled).length;
  return (
    <Layout ctx={props.ctx} title="Users">
      <Breadcrumb links={[{ href: u('/account'), label: 'Account' }]} current="Users" />
      <h1 className="h3">Users</h1>
      <p className="text-body-secondary">
        Admins manage accounts and the lab's settings; operators run the instruments, workflows and campaigns. A disabled account cannot log in and its API tokens are refused until it is enabled
        again. Deleting an account keeps what it made under its name. You cannot disable or delete your own account, and the last admin who can log in stays an admin.
      </p>
      {props.done ? <Alert kind="success">{noticeOf(props.done)}</Alert> : null}
      <ErrorList error={props.error} />
      <table className="table table-sm align-middle" id="users">
        <thead>
          <tr>
            <th>User</th>
            <th>Role</th>
            <th>State</th>
            <th>Since</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {props.users.map((x) => {
            const me = x.id === props.me.id;
            const lastAdmin = x.role === 'admin' && !x.disabled && admins <= 1;
            const base = `/account/users/${x.id}`;
            return (
              <tr key={x.id} id={`user-${x.id}`}>
                <td>
                  {x.username}
                  {me ? <span className="text-body-secondary"> (you)</span> : null}
                </td>
                <td>{x.role}</td>
                <td>{x.disabled ? <span className="badge text-bg-warning">disabled</span> : <span className="badge text-bg-success">active</span>}</td>
                <td className="small">
                  <LocalTime iso={x.created_at} />
                </td>
                <td>
                  <div className="d-flex flex-wrap gap-2 align-items-start">
                    {lastAdmin ? null : (
                      <form method="post" action={u(`${base}/role`)} className="m-0">
                        <input type="hidden" name="role" value={x.role === 'admin' ? 'operator' : 'admin'} />
                        <button className="btn btn-sm btn-outline-secondary">{x.role === 'admin' ? 'Make operator' : 'Make admin'}</button>
                      </form>
                    )}
                    {me || lastAdmin ? null : (
                      <form method="post" action={u(`${base}/${x.disabled ? 'enable' : 'disable'}`)} className="m-0">
                        <button className="btn btn-sm btn-outline-warning">{x.disabled ? 'Enable' : 'Disable'}</button>
                      </form>
                    )}
                    {me ? (
                      <a className="btn btn-sm btn-link" href={u('/auth/change-password')}>
                        Change your password
                      </a>
                    ) : (
                      <details>
                        <summary className="btn btn-sm btn-outline-secondary">Reset password</summary>
                        <form method="post" action={u(`${base}/password`)} className="mt-2">
                          <label className="form-label small" htmlFor={`new-password-${x.id}`}>
                            New password for {x.username} (8 characters or more)
                          </label>
                          <input className="form-control form-control-sm mb-1" type="password" id={`new-password-${x.id}`} name="new_password" autoComplete="new-password" minLength={8} required />
                          <label className="form-label small" htmlFor={`confirm-password-${x.id}`}>
                            The same again
                          </label>
                          <input
                            className="form-control form-control-sm mb-2"
                            type="password"
                            id={`confirm-password-${x.id}`}
                            name="confirm_password"
                            autoComplete="new-password"
                            minLength={8}
                            required
                          />
                          <button className="btn btn-sm btn-primary">Set the password</button>
                        </form>
                      </details>
                    )}
                    {me || lastAdmin ? null : (
                      <details>
                        <summary className="btn btn-sm btn-outline-danger">Delete…</summary>
                        <form method="post" action={u(`${base}/delete`)} className="mt-2">
                          <p className="small mb-2">
                            {x.username} will no longer be able to log in; their API tokens are revoked. Their records, runs and workflows stay, under their name. This cannot be undone.
                          </p>
                          <button className="btn btn-sm btn-danger">Delete {x.username}</button>
                        </form>
                      </details>
                    )}
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </Layout>
  );
}
