import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SQLite: the lab's resources (issue 32): containers, consumables, liquids and samples with their stock; the
 * ledger of every change to them (top-ups, what calls consumed, moves, in-doubt amounts and how they were
 * settled); the numbered deck versions and the version each run ran on.
 */
export class Resources1733600000000 implements MigrationInterface {
  name = 'Resources1733600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "resources" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "name" text NOT NULL, "kind" text NOT NULL, "quantity" real NOT NULL, ` +
        `"unit" text NOT NULL, "rows" integer, "columns" integer, "location" text, "identity" text, "in_doubt" integer NOT NULL, ` +
        `"created_at" datetime NOT NULL, "updated_at" datetime NOT NULL, CONSTRAINT "uq_resources_name" UNIQUE ("name"))`,
    );
    await q.query(
      `CREATE TABLE "resource_moves" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "resource" text NOT NULL, "kind" text NOT NULL, "status" text NOT NULL, ` +
        `"delta" real, "from_location" text, "to_location" text, "step_id" integer, "run_id" integer, "user_id" integer, "note" text, "at" datetime NOT NULL)`,
    );
    await q.query(`CREATE INDEX "ix_resource_moves_resource" ON "resource_moves" ("resource", "id")`);
    await q.query(`CREATE INDEX "ix_resource_moves_step" ON "resource_moves" ("step_id")`);
    await q.query(
      `CREATE TABLE "deck_versions" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "host" text NOT NULL, "reason" text NOT NULL, "schemas" text NOT NULL, ` +
        `"diff" text NOT NULL, "at" datetime NOT NULL)`,
    );
    await q.query(`CREATE TABLE "run_deck_versions" ("run_id" integer PRIMARY KEY NOT NULL, "version" integer NOT NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "run_deck_versions"`);
    await q.query(`DROP TABLE "deck_versions"`);
    await q.query(`DROP INDEX "ix_resource_moves_step"`);
    await q.query(`DROP INDEX "ix_resource_moves_resource"`);
    await q.query(`DROP TABLE "resource_moves"`);
    await q.query(`DROP TABLE "resources"`);
  }
}
