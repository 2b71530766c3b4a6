import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/** Users, sessions, API tokens, method preferences, steps (every instrument call), the audit log, settings. */
export class Init1732300000000 implements MigrationInterface {
  name = 'Init1732300000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, async (t) => {
      await t.createTable(
        'users',
        { id: 'id', username: 'text', password_hash: 'text', role: 'text', created_at: 'ts' },
        {
          unique: { uq_users_username: ['username'] },
        },
      );
      await t.createTable('sessions', { sid: 'text', data: 'text', expires_at: 'ts' }, { primary: 'sid', sqliteUnnamedKey: true });
      await t.createIndex('ix_sessions_expires_at', 'sessions', ['expires_at']);
      await t.createTable(
        'api_tokens',
        { id: 'id', user_id: 'int', name: 'text', token_hash: 'text', prefix: 'text', created_at: 'ts', last_used_at: 'ts?' },
        { unique: { uq_api_tokens_token_hash: ['token_hash'] }, foreignKeys: { fk_api_tokens_user: ['user_id', 'users', 'CASCADE'] } },
      );
      await t.createIndex('ix_api_tokens_user_id', 'api_tokens', ['user_id']);
      await t.createTable(
        'method_prefs',
        { id: 'id', user_id: 'int', instrument: 'text', method_order: 'text', hidden: 'text' },
        {
          unique: { uq_method_prefs_user_instrument: ['user_id', 'instrument'] },
          foreignKeys: { fk_method_prefs_user: ['user_id', 'users', 'CASCADE'] },
        },
      );
      // run_id has no foreign key yet: the runs table comes with a later migration.
      await t.createTable(
        'steps',
        {
          id: 'bigid',
          run_id: 'int?',
          phase: 'text?',
          iteration: 'int?',
          step_index: 'int?',
          instrument: 'text',
          method: 'text',
          args: 'text?',
          output: 'text?',
          status: 'text',
          error: 'text?',
          user_id: 'int?',
          started_at: 'ts',
          ended_at: 'ts?',
        },
        { foreignKeys: { fk_steps_user: ['user_id', 'users', 'SET NULL'] } },
      );
      await t.createIndex('ix_steps_run_id', 'steps', ['run_id']);
      await t.createIndex('ix_steps_instrument_id', 'steps', ['instrument', 'id']);
      await t.createTable(
        'audit_log',
        { id: 'id', user_id: 'int?', action: 'text', detail: 'text?', at: 'ts' },
        {
          foreignKeys: { fk_audit_log_user: ['user_id', 'users', 'SET NULL'] },
        },
      );
      await t.createTable('settings', { key: 'text', value: 'text' }, { primary: 'key', sqliteUnnamedKey: true });
    });
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['settings', 'audit_log', 'steps', 'method_prefs', 'api_tokens', 'sessions', 'users']) {
      await q.query(`DROP TABLE "${t}"`);
    }
  }
}
