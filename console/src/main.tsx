import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { session } from './api';
import { BrokenPage } from './pages/broken';
import { BrowsePage } from './pages/browse';
import { ChangesPage } from './pages/changes';
import { DocumentPage } from './pages/document';
import { EditPage } from './pages/edit';
import { HistoryPage } from './pages/history';
import { PipelinePage } from './pages/pipeline';
import { SearchPage } from './pages/search';
import { SourceRunsPage } from './pages/source-runs';
import { SourcesPage } from './pages/sources';
import { SignIn } from './pages/sign-in';
import { currentRoute, href, type Route } from './route';
import './styles.css';

const NAV: Array<{ page: string; label: string }> = [
  { page: 'browse', label: 'Browse' },
  { page: 'search', label: 'Search' },
  { page: 'changes', label: 'Changes' },
  { page: 'pipeline', label: 'Pipeline' },
  { page: 'sources', label: 'Sources' },
  { page: 'new', label: 'New document' },
];

function App() {
  const [route, setRoute] = useState<Route>(currentRoute());
  const [signedIn, setSignedIn] = useState(session.key !== null);
  const [reason, setReason] = useState('');
  const [reachable, setReachable] = useState(true);

  useEffect(() => {
    const onHash = () => setRoute(currentRoute());
    addEventListener('hashchange', onHash);
    const offSignedOut = session.onSignedOut((why) => {
      setReason(why);
      setSignedIn(false);
    });
    const offReachability = session.onReachability(setReachable);
    return () => {
      removeEventListener('hashchange', onHash);
      offSignedOut();
      offReachability();
    };
  }, []);

  useEffect(() => {
    // A new page takes the focus, so that keyboard and screen-reader users start at its top
    // (the sign-in form focuses its key field itself).
    if (signedIn) document.getElementById('main')?.focus();
  }, [route.page, route.target, signedIn]);

  if (!signedIn) {
    return (
      <SignIn
        reason={reason}
        onSignedIn={() => {
          setReason('');
          setSignedIn(true);
        }}
      />
    );
  }
  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(event) => {
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="bar">
        <span class="brand">Agent Data</span>
        <nav aria-label="Console">
          {NAV.map((item) => (
            <a
              key={item.page}
              href={href(item.page)}
              aria-current={route.page === item.page ? 'page' : undefined}
            >
              {item.label}
            </a>
          ))}
        </nav>
        {session.key !== '' && (
          <button type="button" class="link" onClick={() => session.signOut('')}>
            Sign out
          </button>
        )}
      </header>
      {!reachable && (
        <div class="banner" role="alert">
          The server does not answer; the console keeps trying. Nothing you typed is lost.
        </div>
      )}
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'browse':
      return <BrowsePage folder={route.target} page={Number(route.query.get('page') ?? 1)} />;
    case 'broken':
      return <BrokenPage folder={route.target} />;
    case 'doc':
      return <DocumentPage id={route.target} at={route.query.get('at') ?? undefined} />;
    case 'edit':
      return <EditPage id={route.target} />;
    case 'new':
      return <EditPage folder={route.query.get('folder') ?? route.target} />;
    case 'history':
      return <HistoryPage id={route.target} />;
    case 'search':
      return <SearchPage query={route.query} />;
    case 'changes':
      return <ChangesPage query={route.query} />;
    case 'pipeline':
      return <PipelinePage />;
    case 'sources':
      return route.target === '' ? (
        <SourcesPage />
      ) : (
        <SourceRunsPage id={route.target} before={route.query.get('before') ?? undefined} />
      );
    default:
      return (
        <p>
          There is no page “{route.page}”. <a href={href('browse')}>Browse</a>
        </p>
      );
  }
}

render(<App />, document.getElementById('app')!);
