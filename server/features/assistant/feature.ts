import type { Feature } from '../index';
import { registerAnalysisProvider } from '../web-scripts/analysis';
import { assistantAnalysis } from './analysis';
import { assistantRoutes } from './routes';

/**
 * The assistant (issue 19, docs/assistant.md): chat threads answered from local rules or an
 * OpenAI-compatible provider, and insights computed from the user's data. Its provider also analyses
 * web-script issues (registered here; it steps aside when no provider is set).
 */
export const assistantFeature: Feature = {
  name: 'assistant',
  init: (ctx) => registerAnalysisProvider(ctx, assistantAnalysis),
  routes: assistantRoutes,
};
