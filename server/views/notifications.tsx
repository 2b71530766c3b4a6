/**
 * The notifications page (admins): what waits for a person now, each channel with its health (a dead one
 * says so, with its last error) and a "Send a test" button, the settings document (secrets never shown), the
 * latest events; and each user's own subscription page.
 */
import { Alert, ErrorList, Layout, LocalTime, type ViewCtx } from './layout.js';

interface Row {
  id: string;
  event: string;
  state: string;
  task_id: number | null;
  run_id: number | null;
  time: string;
  message?: unknown;
  step?: unknown;
  [k: string]: unknown;
}

interface Health {
  channel: string;
  waiting: number;
  failing: number;
  dead: boolean;
  last_error: string | null;
  last_delivered_at: string | null;
}

type Err = { message: string; details?: { field?: string; message: string }[] };

function Events({ rows, ctx, empty, id }: { rows: Row[]; ctx: ViewCtx; empty: string; id: string }) {
  if (!rows.length) return <p id={`${id}-none`}>{empty}</p>;
  return (
    <table className="table table-sm" id={id}>
      <thead>
        <tr>
          <th>When</th>
          <th>Event</th>
          <th>State</th>
          <th>What</th>
          <th>Run</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={`${r.id}-${r.state}`}>
            <td>
              <LocalTime iso={r.time} />
            </td>
            <td>
              <code>{r.event}</code>
            </td>
            <td>{r.state === 'open' ? <span className="badge text-bg-warning">open</span> : <span className="badge text-bg-success">resolved</span>}</td>
            <td>{String(r.message ?? '')}</td>
            <td>{r.run_id !== null ? <a href={ctx.url(`/executions/records/${r.run_id}`)}>run {r.run_id}</a> : ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function NotificationsPage(props: { ctx: ViewCtx; settings: unknown; health: Health[]; attention: Row[]; recent: Row[]; events: string[]; error?: Err; notice?: string; draft?: string }) {
  const { ctx } = props;
  const doc = props.draft ?? JSON.stringify(props.settings, null, 2);
  return (
    <Layout ctx={ctx} title="Notifications">
      <h1 className="h3">Notifications</h1>
      <p className="text-body-secondary">
        labdeck tells the lab's channels when it waits for a person (a failed step, a pause step, an approval, an interrupted run, a lost host, a held queue, an overdue step) and again when that wait
        ends. Each event is stored with the change that causes it and delivered from there, so none is lost when a channel or labdeck is down. See docs/notifications.md.{' '}
        <a href={ctx.url('/notifications/me')}>Your own subscription</a>.
      </p>
      {props.notice ? <Alert kind="success">{props.notice}</Alert> : null}
      <ErrorList error={props.error} />
      <h2 className="h5">
        Waiting for a person <span className="badge text-bg-warning">{props.attention.length}</span>
      </h2>
      <Events rows={props.attention} ctx={ctx} empty="Nothing waits for a person." id="attention" />
      <h2 className="h5 mt-4">Channels</h2>
      {props.health.length ? (
        <table className="table table-sm" id="channels">
          <thead>
            <tr>
              <th>Channel</th>
              <th>Health</th>
              <th>Waiting</th>
              <th>Last delivered</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {props.health.map((h) => (
              <tr key={h.channel}>
                <td>
                  <code>{h.channel}</code>
                </td>
                <td>
                  {h.dead ? (
                    <span className="text-danger" data-dead="true">
                      <span className="badge text-bg-danger">dead</span> {h.last_error}
                    </span>
                  ) : (
                    <span className="badge text-bg-success">ok</span>
                  )}
                </td>
                <td>{h.waiting}</td>
                <td>
                  <LocalTime iso={h.last_delivered_at} />
                </td>
                <td>
                  {h.channel.startsWith('user:') ? null : (
                    <form method="post" action={ctx.url('/notifications/test')}>
                      <input type="hidden" name="channel" value={h.channel} />
                      <button type="submit" className="btn btn-sm btn-outline-secondary">
                        Send a test
                      </button>
                    </form>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p id="no-channels">No channel yet: add one to the settings below.</p>
      )}
      <h2 className="h5 mt-4">Settings</h2>
      <p className="text-body-secondary">
        One JSON document: <code>channels</code> (each <code>name</code>, <code>kind</code> webhook | email | slack, <code>events</code> from {props.events.join(', ')}, and its fields) and{' '}
        <code>watchdog</code> (<code>factor</code>, <code>mad_factor</code>, <code>floor_s</code>, <code>min_samples</code>). Secrets show as <code>secret_set</code> / <code>password_set</code>; leave
        them out to keep them.
      </p>
      <form method="post" action={ctx.url('/notifications')} id="notification-settings">
        <textarea name="document" className="form-control font-monospace" rows={16} aria-label="Notification settings (JSON)" defaultValue={doc} />
        <button type="submit" className="btn btn-primary mt-2">
          Save
        </button>
      </form>
      <h2 className="h5 mt-4">Latest events</h2>
      <Events rows={props.recent} ctx={ctx} empty="No event yet." id="recent" />
    </Layout>
  );
}

export function SubscriptionPage(props: { ctx: ViewCtx; subscription: { email: string; events: string[] } | null; events: string[]; error?: Err; notice?: string }) {
  const s = props.subscription;
  const on = new Set(s?.events ?? props.events.filter((e) => e !== 'run_completed'));
  return (
    <Layout ctx={props.ctx} title="My notifications">
      <h1 className="h3">My notifications</h1>
      <p className="text-body-secondary">Mail about events of your own runs, sent through the lab's email channel. Leave the address empty to stop.</p>
      {props.notice ? <Alert kind="success">{props.notice}</Alert> : null}
      <ErrorList error={props.error} />
      <form method="post" action={props.ctx.url('/notifications/me')} id="subscription">
        <label className="form-label" htmlFor="sub-email">
          Email
        </label>
        <input id="sub-email" type="email" name="email" className="form-control mb-2" defaultValue={s?.email ?? ''} />
        {props.events.map((e) => (
          <div className="form-check" key={e}>
            <input className="form-check-input" type="checkbox" name="events" value={e} id={`ev-${e}`} defaultChecked={on.has(e)} />
            <label className="form-check-label" htmlFor={`ev-${e}`}>
              <code>{e}</code>
            </label>
          </div>
        ))}
        <button type="submit" className="btn btn-primary mt-2">
          Save
        </button>
      </form>
    </Layout>
  );
}
