import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostgreSQL: the lab's resources (issue 32), lab-wide (every host on the database sees one stock):
 * containers, consumables, liquids and samples; the ledger of every change to them; the numbered deck
 * versions and the version each run ran on.
 */
export class Resources1733600000000 implements MigrationInterface {
  name = 'Resources1733600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "resources" ("id" SERIAL NOT NULL, "name" text NOT NULL, "kind" text NOT NULL, "quantity" double precision NOT NULL, ` +
        `"unit" text NOT NULL, "rows" integer, "columns" integer, "location" text, "identity" text, "in_doubt" integer NOT NULL, ` +
        `"created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, ` +
        `CONSTRAINT "uq_resources_name" UNIQUE ("name"), CONSTRAINT "pk_resources" PRIMARY KEY ("id"))`,
    );
    await q.query(
      `CREATE TABLE "resource_moves" ("id" SERIAL NOT NULL, "resource" text NOT NULL, "kind" text NOT NULL, "status" text NOT NULL, ` +
        `"delta" double precision, "from_location" text, "to_location" text, "step_id" bigint, "run_id" integer, "user_id" integer, "note" text, ` +
        `"at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "pk_resource_moves" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "ix_resource_moves_resource" ON "resource_moves" ("resource", "id")`);
    await q.query(`CREATE INDEX "ix_resource_moves_step" ON "resource_moves" ("step_id")`);
    await q.query(
      `CREATE TABLE "deck_versions" ("id" SERIAL NOT NULL, "host" text NOT NULL, "reason" text NOT NULL, "schemas" text NOT NULL, ` +
        `"diff" text NOT NULL, "at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "pk_deck_versions" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE TABLE "run_deck_versions" ("run_id" integer NOT NULL, "version" integer NOT NULL, CONSTRAINT "pk_run_deck_versions" PRIMARY KEY ("run_id"))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "run_deck_versions"`);
    await q.query(`DROP TABLE "deck_versions"`);
    await q.query(`DROP TABLE "resource_moves"`);
    await q.query(`DROP TABLE "resources"`);
  }
}
