import { useState } from 'react';
import { useAlertSettings, type AlertSettings } from './alert-settings';
import {
  askNotificationPermission,
  notificationPermission,
  playAlertSound,
  type AlertKind,
  type NotificationPermissionState,
} from './alerts';

const PERMISSION_NOTE: Record<NotificationPermissionState, string> = {
  granted: 'This browser shows them.',
  default: 'The browser asks you once you turn them on.',
  denied: "The browser blocks them for this site: allow notifications in the site's settings, then reload.",
  unsupported: 'This browser has no notifications here (they need a secure page, such as localhost).',
};

function SoundChoice({
  kind,
  field,
  label,
  settings,
  change,
}: {
  kind: AlertKind;
  field: keyof AlertSettings;
  label: string;
  settings: AlertSettings;
  change: (next: Partial<AlertSettings>) => void;
}) {
  return (
    <div className="checkbox">
      <label className="checkbox">
        <input
          type="checkbox"
          checked={settings[field]}
          onChange={(e) => {
            change({ [field]: e.target.checked });
            // The click lets the page play sound from now on, and lets the person hear it.
            if (e.target.checked) playAlertSound(kind);
          }}
        />{' '}
        {label}
      </label>
      <button type="button" className="button button-small" onClick={() => playAlertSound(kind)}>
        Play
      </button>
    </div>
  );
}

/**
 * Settings › Notifications: how this browser tells you that an agent needs you or that a run
 * has finished. Kept in this browser only; everything is off until turned on here.
 */
export function NotificationsPage() {
  const [settings, change] = useAlertSettings();
  const [permission, setPermission] = useState(notificationPermission);
  const shown = settings.desktop && permission === 'granted';

  async function turnOn() {
    // Asked only here, from a click: never when a page loads.
    const answer = permission === 'granted' ? permission : await askNotificationPermission();
    setPermission(answer);
    change({ desktop: answer === 'granted' });
  }

  return (
    <div className="page page-narrow">
      <header className="page-header">
        <h1>Notifications</h1>
      </header>
      <p className="muted">
        How this browser tells you what happens in your workspaces. Kept in this browser only.
      </p>
      <section className="stack card" aria-labelledby="desktop-heading">
        <h2 id="desktop-heading">When an agent needs you</h2>
        <p>
          Desktop notifications: <strong>{shown ? 'on' : 'off'}</strong>.{' '}
          <span className="muted small">{PERMISSION_NOTE[permission]}</span>
        </p>
        <div className="form-actions">
          {shown ? (
            <button type="button" className="button" onClick={() => change({ desktop: false })}>
              Turn off notifications
            </button>
          ) : (
            <button
              type="button"
              className="button button-primary"
              disabled={permission === 'denied' || permission === 'unsupported'}
              onClick={() => void turnOn()}
            >
              Turn on notifications
            </button>
          )}
        </div>
      </section>
      <section className="stack card" aria-labelledby="sounds-heading">
        <h2 id="sounds-heading">Sounds</h2>
        <SoundChoice
          kind="needsYou"
          field="soundNeedsYou"
          label="Play a sound when an agent needs you"
          settings={settings}
          change={change}
        />
        <SoundChoice
          kind="finished"
          field="soundFinished"
          label="Play a sound when a run finishes"
          settings={settings}
          change={change}
        />
        <p className="muted small">
          Browsers play sounds only once you have clicked in this tab; a run finishes when its agent stops
          working (done, failed or stopped), as seen by a tab that was open while it worked.
        </p>
      </section>
    </div>
  );
}
