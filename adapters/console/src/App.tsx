// The shell: sign-in, then the screens whose tools this session's tools/list offers (hosted-only
// screens appear only where their tools are wired).

import { useCallback, useEffect, useState } from 'react';

import { currentSession, listTools, signOut, whenSignedOut, type Session } from './api';
import { describe } from './messages';
import { AppsScreen } from './screens/Apps';
import { BlueprintsScreen } from './screens/Blueprints';
import { CouponsScreen } from './screens/Coupons';
import { CreditsScreen } from './screens/Credits';
import { KeysScreen } from './screens/Keys';
import { OrgsScreen } from './screens/Orgs';
import { ProviderKeysScreen } from './screens/ProviderKeys';
import { SignIn } from './screens/SignIn';
import { TOOLS } from './tools';
import { Busy } from './ui';

export interface ScreenProps {
  session: Session;
  tools: string[];
  refreshSession: () => Promise<void>;
}

const SCREENS = [
  { id: 'apps', title: 'Apps', tool: TOOLS.listApps, Screen: AppsScreen },
  { id: 'keys', title: 'Connector keys', tool: TOOLS.listKeys, Screen: KeysScreen },
  { id: 'orgs', title: 'Orgs', tool: TOOLS.listOrgs, Screen: OrgsScreen },
  { id: 'coupons', title: 'Coupons', tool: TOOLS.redeemCoupon, Screen: CouponsScreen },
  { id: 'blueprints', title: 'Blueprints', tool: TOOLS.listBlueprints, Screen: BlueprintsScreen },
  { id: 'provider-keys', title: 'Provider keys', tool: TOOLS.listProviderKeys, Screen: ProviderKeysScreen },
  { id: 'credits', title: 'Credits', tool: TOOLS.creditBalance, Screen: CreditsScreen },
] as const;

function screenFromHash(): string {
  return window.location.hash.replace(/^#/, '');
}

export function App() {
  const [session, setSession] = useState<Session | null | 'loading'>('loading');
  const [tools, setTools] = useState<string[] | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [current, setCurrent] = useState(screenFromHash());

  useEffect(() => {
    whenSignedOut(() => {
      setSession(null);
      setTools(null);
    });
    currentSession()
      .then(setSession)
      .catch((e: unknown) => {
        setFailure(describe(e));
        setSession(null);
      });
    const onHash = () => setCurrent(screenFromHash());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    if (session && session !== 'loading') {
      listTools()
        .then(setTools)
        .catch((e: unknown) => setFailure(describe(e)));
    }
  }, [session]);

  const refreshSession = useCallback(async () => {
    setSession(await currentSession());
  }, []);

  if (session === 'loading') return <Busy label="Loading the console…" />;
  if (session === null) {
    return (
      <main className="signin-page">
        {failure && <p className="error">{failure}</p>}
        <SignIn onSignedIn={setSession} />
      </main>
    );
  }
  const offered = SCREENS.filter((s) => tools?.includes(s.tool));
  const active = offered.find((s) => s.id === current) ?? offered[0];
  return (
    <div className="shell">
      <header className="topbar">
        <h1>svc console</h1>
        <span className="who">
          Signed in as <strong>{session.principalId}</strong>
          {session.appLocked ? ` (key locked to app ${session.appId})` : ''}
        </span>
        <button
          type="button"
          onClick={() => {
            void signOut().then(() => setSession(null));
          }}
        >
          Sign out
        </button>
      </header>
      <nav aria-label="Console screens">
        <ul>
          {offered.map((s) => (
            <li key={s.id}>
              <a href={`#${s.id}`} aria-current={s === active ? 'page' : undefined}>
                {s.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="screen" aria-labelledby="screen-title">
        {failure && <p className="error">{failure}</p>}
        {tools === null && <Busy label="Loading the tools this session may use…" />}
        {tools !== null && offered.length === 0 && (
          <p className="empty">This server offers no operator tools to this session.</p>
        )}
        {tools !== null && active && (
          <section key={active.id}>
            <h2 id="screen-title">{active.title}</h2>
            <active.Screen session={session} tools={tools} refreshSession={refreshSession} />
          </section>
        )}
      </main>
    </div>
  );
}
