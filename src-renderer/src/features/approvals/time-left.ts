/** "29 min left", "1 h 5 min left", "40 s left": how long a request waits before it is rejected. */
export function timeLeft(expiresAt: string, now: Date): string {
  const seconds = Math.floor((Date.parse(expiresAt) - now.getTime()) / 1000);
  if (seconds <= 0) return 'expiring now';
  if (seconds < 60) return `${seconds} s left`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min left`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? `${hours} h left` : `${hours} h ${minutes % 60} min left`;
}
