import { formatDuration } from '../sources/messages';
import { statusAge, type UserFacts } from './data';

export type Lang = 'en' | 'ru';

/** The first line of every local answer (docs/assistant.md): says plainly that no model wrote it. */
export const LOCAL_FIRST_LINE: Record<Lang, string> = {
  en: 'No AI model is configured, so this answer comes from local rules.',
  ru: 'Модель ИИ не настроена, поэтому ответ составлен по локальным правилам.',
};

export type Topic = 'failing' | 'busy' | 'quota' | 'counts';

/**
 * Which parts a question asks for, by keywords (English, and Russian word stems so every inflection
 * matches: упал/упала/упали, ошибка/ошибки/ошибок, квота/квоты/квоту). None: the summary (every part).
 */
const KEYWORDS: Record<Topic, RegExp> = {
  failing:
    /\b(down|fail\w*|failing|error\w*|broken|outage\w*|alert\w*|firing|issues?|problem\w*|wrong)\b|упал|лежит|недоступ|ошиб|сбо[йияе]|не работа|авари|проблем|отказ|падени|тревог/iu,
  busy: /\b(busy|busier|busiest|nois\w*|loud\w*|spam\w*|most active|chatty)\b|шум|занят|активн|больше всего|спам|нагруж/iu,
  quota: /\b(quota|limit\w*|usage|events? left|plan)\b|квот|лимит|тариф|осталось событий|расход/iu,
  counts:
    /\b(how many|count\w*|unread|messages?|channels?|total\w*|stat\w*)\b|сколько|непрочит|сообщени|канал|всего|статистик/iu,
};

export function topicsOf(question: string): Topic[] {
  return (Object.keys(KEYWORDS) as Topic[]).filter((t) => KEYWORDS[t].test(question));
}

/** `lang` given wins; otherwise a question written in Cyrillic is answered in Russian. */
export function langOf(question: string, lang: Lang | undefined): Lang {
  return lang ?? (/[а-яё]/iu.test(question) ? 'ru' : 'en');
}

function plural(lang: Lang, n: number, en: [string, string], ru: [string, string, string]): string {
  if (lang === 'en') return `${n} ${n === 1 ? en[0] : en[1]}`;
  const m10 = n % 10;
  const m100 = n % 100;
  const form = m10 === 1 && m100 !== 11 ? 0 : m10 >= 2 && m10 <= 4 && (m100 < 12 || m100 > 14) ? 1 : 2;
  return `${n} ${ru[form]}`;
}

const MSG: [[string, string], [string, string, string]] = [
  ['message', 'messages'],
  ['сообщение', 'сообщения', 'сообщений'],
];

function countsPart(f: UserFacts, lang: Lang): string {
  const ch = plural(lang, f.totals.channels, ['channel', 'channels'], ['канал', 'канала', 'каналов']);
  const msgs = plural(lang, f.totals.messages, ...MSG);
  return lang === 'en'
    ? `You have ${ch} with ${msgs}; ${f.totals.unread} unread.`
    : `У вас ${ch}, в них ${msgs}; непрочитанных: ${f.totals.unread}.`;
}

function quotaPart(f: UserFacts, lang: Lang): string {
  const { used, limit, plan } = f.quota;
  const pct = limit > 0 ? Math.round((used / limit) * 100) : 0;
  const left = Math.max(0, limit - used);
  return lang === 'en'
    ? `Today's event quota: ${used} of ${limit} used (${pct} %, ${left} left) on the ${plan} plan.`
    : `Квота событий на сегодня: использовано ${used} из ${limit} (${pct} %, осталось ${left}), тариф ${plan}.`;
}

const STATUS_RU: Record<string, string> = {
  down: 'недоступен',
  late: 'опаздывает',
  firing: 'срабатывает',
  issues: 'есть ошибки',
};

function failingPart(f: UserFacts, lang: Lang): string {
  const lines: string[] = [];
  for (const s of f.failing) {
    const age = statusAge(s, f.now);
    const since = age === null ? '' : ` ${lang === 'en' ? 'for' : 'уже'} ${formatDuration(age)}`;
    const status = lang === 'en' ? s.status : (STATUS_RU[s.status] ?? s.status);
    lines.push(`- ${s.name} (${s.kind}): ${status}${since}`);
  }
  for (const d of f.failedDeliveries)
    lines.push(
      lang === 'en'
        ? `- channel ${d.channel}: ${d.count} failed ${d.count === 1 ? 'delivery' : 'deliveries'} in 24 h`
        : `- канал ${d.channel}: неудачных доставок за 24 ч: ${d.count}`,
    );
  if (lines.length === 0)
    return lang === 'en'
      ? `Nothing is failing: none of your ${f.sources.length} sources is down, firing or reporting issues, and no delivery failed in 24 h.`
      : `Сбоев нет: ни один из ${f.sources.length} источников не упал и не сообщает об ошибках, неудачных доставок за 24 ч нет.`;
  const head = lang === 'en' ? `Failing now (${lines.length}):` : `Сейчас с проблемами (${lines.length}):`;
  return [head, ...lines].join('\n');
}

function busyPart(f: UserFacts, lang: Lang): string {
  if (f.busiest.length === 0)
    return lang === 'en'
      ? 'No channel received a message in the last 24 h.'
      : 'За последние 24 ч сообщений не было.';
  const head =
    lang === 'en' ? 'Busiest channels of the last 24 h:' : 'Самые активные каналы за последние 24 ч:';
  return [head, ...f.busiest.map((c, i) => `${i + 1}. ${c.name}: ${plural(lang, c.day, ...MSG)}`)].join('\n');
}

const PARTS: Record<Topic, (f: UserFacts, lang: Lang) => string> = {
  counts: countsPart,
  failing: failingPart,
  busy: busyPart,
  quota: quotaPart,
};

/** The local answer: the fixed first line, then the parts the question asks for (all of them when none). */
export function localReply(question: string, facts: UserFacts, lang: Lang): string {
  const asked = topicsOf(question);
  const topics: Topic[] = asked.length > 0 ? asked : ['counts', 'failing', 'busy', 'quota'];
  return [LOCAL_FIRST_LINE[lang], ...topics.map((t) => PARTS[t](facts, lang))].join('\n\n');
}
