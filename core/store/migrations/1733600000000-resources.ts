import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/**
 * The lab's resources (issue 32), lab-wide on PostgreSQL (every host on the database sees one stock):
 * containers, consumables, liquids and samples with their stock; the ledger of every change to them (top-ups,
 * what calls consumed, moves, in-doubt amounts and how they were settled); the numbered deck versions and the
 * version each run ran on.
 */
export class Resources1733600000000 implements MigrationInterface {
  name = 'Resources1733600000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.createTable(
        'resources',
        {
          id: 'id',
          name: 'text',
          kind: 'text',
          quantity: 'real',
          unit: 'text',
          rows: 'int?',
          columns: 'int?',
          location: 'text?',
          identity: 'text?',
          in_doubt: 'int',
          created_at: 'ts',
          updated_at: 'ts',
        },
        { unique: { uq_resources_name: ['name'] } },
      );
      await t.createTable('resource_moves', {
        id: 'id',
        resource: 'text',
        kind: 'text',
        status: 'text',
        delta: 'real?',
        from_location: 'text?',
        to_location: 'text?',
        step_id: 'bigint?',
        run_id: 'int?',
        user_id: 'int?',
        note: 'text?',
        at: 'ts',
      });
      await t.createIndex('ix_resource_moves_resource', 'resource_moves', ['resource', 'id']);
      await t.createIndex('ix_resource_moves_step', 'resource_moves', ['step_id']);
      await t.createTable('deck_versions', { id: 'id', host: 'text', reason: 'text', schemas: 'text', diff: 'text', at: 'ts' });
      await t.createTable('run_deck_versions', { run_id: 'int', version: 'int' }, { primary: 'run_id', sqliteUnnamedKey: true });
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.dropTable('run_deck_versions');
      await t.dropTable('deck_versions');
      await t.dropIndex('ix_resource_moves_step');
      await t.dropIndex('ix_resource_moves_resource');
      await t.dropTable('resource_moves');
      await t.dropTable('resources');
    });
  }
}
