/** The campaign points store (issue 31): campaigns people carry out, and their points. */

export type PointState = 'pending' | 'measured' | 'discarded';

export interface CampaignRow {
  id: number;
  name: string;
  /** `manual`: people measure every point; `robot`: a queued task's workflow does, and people may add points. */
  execution: 'manual' | 'robot';
  /** The queued task of a robot campaign. */
  taskId: number | null;
  payload: unknown;
  createdBy: number | null;
  createdAt: Date;
}

export interface PointRow {
  id: number;
  campaignId: number;
  /** The point's number in its campaign, from 1. */
  n: number;
  parameters: Record<string, unknown>;
  state: PointState;
  results: Record<string, number> | null;
  /** Why it was discarded. */
  reason: string | null;
  /** `optimizer:<name>` or `person:<username>`. */
  suggestedBy: string;
  suggestedUser: number | null;
  /** `person:<username>`, once measured or discarded. */
  measuredBy: string | null;
  measuredUser: number | null;
  createdAt: Date;
  measuredAt: Date | null;
}

export interface NewPoint {
  parameters: Record<string, unknown>;
  suggestedBy: string;
  suggestedUser: number | null;
  /** A point added with its results already in (a staff point measured by hand). */
  results?: Record<string, number>;
  measuredBy?: string;
  measuredUser?: number | null;
}

export interface CampaignStore {
  create(c: Omit<CampaignRow, 'id' | 'createdAt'>): Promise<CampaignRow>;
  get(id: number): Promise<CampaignRow | null>;
  /** The campaign a robot task runs. */
  ofTask(taskId: number): Promise<CampaignRow | null>;
  /** Newest first. */
  list(limit: number): Promise<CampaignRow[]>;
  points(campaignId: number): Promise<PointRow[]>;
  /** Add points, numbered after the campaign's last, in one transaction; a race with another labdeck retries. */
  addPoints(campaignId: number, points: NewPoint[]): Promise<PointRow[]>;
  /**
   * Enter a pending point's result (or discard it), once: false when it is not pending (anymore), and then
   * nothing changes.
   */
  /** Run `fn` holding the campaign's lab-wide lock (one suggestion at a time per campaign, on every labdeck). */
  exclusive<T>(campaignId: number, fn: (repo: CampaignStore) => Promise<T>): Promise<T>;
  settle(
    campaignId: number,
    n: number,
    s: { state: 'measured' | 'discarded'; results: Record<string, number> | null; reason: string | null; measuredBy: string; measuredUser: number | null; at: Date },
  ): Promise<boolean>;
}
