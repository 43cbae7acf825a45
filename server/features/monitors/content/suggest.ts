import { type CheerioAPI, load } from 'cheerio';
// Types only: cheerio's node types are domhandler's (installed with cheerio).
import type { AnyNode, Element } from 'domhandler';
import { collapseWhitespace, extractFrom } from './extract';

/**
 * "Pick the text you want to watch" (§2.6 suggest-selector): the elements whose text contains the
 * wanted text, and for each the most specific selector that is likely to survive the next deploy.
 *
 * 1. Targets: the deepest elements whose text (whitespace collapsed, case-insensitive) contains it.
 * 2. For each target, selectors in order of stability: its own id (unless it looks generated), its
 *    test/data attributes, its stable classes (hashes and utility classes skipped; prefixed with the
 *    nearest stable ancestor when they are not unique), then its structural path (`tag:nth-of-type`
 *    steps up to that ancestor, or to `body`).
 * 3. Every candidate is run on the document: it must match the target and its extracted text must
 *    contain the wanted text.
 * 4. Ranked: unique matches first, then the more stable kind of selector (id, attribute, class, path
 *    from an anchor, path from `body`), then the shorter; at most 5.
 */
export interface SelectorCandidate {
  selector: string;
  text: string;
  count: number;
}

export const SUGGESTIONS_MAX = 5;
/** Targets examined (a word found in every row of a long table need not produce hundreds). */
const TARGETS_MAX = 20;
/** Deepest structural path tried. */
const PATH_MAX_STEPS = 12;

const SKIPPED_TAGS = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head']);
/** Attributes meant for test automation: stable by intent, whatever their value looks like. */
const TEST_ATTRS = ['data-testid', 'data-test-id', 'data-test', 'data-qa', 'data-cy', 'data-automation-id'];
/** Other attributes that name what an element is. */
const NAMING_ATTRS = ['itemprop', 'name', 'aria-label'];
/** data-* attributes that frameworks write (not about the content). */
const FRAMEWORK_DATA_ATTR =
  /^data-(v-|reactid|react|emotion|styled|n-|astro|svelte|aos|gtm|ga|track|analytics|state|loading)/;

enum Tier {
  Id = 0,
  Attribute = 1,
  Class = 2,
  Structure = 3,
  /** A path from `body`: breaks with any change above the element. */
  BodyPath = 4,
}

/** An id a framework generated (`ember123`, `:r1:`, `react-select-2-input`, a uuid or hash). */
export function looksGenerated(value: string): boolean {
  return (
    value.length > 60 ||
    /\d{3,}/.test(value) ||
    /[:{}]/.test(value) ||
    /^(ember|react-|radix-|headlessui-|mui-|yui_|ext-|gwt-|j_id|rc-|ng-|vue-|:)/i.test(value) ||
    /[0-9a-f]{8,}/i.test(value.replace(/[^0-9a-f]/gi, (c) => (c === '-' ? '' : ' '))) ||
    hasHashSegment(value)
  );
}

/**
 * A part after `-`, `_` or `__` that interleaves letters and digits like a content hash
 * (`Price_value__k3J4h`, `1q2w3e4`), unlike words with a number (`col2`, `1st`, `mp3`).
 */
function hasHashSegment(value: string): boolean {
  return value.split(/[-_.]+/).some((seg) => (seg.match(/[a-z](?=\d)|\d(?=[a-z])/gi)?.length ?? 0) >= 3);
}

