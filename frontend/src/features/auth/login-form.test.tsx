import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { authConfig, login as loginRequest } from '@/client';
import { ApiError } from '@/lib/api';
import { useAuthStore } from './auth-store';
import { LoginForm } from './login-form';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  login: vi.fn(),
  authConfig: vi.fn(),
}));
const login = vi.mocked(loginRequest);
const config = vi.mocked(authConfig);

function show() {
  render(
    <QueryClientProvider client={new QueryClient()}>
      <LoginForm />
    </QueryClientProvider>,
  );
}

const signIn = () => {
  fireEvent.change(screen.getByLabelText('Email'), { target: { value: 'ana@example.com' } });
  fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'secret-password' } });
  fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
};

beforeEach(() => {
  login.mockReset();
  config.mockResolvedValue({ data: { password_login: true, oidc: null } } as never);
});
afterEach(() => useAuthStore.setState({ auth: null, notice: null }));

describe('LoginForm', () => {
  it('says why the user was sent back here', () => {
    useAuthStore.getState().signOut('This account is disabled; ask an administrator to enable it.');
    show();
    expect(screen.getByRole('status').textContent).toBe('This account is disabled; ask an administrator to enable it.');
  });

  it("gives a disabled account the server's sentence, any other 401 a wrong email or password", async () => {
    login.mockRejectedValueOnce(new ApiError(401, 'This account is disabled; ask an administrator to enable it.', 'account_disabled'));
    show();
    signIn();
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('This account is disabled; ask an administrator to enable it.'));
    login.mockRejectedValueOnce(new ApiError(401, 'Wrong email or password.', 'invalid_credentials'));
    signIn();
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('Wrong email or password.'));
  });

  it('offers single sign-on when the server has it, beside the form', async () => {
    config.mockResolvedValue({ data: { password_login: true, oidc: { name: 'Acme SSO' } } } as never);
    show();
    const button = await screen.findByRole('link', { name: 'Sign in with Acme SSO' });
    expect(button.getAttribute('href')).toBe('/api/v1/auth/oidc/login');
    expect(screen.getByLabelText('Password')).toBeTruthy();
  });

  it('hides the password form when password sign-in is off', async () => {
    config.mockResolvedValue({ data: { password_login: false, oidc: { name: 'Acme SSO' } } } as never);
    show();
    await screen.findByRole('link', { name: 'Sign in with Acme SSO' });
    expect(screen.queryByLabelText('Password')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Sign in' })).toBeNull();
  });
});
