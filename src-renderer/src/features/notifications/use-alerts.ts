import { useCallback, useRef } from 'react';
import { useNavigate } from 'react-router';
import type { SessionEvent } from '../../../../src-shared/sessions';
import { requestingAgentName, useKnownAgentKinds } from '../../lib/agent-names';
import { readAlertSettings } from './alert-settings';
import { playAlertSound, showNotification } from './alerts';

/**
 * The live events' listener that tells the person, as they chose in Settings › Notifications:
 * a request an agent makes ("needs you"), and the end of a run this tab saw going ("finished").
 */
export function useAlerts(): (event: SessionEvent) => void {
  const navigate = useNavigate();
  const knownKinds = useKnownAgentKinds();
  // Sessions seen with a run going, whose end is then "finished".
  const working = useRef(new Set<string>());
  return useCallback(
    (event: SessionEvent) => {
      const settings = readAlertSettings();
      if (event.type === 'approval.created') {
        const { approval } = event;
        if (settings.soundNeedsYou) playAlertSound('needsYou');
        if (settings.desktop) {
          showNotification(
            `${requestingAgentName(approval.agent, knownKinds())} needs you`,
            approval.title,
            approval.id,
            () => void navigate('/inbox'),
          );
        }
        return;
      }
      if (event.type !== 'session.updated' && event.type !== 'session.created') return;
      const { session } = event;
      if (session.agentState !== undefined) {
        working.current.add(session.id);
      } else if (working.current.delete(session.id) && settings.soundFinished) {
        playAlertSound('finished');
      }
    },
    [navigate, knownKinds],
  );
}
