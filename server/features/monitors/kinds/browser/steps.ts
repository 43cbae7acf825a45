import { compileUserRegex } from '../../../../lib/safe-regex';
import { SECRET_MASK } from '../../kind';
import { arr, bad, bool, field, httpUrl, int, maskByName, obj, oneOf, str, stringMap } from '../validate';

/** §2.3 `browser-workflow`: steps, cookies and variables, read as §0.1 and §0.3 say. */

export const BROWSER_ACTIONS = [
  'goto',
  'click',
  'fill',
  'press',
  'waitFor',
  'expectText',
  'expectUrl',
] as const;
export type BrowserAction = (typeof BROWSER_ACTIONS)[number];

export interface BrowserStep {
  action: BrowserAction;
  selector?: string;
  /** fill: the text; press: the key; waitFor: milliseconds; expectText / expectUrl: a pattern (§0.1). */
  value?: string | number;
  url?: string;
  timeoutMs: number;
  secret: boolean;
}

export interface BrowserCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  /** Unix seconds; null = a session cookie. */
  expires: number | null;
  httpOnly: boolean;
  secure: boolean;
  sameSite: 'Strict' | 'Lax' | 'None';
}

export interface BrowserSettings {
  cookies: BrowserCookie[];
  variables: Record<string, string>;
  steps: BrowserStep[];
}

export const STEPS_MAX = 50;
export const COOKIES_MAX = 50;
export const STEP_TIMEOUT_DEFAULT_MS = 10_000;
export const WAIT_MAX_MS = 30_000;
const SELECTOR_MAX = 500;
const VALUE_MAX = 10_000;
const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;

function varName(k: string, path: string): void {
  if (!VAR_NAME.test(k)) bad(path, 'must be a name of letters, digits and _ (not starting with a digit)');
}

/** A pattern field (§0.1): `/source/flags` must compile; any other string is a case-insensitive substring. */
function pattern(v: unknown, path: string): string {
  const s = str({ max: 1_000, min: 1 })(v, path);
  if (/^\/.*\/[a-z]*$/s.test(s)) {
    try {
      compileUserRegex(s);
    } catch {
      bad(path, 'not a valid regular expression');
    }
  }
  return s;
}

const selector = str({ max: SELECTOR_MAX, min: 1, trim: true });

/**
 * One step. A present `steps` array replaces the stored one (§0.1); a secret fill's `"********"` keeps the
 * value of the stored step at the same position when that one is a secret fill too (§0.3).
 */
function readStep(prev: BrowserStep[] | undefined) {
  return (v: unknown, i: number, path: string): BrowserStep => {
    const o = obj(v, path);
    const action = field(o, 'action', `${path}.action`, oneOf(BROWSER_ACTIONS), {
      prev: undefined,
      required: true,
    });
    const timeoutMs = field(o, 'timeoutMs', `${path}.timeoutMs`, int(100, 60_000), {
      prev: undefined,
      def: STEP_TIMEOUT_DEFAULT_MS,
    });
    const step: BrowserStep = { action, timeoutMs, secret: false };
    const sel = (required: boolean) => {
      const s = field(o, 'selector', `${path}.selector`, selector, { prev: undefined, required, def: '' });
      if (s !== '') step.selector = s;
    };
    switch (action) {
      case 'goto':
        step.url = field(o, 'url', `${path}.url`, httpUrl({ templated: true }), {
          prev: undefined,
          required: true,
        });
        break;
      case 'click':
        sel(true);
        break;
      case 'fill': {
        sel(true);
        step.secret = field(o, 'secret', `${path}.secret`, bool, { prev: undefined, def: false });
        let value = field(o, 'value', `${path}.value`, str({ max: VALUE_MAX }), {
          prev: undefined,
          required: true,
        });
        if (value === SECRET_MASK && step.secret) {
          const stored = prev?.[i];
          if (stored?.action !== 'fill' || !stored.secret || typeof stored.value !== 'string')
            bad(`${path}.value`, `"${SECRET_MASK}" keeps the stored value, and none is stored`);
          value = stored.value;
        }
        step.value = value;
        break;
      }
      case 'press':
        sel(false);
        step.value = field(o, 'value', `${path}.value`, str({ max: 100, min: 1, trim: true }), {
          prev: undefined,
          required: true,
        });
        break;
      case 'waitFor': {
        sel(false);
        const raw = o.value;
        if (raw !== undefined && raw !== null) {
          const ms = typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw;
          step.value = int(0, WAIT_MAX_MS)(ms, `${path}.value`);
        }
        if (step.selector === undefined && step.value === undefined)
          bad(`${path}.selector`, 'required (or value: milliseconds to wait)');
        break;
      }
      case 'expectText':
        sel(false);
        step.value = field(o, 'value', `${path}.value`, pattern, { prev: undefined, required: true });
        break;
      case 'expectUrl':
        step.value = field(o, 'value', `${path}.value`, pattern, { prev: undefined, required: true });
        break;
    }
    return step;
  };
}

