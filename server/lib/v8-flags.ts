/**
 * V8 flags Belfry's server process starts with (issue 22: resident memory with 1M messages ≤ 0.6 GB).
 *
 * Node 24's V8 sizes the young generation from the heap limit: under load its two semi-spaces grow to
 * 32 MB each on this 24 GiB machine, where Node 20's stop at 16 MB. In the memory bench (1M messages,
 * 8 senders in a closed loop) that took the server from 535 MB to 640 MB; capped at 16 MB, Node 24 peaked
 * at 543 MB. Node 20 already runs with 16 MB, so nothing changes there.
 *
 * They only work when the process starts (v8.setFlagsFromString later does not resize the heap), so they
 * live where processes start: package.json's `serve` and `start` scripts (v8-flags.test.ts holds them to
 * this list), scripts/start.mjs passes this list to Electron as `--js-flags`, a desktop app started
 * without them relaunches itself with them (electron/v8-relaunch.ts), and the benches start Belfry's
 * server with them (test/bench/lib.ts).
 */
export const SERVER_V8_FLAGS: readonly string[] = ['--max-semi-space-size=16'];
