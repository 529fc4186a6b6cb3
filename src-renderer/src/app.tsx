import { DEFAULT_MODEL } from '../../src-shared/constants';

/** A placeholder until the dashboard lands: it shows the API is up and where it is described. */
export function App() {
  return (
    <main>
      <h1>Session Desk</h1>
      <p>The local API is running. The dashboard is on its way.</p>
      <p>
        API document: <a href="/api/openapi.json">/api/openapi.json</a>. New sessions default to{' '}
        <code>{DEFAULT_MODEL}</code>.
      </p>
    </main>
  );
}
