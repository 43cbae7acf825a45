/**
 * The snippet served by GET /script/{token} (§9.1), kept as text so the bundled server carries it.
 * Generated from snippet/belfry-snippet.js (the readable source, ES2017, no dependencies); snippet.test.ts
 * fails when the two differ: after editing the .js, run `npx tsx server/features/web-scripts/snippet/sync.ts`.
 */
export const SNIPPET_SOURCE = String.raw`/** biome-ignore-all lint: served to every browser as written: ES2017, var and function for old engines, no template literals (snippet/source.ts embeds it with String.raw) */
/* Belfry web-script snippet: reports uncaught errors and unhandled rejections with breadcrumbs. */
(function (w, d) {
  'use strict';
  if (!w || w.Belfry) return;
  var ENDPOINT = '__BELFRY_ENDPOINT__';
  var cfg = w.__belfryTest || {};
  var setT = cfg.setTimeout || w.setTimeout.bind(w);
  var clearT = cfg.clearTimeout || w.clearTimeout.bind(w);
  var setI = cfg.setInterval || w.setInterval.bind(w);
  var now =
    cfg.now ||
    function () {
      return Date.now();
    };
  var nav = w.navigator || {};
  var script = d && d.currentScript;
  var release = (script && script.getAttribute('data-release')) || undefined;
  var queue = [];
  var crumbs = [];
  var sentAt = [];
  var errorTimer = null;
  var origFetch = w.fetch;
  var sending = false;

  function safe(fn) {
    return function () {
      try {
        return fn.apply(this, arguments);
      } catch (e) {
        /* never throw into the page */
      }
    };
  }
  function iso(t) {
    return new Date(t).toISOString();
  }
  function cut(s, n) {
    s = String(s == null ? '' : s);
    return s.length > n ? s.slice(0, n) : s;
  }
  function bareUrl(u) {
    try {
      u = String(u);
      var i = u.search(/[?#]/);
      return i < 0 ? u : u.slice(0, i);
    } catch (e) {
      return '';
    }
  }
  function crumb(type, message) {
    crumbs.push({ at: iso(now()), type: type, message: cut(message, 300) });
    if (crumbs.length > 50) crumbs.shift();
  }
  function describe(el) {
    if (!el || !el.tagName) return '';
    var s = el.tagName.toLowerCase();
    if (el.id) s += '#' + el.id;
    else if (typeof el.className === 'string' && el.className)
      s += '.' + el.className.trim().split(/\s+/).slice(0, 2).join('.');
    var text = (el.innerText || el.textContent || '').trim();
    if (text) s += ' "' + cut(text.replace(/\s+/g, ' '), 40) + '"';
    return s;
  }
  function allowed() {
    var t = now();
    while (sentAt.length && t - sentAt[0] >= 60000) sentAt.shift();
    if (sentAt.length >= 100) return false;
    sentAt.push(t);
    return true;
  }
  function send(reason, beacon) {
    if (!queue.length && reason !== 'ping') return;
    var body = { events: queue.splice(0, 100), flushReason: reason };
    if (release) body.release = release;
    var text = JSON.stringify(body);
    if (beacon && nav.sendBeacon) {
      try {
        if (nav.sendBeacon(ENDPOINT, new Blob([text], { type: 'text/plain' }))) return;
      } catch (e) {
        /* fall through */
      }
    }
    var f = origFetch || w.fetch;
    sending = true;
    try {
      if (f)
        f.call(w, ENDPOINT, {
          method: 'POST',
          body: text,
          keepalive: text.length < 60000,
          headers: { 'Content-Type': 'text/plain' },
          mode: 'cors',
          credentials: 'omit',
        }).catch(function () {});
    } catch (e) {
      /* ignore */
    }
    sending = false;
  }
  function enqueue(ev) {
    if (!allowed()) return;
    ev.at = iso(now());
    ev.url = cut(w.location && w.location.href, 2000);
    ev.userAgent = cut(nav.userAgent, 500);
    if (release) ev.release = release;
    ev.breadcrumbs = crumbs.slice();
    queue.push(ev);
    if (queue.length >= 20) {
      send('size');
      return;
    }
    if (ev.type !== 'message' && !errorTimer)
      errorTimer = setT(
        safe(function () {
          errorTimer = null;
          send('error');
        }),
        1000,
      );
  }
  function fromError(type, err, fallback) {
    var msg =
      err && err.message !== undefined
        ? (err.name || 'Error') + ': ' + err.message
        : String(err === undefined ? fallback : err);
    return {
      type: type,
      message: cut(msg || fallback, 2000),
      stack: err && err.stack ? cut(err.stack, 16000) : undefined,
    };
  }

  w.addEventListener(
    'error',
    safe(function (e) {
      if (!e || (e.target && e.target !== w)) return;
      var ev = fromError('error', e.error, e.message || 'Script error.');
      if (!e.error) ev.message = cut(e.message || 'Script error.', 2000);
      if (e.filename) ev.source = cut(e.filename, 2000);
      if (e.lineno) ev.line = e.lineno;
      if (e.colno) ev.col = e.colno;
      enqueue(ev);
    }),
    true,
  );
  w.addEventListener(
    'unhandledrejection',
    safe(function (e) {
      var r = e && e.reason;
      enqueue(fromError('rejection', r, 'Unhandled rejection'));
    }),
  );
  if (d)
    d.addEventListener(
      'click',
      safe(function (e) {
        crumb('click', describe(e.target));
      }),
      true,
    );

  var lastHref = w.location && w.location.href;
  function navigated() {
    var href = w.location && w.location.href;
    if (href === lastHref) return;
    crumb('navigation', bareUrl(lastHref) + ' -> ' + bareUrl(href));
    lastHref = href;
  }
  var h = w.history;
  if (h) {
    ['pushState', 'replaceState'].forEach(function (name) {
      var orig = h[name];
      if (typeof orig !== 'function') return;
      h[name] = function () {
        var r = orig.apply(this, arguments);
        safe(navigated)();
        return r;
      };
    });
  }
  w.addEventListener('popstate', safe(navigated));
  w.addEventListener('hashchange', safe(navigated));

  if (origFetch) {
    w.fetch = function (input, init) {
      var p = origFetch.apply(this, arguments);
      if (sending) return p;
      safe(function () {
        var method = ((init && init.method) || (input && input.method) || 'GET').toUpperCase();
        var url = bareUrl(typeof input === 'string' ? input : (input && input.url) || input);
        if (url === ENDPOINT) return;
        p.then(
          function (res) {
            crumb('fetch', method + ' ' + url + ' ' + res.status);
          },
          function () {
            crumb('fetch', method + ' ' + url + ' failed');
          },
        );
      })();
      return p;
    };
  }
  var X = w.XMLHttpRequest;
  if (X && X.prototype) {
    var open = X.prototype.open;
    var sendX = X.prototype.send;
    X.prototype.open = function (method, url) {
      try {
        this.__belfry = String(method).toUpperCase() + ' ' + bareUrl(url);
      } catch (e) {
        /* ignore */
      }
      return open.apply(this, arguments);
    };
    X.prototype.send = function () {
      var xhr = this;
      try {
        if (xhr.__belfry)
          xhr.addEventListener(
            'loadend',
            safe(function () {
              crumb('xhr', xhr.__belfry + ' ' + (xhr.status || 'failed'));
            }),
          );
      } catch (e) {
        /* ignore */
      }
      return sendX.apply(this, arguments);
    };
  }
  var con = w.console;
  if (con) {
    ['warn', 'error'].forEach(function (level) {
      var orig = con[level];
      if (typeof orig !== 'function') return;
      con[level] = function () {
        var args = arguments;
        safe(function () {
          var parts = [];
          for (var i = 0; i < args.length; i++)
            parts.push(
              args[i] instanceof Error
                ? args[i].message
                : typeof args[i] === 'object'
                  ? JSON.stringify(args[i])
                  : String(args[i]),
            );
          crumb('console', level + ': ' + parts.join(' '));
        })();
        return orig.apply(this, args);
      };
    });
  }

  setI(
    safe(function () {
      send('interval');
    }),
    5000,
  );
  function unload() {
    safe(function () {
      send('unload', true);
    })();
  }
  w.addEventListener('pagehide', unload);
  if (d)
    d.addEventListener(
      'visibilitychange',
      safe(function () {
        if (d.visibilityState === 'hidden') unload();
      }),
    );

  w.Belfry = {
    capture: safe(function (message) {
      if (message instanceof Error) {
        var ev = fromError('message', message, '');
        enqueue(ev);
        return;
      }
      enqueue({ type: 'message', message: cut(message, 2000) });
    }),
    setRelease: safe(function (r) {
      release = r == null ? undefined : cut(r, 200);
    }),
    flush: safe(function () {
      if (errorTimer) {
        clearT(errorTimer);
        errorTimer = null;
      }
      send('interval');
    }),
  };
})(
  typeof window !== 'undefined' ? window : undefined,
  typeof document !== 'undefined' ? document : undefined,
);
`;
