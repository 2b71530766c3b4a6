import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostgreSQL: the safety guard's documents (DESIGN.md §16): the lab-wide safety file (PostgreSQL) and the
 * deck's tracked states, each with a version that moves on every write (so every labdeck sees an edit).
 */
export class Safety1733300000000 implements MigrationInterface {
  name = 'Safety1733300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "safety_docs" ("name" text NOT NULL, "body" text NOT NULL, "version" integer NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, ` +
        `"updated_by" integer, CONSTRAINT "pk_safety_docs" PRIMARY KEY ("name"))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "safety_docs"`);
  }
}
