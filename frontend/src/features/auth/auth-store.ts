import { create } from 'zustand';
import type { UserOut } from '@/client';

const KEY = 'wb.auth';

type Stored = { token: string; user: UserOut; expiresAt: string };

function load(): Stored | null {
  try {
    const raw = localStorage.getItem(KEY);
    if (!raw) return null;
    const s = JSON.parse(raw) as Stored;
    if (s.expiresAt && new Date(s.expiresAt).getTime() < Date.now()) return null;
    return s;
  } catch {
    return null;
  }
}

type AuthState = {
  auth: Stored | null;
  /** Why the user was sent back to the login page, shown there once. */
  notice: string | null;
  signIn: (s: Stored) => void;
  signOut: (notice?: string) => void;
};

export const useAuthStore = create<AuthState>((set) => ({
  auth: load(),
  notice: null,
  signIn: (s) => {
    localStorage.setItem(KEY, JSON.stringify(s));
    set({ auth: s, notice: null });
  },
  signOut: (notice) => {
    localStorage.removeItem(KEY);
    set({ auth: null, notice: notice ?? null });
  },
}));

export const getToken = () => useAuthStore.getState().auth?.token ?? null;
