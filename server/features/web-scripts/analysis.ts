import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { rfc3339 } from '../../lib/clock';
import { type Breadcrumb, ownIssue } from './service';
import { type AnalysisRow, findAnalysis, type IssueRow, latestEvent, saveAnalysis } from './store';

/**
 * Analysis of an issue (§9.2): a provider turns the issue, its latest event and breadcrumbs into
 * `{summary, likelyCause, suggestions}`. The local provider matches known patterns; an assistant provider
 * (issue of the assistant, §12) registers itself with `registerAnalysisProvider` and is tried first.
 */

export type Lang = 'en' | 'ru';

export interface AnalysisInput {
  issue: IssueRow;
  message: string;
  stack: string | null;
  url: string | null;
  breadcrumbs: Breadcrumb[];
  lang: Lang;
}

export interface AnalysisOutput {
  summary: string;
  likelyCause: string;
  suggestions: string[];
  /** `local` or the model's name. */
  provider: string;
}

/** The seam for the assistant: returns undefined when it cannot answer (not configured, failed). */
export interface AnalysisProvider {
  name: string;
  analyze(ctx: AppContext, input: AnalysisInput): Promise<AnalysisOutput | undefined>;
}

const providers = new WeakMap<AppContext, AnalysisProvider[]>();

export function registerAnalysisProvider(ctx: AppContext, p: AnalysisProvider): void {
  const list = providers.get(ctx) ?? [];
  list.push(p);
  providers.set(ctx, list);
}

type Texts = { summary: string; cause: string; suggestions: string[] };
interface Rule {
  test: RegExp;
  en: (m: RegExpExecArray, i: AnalysisInput) => Texts;
  ru: (m: RegExpExecArray, i: AnalysisInput) => Texts;
}

function where(i: AnalysisInput): string {
  return i.issue.culprit === '' ? '' : ` (${i.issue.culprit})`;
}

