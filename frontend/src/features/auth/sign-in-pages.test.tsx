import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { acceptInvite, changePassword, oidcExchange, type UserOut } from '@/client';
import { ApiError } from '@/lib/api';
import { useAuthStore } from './auth-store';
import { ForcedPasswordChange } from './forced-password-change';
import { parseSsoFragment } from './fragment';
import { InviteAccept } from './invite-accept';
import { SsoLanding } from './sso-landing';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  acceptInvite: vi.fn(),
  changePassword: vi.fn(),
  oidcExchange: vi.fn(),
}));
const accept = vi.mocked(acceptInvite);
const change = vi.mocked(changePassword);
const exchange = vi.mocked(oidcExchange);

const carol: UserOut = { id: 'c', email: 'carol@example.com', is_admin: false, disabled: false, created_at: '2026-11-29T08:00:00Z' };
const login = (user: Partial<UserOut> = {}) => ({
  data: { access_token: 'tok', token_type: 'bearer', expires_at: '2099-01-01T00:00:00Z', user: { ...carol, ...user }, project_id: 'p1' },
});

function at(path: string, hash: string, page: React.ReactNode) {
  window.history.replaceState(null, '', `${path}${hash}`);
  render(
    <QueryClientProvider client={new QueryClient()}>
      <MemoryRouter initialEntries={[path]}>
        <Routes>
          <Route path={path} element={page} />
          <Route path="/" element={<p>Home</p>} />
          <Route path="/projects/:id" element={<p>Project page</p>} />
          <Route path="/login" element={<p>Login page</p>} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

beforeEach(() => {
  accept.mockReset();
  change.mockReset();
  exchange.mockReset();
});
afterEach(() => useAuthStore.setState({ auth: null, notice: null }));

describe('the invite page', () => {
  it('sets the password, signs in and lands in the project; the token leaves the address bar', async () => {
    accept.mockResolvedValue(login() as never);
    at('/invite', '#the-invite-token', <InviteAccept />);
    expect(window.location.hash).toBe('');
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'short' } });
    fireEvent.change(screen.getByLabelText('Confirm password'), { target: { value: 'short' } });
    fireEvent.click(screen.getByRole('button', { name: 'Set password and sign in' }));
    expect(screen.getByRole('alert').textContent).toBe('A password needs at least 8 characters.');
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'carols-own-pass' } });
    fireEvent.change(screen.getByLabelText('Confirm password'), { target: { value: 'carols-own-pass' } });
    fireEvent.click(screen.getByRole('button', { name: 'Set password and sign in' }));
    await screen.findByText('Project page');
    expect(accept).toHaveBeenCalledWith({ path: { token: 'the-invite-token' }, body: { password: 'carols-own-pass' } });
    expect(useAuthStore.getState().auth?.user.email).toBe('carol@example.com');
  });

  it("says the server's sentence for a used link", async () => {
    const gone = 'This invite does not work: it was used already, revoked or has expired. Ask whoever invited you for a new one.';
    accept.mockRejectedValue(new ApiError(404, gone, 'invite_not_found'));
    at('/invite', '#used-token', <InviteAccept />);
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'carols-own-pass' } });
    fireEvent.change(screen.getByLabelText('Confirm password'), { target: { value: 'carols-own-pass' } });
    fireEvent.click(screen.getByRole('button', { name: 'Set password and sign in' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe(gone));
  });
});

describe('single sign-on landing', () => {
  it('reads code= and error= fragments', () => {
    expect(parseSsoFragment('code=abc')).toEqual({ code: 'abc' });
    expect(parseSsoFragment('error=The%20sign-in%20was%20refused.')).toEqual({ error: 'The sign-in was refused.' });
    expect(parseSsoFragment('')).toBeNull();
  });

  it('trades the one-time code for a login', async () => {
    exchange.mockResolvedValue(login() as never);
    at('/sso', '#code=one-time', <SsoLanding />);
    await screen.findByText('Home');
    expect(exchange).toHaveBeenCalledWith({ body: { code: 'one-time' } });
    expect(window.location.hash).toBe('');
  });

  it("shows the provider's refusal with a way back", async () => {
    at('/sso', '#error=The%20sign-in%20was%20refused%3A%20the%20ID%20token%20has%20expired.', <SsoLanding />);
    expect(screen.getByTestId('sso-error').textContent).toBe('The sign-in was refused: the ID token has expired.');
    expect(screen.getByRole('link', { name: 'Back to sign-in' })).toBeTruthy();
    expect(exchange).not.toHaveBeenCalled();
  });
});

describe('a generated password', () => {
  it('must be changed before anything else', async () => {
    useAuthStore.getState().signIn({ token: 't', user: { ...carol, must_change_password: true }, expiresAt: '2099-01-01T00:00:00Z' });
    change.mockResolvedValue(login({ must_change_password: false }) as never);
    at('/', '', <ForcedPasswordChange />);
    expect(screen.getByTestId('must-change-password').textContent).toContain('An administrator gave carol@example.com a password.');
    fireEvent.change(screen.getByLabelText('Password you were given'), { target: { value: 'Gen3rated' } });
    fireEvent.change(screen.getByLabelText('New password'), { target: { value: 'carols-own-pass' } });
    fireEvent.change(screen.getByLabelText('Confirm new password'), { target: { value: 'carols-own-pass' } });
    fireEvent.click(screen.getByRole('button', { name: 'Set my password' }));
    await waitFor(() => expect(useAuthStore.getState().auth?.user.must_change_password).toBe(false));
    expect(change).toHaveBeenCalledWith({ body: { current_password: 'Gen3rated', new_password: 'carols-own-pass' } });
  });

  it('is asked for again when the server refuses a call for it', () => {
    useAuthStore.getState().signIn({ token: 't', user: carol, expiresAt: '2099-01-01T00:00:00Z' });
    useAuthStore.getState().requirePasswordChange();
    expect(useAuthStore.getState().auth?.user.must_change_password).toBe(true);
  });
});
