import type { Db } from './database';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export class NewerDatabaseError extends Error {}

/**
 * Applies missing migrations in order, each in its own (journaled) transaction. A database that
 * records a migration this build does not know was written by a newer Belfry: refuse it rather than
 * run old code against a schema it does not understand.
 */
export function migrate(db: Db, migrations: readonly Migration[], now: number): number[] {
  // Created only when missing: an unconditional CREATE ... IF NOT EXISTS would journal a record on
  // every start, and so make every clean stop write a snapshot.
  if (!db.first("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")) {
    db.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    );
  }
  const known = new Map(migrations.map((m) => [m.version, m]));
  const applied = db.all<{ version: number; name: string }>(
    'SELECT version, name FROM schema_migrations ORDER BY version',
  );
  const unknown = applied.filter((a) => !known.has(a.version));
  if (unknown.length > 0) {
    const list = unknown.map((u) => `${String(u.version).padStart(4, '0')}_${u.name}`).join(', ');
    throw new NewerDatabaseError(
      `This database was written by a newer version of Belfry (unknown migrations: ${list}). ` +
        'Upgrade Belfry, or start it with a different --data-dir.',
    );
  }
  const done = new Set(applied.map((a) => a.version));
  const ran: number[] = [];
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (done.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
        m.version,
        m.name,
        now,
      ]);
    });
    ran.push(m.version);
  }
  return ran;
}
