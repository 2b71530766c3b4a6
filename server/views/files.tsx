/** Workflow files: the preview of an uploaded CSV, and the upload form other pages embed. */
import type { FileRow } from '../../core/store/types.js';
import { Layout, LocalTime, type ViewCtx } from './layout.js';

/** 10 MB, 512 KB, 300 bytes */
export const sizeText = (n: number) => (n >= 1024 * 1024 ? `${+(n / 1024 / 1024).toFixed(1)} MB` : n >= 1024 ? `${+(n / 1024).toFixed(1)} KB` : `${n} bytes`);

const KIND_LABEL = { config: 'Config file', history: 'History file' } as const;

export interface PreviewProps {
  ctx: ViewCtx;
  file: FileRow;
  columns: string[];
  types?: string[];
  /** The rows shown (the first ones). */
  rows: Record<string, string>[];
  total: number;
}

export function FilePreviewPage({ ctx, file, columns, types, rows, total }: PreviewProps) {
  const u = ctx.url;
  return (
    <Layout ctx={ctx} title={file.originalName}>
      <div className="d-flex flex-wrap align-items-baseline gap-2 mb-2">
        <h1 className="h3 mb-0">{file.originalName}</h1>
        <span className="badge text-bg-secondary">{KIND_LABEL[file.kind]}</span>
        <a className="btn btn-sm btn-outline-primary ms-auto" href={u(`/files/execution-data/${encodeURIComponent(file.storedName)}`)} download>
          Download CSV
        </a>
      </div>
      <p className="small text-body-secondary">
        Stored as <code>{file.storedName}</code> (use this name in later requests)
        {file.workflow ? (
          <>
            {' '}
            · checked against workflow <strong>{file.workflow}</strong>
          </>
        ) : null}{' '}
        · uploaded <LocalTime iso={file.createdAt.toISOString()} /> · {file.size.toLocaleString('en')} bytes
      </p>
      <p id="row-count">
        {rows.length < total ? `Showing the first ${rows.length.toLocaleString('en')} of ${total.toLocaleString('en')} rows.` : `${total.toLocaleString('en')} ${total === 1 ? 'row' : 'rows'}.`}
      </p>
      <div className="table-responsive">
        <table className="table table-sm table-striped table-hover align-middle">
          <thead>
            <tr>
              <th scope="col" className="text-body-secondary">
                #
              </th>
              {columns.map((c, i) => (
                <th scope="col" key={c}>
                  {c}
                  {types ? <div className="small fw-normal text-body-secondary">{types[i]}</div> : null}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={i}>
                <td className="text-body-secondary">{i + 1}</td>
                {columns.map((c) => (
                  <td key={c}>{r[c]}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Layout>
  );
}

/**
 * A CSV upload form (multipart, field `file`): a config file for POST /files/batch-configs or a history file
 * for POST /files/execution-data. With `workflow`, the file is checked against that workflow. After the
 * upload the browser comes back to the page it was on, with `?uploaded=<generated name>`.
 */
export function UploadForm({ ctx, kind, workflow, limitBytes }: { ctx: ViewCtx; kind: 'config' | 'history'; workflow?: string; limitBytes?: number }) {
  const action = ctx.url(kind === 'config' ? '/files/batch-configs' : '/files/execution-data');
  const id = `upload-${kind}`;
  return (
    <form method="post" action={action} encType="multipart/form-data" className="d-flex flex-wrap align-items-end gap-2">
      {workflow ? <input type="hidden" name="workflow" value={workflow} /> : null}
      <div>
        <label className="form-label small mb-0" htmlFor={id}>
          {kind === 'config' ? 'Config CSV' : 'History CSV'}
          {limitBytes ? ` (at most ${sizeText(limitBytes)})` : ''}
        </label>
        <input className="form-control form-control-sm" type="file" id={id} name="file" accept=".csv,text/csv" required />
      </div>
      <button className="btn btn-sm btn-outline-primary" type="submit">
        Upload
      </button>
    </form>
  );
}
