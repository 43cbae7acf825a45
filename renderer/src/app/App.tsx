import { lazy, type ReactElement, Suspense, useEffect, useState } from 'react';
import { desktop } from '../api/desktop';
import { ErrorText } from '../components/ui';
import { Account } from '../features/account/Account';
import { Outbox } from '../features/admin/Outbox';
import { Users } from '../features/admin/Users';
import { ApiTokens } from '../features/api-tokens/ApiTokens';
import { ACCOUNT_FLOW_PATHS } from '../features/auth/AccountFlows';
import { PairClaim } from '../features/auth/PairClaim';
import { SignIn } from '../features/auth/SignIn';
import { SudoDialog } from '../features/auth/SudoDialog';
import { Channels } from '../features/channels/Channels';
import { JoinShare } from '../features/channels/JoinShare';
import { Devices } from '../features/devices/Devices';
import { Inbox } from '../features/inbox/Inbox';
import { LiveProvider } from './live';
import { PlainHttpLanBanner } from './PlainHttpLanBanner';
import { Link, navigate, useLocation } from './router';
import { useSession } from './session';
import { ThemeToggle } from './theme';

// A chunk of its own (with croner for the schedule preview), loaded when the page is first opened.
const Heartbeats = lazy(() => import('../features/heartbeats/Heartbeats'));
// Its own chunk too (with recharts for the response-time charts).
const Monitors = lazy(() => import('../features/monitors/Monitors'));
// Issue 14's screens, each its own chunk.
const Maintenance = lazy(() => import('../features/maintenance/Maintenance'));
const StatusPages = lazy(() => import('../features/status-pages/StatusPages'));
// Issue 13's scans and verified hosts, its own chunk.
const PortScans = lazy(() => import('../features/port-scans/PortScans'));
// Issue 17's webhook router, its own chunk.
const WebhookRouter = lazy(() => import('../features/router/Router'));
// Issue 17's metric sources, series charts and alerts, its own chunk (recharts again).
const Metrics = lazy(() => import('../features/metrics/Metrics'));
// Issue 18's email inboxes, their rules and received mail, its own chunk.
const EmailInboxes = lazy(() => import('../features/email-inboxes/EmailInboxes'));
// Issue 18's browser error tracking, its own chunk (recharts again).
const WebScripts = lazy(() => import('../features/web-scripts/WebScripts'));
// Issue 19's assistant, its own chunk.
const Assistant = lazy(() => import('../features/assistant/Assistant'));
// Issue 19's tunnel settings (administrators), its own chunk.
const PublicAccess = lazy(() => import('../features/public-access/PublicAccess'));

/**
 * The main navigation, grouped: a sidebar on wide screens (every entry visible, one line each, however many
 * families there are), the Menu toggle's list on phones.
 */
const NAV_GROUPS: readonly { label: string; items: readonly { to: string; label: string }[] }[] = [
  {
    label: 'Messages',
    items: [
      { to: '/inbox', label: 'Inbox' },
      { to: '/channels', label: 'Channels' },
      { to: '/chat', label: 'Assistant' },
    ],
  },
  {
    label: 'Sources',
    items: [
      { to: '/heartbeats', label: 'Heartbeats' },
      { to: '/monitors', label: 'Monitors' },
      { to: '/metrics', label: 'Metrics' },
      { to: '/web-scripts', label: 'Web scripts' },
      { to: '/port-scans', label: 'Port scans' },
      { to: '/routing', label: 'Router' },
      { to: '/inboxes', label: 'Inboxes' },
    ],
  },
  {
    label: 'Publish',
    items: [
      { to: '/maintenance', label: 'Maintenance' },
      { to: '/status-pages', label: 'Status pages' },
    ],
  },
  {
    label: 'Settings',
    items: [
      { to: '/devices', label: 'Devices' },
      { to: '/api-tokens', label: 'API tokens' },
      { to: '/account', label: 'Account' },
    ],
  },
];
const ADMIN_GROUP = {
  label: 'Admin',
  items: [
    { to: '/users', label: 'Users' },
    { to: '/outbox', label: 'Mail outbox' },
    { to: '/public-access', label: 'Public access' },
  ],
};

