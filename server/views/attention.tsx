/** The attention list's page (issue 31): what waits for a person across the lab, with what to do and a link. */
import type { AttentionItem } from '../../core/attention/index.js';
import { Layout, type ViewCtx } from './layout.js';

const KIND_LABEL: Record<string, string> = {
  input: 'Input',
  pause: 'Pause step',
  failed_step: 'Failed step',
  interrupted: 'Interrupted run',
  approval: 'Approval',
  held_queue: 'Held queue',
  host_offline: 'Labdeck offline',
  safety: 'Safety',
};

export function AttentionPage({ ctx, items }: { ctx: ViewCtx; items: AttentionItem[] }) {
  const u = ctx.url;
  return (
    <Layout ctx={ctx} title="Attention">
      <h1 className="h4">Waiting for a person</h1>
      <p className="text-body-secondary small">Everything in the lab that waits for someone, on every labdeck of this database.</p>
      {items.length === 0 ? (
        <p id="attention-empty">Nothing waits for a person.</p>
      ) : (
        <ul className="list-group" id="attention-list">
          {items.map((it, i) => (
            <li className="list-group-item" key={i} data-kind={it.kind}>
              <span className="badge text-bg-warning me-2">{KIND_LABEL[it.kind] ?? it.kind}</span>
              <strong>{it.title}</strong>
              {it.host ? <span className="text-body-secondary small"> · on {it.host}</span> : null}
              <div className="small">
                {it.action} <a href={u(it.link)}>Go there</a>
              </div>
            </li>
          ))}
        </ul>
      )}
    </Layout>
  );
}
