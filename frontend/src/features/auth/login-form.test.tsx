import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { login as loginRequest } from '@/client';
import { ApiError } from '@/lib/api';
import { useAuthStore } from './auth-store';
import { LoginForm } from './login-form';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  login: vi.fn(),
}));
const login = vi.mocked(loginRequest);

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

beforeEach(() => login.mockReset());
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
});
