/**
 * The approval inbox page: each waiting request shows what would run (the call with its arguments, the
 * workflow with its rows, the campaign's space) with Approve and Reject (with a reason); then the decided
 * ones with their outcome; then, for admins, which safety levels need approval per instrument.
 */
import type { ApprovalPolicy, CallPlan, TaskPlan } from '../../core/approvals/index.js';
import { SAFETY_LEVELS, levelsFor } from '../../core/approvals/index.js';
import type { CampaignPayload } from '../../core/campaign/index.js';
import type { Safety } from '../../core/contracts/index.js';
import type { WorkflowPayload } from '../../core/runner/index.js';
import type { Step } from '../../core/workflow/model.js';
import { Alert, ErrorList, Layout, LocalTime, type ViewCtx } from './layout.js';

export interface ApprovalView {
  id: number;
  kind: 'call' | 'run' | 'campaign' | 'resume';
  state: 'pending' | 'approved' | 'rejected' | 'expired';
  summary: string;
  plan: unknown;
  user: string | null;
  token: { id: number | null; name: string };
  created_at: string;
  expires_at: string;
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
  outcome: unknown;
}

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function KeyValues({ values, caption }: { values: Record<string, unknown>; caption: string }) {
  const entries = Object.entries(values);
  if (!entries.length) return <p className="text-body-secondary mb-1">{caption}: none</p>;
  return (
    <>
      <p className="text-body-secondary mb-0">{caption}</p>
      <table className="table table-sm w-auto mb-2" aria-label={caption}>
        <tbody>
          {entries.map(([k, v]) => (
            <tr key={k}>
              <th scope="row">
                <code>{k}</code>
              </th>
              <td>
                <code>{show(v)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** A workflow's steps, one line each, nested blocks indented. */
function Steps({ steps }: { steps: Step[] }) {
  if (!steps.length) return <span className="text-body-secondary">none</span>;
  const arg = (a: unknown) => {
    const x = a as { value?: unknown; param?: string; var?: string };
    return x.param !== undefined ? `#${x.param}` : x.var !== undefined ? x.var : show(x.value);
  };
  return (
    <ol className="mb-1">
      {steps.map((s, i) => (
        <li key={i}>
          {s.kind === 'call' ? (
            <code>
              {s.save_as ? `${s.save_as} = ` : ''}
              {s.instrument}.{s.method}(
              {Object.entries(s.args ?? {})
                .map(([k, v]) => `${k}=${arg(v)}`)
                .join(', ')}
              )
            </code>
          ) : s.kind === 'wait' ? (
            <>wait {s.seconds} s</>
          ) : s.kind === 'pause' ? (
            <>pause for the operator: {s.message}</>
          ) : s.kind === 'repeat' ? (
            <>
              repeat {s.times}×<Steps steps={s.steps} />
            </>
          ) : s.kind === 'if' ? (
            <>
              if <code>{`${arg(s.condition.left)} ${s.condition.op} ${arg(s.condition.right)}`}</code>
              <Steps steps={s.then} />
              {s.else?.length ? (
                <>
                  else <Steps steps={s.else} />
                </>
              ) : null}
            </>
          ) : (
            <code>{JSON.stringify(s)}</code>
          )}
        </li>
      ))}
    </ol>
  );
}

function RunPlan({ plan }: { plan: TaskPlan }) {
  const p = plan.payload as WorkflowPayload;
  const rows = p.rows ?? [];
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return (
    <>
      <p className="mb-1">
        Workflow <strong>{p.workflow}</strong> version {p.version}, queued as “{plan.name}”:
      </p>
      {(['prep', 'main', 'cleanup'] as const).map((phase) =>
        p.definition[phase]?.length ? (
          <div key={phase} className="ms-2">
            <span className="text-body-secondary">{phase}</span>
            <Steps steps={p.definition[phase]} />
          </div>
        ) : null,
      )}
      {p.repeat ? (
        <KeyValues values={p.repeat.row} caption={`${p.repeat.times} iteration${p.repeat.times === 1 ? '' : 's'}, each with`} />
      ) : (
        <table className="table table-sm w-auto">
          <caption className="caption-top py-0">
            {rows.length} row{rows.length === 1 ? '' : 's'} (one iteration each)
          </caption>
          <thead>
            <tr>
              <th>#</th>
              {cols.map((c) => (
                <th key={c}>{c}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.slice(0, 200).map((r, i) => (
              <tr key={i}>
                <td>{i + 1}</td>
                {cols.map((c) => (
                  <td key={c}>{show(r[c])}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function CampaignPlan({ plan }: { plan: TaskPlan }) {
  const p = plan.payload as CampaignPayload;
  return (
    <>
      <p className="mb-1">
        Campaign on <strong>{p.workflow}</strong> version {p.version}: optimizer <code>{p.optimizer}</code>, {p.budget} experiments
        {p.batch_size > 1 ? ` in batches of ${p.batch_size}` : ''}, seed {p.seed}, queued as “{plan.name}”.
      </p>
      <table className="table table-sm w-auto mb-2">
        <caption className="caption-top py-0">The space it searches</caption>
        <thead>
          <tr>
            <th>Parameter</th>
            <th>Kind</th>
            <th>Values</th>
          </tr>
        </thead>
        <tbody>
          {p.space.map((s) => (
            <tr key={s.name}>
              <td>
                <code>{s.name}</code>
              </td>
              <td>{s.type}</td>
              <td>
                {s.type === 'choice'
                  ? (s.choices ?? []).join(' | ')
                  : s.type === 'fixed'
                    ? show(s.value)
                    : `${s.bounds?.[0]} … ${s.bounds?.[1]}${s.step ? ` step ${s.step}` : ''}${s.log_scale ? ' (log scale)' : ''}`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="mb-1">Objectives: {p.objectives.map((o) => `${o.name} (${o.minimize ? 'min' : 'max'}${o.weight !== undefined ? `, weight ${o.weight}` : ''})`).join(', ')}</p>
      {p.constraints?.length ? (
        <p className="mb-1">
          Constraints:{' '}
          {p.constraints.map((c) => (
            <code key={c} className="me-2">
              {c}
            </code>
          ))}
        </p>
      ) : null}
      {p.outcome_constraints?.length ? (
        <p className="mb-1">
          Outcome limits:{' '}
          {p.outcome_constraints.map((c) => (
            <code key={c} className="me-2">
              {c}
            </code>
          ))}
        </p>
      ) : null}
      {p.stop_when?.length ? (
        <p className="mb-1">
          Stops when:{' '}
          {p.stop_when.map((c) => (
            <code key={c} className="me-2">
              {c}
            </code>
          ))}
        </p>
      ) : null}
      <KeyValues values={p.fixed} caption="Other parameters, fixed" />
    </>
  );
}

function Plan({ a }: { a: ApprovalView }) {
  if (a.kind === 'call') {
    const p = a.plan as CallPlan;
    return (
      <>
        <p className="mb-1">
          Call <code>{`${p.instrument}.${p.method}`}</code> (<span className={p.safety === 'hazardous' ? 'text-danger fw-semibold' : ''}>{p.safety}</span>) with
        </p>
        <KeyValues values={p.args} caption="Arguments" />
      </>
    );
  }
  if (a.kind === 'resume') return <p className="mb-1">Resume task {(a.plan as { task_id: number }).task_id}, which a person paused: it goes on with its next step.</p>;
  return a.kind === 'run' ? <RunPlan plan={a.plan as TaskPlan} /> : <CampaignPlan plan={a.plan as TaskPlan} />;
}

function Outcome({ a }: { a: ApprovalView }) {
  if (a.state !== 'approved') return <>{a.reason ?? ''}</>;
  const o = a.outcome as { task_id?: number; output?: unknown; error?: { message: string; task_id?: number } } | null;
  if (!o) return <span className="text-body-secondary">running…</span>;
  if (o.error) return <span className="text-danger">failed: {o.error.message}</span>;
  return (
    <>
      {a.kind === 'call' ? `call record ${o.task_id}` : a.kind === 'resume' ? `task ${o.task_id} resumed` : `queued as task ${o.task_id}`}
      {o.output !== undefined ? (
        <>
          : <code>{show(o.output)}</code>
        </>
      ) : null}
      {a.reason ? ` — ${a.reason}` : ''}
    </>
  );
}

function Request({ ctx, a, mayDecide, focus }: { ctx: ViewCtx; a: ApprovalView; mayDecide: boolean; focus: boolean }) {
  const u = ctx.url;
  return (
    <section className={`card mb-3${focus ? ' border-primary' : ''}`} id={`approval-${a.id}`} data-approval={a.id}>
      <div className="card-header d-flex flex-wrap gap-2 align-items-baseline">
        <strong>
          #{a.id} {a.kind}
        </strong>
        <span>{a.summary}</span>
      </div>
      <div className="card-body">
        <p className="text-body-secondary small mb-2">
          Asked by the agent token “{a.token.name}” acting as {a.user ?? 'a deleted account'}, <LocalTime iso={a.created_at} />; expires <LocalTime iso={a.expires_at} />.
        </p>
        <Plan a={a} />
        {mayDecide ? (
          <div className="d-flex flex-wrap gap-3 mt-2">
            <form method="post" action={u(`/approvals/${a.id}/approve`)} className="d-flex gap-2 align-items-start">
              <input className="form-control form-control-sm" name="reason" placeholder="Note (optional)" aria-label={`Note for approving #${a.id}`} maxLength={2000} />
              <button className="btn btn-success btn-sm" type="submit">
                Approve
              </button>
            </form>
            <form method="post" action={u(`/approvals/${a.id}/reject`)} className="d-flex gap-2 align-items-start">
              <input className="form-control form-control-sm" name="reason" placeholder="Why (the agent is told)" aria-label={`Reason for rejecting #${a.id}`} required maxLength={2000} />
              <button className="btn btn-outline-danger btn-sm" type="submit">
                Reject
              </button>
            </form>
          </div>
        ) : (
          <p className="small mb-0">Only {a.user ?? 'its account'} or an admin may decide this request.</p>
        )}
      </div>
    </section>
  );
}

function PolicyForm({ ctx, policy, instruments }: { ctx: ViewCtx; policy: ApprovalPolicy; instruments: { name: string; safeties: Safety[] }[] }) {
  const boxes = (field: string, ticked: Safety[], label: string) =>
    SAFETY_LEVELS.map((l) => (
      <td key={l}>
        <input className="form-check-input" type="checkbox" name={field} value={l} defaultChecked={ticked.includes(l)} aria-label={`${label}: ${l} needs approval`} />
      </td>
    ));
  return (
    <form method="post" action={ctx.url('/approvals/policy')} id="approval-policy">
      <table className="table table-sm w-auto align-middle">
        <thead>
          <tr>
            <th>Instrument</th>
            {SAFETY_LEVELS.map((l) => (
              <th key={l}>{l}</th>
            ))}
            <th>Its methods</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <th scope="row">every other instrument</th>
            {boxes('default', policy.default, 'By default')}
            <td />
          </tr>
          {instruments.map((i) => (
            <tr key={i.name}>
              <th scope="row">
                <input type="hidden" name={`instrument.${i.name}`} value="" />
                {i.name}
                {Object.hasOwn(policy.instruments, i.name) ? <span className="badge text-bg-secondary ms-2">own</span> : null}
              </th>
              {boxes(`instrument.${i.name}`, levelsFor(policy, i.name), i.name)}
              <td className="small text-body-secondary">{i.safeties.join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <button className="btn btn-primary btn-sm" type="submit">
        Save the policy
      </button>
    </form>
  );
}

export function ApprovalsPage(props: {
  ctx: ViewCtx;
  pending: ApprovalView[];
  done: ApprovalView[];
  policy: ApprovalPolicy;
  instruments: { name: string; safeties: Safety[] }[];
  error?: { message: string; details?: { field?: string; message: string }[] };
  notice?: string;
  focus?: number;
}) {
  const me = props.ctx.user;
  const admin = me?.role === 'admin';
  return (
    <Layout ctx={props.ctx} title="Approvals">
      <h1 className="h3">Approvals</h1>
      <p className="text-body-secondary">
        AI agents connected over MCP (docs/agents.md) run read-only and idempotent instrument calls at once. A call whose safety level the policy below marks, a run and a campaign wait here until a
        person approves or rejects them; a request that is not decided before it expires never runs. Every agent action and every decision is in the audit log with the token that made it.
      </p>
      {props.notice ? <Alert kind="success">{props.notice}</Alert> : null}
      <ErrorList error={props.error} />
      <h2 className="h5">
        Waiting <span className="badge text-bg-warning">{props.pending.length}</span>
      </h2>
      {props.pending.length ? (
        props.pending.map((a) => <Request key={a.id} ctx={props.ctx} a={a} mayDecide={admin || a.user === me?.username} focus={a.id === props.focus} />)
      ) : (
        <p id="no-pending">Nothing waits for a decision.</p>
      )}
      <h2 className="h5 mt-4">Decided and expired</h2>
      {props.done.length ? (
        <table className="table table-sm" id="decided">
          <thead>
            <tr>
              <th>#</th>
              <th>Request</th>
              <th>Agent token</th>
              <th>State</th>
              <th>By</th>
              <th>Outcome or reason</th>
            </tr>
          </thead>
          <tbody>
            {props.done.map((a) => (
              <tr key={a.id} data-approval={a.id} className={a.id === props.focus ? 'table-active' : undefined}>
                <td>{a.id}</td>
                <td>{a.summary}</td>
                <td>{a.token.name}</td>
                <td>{a.state}</td>
                <td>
                  {a.decided_by ?? ''} {a.decided_at ? <LocalTime iso={a.decided_at} /> : null}
                </td>
                <td>
                  <Outcome a={a} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>None yet.</p>
      )}
      <h2 className="h5 mt-4">What needs approval</h2>
      {admin ? (
        <PolicyForm ctx={props.ctx} policy={props.policy} instruments={props.instruments} />
      ) : (
        <p>
          Calls of {props.policy.default.join(', ') || 'no'} methods by default
          {Object.keys(props.policy.instruments).length
            ? `; ${Object.entries(props.policy.instruments)
                .map(([i, l]) => `${i}: ${l.join(', ') || 'none'}`)
                .join('; ')}`
            : ''}
          . An admin sets this.
        </p>
      )}
    </Layout>
  );
}
