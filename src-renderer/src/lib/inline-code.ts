/** A piece of a message: plain text, or a command or name that was written between backticks. */
export interface MessagePart {
  text: string;
  code: boolean;
}

/**
 * A server message split on its backticks, which mark commands to type (`gh auth login`):
 * shown as code rather than as the raw marks. An unmatched backtick stays as written.
 */
export function inlineCodeParts(message: string): MessagePart[] {
  const parts: MessagePart[] = [];
  const pattern = /`([^`\n]+)`/gu;
  let from = 0;
  for (const match of message.matchAll(pattern)) {
    if (match.index > from) parts.push({ text: message.slice(from, match.index), code: false });
    parts.push({ text: match[1] ?? '', code: true });
    from = match.index + match[0].length;
  }
  if (from < message.length) parts.push({ text: message.slice(from), code: false });
  return parts;
}
