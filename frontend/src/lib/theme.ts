import { useSyncExternalStore } from 'react';

/** The colours the page is drawn in. */
export type Theme = 'light' | 'dark';
/** What the user picked: a theme of their own, or the system's, followed as it changes. */
export type ThemeChoice = 'system' | Theme;

const listeners = new Set<() => void>();
// Holds "light" or "dark"; no value is the system's theme (public/theme.js reads the same key).
const KEY = 'wb.theme';
const DARK = '(prefers-color-scheme: dark)';

const current = (): Theme => (document.documentElement.classList.contains('dark') ? 'dark' : 'light');

const systemTheme = (): Theme => (typeof window.matchMedia === 'function' && window.matchMedia(DARK).matches ? 'dark' : 'light');

/** The saved choice; anything but "light" or "dark" (nothing, or an older app's value) is the system's. */
function readChoice(): ThemeChoice {
  const saved = localStorage.getItem(KEY);
  return saved === 'light' || saved === 'dark' ? saved : 'system';
}

const apply = (t: Theme) => {
  document.documentElement.classList.toggle('dark', t === 'dark');
  listeners.forEach((l) => l());
};

/** Saves the user's choice and draws it: a theme stays until changed, whatever the system does. */
export function setThemeChoice(choice: ThemeChoice) {
  if (choice === 'system') localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, choice);
  apply(choice === 'system' ? systemTheme() : choice);
}

/**
 * While the choice is the system's (public/theme.js applies it before the app draws): follow it
 * when it changes (a phone going dark at night), without a reload.
 */
export function followSystemTheme(): () => void {
  if (typeof window.matchMedia !== 'function') return () => undefined;
  const dark = window.matchMedia(DARK);
  const onChange = (e: MediaQueryListEvent) => {
    if (readChoice() === 'system') apply(e.matches ? 'dark' : 'light');
  };
  dark.addEventListener('change', onChange);
  return () => dark.removeEventListener('change', onChange);
}

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => {
    listeners.delete(l);
  };
};

/** The theme the page is drawn in now, whichever choice made it. */
export function useTheme(): Theme {
  return useSyncExternalStore(subscribe, current, () => 'light' as Theme);
}

/** The user's choice (the system's by default) and a way to change it. */
export function useThemeChoice(): [ThemeChoice, (choice: ThemeChoice) => void] {
  const choice = useSyncExternalStore(subscribe, readChoice, () => 'system' as ThemeChoice);
  return [choice, setThemeChoice];
}
