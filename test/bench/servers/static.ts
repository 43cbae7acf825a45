/**
 * The floor for a read benchmark: raw `node:http` answering every GET with the same bytes (the file
 * BENCH_BODY_FILE, read once), the headers Belfry sends with a JSON answer, keep-alive. No database, no
 * authentication, no serialisation: what the machine and Node's HTTP cost for a page of that size.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const file = process.env.BENCH_BODY_FILE;
if (!file) throw new Error('BENCH_BODY_FILE is required');
const body = readFileSync(file);
const server = createServer((_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
