import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { me } from '@/client';
import { useAuthStore } from '@/features/auth/auth-store';
import { ApiError, authFetch, SESSION_EXPIRED } from './api';

const user = { id: 'u1', email: 'ana@example.com', is_admin: false, disabled: false, created_at: '' };
const signedIn = (token = 'tok-1') => useAuthStore.getState().signIn({ token, user, expiresAt: '2999-01-01T00:00:00Z' });
const refused = (code: string, detail: string) =>
  new Response(JSON.stringify({ detail, code }), { status: 401, headers: { 'Content-Type': 'application/json' } });

// The generated client builds a Request, which needs an absolute URL outside a browser.
const ORIGIN = 'http://localhost';
const fetchMock = vi.fn<typeof fetch>();

beforeEach(() => {
  vi.stubGlobal('fetch', fetchMock);
  signedIn();
});

afterEach(() => {
  fetchMock.mockReset();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('a 401 sends the user back to the login page, saying why', () => {
  it("shows the server's sentence for a disabled account", async () => {
    const detail = 'This account is disabled; ask an administrator to enable it.';
    fetchMock.mockResolvedValue(refused('account_disabled', detail));
    await expect(me({ baseUrl: ORIGIN })).rejects.toBeInstanceOf(ApiError);
    expect(useAuthStore.getState().auth).toBeNull();
    expect(useAuthStore.getState().notice).toBe(detail);
  });

  it("shows the server's sentence when the password was changed elsewhere (streams and downloads too)", async () => {
    const detail = 'The password was changed since this login; log in again.';
    fetchMock.mockResolvedValue(refused('token_expired', detail));
    await expect(authFetch('/api/v1/runs/r/events')).rejects.toMatchObject({ status: 401, code: 'token_expired' });
    expect(useAuthStore.getState().notice).toBe(detail);
  });

  it('says the session expired for a token that is not valid', async () => {
    fetchMock.mockResolvedValue(refused('invalid_token', 'This token is not valid.'));
    await expect(me({ baseUrl: ORIGIN })).rejects.toBeInstanceOf(ApiError);
    expect(useAuthStore.getState().notice).toBe(SESSION_EXPIRED);
  });

  it('keeps the user in when the refused request carried a login already replaced (a password change)', async () => {
    let respond!: (r: Response) => void;
    fetchMock.mockReturnValue(new Promise((r) => (respond = r)));
    const pending = me({ baseUrl: ORIGIN });
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalled());
    signedIn('tok-2');
    respond(refused('token_expired', 'The password was changed since this login; log in again.'));
    await expect(pending).rejects.toBeInstanceOf(ApiError);
    expect(useAuthStore.getState().auth?.token).toBe('tok-2');
    expect(useAuthStore.getState().notice).toBeNull();
  });
});