/** CSS-in-JS hashes and utility classes (Tailwind, Bootstrap helpers) describe looks, not content. */
export function isStableClass(cls: string): boolean {
  if (looksGenerated(cls)) return false;
  if (/^(css|sc|jsx|svelte|emotion|tw|astro)-/i.test(cls)) return false;
  if (/^_/.test(cls)) return false;
  if (/[:/[\]!.@%#]/.test(cls)) return false; // md:flex, w-1/2, [mask:…], !p-0
  if (/^-?[mp][trblxyse]?-/.test(cls)) return false; // m-2, px-4, mt-auto
  if (
    /^(w|h|min-w|max-w|min-h|max-h|size|gap|space-[xy]|text|bg|border|rounded|shadow|font|leading|tracking|flex|grid|col|row|items|justify|content|self|place|order|z|top|left|right|bottom|inset|opacity|d|float|align|overflow|sr|cursor|transition|duration|ease|animate|ring|outline|fill|stroke|object|aspect|basis|grow|shrink|decoration|underline|whitespace|break|truncate|line-clamp|visible|invisible|g[xy]?|offset|ms|me|ps|pe|fs|fw|lh|position|translate|rotate|scale|divide|from|to|via)-/.test(
      cls,
    )
  )
    return false;
  return !/^(flex|grid|block|inline|inline-block|hidden|container|row|clearfix|active|selected|show|fade|disabled|open|collapsed|visible|invisible|sr-only|truncate|relative|absolute|fixed|sticky|static|uppercase|lowercase|capitalize|italic|underline|bold|small|large|left|right|center|pull-left|pull-right|is-[\w-]+|has-[\w-]+|js-[\w-]+)$/.test(
    cls,
  );
}

/** `CSS.escape` for identifiers (ids, classes). */
export function cssIdent(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (
      /[A-Za-z0-9_\-\u00a0-\uffff]/.test(c) &&
      !(i === 0 && /\d/.test(c)) &&
      !(i === 1 && /\d/.test(c) && s[0] === '-')
    )
      out += c;
    else if (/\d/.test(c)) out += `\\${c.charCodeAt(0).toString(16)} `;
    else out += `\\${c}`;
  }
  return out;
}

function attrSelector(name: string, value: string): string {
  return `[${name}="${value.replace(/["\\]/g, '\\$&')}"]`;
}

function isElement(n: AnyNode | null | undefined): n is Element {
  return !!n && (n.type === 'tag' || n.type === 'script' || n.type === 'style');
}

function normalise(s: string): string {
  return collapseWhitespace(s).toLowerCase();
}

/** The deepest elements whose text contains `needle`: none of their child elements contains it whole. */
function findTargets($: CheerioAPI, needle: string): Element[] {
  const targets: Element[] = [];
  const visit = (el: Element): void => {
    if (targets.length >= TARGETS_MAX || SKIPPED_TAGS.has(el.name)) return;
    if (!normalise($(el).text()).includes(needle)) return;
    const before = targets.length;
    for (const child of el.children) if (isElement(child)) visit(child);
    if (targets.length === before && el.name !== 'html' && el.name !== 'body') targets.push(el);
  };
  const root = $.root()[0]!;
  for (const child of root.children) if (isElement(child)) visit(child);
  return targets;
}

/** The stable attribute selectors of one element, best first. */
function ownAttributeSelectors(el: Element): string[] {
  const out: string[] = [];
  const attrs = el.attribs;
  for (const name of TEST_ATTRS) if (attrs[name]) out.push(attrSelector(name, attrs[name]));
  for (const name of NAMING_ATTRS) {
    const v = attrs[name];
    if (v && v.length <= 60 && !looksGenerated(v)) out.push(`${el.name}${attrSelector(name, v)}`);
  }
  for (const [name, v] of Object.entries(attrs)) {
    if (!name.startsWith('data-') || TEST_ATTRS.includes(name) || FRAMEWORK_DATA_ATTR.test(name)) continue;
    if (looksGenerated(name) || !v || v.length > 60 || looksGenerated(v)) continue;
    out.push(`${el.name}${attrSelector(name, v)}`);
  }
  return out;
}

function stableId(el: Element): string | null {
  const id = el.attribs.id;
  return id && !looksGenerated(id) ? `#${cssIdent(id)}` : null;
}

/** An element's own anchor selector (id, a test attribute, else a stable class unique in the page), if any. */
function anchorOf($: CheerioAPI, el: Element): string | null {
  const id = stableId(el);
  if (id) return id;
  for (const name of TEST_ATTRS) if (el.attribs[name]) return attrSelector(name, el.attribs[name]);
  for (const cls of stableClasses(el)) {
    const sel = `${el.name}.${cssIdent(cls)}`;
    if ($(sel).length === 1) return sel;
  }
  return null;
}

function stableClasses(el: Element): string[] {
  return (el.attribs.class ?? '').split(/\s+/).filter((c) => c && isStableClass(c));
}

/** One step of a structural path: the tag, with `:nth-of-type` when the parent has siblings of that tag. */
function step(el: Element): string {
  const parent = el.parent;
  if (!parent || !('children' in parent)) return el.name;
  const same = parent.children.filter((c): c is Element => isElement(c) && c.name === el.name);
  return same.length > 1 ? `${el.name}:nth-of-type(${same.indexOf(el) + 1})` : el.name;
}

/** The nearest ancestor with an anchor selector, with the steps from it down to `el` (or from `body`). */
function pathFromAnchor($: CheerioAPI, el: Element): { anchor: string; steps: string[] } | null {
  const steps: string[] = [];
  let cur: Element = el;
  while (steps.length < PATH_MAX_STEPS) {
    steps.unshift(step(cur));
    const parent = cur.parent;
    if (!isElement(parent)) return null;
    if (parent.name === 'body' || parent.name === 'html') return { anchor: parent.name, steps };
    const anchor = anchorOf($, parent);
    if (anchor) return { anchor, steps };
    cur = parent;
  }
  return null;
}

function candidatesFor($: CheerioAPI, el: Element): { selector: string; tier: Tier }[] {
  const out: { selector: string; tier: Tier }[] = [];
  const id = stableId(el);
  if (id) out.push({ selector: id, tier: Tier.Id });
  for (const s of ownAttributeSelectors(el)) out.push({ selector: s, tier: Tier.Attribute });

  const path = pathFromAnchor($, el);
  const classes = stableClasses(el);
  if (classes.length > 0) {
    // The two rarest stable classes say the most about the element.
    const rarest = [...classes]
      .sort((a, b) => $(`.${cssIdent(a)}`).length - $(`.${cssIdent(b)}`).length)
      .slice(0, 2);
    const own = `${el.name}${rarest.map((c) => `.${cssIdent(c)}`).join('')}`;
    out.push({ selector: own, tier: Tier.Class });
    if (path && path.anchor !== 'body' && path.anchor !== 'html')
      out.push({ selector: `${path.anchor} ${own}`, tier: Tier.Class });
  }
  if (path) {
    const tier = path.anchor === 'body' || path.anchor === 'html' ? Tier.BodyPath : Tier.Structure;
    out.push({ selector: [path.anchor, ...path.steps].join(' > '), tier });
  }
  return out;
}

/** Suggests selectors for `text` in `html`; [] when no element contains it. */
export function suggestSelectors(html: string, text: string): SelectorCandidate[] {
  const needle = normalise(text);
  if (needle === '') return [];
  const $ = load(html);
  const seen = new Set<string>();
  const ranked: (SelectorCandidate & { tier: Tier })[] = [];
  for (const target of findTargets($, needle)) {
    for (const { selector, tier } of candidatesFor($, target)) {
      if (seen.has(selector)) continue;
      seen.add(selector);
      let matches: AnyNode[];
      try {
        matches = $(selector).toArray();
      } catch {
        continue; // an escape this engine reads differently: not a selector to offer
      }
      if (!matches.includes(target)) continue;
      const ex = extractFrom($, selector);
      if (!normalise(ex.text).includes(needle)) continue;
      ranked.push({ selector, text: ex.text, count: ex.matched, tier });
    }
  }
  ranked.sort(
    (a, b) =>
      Number(a.count !== 1) - Number(b.count !== 1) ||
      a.tier - b.tier ||
      a.selector.length - b.selector.length,
  );
  return ranked
    .slice(0, SUGGESTIONS_MAX)
    .map(({ selector, text: t, count }) => ({ selector, text: t, count }));
}

/**
 * Selectors proposed by the assistant's provider, kept only when they hold on the document like the
 * local ones must (the element's extracted text contains `text`), then the local candidates; at most 5.
 */
export function withProposedSelectors(
  html: string,
  text: string,
  proposed: readonly string[],
): SelectorCandidate[] {
  const local = suggestSelectors(html, text);
  const needle = normalise(text);
  if (needle === '' || proposed.length === 0) return local;
  const $ = load(html);
  const out: SelectorCandidate[] = [];
  for (const selector of proposed) {
    if (out.some((c) => c.selector === selector)) continue;
    try {
      if ($(selector).length === 0) continue;
    } catch {
      continue; // not a selector this engine reads
    }
    const ex = extractFrom($, selector);
    if (normalise(ex.text).includes(needle)) out.push({ selector, text: ex.text, count: ex.matched });
  }
  for (const c of local) if (!out.some((o) => o.selector === c.selector)) out.push(c);
  return out.slice(0, SUGGESTIONS_MAX);
}

/** The page for the provider: no scripts, styles or comments, whitespace folded, at most 12,000 characters. */
export function htmlExcerpt(html: string): string {
  return html
    .replace(/<(script|style|noscript|svg)\b[\s\S]*?<\/\1>/gi, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/\s+/g, ' ')
    .slice(0, 12_000);
}
