/**
 * The bare pipeline (issue 22's second reference): servers/pipeline.ts without a search index. Raw
 * `node:http`, the same message schema, a sql.js insert, the group-committed fdatasync'd journal and
 * WebSocket fan-out, and no FTS triggers: the floor for Belfry's durable POST /message and its fan-out.
 */
import { startPipeline } from './pipeline';

await startPipeline({ searchIndex: false });
