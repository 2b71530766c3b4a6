/**
 * Workflow records: the searchable list (one record's page is ./record.tsx, what both show ./record-parts.tsx).
 * Iterations and step indexes are stored from 0; pages show iterations from 1, as the live page does.
 */
import type { RecordList, RecordSummary } from '../../core/records/index.js';
import { Alert, Layout, type ViewCtx } from './layout.js';
import { RunStatusBadge, Time, formatDuration, recordUrl } from './record-parts.js';

export { RunStatusBadge } from './record-parts.js';
export { RecordPage } from './record.js';

function listHref(ctx: ViewCtx, keyword: string, page: number, perPage: number, defaultPerPage: number) {
  const q = new URLSearchParams();
  if (keyword) q.set('keyword', keyword);
  if (page > 1) q.set('page', String(page));
  if (perPage !== defaultPerPage) q.set('per_page', String(perPage));
  const s = q.toString();
  return ctx.url(`/executions/records${s ? `?${s}` : ''}`);
}

function Pager({ ctx, list, keyword, defaultPerPage }: { ctx: ViewCtx; list: RecordList; keyword: string; defaultPerPage: number }) {
  if (list.pages <= 1 && list.page <= 1) return null;
  const href = (p: number) => listHref(ctx, keyword, p, list.per_page, defaultPerPage);
  const prev = list.page > 1 ? Math.min(list.page - 1, Math.max(list.pages, 1)) : null;
  const next = list.page < list.pages ? list.page + 1 : null;
  return (
    <nav aria-label="Pages of records">
      <ul className="pagination pagination-sm align-items-center">
        <li className={`page-item${list.page > 1 ? '' : ' disabled'}`}>
          <a className="page-link" href={href(1)} aria-label="First page">
            «
          </a>
        </li>
        <li className={`page-item${prev ? '' : ' disabled'}`}>
          <a className="page-link" href={prev ? href(prev) : undefined} rel="prev">
            Previous
          </a>
        </li>
        <li className="page-item disabled">
          <span className="page-link" id="records-page">
            page {list.page.toLocaleString('en')} of {Math.max(list.pages, 1).toLocaleString('en')}
          </span>
        </li>
        <li className={`page-item${next ? '' : ' disabled'}`}>
          <a className="page-link" href={next ? href(next) : undefined} rel="next">
            Next
          </a>
        </li>
        <li className={`page-item${list.page < list.pages ? '' : ' disabled'}`}>
          <a className="page-link" href={href(Math.max(list.pages, 1))} aria-label="Last page">
            »
          </a>
        </li>
      </ul>
    </nav>
  );
}

export function RecordsPage(props: { ctx: ViewCtx; list: RecordList; keyword: string; defaultPerPage: number; notice?: string }) {
  const { ctx, list, keyword } = props;
  const u = ctx.url;
  return (
    <Layout ctx={ctx} title="Workflow records">
      <h1 className="h3">Workflow records</h1>
      {props.notice ? <Alert kind="success">{props.notice}</Alert> : null}
      <form method="get" action={u('/executions/records')} className="d-flex flex-wrap gap-2 mb-2" role="search" id="records-search">
        <input
          className="form-control w-auto flex-grow-1"
          type="search"
          name="keyword"
          defaultValue={keyword}
          placeholder="Run or workflow name"
          aria-label="Search records by run or workflow name"
          maxLength={200}
        />
        {list.per_page !== props.defaultPerPage ? <input type="hidden" name="per_page" value={list.per_page} /> : null}
        <button className="btn btn-outline-primary" type="submit">
          Search
        </button>
        {keyword ? (
          <a className="btn btn-link" href={u('/executions/records')}>
            Clear
          </a>
        ) : null}
      </form>
      <p className="small text-body-secondary" id="records-total">
        {list.total.toLocaleString('en')} {list.total === 1 ? 'record' : 'records'}
        {keyword ? ` matching “${keyword}”` : ''}
      </p>
      {list.records.length ? (
        <div className="table-responsive">
          <table className="table table-sm table-hover align-middle" id="records">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Name</th>
                <th scope="col">Workflow</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col" className="text-end">
                  Duration
                </th>
                <th scope="col" className="text-end">
                  Iterations
                </th>
              </tr>
            </thead>
            <tbody>
              {list.records.map((r: RecordSummary) => (
                <tr key={r.id} data-record={r.id}>
                  <td>{r.id}</td>
                  <td>
                    <a href={recordUrl(ctx, r.id)}>{r.name}</a>
                  </td>
                  <td>
                    {r.workflow}
                    {r.workflow_version !== null ? <span className="text-body-secondary"> v{r.workflow_version}</span> : null}
                  </td>
                  <td>
                    <RunStatusBadge status={r.status} skipped={r.skipped_steps} />
                  </td>
                  <td>
                    <Time iso={r.started_at} />
                  </td>
                  <td className="text-end">{formatDuration(r.duration_ms)}</td>
                  <td className="text-end">{r.iterations ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p id="records-empty">
          {keyword ? 'No record matches this search.' : list.page > 1 ? 'There is no record on this page.' : 'There is no record yet.'}{' '}
          {list.total === 0 && !keyword ? <a href={u('/executions/config')}>Run one</a> : null}
        </p>
      )}
      <Pager ctx={ctx} list={list} keyword={keyword} defaultPerPage={props.defaultPerPage} />
    </Layout>
  );
}
