import { contextBridge } from 'electron';

// The preload runs in the page (no DOM types in this project): all it needs is its origin.
declare const location: { origin: string };

// The dashboard is served by the same origin as the API, so it needs nothing from Node;
// it learns only where the API is.
contextBridge.exposeInMainWorld('sessionDesk', { apiBaseUrl: location.origin });
