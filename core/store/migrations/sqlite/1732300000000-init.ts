import type { MigrationInterface, QueryRunner } from 'typeorm';

/** SQLite: users, sessions, API tokens, method preferences, steps, audit log, settings. */
export class Init1732300000000 implements MigrationInterface {
  name = 'Init1732300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "users" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "username" text NOT NULL, ` +
        `"password_hash" text NOT NULL, "role" text NOT NULL, "created_at" datetime NOT NULL, ` +
        `CONSTRAINT "uq_users_username" UNIQUE ("username"))`,
    );
    await q.query(
      `CREATE TABLE "sessions" ("sid" text PRIMARY KEY NOT NULL, "data" text NOT NULL, "expires_at" datetime NOT NULL)`,
    );
    await q.query(`CREATE INDEX "ix_sessions_expires_at" ON "sessions" ("expires_at")`);
    await q.query(
      `CREATE TABLE "api_tokens" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "user_id" integer NOT NULL, ` +
        `"name" text NOT NULL, "token_hash" text NOT NULL, "prefix" text NOT NULL, "created_at" datetime NOT NULL, ` +
        `"last_used_at" datetime, CONSTRAINT "uq_api_tokens_token_hash" UNIQUE ("token_hash"), ` +
        `CONSTRAINT "fk_api_tokens_user" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
    );
    await q.query(`CREATE INDEX "ix_api_tokens_user_id" ON "api_tokens" ("user_id")`);
    await q.query(
      `CREATE TABLE "method_prefs" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "user_id" integer NOT NULL, ` +
        `"instrument" text NOT NULL, "method_order" text NOT NULL, "hidden" text NOT NULL, ` +
        `CONSTRAINT "uq_method_prefs_user_instrument" UNIQUE ("user_id", "instrument"), ` +
        `CONSTRAINT "fk_method_prefs_user" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
    );
    // run_id has no foreign key yet: the runs table comes with a later migration.
    await q.query(
      `CREATE TABLE "steps" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "run_id" integer, "phase" text, ` +
        `"iteration" integer, "step_index" integer, "instrument" text NOT NULL, "method" text NOT NULL, "args" text, ` +
        `"output" text, "status" text NOT NULL, "error" text, "user_id" integer, "started_at" datetime NOT NULL, ` +
        `"ended_at" datetime, ` +
        `CONSTRAINT "fk_steps_user" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE SET NULL ON UPDATE NO ACTION)`,
    );
    await q.query(`CREATE INDEX "ix_steps_run_id" ON "steps" ("run_id")`);
    await q.query(`CREATE INDEX "ix_steps_instrument_id" ON "steps" ("instrument", "id")`);
    await q.query(
      `CREATE TABLE "audit_log" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "user_id" integer, ` +
        `"action" text NOT NULL, "detail" text, "at" datetime NOT NULL, ` +
        `CONSTRAINT "fk_audit_log_user" FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE SET NULL ON UPDATE NO ACTION)`,
    );
    await q.query(`CREATE TABLE "settings" ("key" text PRIMARY KEY NOT NULL, "value" text NOT NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['settings', 'audit_log', 'steps', 'method_prefs', 'api_tokens', 'sessions', 'users']) {
      await q.query(`DROP TABLE "${t}"`);
    }
  }
}
