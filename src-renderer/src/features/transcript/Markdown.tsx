import { useState } from 'react';
import ReactMarkdown from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { rehypeMarks } from './marks';

/**
 * An image in an agent's text is not fetched when the transcript is shown: a fetch tells the
 * image's host that someone is reading (a tracking beacon), and is a way out for an agent
 * that was told to leak something in an address. It shows as a link; a click loads it.
 */
function ImageOnRequest({ src, alt }: { src?: string | undefined; alt?: string | undefined }) {
  const [shown, setShown] = useState(false);
  if (!src) return null;
  let where = src;
  try {
    where = new URL(src, window.location.href).host || src;
  } catch {
    // Not a URL: shown as written.
  }
  const label = alt?.trim() ? alt : 'image';
  if (shown) return <img src={src} alt={label} className="markdown-image" />;
  return (
    <span className="image-placeholder">
      <a href={src} target="_blank" rel="noreferrer noopener">
        {label}
      </a>{' '}
      <button
        type="button"
        className="link-button small"
        onClick={() => setShown(true)}
        title={`Loads ${src}: its host learns that the image was viewed`}
      >
        Show image from {where}
      </button>
    </span>
  );
}

/**
 * Agent text as Markdown. Raw HTML is never rendered; links open outside the app; images load on
 * request. `marks` marks a search's terms in it.
 */
export function Markdown({ text, marks = null }: { text: string; marks?: RegExp | null }) {
  return (
    <div className="markdown">
      <ReactMarkdown
        remarkPlugins={[remarkGfm]}
        rehypePlugins={marks ? [rehypeMarks(marks)] : []}
        components={{
          a: ({ href, children }) => (
            <a href={href} target="_blank" rel="noreferrer noopener">
              {children}
            </a>
          ),
          img: ({ src, alt }) => <ImageOnRequest src={typeof src === 'string' ? src : undefined} alt={alt} />,
        }}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
}
