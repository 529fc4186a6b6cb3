/**
 * The signals themselves: a short sound drawn with the Web Audio API (no file to load), and the
 * browser's own notification.
 */

export type AlertKind = 'needsYou' | 'finished';

/** Two rising notes when an agent asks; two falling ones when a run ends. */
const NOTES: Record<AlertKind, number[]> = { needsYou: [660, 880], finished: [784, 523] };

let audio: AudioContext | null = null;

/**
 * Plays the kind's sound. Browsers let a page play sound only once its person has interacted
 * with it; before that the context stays suspended and nothing is heard.
 */
export function playAlertSound(kind: AlertKind): void {
  if (typeof AudioContext === 'undefined') return;
  audio ??= new AudioContext();
  const context = audio;
  void context.resume().catch(() => undefined);
  NOTES[kind].forEach((frequency, i) => {
    const start = context.currentTime + i * 0.16;
    const oscillator = context.createOscillator();
    const gain = context.createGain();
    oscillator.type = 'sine';
    oscillator.frequency.value = frequency;
    gain.gain.setValueAtTime(0.0001, start);
    gain.gain.exponentialRampToValueAtTime(0.2, start + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, start + 0.14);
    oscillator.connect(gain).connect(context.destination);
    oscillator.start(start);
    oscillator.stop(start + 0.15);
  });
}

/** What the browser allows: `unsupported` where it has no Notification API (or not here). */
export type NotificationPermissionState = NotificationPermission | 'unsupported';

export function notificationPermission(): NotificationPermissionState {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}

/** Asks the browser for permission: only ever from a click, as browsers expect. */
export async function askNotificationPermission(): Promise<NotificationPermissionState> {
  if (typeof Notification === 'undefined') return 'unsupported';
  return Notification.requestPermission();
}

/**
 * Shows the browser's notification where it is allowed; `tag` makes the tabs of one browser
 * show one notification for the same request, not one each.
 */
export function showNotification(title: string, body: string, tag: string, onClick: () => void): void {
  if (notificationPermission() !== 'granted') return;
  const notification = new Notification(title, { body, tag });
  notification.onclick = () => {
    window.focus();
    onClick();
    notification.close();
  };
}
