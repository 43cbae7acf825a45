import { existsSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { smtpUrlProblem } from './features/mail/smtp-url';
import {
  DEFAULT_PLANS,
  JSON_BODY_LIMIT_BYTES,
  PASSWORD_MAX_BYTES,
  PASSWORD_MIN_CHARS,
  PLAN_NAMES,
  type PlanLimits,
  type PlanName,
} from './lib/limits';

/**
 * One schema for every setting: defaults → BELFRY_* environment → command-line flags
 * (`--help` lists them; README, "Configuration"). Plans come from the contract's table, overridden by `plans.json` in the data dir.
 */
const boolish = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])])
  .transform((v) => (typeof v === 'boolean' ? v : ['true', '1', 'yes', 'on'].includes(v)));

/** An optional `host:port` listener setting (parseHostPort); `example` goes into the error message. */
const listenAddress = (example: string) =>
  z
    .string()
    .superRefine((v, c) => {
      if (!parseHostPort(v)) c.addIssue({ code: 'custom', message: `must be host:port, e.g. ${example}` });
    })
    .optional();

const configSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65_535).default(7878),
  dataDir: z.string().min(1),
  publicUrl: z.string().url().optional(),
  adminEmail: z.string().email().optional(),
  /** The password rule of every account (users/schema.ts): refused at start rather than stored weak. */
  adminPassword: z
    .string()
    .min(PASSWORD_MIN_CHARS, `must be at least ${PASSWORD_MIN_CHARS} characters, like every account password`)
    .refine(
      (p) => Buffer.byteLength(p, 'utf8') <= PASSWORD_MAX_BYTES,
      `must be at most ${PASSWORD_MAX_BYTES} bytes`,
    )
    .optional(),
  registration: boolish.default(false),
  smtpUrl: z
    .string()
    .superRefine((v, c) => {
      const problem = smtpUrlProblem(v);
      if (problem) c.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  mailFrom: z.string().default('belfry@localhost'),
  /** Inbound SMTP of email inboxes (§10): `host:port`; unset = no listener. */
  smtpListen: listenAddress('127.0.0.1:2525'),
  /**
   * A second HTTP listener serving the public routes only (webhooks, pings, router, metrics, scripts, status
   * pages, signed links, /health), `host:port`; the tunnel forwards here. Unset: off (docs/public-access.md).
   */
  publicListen: listenAddress('127.0.0.1:8090'),
  /** An OpenAI-compatible server for the assistant (`…/v1`); unset: the assistant answers from local rules. */
  assistantUrl: z.string().url().optional(),
  /** The model name sent to the assistant provider; required with assistantUrl. */
  assistantModel: z.string().min(1).optional(),
  /** Bearer key for the assistant provider, when it needs one. */
  assistantKey: z.string().min(1).optional(),
  /** Domain of inbox addresses; unset = the host of the public URL (`localhost` when it is an IP). */
  mailDomain: z
    .string()
    .trim()
    .toLowerCase()
    .regex(
      /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/,
      'must be a domain name, e.g. mail.example.com',
    )
    .optional(),
  allowedOrigins: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    ),
  logLevel: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** bcrypt cost; tests lower it to keep the suite fast. */
  bcryptRounds: z.coerce.number().int().min(4).max(15).default(10),
  bodyLimitBytes: z.coerce.number().int().positive().default(JSON_BODY_LIMIT_BYTES),
  snapshotJournalBytes: z.coerce.number().int().positive().optional(),
  /** Version stamping (set at build time; see scripts/stamp-version). */
  commit: z.string().default('unknown'),
  buildDate: z.string().default('unknown'),
  /**
   * LAN mode: serve the network over plain HTTP (the host defaults to 0.0.0.0). The one way to bind a
   * non-loopback address, so that exposing passwords and tokens unencrypted is a choice, never a typo.
   */
  lan: boolish.default(false),
  /**
   * Which proxies may name the client in X-Forwarded-For (rate limits key on the client address):
   * off (default), a hop count, or a comma list of proxy addresses (`loopback` = 127.0.0.1 and ::1).
   */
  trustProxy: z
    .union([z.number(), z.string()])
    .default('')
    .transform((v, c): TrustProxy => {
      const s = String(v).trim();
      if (['', 'false', 'off', 'no', '0'].includes(s)) return false;
      if (/^\d+$/.test(s)) return { hops: Number(s) };
      const addresses = s.split(',').flatMap((a) => {
        const t = a.trim();
        return t === 'loopback' ? ['127.0.0.1', '::1'] : t ? [t] : [];
      });
      const bad = addresses.filter((a) => isIP(a) === 0);
      if (bad.length)
        c.addIssue({
          code: 'custom',
          message: `not a hop count or a list of IP addresses: ${bad.join(', ')}`,
        });
      return { addresses };
    }),
  /** Lower bound of heartbeat periods (and later monitor intervals), in seconds (tests: 1). */
  minIntervalSec: z.coerce.number().int().min(1).max(31_536_000).default(30),
  /** Watch the watcher: GET this URL every selfPingIntervalS (an outside dead-man switch, e.g. Healthchecks). */
  selfPingUrl: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL')
    .optional(),
  selfPingIntervalS: z.coerce.number().int().min(10).max(86_400).default(60),
  /**
   * The connectivity witness's probes (`host:port`, comma list): the machine is online when one accepts a
   * TCP connection. Port 443 by default: networks that block outside DNS (port 53) rarely block HTTPS.
   */
  witnessProbes: z
    .union([z.string(), z.array(z.string())])
    .default('1.1.1.1:443,9.9.9.9:443')
    .transform((v, c) => {
      const items = (Array.isArray(v) ? v : v.split(',')).map((x) => x.trim()).filter(Boolean);
      const out: { host: string; port: number }[] = [];
      for (const item of items) {
        const m = /^(\[[0-9a-f:.]+\]|[^:\s]+):(\d{1,5})$/i.exec(item);
        const port = m ? Number(m[2]) : 0;
        if (!m || port < 1 || port > 65_535) {
          c.addIssue({ code: 'custom', message: `not a host:port: ${item}` });
          return z.NEVER;
        }
        out.push({ host: m[1]!.replace(/^\[|\]$/g, ''), port });
      }
      if (out.length === 0) c.addIssue({ code: 'custom', message: 'at least one host:port' });
      return out;
    }),
  /** Non-admin monitors, workflows, callbacks and webhook adapters refuse loopback/private/link-local targets. */
  blockPrivateTargets: boolish.default(false),
  /** Chromium for browser workflows and content monitors with `render: "browser"` (unset: /usr/bin/chromium if present). */
  chromiumPath: z.string().min(1).optional(),
  /** First delivery/callback retry delay in seconds; doubles per failure up to an hour (tests: 1). */
  retryBaseSec: z.coerce.number().int().min(1).max(3600).default(30),
  /**
   * Base URLs replacing the public APIs of `telegram`, `pagerduty`, `opsgenie` and `twilio` (a JSON object,
   * e.g. `{"telegram":"http://127.0.0.1:8081"}`): a self-hosted Bot API server, or loopback fakes in tests.
   */
  deliveryApiUrls: z
    .union([z.string(), z.record(z.string(), z.string())])
    .default({})
    .transform((v, c) => {
      let obj: unknown = v;
      if (typeof v === 'string') {
        try {
          obj = v.trim() === '' ? {} : JSON.parse(v);
        } catch {
          c.addIssue({ code: 'custom', message: 'expected a JSON object of adapter: base URL' });
          return z.NEVER;
        }
      }
      const known = ['telegram', 'pagerduty', 'opsgenie', 'twilio'];
      const out: Record<string, string> = {};
      if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
        c.addIssue({ code: 'custom', message: 'expected a JSON object of adapter: base URL' });
        return z.NEVER;
      }
      for (const [k, url] of Object.entries(obj)) {
        if (!known.includes(k)) {
          c.addIssue({ code: 'custom', message: `unknown adapter ${k} (known: ${known.join(', ')})` });
          return z.NEVER;
        }
        if (typeof url !== 'string' || !/^https?:\/\/[^\s]+$/i.test(url)) {
          c.addIssue({ code: 'custom', message: `${k}: expected an http:// or https:// URL` });
          return z.NEVER;
        }
        out[k] = url.replace(/\/+$/, '');
      }
      return out;
    }),
  /**
   * The machine runs on battery (a headless server on a laptop; the desktop app reports Electron's
   * powerMonitor instead): browser workflows pause and other monitor intervals stretch (server/lib/power.ts).
   */
  onBattery: boolish.default(false),
  /** How much longer monitor intervals are on battery (1 = unchanged). */
  batteryIntervalFactor: z.coerce.number().min(1).max(10).default(2),
});

