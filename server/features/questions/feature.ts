import type { AppContext } from '../../context';
import type { Feature } from '../index';
import { questionRoutes } from './routes';
import { KIND, questionNextDue, runDueQuestions } from './service';

function init(ctx: AppContext): void {
  ctx.due.register({ name: KIND, nextDueAt: questionNextDue, runDue: runDueQuestions });
}

/** Interactive questions (issue 16): POST /ask, answers, deadlines and the signed answer link. */
export const questionsFeature: Feature = { name: 'questions', init, routes: questionRoutes };
