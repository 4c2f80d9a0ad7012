import { client } from '@/client/client.gen';
import { getToken, useAuthStore } from '@/features/auth/auth-store';
import { filenameFromContentDisposition } from './content-disposition';

/** An API failure with the server's human sentence and machine code. */
export class ApiError extends Error {
  status: number;
  code: string | null;
  /** Seconds the server asked us to wait before asking again (its Retry-After header). */
  retryAfter: number | null;
  constructor(status: number, detail: string, code: string | null = null, retryAfter: number | null = null) {
    super(detail);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/** Retry-After in seconds (the HTTP-date form is not used by this server). */
export function retryAfterOf(res: Response): number | null {
  const value = Number(res.headers.get('Retry-After'));
  return res.headers.has('Retry-After') && Number.isFinite(value) && value >= 0 ? value : null;
}

export function detailOf(body: unknown, status: number): string {
  if (body && typeof body === 'object' && 'detail' in body) {
    const d = (body as { detail: unknown }).detail;
    if (typeof d === 'string') return d;
    if (Array.isArray(d)) return d.map((x) => (x && typeof x === 'object' && 'msg' in x ? String(x.msg) : String(x))).join('; ');
  }
  if (status === 0) return 'The server could not be reached. Check your connection.';
  return `Request failed (HTTP ${status}).`;
}

export function codeOf(body: unknown): string | null {
  if (body && typeof body === 'object' && 'code' in body) return String((body as { code: unknown }).code);
  return null;
}

export const SESSION_EXPIRED = 'Your session has expired. Please sign in again.';

/** 401 codes whose sentence tells the user more than "expired": shown on the login page as the server wrote it. */
const SAID_ON_LOGIN = new Set(['account_disabled', 'token_expired']);

/**
 * Back to the login page after a 401, saying why. `usedToken` is the token the refused request
 * carried: a request still in flight with a login that was already replaced (a password change
 * stores its new login at once) must not sign the user out.
 */
export function handleUnauthorized(usedToken: string | null, body: unknown = null) {
  const { auth, signOut } = useAuthStore.getState();
  if (!auth || (usedToken !== null && usedToken !== auth.token)) return;
  const code = codeOf(body);
  signOut(code && SAID_ON_LOGIN.has(code) ? detailOf(body, 401) : SESSION_EXPIRED);
}

const bearerOf = (headers: Headers) => headers.get('Authorization')?.replace(/^Bearer /, '') ?? null;

client.setConfig({ baseUrl: '', throwOnError: true });
client.interceptors.request.use((request) => {
  const token = getToken();
  if (token && !request.headers.has('Authorization')) request.headers.set('Authorization', `Bearer ${token}`);
  return request;
});
client.interceptors.error.use((error, response, request) => {
  const status = response?.status ?? 0;
  // The body is read by now, so the login page can say why (a disabled account, a changed password).
  if (status === 401 && !request.url.endsWith('/auth/login')) handleUnauthorized(bearerOf(request.headers), error);
  if (status === 403 && codeOf(error) === 'password_change_required') useAuthStore.getState().requirePasswordChange();
  return new ApiError(status, detailOf(error, status), codeOf(error));
});

export { client };

/** Fetch with the Bearer header, for things the generated client does not cover (blobs, streams). */
export async function authFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = getToken();
  if (token) headers.set('Authorization', `Bearer ${token}`);
  let res: Response;
  try {
    res = await fetch(url, { ...init, headers });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, detailOf(null, 0));
  }
  if (!res.ok) {
    let body: unknown = null;
    try {
      body = await res.json();
    } catch {
      /* not JSON */
    }
    if (res.status === 401) handleUnauthorized(token, body);
    throw new ApiError(res.status, detailOf(body, res.status), codeOf(body), retryAfterOf(res));
  }
  return res;
}

/** Hands a blob to the browser as a download named `filename`. */
export function saveBlob(blob: Blob, filename: string) {
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 1000);
}

export async function downloadUrl(url: string, filename: string) {
  const res = await authFetch(url);
  saveBlob(await res.blob(), filename);
}

/**
 * Downloads an attachment under the name the server gives in `Content-Disposition`
 * (`fallback` when it gives none), and returns that name.
 */
export async function downloadAttachment(url: string, fallback: string): Promise<string> {
  const res = await authFetch(url);
  const filename = filenameFromContentDisposition(res.headers.get('Content-Disposition')) ?? fallback;
  saveBlob(await res.blob(), filename);
  return filename;
}
