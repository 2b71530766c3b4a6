import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostgreSQL: campaigns whose points people carry out (issue 31), lab-wide: a campaign (manual, or the robot
 * campaign a queued task runs, so that it takes points measured by hand) and its points, each with its
 * parameters, its state (pending, measured, discarded), its results, who suggested it and who measured it.
 */
export class CampaignPoints1733700000000 implements MigrationInterface {
  name = 'CampaignPoints1733700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "campaigns" ("id" SERIAL NOT NULL, "name" text NOT NULL, "execution" text NOT NULL, "task_id" integer, ` +
        `"payload" text NOT NULL, "created_by" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "pk_campaigns" PRIMARY KEY ("id"))`,
    );
    await q.query(`CREATE INDEX "ix_campaigns_task" ON "campaigns" ("task_id")`);
    await q.query(
      `CREATE TABLE "campaign_points" ("id" SERIAL NOT NULL, "campaign_id" integer NOT NULL, "n" integer NOT NULL, "parameters" text NOT NULL, ` +
        `"state" text NOT NULL, "results" text, "reason" text, "suggested_by" text NOT NULL, "suggested_user" integer, "measured_by" text, "measured_user" integer, ` +
        `"created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "measured_at" TIMESTAMP WITH TIME ZONE, ` +
        `CONSTRAINT "uq_campaign_points_n" UNIQUE ("campaign_id", "n"), CONSTRAINT "pk_campaign_points" PRIMARY KEY ("id"))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "campaign_points"`);
    await q.query(`DROP INDEX "ix_campaigns_task"`);
    await q.query(`DROP TABLE "campaigns"`);
  }
}
