/**
 * The loopback target of monitors.bench.ts: raw `node:http` answering every request `200 ok`, and
 * logging each request's arrival (wall-clock ms with a fraction: performance.timeOrigin + now()) by
 * path, e.g. `/t/17` (Belfry's monitor 17) or `/r/17` (the reference loop's target 17). On SIGTERM it
 * writes the log as JSON `{path: [arrival, …]}` to BENCH_TARGET_LOG and exits.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';

const logFile = process.env.BENCH_TARGET_LOG;
if (!logFile) throw new Error('BENCH_TARGET_LOG is required');
const arrivals = new Map<string, number[]>();
const body = Buffer.from('ok');
const server = createServer((req, res) => {
  const at = performance.timeOrigin + performance.now();
  const path = req.url ?? '/';
  const list = arrivals.get(path);
  if (list) list.push(at);
  else arrivals.set(path, [at]);
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': body.length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
process.once('SIGTERM', () => {
  writeFileSync(logFile, JSON.stringify(Object.fromEntries(arrivals)));
  process.exit(0);
});
