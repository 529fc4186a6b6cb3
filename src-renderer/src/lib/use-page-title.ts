import { useEffect } from 'react';

const APP_NAME = 'Session Desk';

/** The browser tab's title: the page's name first, so that several tabs tell apart. */
export function pageTitle(name: string | undefined): string {
  const trimmed = name?.trim();
  return trimmed ? `${trimmed} · ${APP_NAME}` : APP_NAME;
}

/** Names the tab after the page while it is shown. */
export function usePageTitle(name: string | undefined): void {
  useEffect(() => {
    document.title = pageTitle(name);
    return () => {
      document.title = APP_NAME;
    };
  }, [name]);
}

/** The same, for a route whose page does not name itself. */
export function PageTitle({ name }: { name: string }): null {
  usePageTitle(name);
  return null;
}
