import type { AppContext } from '../../context';
import type { AnalysisInput, AnalysisOutput, AnalysisProvider } from '../web-scripts/analysis';
import { askJson, providerModel } from './provider';
import { scrub } from './snapshot';

/**
 * The assistant's provider as the analysis provider of web-script issues (§9.2): asked for
 * `{summary, likelyCause, suggestions}` as JSON; unset, failed or invalid → undefined, and the web-scripts
 * family uses its local patterns. URLs in the page address and breadcrumbs are masked (they may carry tokens).
 */
export const assistantAnalysis: AnalysisProvider = {
  name: 'assistant',
  async analyze(ctx: AppContext, i: AnalysisInput): Promise<AnalysisOutput | undefined> {
    const model = providerModel(ctx);
    if (!model) return undefined;
    const out = await askJson(
      ctx,
      `You analyse a JavaScript error reported from a web page. Answer {"summary": "...", "likelyCause": "...", "suggestions": ["...", ...]} with 1-5 concrete suggestions${i.lang === 'ru' ? ', written in Russian' : ''}.`,
      JSON.stringify({
        type: i.issue.type,
        title: i.issue.title,
        culprit: i.issue.culprit,
        message: i.message.slice(0, 2_000),
        stack: i.stack?.slice(0, 4_000) ?? null,
        page: i.url === null ? null : scrub(i.url),
        breadcrumbs: i.breadcrumbs.slice(-10).map((b) => ({ type: b.type, message: scrub(b.message) })),
      }),
      (v) => {
        const o = v as { summary?: unknown; likelyCause?: unknown; suggestions?: unknown };
        const ok = (s: unknown): s is string => typeof s === 'string' && s.trim() !== '';
        if (!o || !ok(o.summary) || !ok(o.likelyCause) || !Array.isArray(o.suggestions)) return undefined;
        const suggestions = o.suggestions.filter(ok).slice(0, 5);
        if (suggestions.length === 0) return undefined;
        return {
          summary: o.summary.trim().slice(0, 2_000),
          likelyCause: o.likelyCause.trim().slice(0, 2_000),
          suggestions: suggestions.map((s) => s.trim().slice(0, 1_000)),
          provider: model,
        };
      },
    );
    return out;
  },
};
