import { afterEach, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer | undefined;
afterEach(() => t?.close());

it('GET /health answers 503 red when the store cannot be used', async () => {
  t = await startTestServer();
  // Simulate a database that fails: the check query throws.
  t.server.store.check = () => {
    throw new Error('disk gone');
  };
  const res = await t.request('GET', '/health');
  expect(res.status).toBe(503);
  expect(res.body).toEqual({ health: 'red', database: 'red' });
});
