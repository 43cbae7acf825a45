/**
 * Browser workflows as the form sees them (docs/api.md "Browser workflows"): steps and cookies as
 * editable drafts (plain strings, so every input is controlled) and back to the wire. A secret fill's
 * value and every cookie value arrive as "********" and are sent back unchanged unless edited: the server
 * keeps the stored value (a secret fill by position, a cookie by name).
 */
import type { BrowserAction, BrowserCookie, BrowserStep, Monitor } from './types';

const MASK = '********';

/** The server's text when it finds no browser (server/lib/chromium.ts NO_CHROMIUM). */
export const NO_CHROMIUM_PREFIX = 'no Chromium available';

export function isNoChromium(error: string | null | undefined): boolean {
  return typeof error === 'string' && error.includes(NO_CHROMIUM_PREFIX);
}

export const BROWSER_ACTIONS: { action: BrowserAction; label: string }[] = [
  { action: 'goto', label: 'Open a page' },
  { action: 'click', label: 'Click' },
  { action: 'fill', label: 'Type into a field' },
  { action: 'press', label: 'Press a key' },
  { action: 'waitFor', label: 'Wait' },
  { action: 'expectText', label: 'Expect text' },
  { action: 'expectUrl', label: 'Expect the URL' },
];

export interface BrowserStepDraft {
  /** React key, stable while the step moves. */
  key: string;
  /** Its position in the stored workflow (a secret fill is kept by position), null for a new step. */
  origIndex: number | null;
  action: BrowserAction;
  url: string;
  selector: string;
  value: string;
  /** Milliseconds; empty: the server's default (10,000). */
  timeoutMs: string;
  secret: boolean;
}

export interface CookieDraft extends Omit<BrowserCookie, 'domain'> {
  /** Empty: the host of the first `goto`. */
  domain: string;
}

let keySeq = 0;
const nextKey = () => `b${++keySeq}`;

/** A browser workflow record's steps (the record's `steps` field is shared with the HTTP workflow). */
export function browserStepsOf(m: Partial<Monitor> | undefined): BrowserStep[] {
  return (m?.steps ?? []) as unknown as BrowserStep[];
}

export function browserStepToDraft(s: Partial<BrowserStep>, origIndex: number | null): BrowserStepDraft {
  return {
    key: nextKey(),
    origIndex,
    action: s.action ?? 'goto',
    url: s.url ?? '',
    selector: s.selector ?? '',
    value: s.value === undefined || s.value === null ? '' : String(s.value),
    timeoutMs: s.timeoutMs === undefined || s.timeoutMs === 10_000 ? '' : String(s.timeoutMs),
    secret: s.secret ?? false,
  };
}

export function emptyBrowserStep(action: BrowserAction = 'goto'): BrowserStepDraft {
  return browserStepToDraft({ action }, null);
}

export function browserStepsToDrafts(m: Partial<Monitor> | undefined): BrowserStepDraft[] {
  const steps = browserStepsOf(m);
  return steps.length ? steps.map((s, i) => browserStepToDraft(s, i)) : [emptyBrowserStep()];
}

/** A step on the wire: only the fields its action reads. */
export function draftToBrowserStep(d: BrowserStepDraft): BrowserStep {
  const step: BrowserStep = { action: d.action };
  const selector = d.selector.trim();
  switch (d.action) {
    case 'goto':
      step.url = d.url.trim();
      break;
    case 'click':
      step.selector = selector;
      break;
    case 'fill':
      step.selector = selector;
      step.value = d.value;
      step.secret = d.secret;
      break;
    case 'press':
      if (selector) step.selector = selector;
      step.value = d.value.trim();
      break;
    case 'waitFor':
      if (selector) step.selector = selector;
      if (d.value.trim() !== '') step.value = Number(d.value);
      break;
    case 'expectText':
      if (selector) step.selector = selector;
      step.value = d.value;
      break;
    case 'expectUrl':
      step.value = d.value;
      break;
  }
  if (d.timeoutMs.trim() !== '') step.timeoutMs = Number(d.timeoutMs);
  return step;
}

export function cookiesToDrafts(list: BrowserCookie[] | undefined): CookieDraft[] {
  return (list ?? []).map((c) => ({ ...c, domain: c.domain ?? '' }));
}

export function draftToCookie(c: CookieDraft): BrowserCookie {
  const { domain, ...rest } = c;
  return { ...rest, name: c.name.trim(), ...(domain.trim() ? { domain: domain.trim() } : {}) };
}

/** The first `goto` URL: the workflow's target, the default cookie domain and where a login starts. */
export function firstGotoUrl(steps: Pick<BrowserStepDraft, 'action' | 'url'>[]): string {
  return steps.find((s) => s.action === 'goto')?.url.trim() ?? '';
}

/**
 * Masked values the server could not match any more: a secret fill that moved (kept by position) or a
 * cookie renamed (kept by name). Each must be typed again.
 */
export function browserMaskProblems(
  steps: BrowserStepDraft[],
  cookies: CookieDraft[],
  stored: Partial<Monitor> | undefined,
): string[] {
  const problems: string[] = [];
  const storedSteps = browserStepsOf(stored);
  steps.forEach((s, i) => {
    if (s.action !== 'fill' || !s.secret || s.value !== MASK) return;
    const was = storedSteps[i];
    if (s.origIndex !== i || was?.action !== 'fill' || !was.secret)
      problems.push(`step ${i + 1}: it moved, so its hidden value cannot be kept; type it again`);
  });
  const storedNames = new Set((stored?.cookies ?? []).map((c) => c.name));
  for (const c of cookies)
    if (c.value === MASK && !storedNames.has(c.name.trim()))
      problems.push(`cookie "${c.name}": type the hidden value again`);
  return problems;
}

/** What a step's value means for its action, as the editor labels it; null: the action takes none. */
export function valueLabel(action: BrowserAction): { label: string; hint?: string } | null {
  switch (action) {
    case 'fill':
      return { label: 'Text to type', hint: '{{variable}} is replaced' };
    case 'press':
      return { label: 'Key', hint: 'Enter, Tab, Escape, Control+A…' };
    case 'waitFor':
      return { label: 'Milliseconds', hint: 'Or a selector to wait for; 0-30000' };
    case 'expectText':
      return { label: 'Text', hint: 'A case-insensitive substring, or /regex/flags' };
    case 'expectUrl':
      return { label: 'URL contains', hint: 'A case-insensitive substring, or /regex/flags' };
    default:
      return null;
  }
}

/** Whether the action takes a selector, and whether it must. */
export function selectorUse(action: BrowserAction): 'required' | 'optional' | null {
  if (action === 'click' || action === 'fill') return 'required';
  if (action === 'press' || action === 'waitFor' || action === 'expectText') return 'optional';
  return null;
}
