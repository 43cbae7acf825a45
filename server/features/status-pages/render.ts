import type { Overall, PublicStatus, Summary } from './summary';

/**
 * The public page as server-rendered HTML (docs/api.md, "Status pages"): no script, inline CSS, light and
 * dark by `prefers-color-scheme`, a single column that reads on a phone. Every text a user wrote goes
 * through escapeHtml. Built as one string from the summary: no query of its own.
 */

type Lang = 'en' | 'ru';

const TEXTS = {
  en: {
    banner: {
      operational: 'All systems operational',
      degraded: 'Partial outage',
      outage: 'Major outage',
      maintenance: 'Under maintenance',
    } satisfies Record<Overall, string>,
    status: {
      up: 'Operational',
      down: 'Down',
      maintenance: 'Maintenance',
      pending: 'Pending',
      unknown: 'Unknown',
    } satisfies Record<PublicStatus, string>,
    uptime: '90-day uptime',
    noData: 'no data',
    days: 'Last 90 days',
    incidents: 'Incidents',
    noIncidents: 'No incidents in the last 90 days.',
    ongoing: 'ongoing',
    resolved: 'resolved',
    maintenance: 'Planned maintenance',
    now: 'now',
    noServices: 'Nothing is monitored on this page yet.',
    subscribe: 'Get incident updates by email',
    email: 'Email address',
    button: 'Subscribe',
    powered: 'Powered by Belfry',
  },
  ru: {
    banner: {
      operational: 'Все системы работают',
      degraded: 'Частичный сбой',
      outage: 'Серьёзный сбой',
      maintenance: 'Плановые работы',
    },
    status: {
      up: 'Работает',
      down: 'Не работает',
      maintenance: 'Обслуживание',
      pending: 'Ожидание',
      unknown: 'Неизвестно',
    },
    uptime: 'Доступность за 90 дней',
    noData: 'нет данных',
    days: 'Последние 90 дней',
    incidents: 'Инциденты',
    noIncidents: 'За последние 90 дней инцидентов не было.',
    ongoing: 'продолжается',
    resolved: 'устранён',
    maintenance: 'Плановые работы',
    now: 'сейчас',
    noServices: 'На этой странице пока ничего не отслеживается.',
    subscribe: 'Получать сообщения об инцидентах по почте',
    email: 'Адрес почты',
    button: 'Подписаться',
    powered: 'Powered by Belfry',
  },
} as const;

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const CSS = `:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1d2330;--muted:#5b6475;--card:#fff;--line:#dde1e8;
--up:#2f9e5b;--down:#d64545;--maintenance:#3b7dd8;--none:#c9ced8;--pending:#c98a12;
--up-fill:#1e7a44;--down-fill:#b42f2f;--maintenance-fill:#2563b8;--pending-fill:#8a5d00;
--up-text:#1e7a44;--down-text:#b42f2f;--maintenance-text:#2563b8}
@media (prefers-color-scheme:dark){:root{--bg:#12151b;--fg:#e6e9ef;--muted:#9aa3b5;--card:#1b2029;--line:#2c3340;
--none:#3a4150;--up-text:#5fd38d;--down-text:#ff8a8a;--maintenance-text:#8ab8ff}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:860px;margin:0 auto;padding:24px 16px}h1{font-size:1.6rem;margin:0 0 4px}
h2{font-size:1.1rem;margin:28px 0 8px}.desc{color:var(--muted);margin:0}
.banner{margin:20px 0;padding:14px 16px;border-radius:8px;color:#fff;font-weight:600}
.b-operational{background:var(--up-fill)}.b-degraded{background:var(--pending-fill)}.b-outage{background:var(--down-fill)}
.b-maintenance{background:var(--maintenance-fill)}.overall{color:var(--muted);margin:0 0 8px}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px;margin:10px 0}
.row{display:flex;flex-wrap:wrap;justify-content:space-between;gap:4px 12px;align-items:baseline}
.name{font-weight:600;margin:0;font-size:1rem;overflow-wrap:anywhere}.st{font-size:.9rem;color:var(--muted)}
.st-up{color:var(--up-text)}.st-down{color:var(--down-text)}.st-maintenance{color:var(--maintenance-text)}
ol{display:flex;gap:1px;list-style:none;padding:0;margin:8px 0 0;height:28px}
ol li{flex:1;min-width:1px;border-radius:1px;background:var(--none)}ol .up{background:var(--up)}
ol .down{background:var(--down)}ol .maintenance{background:var(--maintenance)}
.legend{display:flex;justify-content:space-between;color:var(--muted);font-size:.8rem}
ul.list{padding-left:20px}ul.list li{margin:4px 0}.muted{color:var(--muted)}
form{display:flex;flex-wrap:wrap;gap:8px}label{flex-basis:100%}
input{flex:1;min-width:0;padding:8px;border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg);font:inherit}
button{padding:8px 14px;border:0;border-radius:6px;background:var(--maintenance-fill);color:#fff;font:inherit;cursor:pointer}
footer{margin-top:32px;color:var(--muted);font-size:.85rem;text-align:center}`;

