/**
 * The labware view of an instrument with a worktable (ivoryOS's worktable protocol, read by its Python host):
 * each labware's grid with what every position holds, and the tips left on each tip rack.
 */
import type { LabwareItem, LabwareView } from '../../core/operations/index.js';

/** What one position holds, as its cell shows it: a volume, or whether a tip is there. */
function cellText(spot: Record<string, unknown> | undefined): string {
  if (!spot) return '';
  if (typeof spot.tip === 'boolean') return spot.tip ? '●' : '○';
  if (typeof spot.volume_ul === 'number') return `${Math.round(spot.volume_ul * 10) / 10}`;
  return '';
}

function cellTitle(well: string, spot: Record<string, unknown> | undefined): string {
  if (!spot) return `${well}: empty`;
  if (typeof spot.tip === 'boolean') return `${well}: ${spot.tip ? 'tip' : 'no tip'}`;
  const liquids = spot.liquids && typeof spot.liquids === 'object' ? Object.entries(spot.liquids as Record<string, unknown>).map(([k, v]) => `${k} ${String(v)} µL`) : [];
  return `${well}: ${typeof spot.volume_ul === 'number' ? `${spot.volume_ul} µL` : JSON.stringify(spot)}${liquids.length ? ` (${liquids.join(', ')})` : ''}`;
}

function Labware({ item }: { item: LabwareItem }) {
  const columns = item.grid[0]?.length ?? 0;
  return (
    <div className="mb-3 labware" data-labware={item.name}>
      <div className="small">
        <code>{item.name}</code> <span className="text-body-secondary">{item.label !== item.name ? item.label : ''}</span>
        {item.category ? <span className="badge text-bg-light ms-1">{item.category}</span> : null}
        {item.site ? <span className="text-body-secondary"> · site {item.site}</span> : null}
        <span className="text-body-secondary">
          {' '}
          · {item.grid.length} × {columns}
        </span>
        {item.tips_left !== undefined ? <span className="ms-2 labware-tips-left">tips left: {item.tips_left}</span> : null}
      </div>
      <table className="table table-bordered table-sm labware-grid mb-0">
        <tbody>
          {item.grid.map((row, r) => (
            <tr key={r}>
              {row.map((well) => {
                const spot = item.contents[well];
                return (
                  <td
                    key={well}
                    title={cellTitle(well, spot)}
                    data-well={well}
                    className={spot && (spot.tip === true || (typeof spot.volume_ul === 'number' && spot.volume_ul > 0)) ? 'table-info' : undefined}
                  >
                    {cellText(spot) || <span className="text-body-tertiary">{well}</span>}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The panel of an instrument's page; nothing for an instrument without a worktable. */
export function LabwarePanel({ view }: { view: LabwareView }) {
  if (!view.worktable) return <></>;
  return (
    <div className="labware-view">
      {view.deck?.label || view.deck?.kind ? <p className="small mb-2">Worktable: {view.deck.label ?? view.deck.kind}</p> : null}
      {view.error ? <div className="alert alert-warning small py-1">The worktable could not be read: {view.error}</div> : null}
      {(view.labware ?? []).map((item) => (
        <Labware key={item.name} item={item} />
      ))}
    </div>
  );
}
