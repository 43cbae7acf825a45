import initSqlJs from 'sql.js';
import { describe, expect, it } from 'vitest';
import { SqlJsDb } from '../../db/database';
import { migrate } from '../../db/migrate';
import { migrations } from '../../db/migrations.generated';

describe('migration 0011_maintenance', () => {
  it('rebuilds heartbeats with the same rows, history and id sequence, and allows status maintenance', async () => {
    const SQL = await initSqlJs();
    const db = new SqlJsDb(new SQL.Database());
    migrate(
      db,
      migrations.filter((m) => m.version <= 10),
      1,
    );
    db.run("INSERT INTO users (id, email, password_hash, created_at) VALUES (1, 'a@example.com', 'x', 1)");
    db.run("INSERT INTO channels (id, user_id, name, created_at) VALUES (1, 1, 'c', 1)");
    const insert = (id: number) =>
      db.run(
        `INSERT INTO heartbeats (id, user_id, channel_id, name, status, status_since, token_digest, token_hint, created_at)
         VALUES (?, 1, 1, ?, 'up', 5, ?, 'hint', 5)`,
        [id, `hb${id}`, `digest${id}`],
      );
    insert(5);
    insert(6);
    db.run('DELETE FROM heartbeats WHERE id = 6');
    db.run(
      "INSERT INTO history_intervals (kind, source_id, status, class, start_at) VALUES ('heartbeat', 5, 'up', 'up', 5)",
    );
    expect(
      migrate(
        db,
        migrations.filter((m) => m.version <= 11),
        2,
      ),
    ).toEqual([11]);
    expect(db.all('SELECT id, name, status, maint_status FROM heartbeats')).toEqual([
      { id: 5, name: 'hb5', status: 'up', maint_status: null },
    ]);
    expect(db.all('SELECT source_id FROM history_intervals')).toEqual([{ source_id: 5 }]);
    const next = db.run(
      `INSERT INTO heartbeats (user_id, channel_id, name, status, status_since, token_digest, token_hint, created_at)
       VALUES (1, 1, 'new', 'maintenance', 5, 'd7', 'hint', 5)`,
    ).lastInsertRowid;
    expect(next).toBe(7);
    // The history trigger is back: deleting a heartbeat takes its history along.
    db.run('DELETE FROM heartbeats WHERE id = 5');
    expect(db.all('SELECT source_id FROM history_intervals')).toEqual([]);
  });
});
