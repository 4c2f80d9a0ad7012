import { client } from '@/client/client.gen';
import { getToken, useAuthStore } from '@/features/auth/auth-store';

/** An API failure with the server's human sentence and machine code. */
export class ApiError extends Error {
  status: number;
  code: string | null;
  constructor(status: number, detail: string, code: string | null = null) {
    super(detail);
    this.status = status;
    this.code = code;
  }
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

export function handleUnauthorized() {
  if (useAuthStore.getState().auth) useAuthStore.getState().signOut('Your session has expired. Please sign in again.');
}

client.setConfig({ baseUrl: '', throwOnError: true });
client.interceptors.request.use((request) => {
  const token = getToken();
  if (token && !request.headers.has('Authorization')) request.headers.set('Authorization', `Bearer ${token}`);
  return request;
});
client.interceptors.response.use((response, request) => {
  if (response.status === 401 && !request.url.endsWith('/auth/login')) handleUnauthorized();
  return response;
});
client.interceptors.error.use((error, response) => {
  const status = response?.status ?? 0;
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
    if (res.status === 401) handleUnauthorized();
    let body: unknown = null;
    try {
      body = await res.json();
    } catch {
      /* not JSON */
    }
    throw new ApiError(res.status, detailOf(body, res.status), codeOf(body));
  }
  return res;
}

export async function downloadUrl(url: string, filename: string) {
  const res = await authFetch(url);
  const blob = await res.blob();
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 1000);
}