const RULES: Rule[] = [
  {
    test: /Cannot read propert(?:y|ies) of (undefined|null)(?: \(reading '([^']*)'\))?|(?:undefined|null) is not an object \(evaluating '([^']*)'\)|can't access property "?([^",]*)"?,? \S+ is (undefined|null)/i,
    en: (m, i) => {
      const prop = m[2] ?? m[4] ?? m[3];
      return {
        summary: `The code read ${prop ? `the property "${prop}" of` : 'a property of'} a value that was ${m[1] ?? m[5] ?? 'undefined'}${where(i)}.`,
        cause:
          'A value the code expected (API data, a DOM element, a prop or state) was not there yet or at all: data still loading, a failed or changed response, or an element missing on this page.',
        suggestions: [
          'Guard the access with optional chaining (obj?.prop) or an early return while the data is loading.',
          'Check the response of the request made just before the error (see the breadcrumbs) for a missing or renamed field.',
          'Give the value a safe default (an empty array or object) where it is created.',
        ],
      };
    },
    ru: (m, i) => {
      const prop = m[2] ?? m[4] ?? m[3];
      return {
        summary: `Код обратился ${prop ? `к свойству «${prop}»` : 'к свойству'} значения, равного ${m[1] ?? m[5] ?? 'undefined'}${where(i)}.`,
        cause:
          'Ожидаемого значения (данных API, DOM-элемента, пропса или состояния) ещё нет или не будет вовсе: данные загружаются, ответ сервера изменился или завершился ошибкой, либо элемента нет на этой странице.',
        suggestions: [
          'Защитите обращение опциональной цепочкой (obj?.prop) или ранним выходом, пока данные загружаются.',
          'Проверьте ответ запроса, выполненного перед ошибкой (см. хлебные крошки): нет ли там пропавшего или переименованного поля.',
          'Задайте безопасное значение по умолчанию (пустой массив или объект) там, где значение создаётся.',
        ],
      };
    },
  },
  {
    test: /([\w$.[\]"'()]+) is not a function/,
    en: (m, i) => ({
      summary: `${m[1]} was called as a function but is not one${where(i)}.`,
      cause:
        'The name holds something else: a misspelt method, a wrong import (default vs named), a library version without this method, or a value that is undefined at this point.',
      suggestions: [
        `Log typeof ${m[1]} just before the call to see what it holds.`,
        'Check the import and the installed version of the library that should provide it.',
        'If the function is optional, check it before calling (fn?.()).',
      ],
    }),
    ru: (m, i) => ({
      summary: `${m[1]} вызван как функция, но функцией не является${where(i)}.`,
      cause:
        'Под этим именем лежит что-то другое: опечатка в имени метода, неверный импорт (default или именованный), версия библиотеки без этого метода или значение undefined в этот момент.',
      suggestions: [
        `Выведите typeof ${m[1]} прямо перед вызовом, чтобы увидеть, что там лежит.`,
        'Проверьте импорт и установленную версию библиотеки, которая должна предоставлять функцию.',
        'Если функция необязательна, проверьте её перед вызовом (fn?.()).',
      ],
    }),
  },
  {
    test: /Failed to fetch|NetworkError when attempting to fetch resource|Load failed|Network request failed/i,
    en: () => ({
      summary: 'A fetch() request did not get any HTTP response.',
      cause:
        'The network was down, the server unreachable, the request blocked by CORS or an ad blocker, or the page was left while the request ran.',
      suggestions: [
        'Look at the fetch breadcrumbs to see which request failed.',
        'Check the CORS headers of that endpoint for this origin.',
        'Catch the rejection and show a retry instead of leaving it unhandled.',
      ],
    }),
    ru: () => ({
      summary: 'Запрос fetch() не получил никакого HTTP-ответа.',
      cause:
        'Нет сети, сервер недоступен, запрос заблокирован CORS или блокировщиком рекламы, либо пользователь ушёл со страницы во время запроса.',
      suggestions: [
        'Посмотрите хлебные крошки fetch, чтобы понять, какой запрос не удался.',
        'Проверьте CORS-заголовки этого адреса для данного источника.',
        'Перехватывайте отказ и предлагайте повтор, а не оставляйте его необработанным.',
      ],
    }),
  },
  {
    test: /^(?:Uncaught )?Script error\.?$/i,
    en: () => ({
      summary: 'An error in a script from another origin; the browser hides its details.',
      cause:
        'The failing script is loaded from another domain (a CDN, an analytics or ad script) without CORS, so the browser reports only "Script error.".',
      suggestions: [
        'Add crossorigin="anonymous" to that <script> tag and serve it with Access-Control-Allow-Origin.',
        'If it is a third-party script you do not control, consider ignoring this issue.',
      ],
    }),
    ru: () => ({
      summary: 'Ошибка в скрипте с другого домена; браузер скрывает подробности.',
      cause:
        'Падающий скрипт загружен с другого домена (CDN, аналитика, реклама) без CORS, поэтому браузер сообщает только «Script error.».',
      suggestions: [
        'Добавьте crossorigin="anonymous" в тег <script> и отдавайте файл с заголовком Access-Control-Allow-Origin.',
        'Если это чужой скрипт, который вы не контролируете, эту проблему можно игнорировать.',
      ],
    }),
  },
  {
    test: /ChunkLoadError|Loading (?:CSS )?chunk [\w-]+ failed|Failed to fetch dynamically imported module|error loading dynamically imported module/i,
    en: () => ({
      summary: 'A lazily loaded chunk of the application could not be loaded.',
      cause:
        'Usually a new deployment replaced the chunk files while the page still ran the old version, or the network failed while loading it.',
      suggestions: [
        "Keep the previous deployment's chunks available for a while after deploying.",
        'Catch the failed import and reload the page once to get the new version.',
      ],
    }),
    ru: () => ({
      summary: 'Не удалось загрузить лениво подгружаемую часть (chunk) приложения.',
      cause:
        'Обычно новая выкладка заменила файлы чанков, пока на странице работала старая версия, либо сеть оборвалась во время загрузки.',
      suggestions: [
        'Сохраняйте чанки предыдущей выкладки доступными ещё некоторое время.',
        'Перехватывайте неудачный импорт и один раз перезагружайте страницу, чтобы получить новую версию.',
      ],
    }),
  },
  {
    test: /ResizeObserver loop/i,
    en: () => ({
      summary: 'A ResizeObserver callback changed the layout it observes within one frame.',
      cause:
        'The browser reports this when resize notifications could not all be delivered in one frame; it is benign in most cases.',
      suggestions: [
        'Usually safe to ignore this issue.',
        'If it matters, defer the size change in the callback with requestAnimationFrame.',
      ],
    }),
    ru: () => ({
      summary:
        'Обработчик ResizeObserver изменил раскладку, за которой сам наблюдает, в пределах одного кадра.',
      cause:
        'Браузер сообщает об этом, когда не смог доставить все уведомления об изменении размеров за один кадр; в большинстве случаев это безвредно.',
      suggestions: [
        'Обычно эту проблему можно игнорировать.',
        'Если это важно, откладывайте изменение размеров в обработчике через requestAnimationFrame.',
      ],
    }),
  },
];

function generic(i: AnalysisInput): Texts {
  const last = i.breadcrumbs.length > 0 ? i.breadcrumbs[i.breadcrumbs.length - 1]! : undefined;
  const failed = [...i.breadcrumbs]
    .reverse()
    .find((b) => (b.type === 'fetch' || b.type === 'xhr') && /\s(?:[45]\d\d|failed)$/.test(b.message));
  if (i.lang === 'ru') {
    const s: string[] = [];
    if (i.issue.culprit)
      s.push(`Откройте ${i.issue.culprit} и проверьте значения, с которыми работает этот код.`);
    if (failed)
      s.push(`Перед ошибкой запрос завершился неудачно (${failed.message}): проверьте его обработку.`);
    if (last) s.push(`Воспроизведите последнее действие пользователя: ${last.type} ${last.message}.`);
    s.push('Загрузите source map этой сборки, чтобы видеть исходные файлы и строки.');
    return {
      summary: `${i.issue.type === 'rejection' ? 'Необработанный отказ промиса' : 'Ошибка'}: ${i.issue.title}${where(i)}.`,
      cause: failed
        ? `Вероятно, связано с неудачным запросом перед ошибкой (${failed.message}).`
        : 'Шаблон не распознан; причина — в коде, указанном во фрейме, или в данных, которые он получил.',
      suggestions: s,
    };
  }
  const s: string[] = [];
  if (i.issue.culprit) s.push(`Open ${i.issue.culprit} and check the values this code works with.`);
  if (failed) s.push(`A request failed just before the error (${failed.message}): check how it is handled.`);
  if (last) s.push(`Reproduce the user's last action: ${last.type} ${last.message}.`);
  s.push('Upload the source map of this build to see original files and lines.');
  return {
    summary: `${i.issue.type === 'rejection' ? 'Unhandled promise rejection' : 'Error'}: ${i.issue.title}${where(i)}.`,
    cause: failed
      ? `Probably related to the failed request before the error (${failed.message}).`
      : 'No known pattern; the cause lies in the code of the top frame or in the data it received.',
    suggestions: s,
  };
}

/** The local provider: known patterns, then a generic reading of the culprit and breadcrumbs. */
export function localAnalysis(i: AnalysisInput): AnalysisOutput {
  const text = i.message || i.issue.title;
  for (const r of RULES) {
    const m = r.test.exec(text);
    if (m) {
      const t = r[i.lang](m, i);
      return { summary: t.summary, likelyCause: t.cause, suggestions: t.suggestions, provider: 'local' };
    }
  }
  const t = generic(i);
  return { summary: t.summary, likelyCause: t.cause, suggestions: t.suggestions, provider: 'local' };
}

function present(a: AnalysisRow) {
  return {
    issueId: a.issue_id,
    summary: a.summary,
    likelyCause: a.likely_cause,
    suggestions: JSON.parse(a.suggestions) as string[],
    provider: a.provider,
    lang: a.lang,
    createdAt: rfc3339(a.created_at),
  };
}

export function savedAnalysis(ctx: AppContext, p: Principal, id: number, iid: number) {
  const { issue } = ownIssue(ctx, p, id, iid);
  const a = findAnalysis(ctx.db, issue.id);
  return a ? present(a) : undefined;
}

/** POST …/analyze: the saved one unless `force` (or another language was asked), else a new one, saved. */
export async function analyze(
  ctx: AppContext,
  p: Principal,
  id: number,
  iid: number,
  opts: { lang?: Lang | undefined; force?: boolean | undefined },
) {
  const { issue } = ownIssue(ctx, p, id, iid);
  const lang = opts.lang ?? 'en';
  const saved = findAnalysis(ctx.db, issue.id);
  if (saved && !opts.force && saved.lang === lang) return present(saved);
  const e = latestEvent(ctx.db, issue.id);
  const input: AnalysisInput = {
    issue,
    message: e?.message ?? issue.title,
    stack: e?.stack ?? null,
    url: e?.url ?? null,
    breadcrumbs: e ? (JSON.parse(e.breadcrumbs) as Breadcrumb[]) : [],
    lang,
  };
  let out: AnalysisOutput | undefined;
  for (const provider of providers.get(ctx) ?? []) {
    try {
      out = await provider.analyze(ctx, input);
    } catch (err) {
      ctx.log.warn('web-script analysis provider failed', { provider: provider.name, err });
    }
    if (out) break;
  }
  out ??= localAnalysis(input);
  const row: AnalysisRow = {
    issue_id: issue.id,
    lang,
    summary: out.summary,
    likely_cause: out.likelyCause,
    suggestions: JSON.stringify(out.suggestions),
    provider: out.provider,
    created_at: ctx.clock.now(),
  };
  // The issue may have gone while a provider answered.
  ctx.db.transaction(() => {
    if (ctx.db.first('SELECT 1 AS x FROM web_script_issues WHERE id = ?', [issue.id]))
      saveAnalysis(ctx.db, row);
  });
  return present(row);
}
