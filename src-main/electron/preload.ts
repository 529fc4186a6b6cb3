import { contextBridge } from 'electron';
import { apiUrlFromArgv } from '../desktop/api-url-argument.js';

// The preload runs in the page (no DOM types in this project): all it needs is its origin.
declare const location: { origin: string };

// The dashboard fetches its own origin and needs nothing from Node; all it learns here is
// the API's base URL (the server's, also under `npm run dev`, where the page itself comes
// from the Vite dev server).
contextBridge.exposeInMainWorld('sessionDesk', {
  apiBaseUrl: apiUrlFromArgv(process.argv) ?? location.origin,
});
