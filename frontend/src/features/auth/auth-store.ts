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
  /** The server refused a call until the user chooses their own password (403 password_change_required). */
  requirePasswordChange: () => void;
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
  requirePasswordChange: () =>
    set((state) => {
      if (!state.auth || state.auth.user.must_change_password) return state;
      const auth = { ...state.auth, user: { ...state.auth.user, must_change_password: true } };
      localStorage.setItem(KEY, JSON.stringify(auth));
      return { auth };
    }),
}));

export const getToken = () => useAuthStore.getState().auth?.token ?? null;
