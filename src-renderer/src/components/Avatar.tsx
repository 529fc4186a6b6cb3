import { hueFor, initials } from '../lib/format';

export function Avatar({
  name,
  imageUrl,
  size = 24,
}: {
  name: string;
  imageUrl?: string | undefined;
  size?: number;
}) {
  if (imageUrl) {
    return <img className="avatar" src={imageUrl} alt="" width={size} height={size} title={name} />;
  }
  return (
    <span
      className="avatar avatar-initials"
      aria-hidden="true"
      title={name}
      style={{ width: size, height: size, fontSize: size * 0.42, background: `hsl(${hueFor(name)} 45% 45%)` }}
    >
      {initials(name)}
    </span>
  );
}
