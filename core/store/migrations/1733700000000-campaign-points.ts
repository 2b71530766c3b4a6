import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/**
 * Campaigns whose points people carry out (issue 31), lab-wide on PostgreSQL: a campaign (manual, or the
 * robot campaign a queued task runs, so that it takes points measured by hand) and its points, each with its
 * parameters, its state (pending, measured, discarded), its results, who suggested it and who measured it.
 */
export class CampaignPoints1733700000000 implements MigrationInterface {
  name = 'CampaignPoints1733700000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.createTable('campaigns', { id: 'id', name: 'text', execution: 'text', task_id: 'int?', payload: 'text', created_by: 'int?', created_at: 'ts' });
      await t.createIndex('ix_campaigns_task', 'campaigns', ['task_id']);
      await t.createTable(
        'campaign_points',
        {
          id: 'id',
          campaign_id: 'int',
          n: 'int',
          parameters: 'text',
          state: 'text',
          results: 'text?',
          reason: 'text?',
          suggested_by: 'text',
          suggested_user: 'int?',
          measured_by: 'text?',
          measured_user: 'int?',
          created_at: 'ts',
          measured_at: 'ts?',
        },
        { unique: { uq_campaign_points_n: ['campaign_id', 'n'] } },
      );
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.dropTable('campaign_points');
      await t.dropIndex('ix_campaigns_task');
      await t.dropTable('campaigns');
    });
  }
}
