import { createContext, useContext, useMemo, useState, type ReactNode } from 'react';
import type { MeResponse, Workspace } from '../../../src-shared/accounts';

const STORAGE_KEY = 'sessiondesk.workspace';

interface WorkspaceState {
  me: MeResponse;
  workspace: Workspace;
  select(organizationId: string): void;
}

const WorkspaceContext = createContext<WorkspaceState | null>(null);

/** The signed-in user and the workspace they are looking at (remembered across reloads). */
export function WorkspaceProvider({ me, children }: { me: MeResponse; children: ReactNode }) {
  const [selected, setSelected] = useState(() => localStorage.getItem(STORAGE_KEY));
  const value = useMemo<WorkspaceState | null>(() => {
    const workspace = me.workspaces.find((w) => w.organizationId === selected) ?? me.workspaces[0];
    if (!workspace) return null;
    return {
      me,
      workspace,
      select(organizationId) {
        localStorage.setItem(STORAGE_KEY, organizationId);
        setSelected(organizationId);
      },
    };
  }, [me, selected]);
  return <WorkspaceContext.Provider value={value}>{children}</WorkspaceContext.Provider>;
}

/** Null only when the user belongs to no workspace yet. */
export function useWorkspaceState(): WorkspaceState | null {
  return useContext(WorkspaceContext);
}

export function useWorkspace(): WorkspaceState {
  const state = useContext(WorkspaceContext);
  if (!state) throw new Error('useWorkspace needs a workspace');
  return state;
}
