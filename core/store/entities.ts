/**
 * The tables (tables.ts) as TypeORM EntitySchemas, for one dialect: what TypeORM is given for PostgreSQL,
 * and what the drift test (test/unit/store.test.ts) has TypeORM compare with the migrated database on both,
 * so that the descriptions and the migrations cannot drift apart. The repositories talk SQL directly.
 */
import { EntitySchema, type EntitySchemaColumnOptions, type EntitySchemaOptions } from 'typeorm';
import { columnSpec, SQL_TYPES, type Dialect } from './columns.js';
import { snake, type TableShape } from './table.js';
import { tables } from './tables.js';

export type { Dialect };

function entity(t: TableShape, dialect: Dialect): EntitySchema {
  const { primary, unique = {}, indexes = {}, foreignKeys = {} } = t.options;
  const columns: Record<string, EntitySchemaColumnOptions> = {};
  for (const [field, c] of Object.entries(t.columns)) {
    const s = columnSpec(c);
    const key = s.generated || field === primary;
    columns[field] = {
      type: SQL_TYPES[s.type][dialect] as EntitySchemaColumnOptions['type'],
      name: snake(field),
      ...(s.nullable ? { nullable: true } : {}),
      ...(s.default === undefined ? {} : { default: typeof s.default === 'boolean' && dialect === 'sqlite' ? Number(s.default) : s.default }),
      ...(key ? { primary: true, primaryKeyConstraintName: `pk_${t.name}` } : {}),
      ...(s.generated ? { generated: 'increment' as const } : {}),
    };
  }
  const options: EntitySchemaOptions<Record<string, unknown>> = {
    name: t.name,
    tableName: t.name,
    columns,
    uniques: Object.entries(unique).map(([name, cols]) => ({ name, columns: cols })),
    indices: Object.entries(indexes).map(([name, cols]) => ({ name, columns: cols })),
    foreignKeys: Object.entries(foreignKeys).map(([name, [field, target, onDelete]]) => ({
      name,
      target,
      columnNames: [field],
      referencedColumnNames: ['id'],
      onDelete,
    })),
  };
  return new EntitySchema(options) as EntitySchema;
}

/** The entity schemas for one dialect. */
export function entitySchemas(dialect: Dialect): EntitySchema[] {
  return tables.map((t) => entity(t, dialect));
}
