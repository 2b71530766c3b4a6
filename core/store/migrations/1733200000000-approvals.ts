import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/**
 * The approval inbox (DESIGN.md §13). What an AI agent asked for that a person must approve first (a
 * hazardous call, a run, a campaign): what it asked and what would run, who asked with which token, until
 * when, who decided and why, and what came of it.
 */
export class Approvals1733200000000 implements MigrationInterface {
  name = 'Approvals1733200000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.createTable(
        'approvals',
        {
          id: 'id',
          kind: 'text',
          status: 'text',
          summary: 'text',
          request: 'text',
          plan: 'text',
          user_id: 'int?',
          token_id: 'int?',
          token_name: 'text',
          created_at: 'ts',
          expires_at: 'ts',
          decided_by: 'int?',
          decided_at: 'ts?',
          reason: 'text?',
          outcome: 'text?',
        },
        { foreignKeys: { fk_approvals_user: ['user_id', 'users', 'SET NULL'], fk_approvals_decider: ['decided_by', 'users', 'SET NULL'] } },
      );
      await t.createIndex('ix_approvals_status', 'approvals', ['status']);
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.dropIndex('ix_approvals_status');
      await t.dropTable('approvals');
    });
  }
}
