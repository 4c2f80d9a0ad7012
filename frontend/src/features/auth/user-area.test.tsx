import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryRouter } from 'react-router';
import type { UserOut } from '@/client';
import { followSystemTheme } from '@/lib/theme';
import { fakeMatchMedia } from '@/test/media';
import { useAuthStore } from './auth-store';
import { authKeys } from './queries';
import { UserArea } from './user-area';

const user = (over: Partial<UserOut> = {}): UserOut => ({
  id: 'u1',
  email: 'ana@example.com',
  is_admin: false,
  disabled: false,
  created_at: '2026-01-01T00:00:00Z',
  ...over,
});

function showArea(me: UserOut) {
  const qc = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  qc.setQueryData(authKeys.me, me);
  render(
    <QueryClientProvider client={qc}>
      <MemoryRouter>
        <UserArea />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

function show(me: UserOut) {
  showArea(me);
  // Radix opens its menu on the trigger's keyboard (and pointer) events, not on click.
  fireEvent.keyDown(screen.getByRole('button', { name: 'Account: ana@example.com' }), { key: 'Enter' });
  return screen.getByRole('menu');
}

beforeEach(() => {
  vi.stubGlobal(
    'ResizeObserver',
    class {
      observe() {}
      unobserve() {}
      disconnect() {}
    },
  );
  // The stored login says "user"; the server's answer (above) is what counts.
  useAuthStore.getState().signIn({ token: 't', user: user(), expiresAt: '2999-01-01T00:00:00Z' });
});

afterEach(() => {
  vi.unstubAllGlobals();
  localStorage.clear();
  document.documentElement.classList.remove('dark');
});

describe('UserArea', () => {
  it('offers everyone a password change, and no users screen to a non-administrator', () => {
    show(user());
    expect(screen.getAllByRole('menuitem').map((i) => i.textContent?.trim())).toEqual(['Change password…']);
  });

  it('links an administrator to the users screen', () => {
    show(user({ is_admin: true }));
    expect(screen.getAllByRole('menuitem').map((i) => i.textContent?.trim())).toEqual(['Change password…', 'Users']);
    expect(screen.getByRole('menuitem', { name: 'Users' }).getAttribute('href')).toBe('/admin/users');
  });

  it('opens the password dialog', () => {
    show(user());
    fireEvent.click(screen.getByRole('menuitem', { name: 'Change password…' }));
    expect(screen.getByRole('dialog', { name: 'Change password' })).toBeTruthy();
  });

  it('offers System, Light and Dark, shows the one chosen, and goes back to following the system', () => {
    const media = fakeMatchMedia(() => false);
    const stop = followSystemTheme();
    const isDark = () => document.documentElement.classList.contains('dark');
    showArea(user());
    const choose = (from: string, to: string) => {
      fireEvent.keyDown(screen.getByRole('button', { name: `Theme: ${from}` }), { key: 'Enter' });
      const menu = screen.getByRole('menu', { name: `Theme: ${from}` });
      const items = screen.getAllByRole('menuitemradio');
      expect(items.map((i) => i.textContent?.trim())).toEqual(['System', 'Light', 'Dark']);
      expect(items.filter((i) => i.getAttribute('aria-checked') === 'true').map((i) => i.textContent?.trim())).toEqual([from]);
      fireEvent.click(screen.getByRole('menuitemradio', { name: to }));
      expect(menu.isConnected).toBe(false);
    };

    choose('System', 'Dark');
    expect(isDark()).toBe(true);
    media.change('(prefers-color-scheme: dark)', false);
    expect(isDark()).toBe(true);

    choose('Dark', 'System');
    expect(isDark()).toBe(false);
    act(() => media.change('(prefers-color-scheme: dark)', true));
    expect(isDark()).toBe(true);
    expect(screen.getByRole('button', { name: 'Theme: System' })).toBeTruthy();
    stop();
    media.restore();
  });
});