export function readSteps(v: unknown, path: string, prev: BrowserStep[] | undefined): BrowserStep[] {
  const read = readStep(prev);
  return arr(v, path, STEPS_MAX, 1).map((item, i) => read(item, i, `${path}[${i}]`));
}

/** The host of the first goto, the default cookie domain. */
function firstGotoHost(steps: BrowserStep[] | undefined): string | undefined {
  const url = steps?.find((s) => s.action === 'goto')?.url;
  if (!url) return undefined;
  try {
    return new URL(url).hostname || undefined;
  } catch {
    return undefined;
  }
}

function readCookie(prev: BrowserCookie[] | undefined, defaultDomain: string | undefined) {
  return (v: unknown, _i: number, path: string): BrowserCookie => {
    const o = obj(v, path);
    const name = field(o, 'name', `${path}.name`, str({ max: 200, min: 1, trim: true }), {
      prev: undefined,
      required: true,
    });
    if (/[\s;=,]/.test(name)) bad(`${path}.name`, 'must not contain spaces, ";", "=" or ","');
    let value = field(o, 'value', `${path}.value`, str({ max: 4_096 }), { prev: undefined, required: true });
    if (value === SECRET_MASK) {
      const stored = prev?.find((c) => c.name === name);
      if (!stored) bad(`${path}.value`, `"${SECRET_MASK}" keeps the stored value, and none is stored`);
      value = stored.value;
    }
    if (/[;\r\n]/.test(value)) bad(`${path}.value`, 'must not contain ";" or line breaks');
    const domain = field(o, 'domain', `${path}.domain`, str({ max: 253, min: 1, trim: true }), {
      prev: undefined,
      required: defaultDomain === undefined,
      ...(defaultDomain === undefined ? {} : { def: defaultDomain }),
    });
    const expires = field(o, 'expires', `${path}.expires`, int(0, 253_402_300_799), {
      prev: undefined,
      def: null as unknown as number,
      nullable: true,
    });
    return {
      name,
      value,
      domain: domain.toLowerCase(),
      path: field(o, 'path', `${path}.path`, str({ max: 1_000, min: 1, trim: true }), {
        prev: undefined,
        def: '/',
      }),
      expires: expires ?? null,
      httpOnly: field(o, 'httpOnly', `${path}.httpOnly`, bool, { prev: undefined, def: false }),
      secure: field(o, 'secure', `${path}.secure`, bool, { prev: undefined, def: false }),
      sameSite: field(o, 'sameSite', `${path}.sameSite`, oneOf(['Strict', 'Lax', 'None'] as const), {
        prev: undefined,
        def: 'Lax',
      }),
    };
  };
}

export function readCookies(
  v: unknown,
  path: string,
  prev: BrowserCookie[] | undefined,
  steps: BrowserStep[] | undefined,
): BrowserCookie[] {
  const read = readCookie(prev, firstGotoHost(steps));
  return arr(v, path, COOKIES_MAX).map((item, i) => read(item, i, `${path}[${i}]`));
}

export function readVariables(
  v: unknown,
  path: string,
  prev: Record<string, string> | undefined,
): Record<string, string> {
  return stringMap({ max: 50, valueMax: 10_000, prev, name: varName })(v, path);
}

/** Create (`prev` undefined) or partial update of the kind fields. */
export function parseBrowserSettings(
  body: Record<string, unknown>,
  prev: BrowserSettings | undefined,
): BrowserSettings {
  const variables = field(body, 'variables', 'variables', (v, p) => readVariables(v, p, prev?.variables), {
    prev: prev?.variables,
    def: {},
  });
  const steps = field(body, 'steps', 'steps', (v, p) => readSteps(v, p, prev?.steps), {
    prev: prev?.steps,
    required: true,
  });
  const cookies = field(body, 'cookies', 'cookies', (v, p) => readCookies(v, p, prev?.cookies, steps), {
    prev: prev?.cookies,
    def: [],
  });
  return { cookies, variables, steps };
}

/** A step as answered; `reveal` keeps a secret fill's value (build-step: the caller just typed it). */
export function presentStep(s: BrowserStep, o: { reveal?: boolean } = {}): Record<string, unknown> {
  return {
    action: s.action,
    ...(s.selector === undefined ? {} : { selector: s.selector }),
    ...(s.url === undefined ? {} : { url: s.url }),
    ...(s.value === undefined ? {} : { value: s.secret && !o.reveal ? SECRET_MASK : s.value }),
    timeoutMs: s.timeoutMs,
    ...(s.action === 'fill' ? { secret: s.secret } : {}),
  };
}

export function presentBrowserSettings(s: BrowserSettings): Record<string, unknown> {
  return {
    cookies: s.cookies.map((c) => ({ ...c, value: SECRET_MASK })),
    variables: maskByName(s.variables),
    steps: s.steps.map((st) => presentStep(st)),
  };
}