/** `2026-11-25T10:00:00.000Z` → `2026-11-25 10:00 UTC`. */
function when(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

function pct(n: number | null, t: (typeof TEXTS)[Lang]): string {
  return n === null ? t.noData : `${n}%`;
}

function head(lang: Lang, title: string, refresh: boolean): string {
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${
    refresh ? '<meta http-equiv="refresh" content="60">' : ''
  }<title>${escapeHtml(title)}</title><style>${CSS}</style></head>`;
}

export function renderPage(s: Summary): string {
  const t = TEXTS[s.lang];
  const title = s.title === '' ? s.slug : s.title;
  const out: string[] = [head(s.lang, title, true), `<body data-overall="${s.overall}"><main><header>`];
  out.push(`<h1>${escapeHtml(title)}</h1>`);
  if (s.description !== '') out.push(`<p class="desc">${escapeHtml(s.description)}</p>`);
  out.push(`</header><p class="banner b-${s.overall}">${t.banner[s.overall]}</p>`);
  if (s.overallUptime90d !== null) out.push(`<p class="overall">${t.uptime}: ${s.overallUptime90d}%</p>`);
  if (s.services.length === 0) out.push(`<p class="muted">${t.noServices}</p>`);
  for (const svc of s.services) {
    out.push(
      `<section data-status="${svc.status}"><div class="row"><h2 class="name">${escapeHtml(svc.name)}</h2>`,
      `<span class="st st-${svc.status}">${t.status[svc.status]} · ${pct(svc.uptime90d, t)}</span></div><ol>`,
    );
    for (const d of svc.days)
      out.push(`<li class="${d.status}" title="${d.date}: ${pct(d.uptime, t)}"></li>`);
    out.push(
      `</ol><div class="legend"><span>${t.days}</span><span>${pct(svc.uptime90d, t)}</span></div></section>`,
    );
  }
  if (s.maintenance.length > 0) {
    out.push(`<h2>${t.maintenance}</h2><ul class="list">`);
    for (const m of s.maintenance)
      out.push(
        `<li data-maintenance="${m.active ? 'active' : 'planned'}"><strong>${escapeHtml(m.name)}</strong> · ${
          m.active ? `${t.now} – ` : `${when(m.startsAt)} – `
        }${when(m.endsAt)}</li>`,
      );
    out.push('</ul>');
  }
  out.push(`<h2>${t.incidents}</h2>`);
  if (s.incidents.length === 0) out.push(`<p class="muted">${t.noIncidents}</p>`);
  else {
    out.push('<ul class="list">');
    for (const i of s.incidents)
      out.push(
        `<li data-incident="${i.status}"><strong>${escapeHtml(i.title)}</strong> · ${when(i.startedAt)} – ${
          i.resolvedAt === undefined ? t.ongoing : `${when(i.resolvedAt)} (${t.resolved})`
        }</li>`,
      );
    out.push('</ul>');
  }
  out.push(
    `<h2>${t.subscribe}</h2><form method="post" action="/status/${escapeHtml(s.slug)}/subscribe" enctype="application/x-www-form-urlencoded">`,
    `<label for="email">${t.email}</label><input id="email" type="email" name="email" required autocomplete="email">`,
    `<button type="submit">${t.button}</button></form>`,
  );
  if (!s.brandingHidden) out.push(`<footer>${t.powered}</footer>`);
  out.push('</main></body></html>');
  return out.join('');
}

/** A small page for the subscription links and the 404: a heading and an optional line. */
export function renderNotice(title: string, line = '', lang: Lang = 'en'): string {
  return `${head(lang, title, false)}<body><main><h1>${escapeHtml(title)}</h1>${
    line === '' ? '' : `<p>${escapeHtml(line)}</p>`
  }</main></body></html>`;
}
