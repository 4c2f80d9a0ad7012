/** The server's snippet: HTML-escaped text with hits in `<mark>…</mark>`. */
const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#x27;': "'", '&#39;': "'" };

/** A snippet's pieces: text, and whether it is a hit. Nothing in it ever becomes markup. */
export function snippetParts(snippet: string): { text: string; hit: boolean }[] {
  const parts: { text: string; hit: boolean }[] = [];
  const unescape = (s: string) => s.replace(/&(amp|lt|gt|quot|#x27|#39);/g, (m) => ENTITIES[m] ?? m);
  let hit = false;
  for (const piece of snippet.split(/(<mark>|<\/mark>)/)) {
    if (piece === '<mark>') hit = true;
    else if (piece === '</mark>') hit = false;
    else if (piece) parts.push({ text: unescape(piece), hit });
  }
  return parts;
}

/** A snippet shown as text, its hits marked (React escapes every piece: no HTML is injected). */
export function Highlighted({ snippet }: { snippet: string }) {
  return (
    <>
      {snippetParts(snippet).map((p, i) =>
        p.hit ? (
          <mark key={i} className="rounded-sm bg-yellow-200 px-0.5 text-foreground dark:bg-yellow-500/30">
            {p.text}
          </mark>
        ) : (
          <span key={i}>{p.text}</span>
        ),
      )}
    </>
  );
}
