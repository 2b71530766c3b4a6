import type { MigrationInterface, QueryRunner } from 'typeorm';
import { ddl } from './ddl.js';

/**
 * The safety guard's documents (DESIGN.md §16): the lab-wide safety file (PostgreSQL) and the deck's tracked
 * states, each with a version that moves on every write (so every labdeck sees an edit).
 */
export class Safety1733300000000 implements MigrationInterface {
  name = 'Safety1733300000000';

  async up(q: QueryRunner): Promise<void> {
    await ddl(q, (t) => t.createTable('safety_docs', { name: 'text', body: 'text', version: 'int', updated_at: 'ts', updated_by: 'int?' }, { primary: 'name' }));
  }

  async down(q: QueryRunner): Promise<void> {
    await ddl(q, (t) => t.dropTable('safety_docs'));
  }
}
