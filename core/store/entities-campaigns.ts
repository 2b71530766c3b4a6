/**
 * The campaign points tables (issue 31) as TypeORM EntitySchemas, for the drift test (entities.ts lists them):
 * campaigns (manual ones, and robot ones that take points measured by hand) and their points.
 */
import { EntitySchema } from 'typeorm';
type Dialect = 'sqlite' | 'postgres';

export function campaignEntities(dialect: Dialect): EntitySchema[] {
  const ts = dialect === 'postgres' ? ('timestamptz' as const) : ('datetime' as const);
  const Campaign = new EntitySchema<Record<string, unknown>>({
    name: 'Campaign',
    tableName: 'campaigns',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_campaigns', generated: 'increment' },
      name: { type: 'text' },
      execution: { type: 'text' },
      taskId: { type: 'integer', name: 'task_id', nullable: true },
      payload: { type: 'text' },
      createdBy: { type: 'integer', name: 'created_by', nullable: true },
      createdAt: { type: ts, name: 'created_at' },
    },
    indices: [{ name: 'ix_campaigns_task', columns: ['taskId'] }],
  });
  const CampaignPoint = new EntitySchema<Record<string, unknown>>({
    name: 'CampaignPoint',
    tableName: 'campaign_points',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_campaign_points', generated: 'increment' },
      campaignId: { type: 'integer', name: 'campaign_id' },
      n: { type: 'integer' },
      parameters: { type: 'text' },
      state: { type: 'text' },
      results: { type: 'text', nullable: true },
      reason: { type: 'text', nullable: true },
      suggestedBy: { type: 'text', name: 'suggested_by' },
      suggestedUser: { type: 'integer', name: 'suggested_user', nullable: true },
      measuredBy: { type: 'text', name: 'measured_by', nullable: true },
      measuredUser: { type: 'integer', name: 'measured_user', nullable: true },
      createdAt: { type: ts, name: 'created_at' },
      measuredAt: { type: ts, name: 'measured_at', nullable: true },
    },
    uniques: [{ name: 'uq_campaign_points_n', columns: ['campaignId', 'n'] }],
  });
  return [Campaign, CampaignPoint] as EntitySchema[];
}