/** `trustProxy`: who may set X-Forwarded-For (see clientAddress in http/auth.ts). */
export type TrustProxy = false | { hops: number } | { addresses: string[] };

export type ConfigInput = z.input<typeof configSchema>;
export type Config = z.output<typeof configSchema> & { plans: Record<PlanName, PlanLimits> };

const ENV: Record<string, keyof ConfigInput> = {
  BELFRY_HOST: 'host',
  BELFRY_PORT: 'port',
  BELFRY_DATA_DIR: 'dataDir',
  BELFRY_PUBLIC_URL: 'publicUrl',
  BELFRY_ADMIN_EMAIL: 'adminEmail',
  BELFRY_ADMIN_PASSWORD: 'adminPassword',
  BELFRY_REGISTRATION: 'registration',
  BELFRY_SMTP_URL: 'smtpUrl',
  BELFRY_MAIL_FROM: 'mailFrom',
  BELFRY_SMTP_LISTEN: 'smtpListen',
  BELFRY_MAIL_DOMAIN: 'mailDomain',
  BELFRY_PUBLIC_LISTEN: 'publicListen',
  BELFRY_ASSISTANT_URL: 'assistantUrl',
  BELFRY_ASSISTANT_MODEL: 'assistantModel',
  BELFRY_ASSISTANT_KEY: 'assistantKey',
  BELFRY_ALLOWED_ORIGINS: 'allowedOrigins',
  BELFRY_LOG_LEVEL: 'logLevel',
  BELFRY_BCRYPT_ROUNDS: 'bcryptRounds',
  BELFRY_BODY_LIMIT_BYTES: 'bodyLimitBytes',
  BELFRY_SNAPSHOT_JOURNAL_BYTES: 'snapshotJournalBytes',
  BELFRY_COMMIT: 'commit',
  BELFRY_BUILD_DATE: 'buildDate',
  BELFRY_LAN: 'lan',
  BELFRY_TRUST_PROXY: 'trustProxy',
  BELFRY_MIN_INTERVAL_S: 'minIntervalSec',
  BELFRY_SELF_PING_URL: 'selfPingUrl',
  BELFRY_SELF_PING_INTERVAL_S: 'selfPingIntervalS',
  BELFRY_BLOCK_PRIVATE_TARGETS: 'blockPrivateTargets',
  BELFRY_CHROMIUM_PATH: 'chromiumPath',
  BELFRY_WITNESS_PROBES: 'witnessProbes',
  BELFRY_RETRY_BASE_S: 'retryBaseSec',
  BELFRY_DELIVERY_API_URLS: 'deliveryApiUrls',
  BELFRY_ON_BATTERY: 'onBattery',
  BELFRY_BATTERY_INTERVAL_FACTOR: 'batteryIntervalFactor',
};

