import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useMemo } from 'react';

/**
 * Markdown for messages whose `extras['client::display'].contentType` is text/markdown: rendered by
 * marked, then sanitised by DOMPurify to an allowlist of text tags with no `id`, `class`, `style`,
 * `name`, `data-*` or `aria-*` (no DOM clobbering, no styling tricks). The message comes from whoever
 * holds a channel key, so nothing in it is loaded: every image becomes a link saying "external image"
 * (or a note, for data: and other URLs), and links go only to http(s), mailto, an in-page `#` or a path
 * on this server (`//host` and `/\host`, which browsers read as another host, lose their href). Links
 * open in a new tab without the opener; in Electron the main process sends them to the system browser.
 * This holds even without the Content-Security-Policy, which blocks such loads too.
 */
// img is allowed only to be replaced below: none is left in the output.
const TAGS = (
  'a abbr b blockquote br code dd del details div dl dt em h1 h2 h3 h4 h5 h6 hr i img ins kbd li mark ol ' +
  'p pre s samp small span strong sub summary sup table tbody td tfoot th thead tr u ul'
).split(' ');
const ATTRS = ['href', 'title', 'alt', 'src', 'align', 'start', 'colspan', 'rowspan', 'open'];

/** http(s), mailto, `#…`, or a path starting with one `/` (not `//` nor `/\`). */
const LINK = /^(?:https?:|mailto:|\/(?![/\\])|#)/i;
/** What browsers ignore inside a URL (DOMPurify strips the same before testing LINK). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the C0 controls are exactly what URL parsers drop
const URL_BLANKS = /[\u0000-\u0020\u00A0\u1680\u180E\u2000-\u2029\u205F\u3000]/g;

/** The href to keep, or null: LINK, and a path must resolve to this very origin. */
function safeHref(raw: string): string | null {
  const v = raw.replace(URL_BLANKS, '');
  if (!LINK.test(v)) return null;
  if (v.startsWith('/') && new URL(raw, location.origin).origin !== location.origin) return null;
  return raw;
}

const openOutside = (a: Element) => {
  a.setAttribute('target', '_blank');
  a.setAttribute('rel', 'noopener noreferrer nofollow');
};

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName !== 'A') return;
  const href = node.getAttribute('href');
  if (href !== null && safeHref(href) === null) node.removeAttribute('href');
  openOutside(node);
});

/** An image is never fetched: a link to it for http(s) and paths, a note for data: and anything else. */
function imageStandIn(img: Element): Node {
  const doc = img.ownerDocument;
  const alt = (img.getAttribute('alt') ?? '').trim();
  const src = (img.getAttribute('src') ?? '').trim();
  const href = src && !src.startsWith('#') && !/^mailto:/i.test(src) ? safeHref(src) : null;
  if (!href) return doc.createTextNode(`[image removed${alt ? `: ${alt}` : ''}]`);
  const a = doc.createElement('a');
  a.setAttribute('href', href);
  a.setAttribute('title', href);
  openOutside(a);
  a.textContent = `external image${alt ? `: ${alt}` : ''}`;
  return a;
}

export function renderMarkdown(src: string): string {
  const html = marked.parse(src, { async: false, gfm: true, breaks: true }) as string;
  // RETURN_DOM: the result stays in DOMPurify's inert document (nothing loads there) while images are
  // swapped for their stand-ins.
  const body = DOMPurify.sanitize(html, {
    ALLOWED_TAGS: TAGS,
    ALLOWED_ATTR: ATTRS,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    ALLOWED_URI_REGEXP: LINK,
    RETURN_DOM: true,
  }) as HTMLElement;
  for (const img of Array.from(body.querySelectorAll('img'))) img.replaceWith(imageStandIn(img));
  return body.innerHTML;
}

export function isMarkdown(extras: Record<string, unknown> | undefined): boolean {
  const d = extras?.['client::display'] as { contentType?: unknown } | undefined;
  return d?.contentType === 'text/markdown';
}

export function Markdown({ source }: { source: string }) {
  const html = useMemo(() => renderMarkdown(source), [source]);
  // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitised by DOMPurify just above
  return <div className="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}
