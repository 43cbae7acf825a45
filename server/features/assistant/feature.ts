import type { Feature } from '../index';
import { assistantRoutes } from './routes';

/**
 * The assistant (issue 19, docs/assistant.md): chat threads answered from local rules or an
 * OpenAI-compatible provider, and insights computed from the user's data.
 */
export const assistantFeature: Feature = { name: 'assistant', routes: assistantRoutes };
