/**
 * The resources tables (issue 32) as TypeORM EntitySchemas, for the drift test (entities.ts lists them):
 * resources, their ledger, deck versions and the deck version of each run.
 */
import { EntitySchema } from 'typeorm';
type Dialect = 'sqlite' | 'postgres';

export function resourceEntities(dialect: Dialect): EntitySchema[] {
  const ts = dialect === 'postgres' ? ('timestamptz' as const) : ('datetime' as const);
  const real = dialect === 'postgres' ? ('double precision' as const) : ('real' as const);
  const bigId = dialect === 'postgres' ? ('bigint' as const) : ('integer' as const);
  const Resource = new EntitySchema<Record<string, unknown>>({
    name: 'Resource',
    tableName: 'resources',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_resources', generated: 'increment' },
      name: { type: 'text' },
      kind: { type: 'text' },
      quantity: { type: real },
      unit: { type: 'text' },
      rows: { type: 'integer', nullable: true },
      columns: { type: 'integer', nullable: true },
      location: { type: 'text', nullable: true },
      identity: { type: 'text', nullable: true },
      inDoubt: { type: 'integer', name: 'in_doubt' },
      createdAt: { type: ts, name: 'created_at' },
      updatedAt: { type: ts, name: 'updated_at' },
    },
    uniques: [{ name: 'uq_resources_name', columns: ['name'] }],
  });
  const ResourceMove = new EntitySchema<Record<string, unknown>>({
    name: 'ResourceMove',
    tableName: 'resource_moves',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_resource_moves', generated: 'increment' },
      resource: { type: 'text' },
      kind: { type: 'text' },
      status: { type: 'text' },
      delta: { type: real, nullable: true },
      fromLocation: { type: 'text', name: 'from_location', nullable: true },
      toLocation: { type: 'text', name: 'to_location', nullable: true },
      stepId: { type: bigId, name: 'step_id', nullable: true },
      runId: { type: 'integer', name: 'run_id', nullable: true },
      userId: { type: 'integer', name: 'user_id', nullable: true },
      note: { type: 'text', nullable: true },
      at: { type: ts },
    },
    indices: [
      { name: 'ix_resource_moves_resource', columns: ['resource', 'id'] },
      { name: 'ix_resource_moves_step', columns: ['stepId'] },
    ],
  });
  const DeckVersion = new EntitySchema<Record<string, unknown>>({
    name: 'DeckVersion',
    tableName: 'deck_versions',
    columns: {
      id: { type: 'integer', primary: true, primaryKeyConstraintName: 'pk_deck_versions', generated: 'increment' },
      host: { type: 'text' },
      reason: { type: 'text' },
      schemas: { type: 'text' },
      diff: { type: 'text' },
      at: { type: ts },
    },
  });
  const RunDeckVersion = new EntitySchema<Record<string, unknown>>({
    name: 'RunDeckVersion',
    tableName: 'run_deck_versions',
    columns: {
      runId: { type: 'integer', name: 'run_id', primary: true, primaryKeyConstraintName: 'pk_run_deck_versions' },
      version: { type: 'integer' },
    },
  });
  return [Resource, ResourceMove, DeckVersion, RunDeckVersion] as EntitySchema[];
}
