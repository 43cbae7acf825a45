/**
 * The reference of the first speed issue: the minimal pipeline of servers/pipeline.ts with the search
 * index as Belfry's migrations keep it (the FTS4 triggers on `messages`).
 */
import { startPipeline } from './pipeline';

await startPipeline({ searchIndex: true });
