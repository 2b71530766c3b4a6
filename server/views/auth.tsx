import { Layout, ErrorList, Alert, type ViewCtx } from './layout.js';

type Err = { message: string; details?: { field?: string; message: string }[] };

function AuthForm(props: {
  ctx: ViewCtx;
  title: string;
  action: string;
  submit: string;
  fields: { name: string; label: string; type: string; autocomplete: string; value?: string; autofocus?: boolean }[];
  error?: Err;
  notice?: string;
  footer?: React.ReactNode;
}) {
  return (
    <Layout ctx={props.ctx} title={props.title}>
      <div className="row justify-content-center">
        <div className="col-sm-10 col-md-6 col-lg-4">
          <h1 className="h3 mb-3">{props.title}</h1>
          {props.notice ? <Alert kind="success">{props.notice}</Alert> : null}
          <ErrorList error={props.error} />
          <form method="post" action={props.action}>
            {props.fields.map((f) => (
              <div className="mb-3" key={f.name}>
                <label className="form-label" htmlFor={f.name}>
                  {f.label}
                </label>
                <input className="form-control" id={f.name} name={f.name} type={f.type} autoComplete={f.autocomplete} defaultValue={f.value} autoFocus={f.autofocus} required />
              </div>
            ))}
            <button className="btn btn-primary w-100" type="submit">
              {props.submit}
            </button>
          </form>
          {props.footer ? <p className="mt-3 text-body-secondary">{props.footer}</p> : null}
        </div>
      </div>
    </Layout>
  );
}

export function LoginPage({ ctx, next, error, username, notice }: { ctx: ViewCtx; next?: string; error?: Err; username?: string; notice?: string }) {
  const action = ctx.url('/auth/login') + (next ? `?next=${encodeURIComponent(next)}` : '');
  return (
    <AuthForm
      ctx={ctx}
      title="Log in"
      action={action}
      submit="Log in"
      error={error}
      notice={notice}
      fields={[
        { name: 'username', label: 'Username', type: 'text', autocomplete: 'username', value: username },
        // with the name filled in (after sign-up, or a wrong password), the cursor waits in the password field
        { name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', autofocus: !!username },
      ]}
      footer={
        <>
          No account yet? <a href={ctx.url('/auth/signup')}>Sign up</a>
        </>
      }
    />
  );
}

export function SignupPage({ ctx, error, username, first, closed }: { ctx: ViewCtx; error?: Err; username?: string; first: boolean; closed?: boolean }) {
  // a closed sign-up offers no form that can only answer 403
  if (closed && !first) {
    return (
      <Layout ctx={ctx} title="Sign-up is closed">
        <div className="row justify-content-center">
          <div className="col-sm-10 col-md-6 col-lg-4">
            <h1 className="h3 mb-3">Sign-up is closed</h1>
            <ErrorList error={error} />
            <p>
              An admin of this lab adds accounts: on the Users page, or with <code>lab user add NAME</code> on the lab server.
            </p>
            <p className="text-body-secondary">
              Have an account? <a href={ctx.url('/auth/login')}>Log in</a>
            </p>
          </div>
        </div>
      </Layout>
    );
  }
  return (
    <AuthForm
      ctx={ctx}
      title={first ? 'Create the admin account' : 'Sign up'}
      action={ctx.url('/auth/signup')}
      submit="Sign up"
      error={error}
      notice={first ? 'This is the first account on this lab: it becomes the admin.' : undefined}
      fields={[
        { name: 'username', label: 'Username', type: 'text', autocomplete: 'username', value: username },
        { name: 'password', label: 'Password (8 characters or more)', type: 'password', autocomplete: 'new-password' },
      ]}
      footer={
        <>
          Have an account? <a href={ctx.url('/auth/login')}>Log in</a>
        </>
      }
    />
  );
}

export function ChangePasswordPage({ ctx, error }: { ctx: ViewCtx; error?: Err }) {
  return (
    <AuthForm
      ctx={ctx}
      title="Change password"
      action={ctx.url('/auth/change-password')}
      submit="Change password"
      error={error}
      fields={[
        { name: 'old_password', label: 'Current password', type: 'password', autocomplete: 'current-password' },
        { name: 'new_password', label: 'New password (8 characters or more)', type: 'password', autocomplete: 'new-password' },
        { name: 'confirm_password', label: 'New password again', type: 'password', autocomplete: 'new-password' },
      ]}
    />
  );
}
