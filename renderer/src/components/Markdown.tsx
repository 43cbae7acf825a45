import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useMemo } from 'react';

/**
 * Markdown for messages whose `extras['client::display'].contentType` is text/markdown: rendered by
 * marked, then sanitised by DOMPurify (no scripts, styles, forms, iframes or event handlers). Links open
 * in a new tab without the opener; in Electron the main process sends them to the system browser.
 */
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
});

export function renderMarkdown(src: string): string {
  const html = marked.parse(src, { async: false, gfm: true, breaks: true }) as string;
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'iframe', 'object', 'embed', 'textarea', 'select'],
    FORBID_ATTR: ['style'],
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|\/(?!\/)|#)/i,
  });
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
