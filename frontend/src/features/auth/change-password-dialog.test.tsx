import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { changePassword, type LoginResponse } from '@/client';
import { ApiError } from '@/lib/api';
import { useAuthStore } from './auth-store';
import { ChangePasswordDialog } from './change-password-dialog';

vi.mock('@/client', async (original) => ({
  ...(await original<typeof import('@/client')>()),
  changePassword: vi.fn(),
}));
const post = vi.mocked(changePassword);

const user = { id: 'u1', email: 'ana@example.com', is_admin: false, disabled: false, created_at: '2026-01-01T00:00:00Z' };

function show() {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={qc}>
      <ChangePasswordDialog open onOpenChange={() => undefined} />
    </QueryClientProvider>,
  );
}

const fill = (current: string, next: string, confirm: string) => {
  fireEvent.change(screen.getByLabelText('Current password'), { target: { value: current } });
  fireEvent.change(screen.getByLabelText('New password'), { target: { value: next } });
  fireEvent.change(screen.getByLabelText('Confirm new password'), { target: { value: confirm } });
  fireEvent.click(screen.getByRole('button', { name: 'Change password' }));
};

beforeEach(() => {
  post.mockReset();
  useAuthStore.getState().signIn({ token: 'old-token', user, expiresAt: '2999-01-01T00:00:00Z' });
});

afterEach(() => localStorage.clear());

describe('ChangePasswordDialog', () => {
  it('checks the new password before sending: at least 8 characters, confirmed', () => {
    show();
    fill('old-password', 'short', 'short');
    expect(screen.getByRole('alert').textContent).toBe('A password needs at least 8 characters.');
    fill('old-password', 'long-enough-1', 'long-enough-2');
    expect(screen.getByRole('alert').textContent).toBe('The new password and its confirmation differ.');
    expect(post).not.toHaveBeenCalled();
  });

  it("shows the server's sentence when the current password is wrong, and keeps the login", async () => {
    post.mockRejectedValue(new ApiError(400, 'The current password is not right.', 'wrong_password'));
    show();
    fill('not-it', 'new-password-1', 'new-password-1');
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('The current password is not right.'));
    expect(post).toHaveBeenCalledWith({ body: { current_password: 'not-it', new_password: 'new-password-1' } });
    expect(useAuthStore.getState().auth?.token).toBe('old-token');
  });

  it('stores the new login at once and says the other logins are signed out', async () => {
    const login: LoginResponse = { access_token: 'new-token', token_type: 'bearer', expires_at: '2999-01-02T00:00:00Z', user };
    post.mockResolvedValue({ data: login } as never);
    show();
    fill('old-password', 'new-password-1', 'new-password-1');
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Password changed; your other logins are signed out.'));
    expect(useAuthStore.getState().auth?.token).toBe('new-token');
    expect(JSON.parse(localStorage.getItem('wb.auth')!).token).toBe('new-token');
  });
});
