import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostgreSQL: the approval inbox (DESIGN.md §13). What an AI agent asked for that a person must approve first
 * (a hazardous call, a run, a campaign): what it asked and what would run, who asked with which token, until
 * when, who decided and why, and what came of it.
 */
export class Approvals1733200000000 implements MigrationInterface {
  name = 'Approvals1733200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "approvals" ("id" SERIAL NOT NULL, "kind" text NOT NULL, "status" text NOT NULL, "summary" text NOT NULL, ` +
        `"request" text NOT NULL, "plan" text NOT NULL, "user_id" integer, "token_id" integer, "token_name" text NOT NULL, ` +
        `"created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "decided_by" integer, ` +
        `"decided_at" TIMESTAMP WITH TIME ZONE, "reason" text, "outcome" text, CONSTRAINT "pk_approvals" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "ix_approvals_status" ON "approvals" ("status")`);
    await q.query(
      `ALTER TABLE "approvals" ADD CONSTRAINT "fk_approvals_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await q.query(
      `ALTER TABLE "approvals" ADD CONSTRAINT "fk_approvals_decider" FOREIGN KEY ("decided_by") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "approvals"`);
  }
}
