/**
 * A browser's matchMedia for jsdom (which has none): `matches` says which queries match now;
 * `change` switches one and tells its listeners, as a browser does when the system or window changes.
 */
export function fakeMatchMedia(matches: (query: string) => boolean) {
  const lists = new Map<string, { matches: boolean; listeners: Set<(e: MediaQueryListEvent) => void> }>();
  const list = (query: string) => {
    let l = lists.get(query);
    if (!l) lists.set(query, (l = { matches: matches(query), listeners: new Set() }));
    return l;
  };
  window.matchMedia = ((query: string) => {
    const l = list(query);
    return {
      get matches() {
        return l.matches;
      },
      media: query,
      addEventListener: (_: string, f: (e: MediaQueryListEvent) => void) => l.listeners.add(f),
      removeEventListener: (_: string, f: (e: MediaQueryListEvent) => void) => l.listeners.delete(f),
    } as unknown as MediaQueryList;
  }) as typeof window.matchMedia;
  return {
    change(query: string, now: boolean) {
      const l = list(query);
      l.matches = now;
      l.listeners.forEach((f) => f({ matches: now, media: query } as MediaQueryListEvent));
    },
    restore() {
      delete (window as { matchMedia?: unknown }).matchMedia;
    },
  };
}
