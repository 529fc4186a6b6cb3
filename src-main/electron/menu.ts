import { Menu, type MenuItemConstructorOptions } from 'electron';

export interface MenuActions {
  apiUrl: string;
  copyApiUrl(): void;
  openDataFolder(): void;
  signOut(): void;
  devTools: boolean;
}

/** The usual roles, plus the app's own items in the File menu (ids for the e2e tests). */
export function buildAppMenu(actions: MenuActions, platform = process.platform): Menu {
  const isMac = platform === 'darwin';
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' } satisfies MenuItemConstructorOptions] : []),
    {
      label: 'File',
      submenu: [
        { id: 'api-url', label: `API: ${actions.apiUrl}`, enabled: false },
        { id: 'copy-api-url', label: 'Copy API URL', click: () => actions.copyApiUrl() },
        { id: 'open-data-folder', label: 'Open Data Folder', click: () => actions.openDataFolder() },
        { type: 'separator' },
        { id: 'sign-out', label: 'Sign Out', click: () => actions.signOut() },
        { type: 'separator' },
        isMac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { role: 'reload' },
        { role: 'forceReload' },
        ...(actions.devTools ? [{ role: 'toggleDevTools' } satisfies MenuItemConstructorOptions] : []),
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
  ];
  return Menu.buildFromTemplate(template);
}
