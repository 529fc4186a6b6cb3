import { absoluteTime, relativeTime } from '../lib/format';
import { useNow } from '../lib/use-now';

export function RelativeTime({ iso }: { iso: string }) {
  const now = useNow();
  return (
    <time dateTime={iso} title={absoluteTime(iso)}>
      {relativeTime(iso, now)}
    </time>
  );
}
