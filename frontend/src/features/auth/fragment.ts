/**
 * What the page's URL fragment carries (an invite's token, single sign-on's one-time code or
 * its error), read once and then wiped from the address bar and history: browsers never send a
 * fragment to a server, and after this it is not in the history either.
 */
export function takeFragment(): string {
  const raw = window.location.hash.replace(/^#/, '');
  if (raw) window.history.replaceState(window.history.state, '', window.location.pathname + window.location.search);
  return raw;
}

/** `code=…` or `error=…` of single sign-on's landing page. */
export function parseSsoFragment(raw: string): { code: string } | { error: string } | null {
  const [key, ...rest] = raw.split('=');
  const value = decodeURIComponent(rest.join('='));
  if (key === 'code' && value) return { code: value };
  if (key === 'error') return { error: value || 'The sign-in did not finish.' };
  return null;
}
