import type { AppContext } from '../../../../context';
import { errors } from '../../../../http/errors';
import { askJson } from '../../../assistant/provider';
import { firstUrl } from '../curl';
import type { BrowserStep } from './steps';
import { readSteps } from './steps';

/**
 * `POST /browser-workflow/build-step` without an assistant provider (§2.6; with one: buildBrowserStepAssisted): a plain-language description
 * becomes one step by local rules. The verb decides the action (open/go to, click, type/fill, press, wait,
 * expect/see); quoted text becomes a `text="…"` selector (or the typed value, or the expected text); a
 * selector-looking word (`#id`, `.class`, `[attr]`) is taken as written.
 */

const KEYS: Record<string, string> = {
  enter: 'Enter',
  return: 'Enter',
  tab: 'Tab',
  escape: 'Escape',
  esc: 'Escape',
  space: 'Space',
  backspace: 'Backspace',
  delete: 'Delete',
  up: 'ArrowUp',
  down: 'ArrowDown',
  left: 'ArrowLeft',
  right: 'ArrowRight',
};

const VERBS: [RegExp, BrowserStep['action']][] = [
  [/\b(open|go to|goto|navigate to|visit|load|browse to)\b/i, 'goto'],
  [/\b(type|fill|enter|input|write)\b/i, 'fill'],
  [/\b(click|tap|choose|select|hit)\b/i, 'click'],
  [/\b(press|push)\b/i, 'press'],
  [/\b(wait)\b/i, 'waitFor'],
  [/\b(url|address)\b.*\b(contains?|is|should|matches?|ends?|starts?)\b/i, 'expectUrl'],
  [/\b(expect|see|sees|check|verify|should|assert|shows?|contains?)\b/i, 'expectText'],
];

function quoted(text: string): string[] {
  return [...text.matchAll(/"([^"]+)"|“([^”]+)”|'([^']+)'/g)].map((m) => (m[1] ?? m[2] ?? m[3])!.trim());
}

function selectorWord(text: string): string | undefined {
  return /(?:^|\s)([#.][A-Za-z_][\w-]*|\[[^\]]+\])(?=\s|$)/.exec(text)?.[1];
}

/** `text="Sign in"` (Playwright's exact-text selector), quotes in the text escaped. */
function textSelector(t: string): string {
  return `text="${t.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The words after the verb, unquoted: `click Sign in` → `Sign in`. */
function restAfter(text: string, verb: RegExp): string {
  const m = verb.exec(text);
  const rest = m ? text.slice(m.index + m[0].length) : text;
  return rest
    .replace(/^\s*(on|the|button|link|into|in|for)\b/gi, '')
    .replace(/\b(button|link)\b/gi, '')
    .replace(/[.!]+$/, '')
    .trim();
}

function ruleStep(description: string, url?: string): Record<string, unknown> | null {
  const d = description.trim();
  const q = quoted(d);
  for (const [verb, action] of VERBS) {
    if (!verb.test(d)) continue;
    switch (action) {
      case 'goto': {
        const target = firstUrl(d) ?? url;
        if (!target) continue;
        return { action, url: target };
      }
      case 'fill': {
        if (q.length === 0) continue;
        const value = q[0]!;
        const target = q[1] ?? selectorWord(d);
        if (!target) continue;
        const selector = /^[#.[]/.test(target) ? target : textSelector(target);
        const secret = /\b(password|passcode|secret|token|pin)\b/i.test(d);
        return { action, selector, value, ...(secret ? { secret: true } : {}) };
      }
      case 'click': {
        const target = q[0] ?? selectorWord(d) ?? restAfter(d, verb);
        if (!target) continue;
        return { action, selector: /^[#.[]/.test(target) ? target : textSelector(target) };
      }
      case 'press': {
        const word = (q[0] ?? restAfter(d, verb)).split(/\s+/)[0] ?? '';
        if (!word) continue;
        const key = KEYS[word.toLowerCase()] ?? word;
        return { action, value: key };
      }
      case 'waitFor': {
        const dur = /(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|sec|secs|seconds?)\b/i.exec(d);
        if (dur) {
          const ms = Math.round(Number(dur[1]) * (/^m/i.test(dur[2]!) ? 1 : 1000));
          return { action, value: Math.min(ms, 30_000) };
        }
        const target = q[0] ?? selectorWord(d);
        if (!target) continue;
        return { action, selector: /^[#.[]/.test(target) ? target : textSelector(target) };
      }
      case 'expectUrl': {
        const value = q[0] ?? /(\/[^\s"']*)/.exec(d)?.[1];
        if (!value) continue;
        return { action, value };
      }
      case 'expectText': {
        if (q.length === 0) continue;
        const selector = q[1] ?? selectorWord(d);
        return {
          action,
          value: q[0],
          ...(selector ? { selector: /^[#.[]/.test(selector) ? selector : textSelector(selector) } : {}),
        };
      }
    }
  }
  const bare = firstUrl(d);
  return bare ? { action: 'goto', url: bare } : null;
}

/** The step of a description, validated as a step of a create (400 `step.…` when the rules built nonsense). */
export function buildBrowserStep(description: string, url?: string): BrowserStep {
  const raw = ruleStep(description, url);
  if (!raw)
    throw errors.badRequest(
      'description: no step found (say what to do, e.g. open https://…, click "Sign in", type "me" into "Email", press Enter, expect "Welcome")',
    );
  return readSteps([raw], 'step', undefined)[0]!;
}

const ACTIONS = ['goto', 'click', 'fill', 'press', 'waitFor', 'expectText', 'expectUrl'];

/**
 * The same with the assistant's provider set: it is asked for one step as JSON, which must pass the
 * validation of a create; no provider, a failure or an invalid step: the local rules above.
 */
export async function buildBrowserStepAssisted(
  ctx: AppContext,
  description: string,
  url?: string,
): Promise<BrowserStep> {
  const step = await askJson(
    ctx,
    `You turn one plain-language instruction into one step of a Playwright browser check. Answer {"step": {...}} with "action" one of ${ACTIONS.join(', ')}; goto takes "url"; click takes "selector"; fill takes "selector" and "value" (and "secret": true for passwords); press takes "value" (a key name such as Enter); waitFor takes "selector" or "value" (milliseconds); expectText takes "value" and optionally "selector"; expectUrl takes "value". Selectors are Playwright selectors, e.g. text="Sign in" or #email.`,
    JSON.stringify({ instruction: description, ...(url ? { pageUrl: url } : {}) }),
    (v) => {
      const raw = (v as { step?: unknown })?.step;
      if (!raw || typeof raw !== 'object' || !ACTIONS.includes(String((raw as { action?: unknown }).action)))
        return undefined;
      try {
        return readSteps([raw], 'step', undefined)[0];
      } catch {
        return undefined;
      }
    },
  );
  return step ?? buildBrowserStep(description, url);
}
