import { badInputSweep } from './sweeps/bad-input';

// One shard of the bad-input sweep: which routes it takes follows from this file's name (sweeps/shards.ts).
badInputSweep(import.meta.url);
