import { ownershipSweep } from './sweeps/ownership';

// One shard of the ownership sweep: which routes it takes follows from this file's name (sweeps/shards.ts).
ownershipSweep(import.meta.url);
