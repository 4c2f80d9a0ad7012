/**
 * Which URLs from untrusted content (the model's answers, figure JSON) the browser may load.
 * The answer is almost always "none": a URL the browser fetches by itself can carry data out.
 */

const ARTIFACT_CONTENT = /^\/api\/v1\/artifacts\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\/content$/i;
const IMAGE_DATA_URI = /^data:image\/(png|jpeg|jpg|gif|webp|svg\+xml)[;,]/i;

function parse(url: string): URL | null {
  try {
    return new URL(url, window.location.origin);
  } catch {
    return null;
  }
}

/** The path of one of this app's artifacts (`/api/v1/artifacts/{id}/content`), or null for anything else. */
export function artifactContentPath(url: string | null | undefined): string | null {
  if (!url) return null;
  const u = parse(url.trim());
  if (!u || u.origin !== window.location.origin || u.search || u.hash) return null;
  return ARTIFACT_CONTENT.test(u.pathname) ? u.pathname : null;
}

/** Whether a link leaves the app (another origin, or a scheme such as mailto:). */
export function isExternalHref(href: string): boolean {
  const u = parse(href);
  return !u || u.origin !== window.location.origin;
}

/** An inline image (`data:image/...`): drawing it makes no request. */
export const isImageDataUri = (url: unknown): url is string => typeof url === 'string' && IMAGE_DATA_URI.test(url.trim());

/** The host a URL points at, for telling the user what was blocked. */
export function hostOf(url: string): string {
  return parse(url)?.host || url;
}