export function App() {
  const { token, user, loading, error, signOut } = useSession();
  const { path } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);

  // Invitation links from emails use the hash form `/#/share/join?token=…` (docs/api.md, shares).
  useEffect(() => {
    if (location.hash.startsWith('#/share/join'))
      navigate(`/share/join${location.hash.slice('#/share/join'.length)}`, true);
  }, []);

  // A click on a desktop notification opens its message.
  useEffect(() => desktop()?.onOpenMessage((t) => navigate(`/inbox?channel=${t.appid}#message-${t.id}`)), []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: close the phone menu whenever the page changes
  useEffect(() => setMenuOpen(false), [path]);

  if (path === '/pair')
    return (
      <>
        <PlainHttpLanBanner />
        <PairClaim />
      </>
    );
  const flow = ACCOUNT_FLOW_PATHS[path];
  if (flow)
    return (
      <>
        <PlainHttpLanBanner />
        <header>
          <ThemeToggle floating />
        </header>
        {flow()}
      </>
    );
  if (!token) {
    return (
      <>
        <PlainHttpLanBanner />
        <header>
          <ThemeToggle floating />
        </header>
        <SignIn />
      </>
    );
  }
  if (loading && !user)
    return (
      <>
        <PlainHttpLanBanner />
        <p className="loading">Loading…</p>
      </>
    );
  if (!user)
    return (
      <>
        <PlainHttpLanBanner />
        <main className="auth-page">
          <div className="card stack">
            <ErrorText error={error} />
            <button type="button" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        </main>
      </>
    );

  const groups = user.admin ? [...NAV_GROUPS, ADMIN_GROUP] : NAV_GROUPS;
  const current = path === '/' ? '/inbox' : path;
  let page: ReactElement;
  switch (current) {
    case '/inbox':
      page = <Inbox />;
      break;
    case '/channels':
      page = <Channels />;
      break;
    case '/heartbeats':
      page = (
        <Suspense fallback={<p className="loading">Loading…</p>}>
          <Heartbeats />
        </Suspense>
      );
      break;
    case '/monitors':
      page = (
        <Suspense fallback={<p className="loading">Loading…</p>}>
          <Monitors />
        </Suspense>
      );
      break;
    case '/metrics':
      page = (
        <Suspense fallback={<p className="loading">Loading…</p>}>
          <Metrics />
        </Suspense>
      );
      break;
    case '/web-scripts':
      page = (
        <Suspense fallback={<p className="loading">Loading…</p>}>
          <WebScripts />
        </Suspense>
      );
      break;
    case '/maintenance':
      page = (
        <Suspense fallback={<p className="loading">Loading…</p>}>
          <Maintenance />
        </Suspense>
      );
      break;
    case '/status-pages':
      page = (
        <Suspense fallback={<p className="loading">Loading…</p>}>
          <StatusPages />
        </Suspense>
      );
      break;
    case '/port-scans':
      page = (
        <Suspense fallback={<p className="loading">Loading…</p>}>
          <PortScans />
        </Suspense>
      );
      break;
    case '/routing':
      page = (
        <Suspense fallback={<p className="loading">Loading…</p>}>
          <WebhookRouter />
        </Suspense>
      );
      break;
    case '/inboxes':
      page = (
        <Suspense fallback={<p className="loading">Loading…</p>}>
          <EmailInboxes />
        </Suspense>
      );
      break;
    case '/chat':
      page = (
        <Suspense fallback={<p className="loading">Loading…</p>}>
          <Assistant />
        </Suspense>
      );
      break;
    case '/devices':
      page = <Devices />;
      break;
    case '/api-tokens':
      page = <ApiTokens />;
      break;
    case '/account':
      page = <Account />;
      break;
    case '/users':
      page = user.admin ? <Users /> : <NotFound />;
      break;
    case '/outbox':
      page = user.admin ? <Outbox /> : <NotFound />;
      break;
    case '/public-access':
      page = user.admin ? (
        <Suspense fallback={<p className="loading">Loading…</p>}>
          <PublicAccess />
        </Suspense>
      ) : (
        <NotFound />
      );
      break;
    case '/share/join':
      page = <JoinShare />;
      break;
    default:
      page = <NotFound />;
  }
  const flash = sessionStorage.getItem('belfry.flash');
  if (flash) sessionStorage.removeItem('belfry.flash');

  return (
    <LiveProvider token={token}>
      <div className="shell">
        <a href="#main" className="skip">
          Skip to content
        </a>
        <PlainHttpLanBanner />
        <header className="topbar">
          <Link to="/inbox" className="brand" aria-label="Belfry inbox">
            <img src="/favicon.svg" alt="" width={24} height={24} /> Belfry
          </Link>
          <button
            type="button"
            className="menu-toggle ghost"
            aria-expanded={menuOpen}
            aria-controls="main-nav"
            onClick={() => setMenuOpen((o) => !o)}
          >
            Menu
          </button>
          <div className="topbar-end">
            <ThemeToggle />
            <span className="who" title={user.email}>
              {user.image ? <img src={user.image} alt="" className="avatar" /> : null}
              <span className="who-email">{user.email}</span>
            </span>
            <button type="button" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        </header>
        <div className="frame">
          <nav id="main-nav" aria-label="Main" className={menuOpen ? 'open' : ''}>
            {groups.map((g) => (
              <div key={g.label} className="nav-group">
                <span className="nav-heading">{g.label}</span>
                {g.items.map((n) => (
                  <Link key={n.to} to={n.to} aria-current={current === n.to ? 'page' : undefined}>
                    {n.label}
                  </Link>
                ))}
              </div>
            ))}
          </nav>
          <main id="main" tabIndex={-1}>
            {flash ? (
              <p className="notice" role="status">
                {flash}
              </p>
            ) : null}
            {page}
          </main>
        </div>
        <SudoDialog />
      </div>
    </LiveProvider>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        There is no page here. <Link to="/inbox">Go to the inbox</Link>.
      </p>
    </section>
  );
}