const FLAGS = {
  host: 'host',
  port: 'port',
  'data-dir': 'dataDir',
  'public-url': 'publicUrl',
  'log-level': 'logLevel',
  registration: 'registration',
  'smtp-url': 'smtpUrl',
  'mail-from': 'mailFrom',
  'smtp-listen': 'smtpListen',
  'mail-domain': 'mailDomain',
  'public-listen': 'publicListen',
  'allowed-origins': 'allowedOrigins',
  lan: 'lan',
  'trust-proxy': 'trustProxy',
} satisfies Record<string, keyof ConfigInput>;

/** Flags that may stand alone, meaning true (`--lan`); every other flag needs a value. */
const SWITCHES: ReadonlySet<keyof ConfigInput> = new Set(['registration', 'lan']);

export class ConfigError extends Error {}

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(base, 'belfry');
}

export function parseFlags(argv: readonly string[]): Partial<Record<keyof ConfigInput, string>> {
  const out: Partial<Record<keyof ConfigInput, string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument: ${arg}`);
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    const key = (FLAGS as Record<string, keyof ConfigInput>)[name];
    if (!key)
      throw new ConfigError(
        `unknown flag --${name} (known: ${Object.keys(FLAGS)
          .map((f) => `--${f}`)
          .join(', ')})`,
      );
    let value: string | undefined = eq >= 0 ? arg.slice(eq + 1) : argv[i + 1];
    if (eq < 0) {
      if (value === undefined || value.startsWith('--')) {
        if (SWITCHES.has(key)) value = 'true';
        else throw new ConfigError(`flag --${name} needs a value`);
      } else i++;
    }
    out[key] = value;
  }
  return out;
}

/** Builds the config; throws ConfigError with every problem listed. */
export function loadConfig(
  input: { argv?: readonly string[]; env?: NodeJS.ProcessEnv; overrides?: Partial<ConfigInput> } = {},
): Config {
  const env = input.env ?? process.env;
  const raw: Record<string, unknown> = {};
  for (const [name, key] of Object.entries(ENV)) {
    const v = env[name];
    if (v !== undefined && v !== '') raw[key] = v;
  }
  Object.assign(raw, parseFlags(input.argv ?? []), input.overrides ?? {});
  if (raw.dataDir === undefined) raw.dataDir = defaultDataDir(env);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const key = String(i.path[0] ?? '');
      return `${i.path.join('.') || 'config'}: ${i.message}${settingSources(key)}`;
    });
    throw new ConfigError(`invalid configuration:${lines.length === 1 ? ' ' : '\n  '}${lines.join('\n  ')}`);
  }
  applyLanMode(parsed.data, raw.host !== undefined);
  if (parsed.data.assistantUrl && !parsed.data.assistantModel)
    throw new ConfigError(
      'assistantModel: required with assistantUrl (BELFRY_ASSISTANT_MODEL, e.g. llama3.1)',
    );
  if (existsSync(parsed.data.dataDir) && !statSync(parsed.data.dataDir).isDirectory())
    throw new ConfigError(
      `the data dir ${parsed.data.dataDir} is a file, not a directory: pass --data-dir (BELFRY_DATA_DIR) a directory, or move the file away`,
    );
  return { ...parsed.data, plans: loadPlans(parsed.data.dataDir) };
}

const planOverrideSchema = z
  .partialRecord(
    z.enum(PLAN_NAMES as [PlanName, ...PlanName[]]),
    z
      .object({
        devices: z.number().int().min(1),
        eventsPerDay: z.number().int().min(0),
        statusPages: z.number().int().min(0),
        maintenanceWindows: z.number().int().min(0),
        channels: z.number().int().min(0),
        webhooks: z.number().int().min(0),
        channelKeys: z.number().int().min(0),
        shares: z.number().int().min(0),
        apiTokens: z.number().int().min(0),
        webhookTemplateBytes: z.number().int().min(0),
        configBytes: z.number().int().min(0),
      })
      .partial()
      .strict(),
  )
  .optional();

export function loadPlans(dataDir: string): Record<PlanName, PlanLimits> {
  const plans = structuredClone(DEFAULT_PLANS) as Record<PlanName, PlanLimits>;
  const file = join(dataDir, 'plans.json');
  if (!existsSync(file)) return plans;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${file}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = planOverrideSchema.safeParse(json);
  if (!parsed.success)
    throw new ConfigError(
      `${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  for (const [name, over] of Object.entries(parsed.data ?? {})) Object.assign(plans[name as PlanName], over);
  return plans;
}

/** `host:port` (IPv6 in brackets), port 0-65535; undefined when malformed. */
export function parseHostPort(v: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(v.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65_535) return undefined;
  return { host: (m[1] ?? m[2])!, port };
}

/** The domain of inbox addresses (§0.5): the setting, else the public URL's host (`localhost` for an IP). */
export function mailDomainOf(config: Config, publicUrl: string): string {
  if (config.mailDomain) return config.mailDomain;
  const host = new URL(publicUrl).hostname.toLowerCase();
  return isIP(host.replace(/^\[(.*)\]$/, '$1')) ? 'localhost' : host;
}

export function publicUrlOf(config: Config, port: number): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** 127.0.0.0/8, ::1 (also as an IPv4-mapped address) and `localhost`: only this computer can connect. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

export const PLAIN_HTTP_LAN_WARNING =
  'LAN mode: Belfry is reachable from the network over plain HTTP; anyone on it can read passwords, ' +
  'tokens and messages. Use it only on a network you trust, or keep 127.0.0.1 behind an HTTPS proxy.';

/** `--lan` binds every interface unless a host is given; any other non-loopback host needs `--lan`. */
function applyLanMode(config: z.output<typeof configSchema>, hostGiven: boolean): void {
  if (config.lan && !hostGiven) config.host = '0.0.0.0';
  const smtp = config.smtpListen ? parseHostPort(config.smtpListen) : undefined;
  if (!config.lan && smtp && !isLoopbackHost(smtp.host))
    throw new ConfigError(
      `smtpListen: host ${smtp.host} would take mail from the network without authentication; ` +
        'start with --lan (BELFRY_LAN=1) to allow it, or keep 127.0.0.1 behind a mail relay.',
    );
  if (!config.lan && !isLoopbackHost(config.host))
    throw new ConfigError(
      `host ${config.host} would serve Belfry to the network over plain HTTP (passwords and tokens unencrypted). ` +
        'Start with --lan (BELFRY_LAN=1) to choose LAN mode, or keep 127.0.0.1 behind an HTTPS proxy.',
    );
}

/**
 * `--help`: every flag of FLAGS with its environment variable, what it sets and its default; then the
 * settings that only the environment sets.
 */
const FLAG_HELP: Record<keyof typeof FLAGS, string> = {
  host: 'address to listen on (loopback only unless --lan)',
  port: 'port to listen on (0 picks a free one)',
  'data-dir': 'directory of the database, uploads and the lock',
  'public-url': 'the URL users reach Belfry at (links in mails); defaults to http://HOST:PORT',
  'log-level': 'debug, info, warn or error',
  registration: 'let anyone create an account (POST /user without sign-in)',
  'smtp-url': 'SMTP server for verification and reset mails, e.g. smtp://user:pass@mail.example:587',
  'mail-from': 'sender address of those mails',
  'smtp-listen':
    'host:port of the inbound SMTP listener of email inboxes, e.g. 127.0.0.1:2525 (loopback only unless --lan) [default: off]',
  'mail-domain':
    'domain of inbox addresses [default: the host of the public URL, localhost when it is an IP]',
  'public-listen':
    'host:port of a second listener serving only the public routes (webhooks, pings, status pages), for a tunnel or proxy [default: off]',
  'allowed-origins': 'comma list of web origins allowed to call the API from a browser (CORS)',
  lan: 'serve the network over plain HTTP (binds 0.0.0.0 unless --host)',
  'trust-proxy': 'proxies that may set X-Forwarded-For: a hop count, or a comma list of addresses (loopback)',
};

/** What the settings without a flag do, for `--help`. */
const ENV_HELP: Record<string, string> = {
  BELFRY_ADMIN_EMAIL: 'the administrator created on the first start [default: admin@localhost]',
  BELFRY_ADMIN_PASSWORD: `its password, at least ${PASSWORD_MIN_CHARS} characters (unset: generated and printed once)`,
  BELFRY_BCRYPT_ROUNDS: 'password hashing cost',
  BELFRY_BODY_LIMIT_BYTES: 'largest JSON or form body accepted',
  BELFRY_SNAPSHOT_JOURNAL_BYTES: 'write a snapshot once the journal holds this many bytes',
  BELFRY_MIN_INTERVAL_S: 'shortest heartbeat period and monitor interval in seconds',
  BELFRY_SELF_PING_URL: 'an outside URL to GET every interval (watch the watcher)',
  BELFRY_SELF_PING_INTERVAL_S: 'seconds between self-pings',
  BELFRY_BLOCK_PRIVATE_TARGETS: "non-admin users' monitors may not reach loopback or private addresses",
  BELFRY_CHROMIUM_PATH: 'Chromium for browser checks [default: an installed Chrome, Edge or Chromium]',
  BELFRY_WITNESS_PROBES:
    'host:port list the connectivity witness connects to [default: 1.1.1.1:443,9.9.9.9:443]',
  BELFRY_ON_BATTERY: 'the machine runs on battery: browser workflows pause, monitor intervals stretch',
  BELFRY_BATTERY_INTERVAL_FACTOR: 'how much longer monitor intervals are on battery',
  BELFRY_RETRY_BASE_S: 'first re-delivery retry delay in seconds (doubles per failure, up to an hour)',
  BELFRY_ASSISTANT_URL:
    'an OpenAI-compatible server for the assistant, e.g. http://127.0.0.1:11434/v1 [default: local rules]',
  BELFRY_ASSISTANT_MODEL: 'the model the assistant asks for (required with BELFRY_ASSISTANT_URL)',
  BELFRY_ASSISTANT_KEY: 'bearer key for the assistant server, when it needs one',
  BELFRY_DELIVERY_API_URLS:
    'JSON object of base URLs replacing the APIs of telegram, pagerduty, opsgenie, twilio',
};

function envNameOf(key: string): string | undefined {
  return Object.entries(ENV).find(([, k]) => k === key)?.[0];
}

/** ` (set by --port or BELFRY_PORT)`: where the user sets a setting, for error messages. */
function settingSources(key: string): string {
  const flag = Object.entries(FLAGS).find(([, k]) => k === key)?.[0];
  const names = [flag && `--${flag}`, envNameOf(key)].filter(Boolean);
  return names.length ? ` (set by ${names.join(' or ')})` : '';
}

export function helpText(env: NodeJS.ProcessEnv = process.env): string {
  const defaults: Record<string, unknown> = configSchema.parse({ dataDir: defaultDataDir(env) });
  const shown = (v: unknown) =>
    v === undefined || v === '' || v === false || (Array.isArray(v) && !v.length)
      ? ''
      : ` [default: ${String(v)}]`;
  const flags = Object.entries(FLAGS).map(([flag, key]) => {
    const arg = SWITCHES.has(key) ? '' : ' VALUE';
    return `  --${flag}${arg}\n      ${FLAG_HELP[flag as keyof typeof FLAGS]}${shown(defaults[key])} (env ${envNameOf(key)})`;
  });
  const flagKeys = new Set<string>(Object.values(FLAGS));
  const envOnly = Object.entries(ENV)
    .filter(([, key]) => !flagKeys.has(key))
    .map(
      ([name, key]) => `  ${name}${shown(defaults[key])}${ENV_HELP[name] ? `\n      ${ENV_HELP[name]}` : ''}`,
    );
  return [
    'Usage: npm run serve -- [flags]   (or: npm start -- [flags])',
    '',
    'Flags (each also settable by its environment variable; a flag wins):',
    ...flags,
    '  --help',
    '      print this help and exit',
    '  --reset-password EMAIL',
    '      with Belfry stopped: give that account a new generated password, sign it out everywhere,',
    '      print the password once and exit (the way back in when the mail never reaches you)',
    '',
    'Settings only the environment sets:',
    ...envOnly,
    '',
    'Reference: docs/operations.md (running it), docs/reference.md (the API).',
    '',
  ].join('\n');
}
