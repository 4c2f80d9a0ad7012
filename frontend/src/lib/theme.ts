import { useSyncExternalStore } from 'react';

type Theme = 'light' | 'dark';
const listeners = new Set<() => void>();
const KEY = 'wb.theme';

const current = (): Theme => (document.documentElement.classList.contains('dark') ? 'dark' : 'light');

const apply = (t: Theme) => {
  document.documentElement.classList.toggle('dark', t === 'dark');
  listeners.forEach((l) => l());
};

/** The user's choice: stays until changed, whatever the system does. */
export function setTheme(t: Theme) {
  localStorage.setItem(KEY, t);
  apply(t);
}

/**
 * With no choice saved, the theme is the system's (public/theme.js applies it before the app
 * draws): follow it when it changes (a phone going dark at night), without a reload.
 */
export function followSystemTheme(): () => void {
  if (typeof window.matchMedia !== 'function') return () => undefined;
  const dark = window.matchMedia('(prefers-color-scheme: dark)');
  const onChange = (e: MediaQueryListEvent) => {
    if (!localStorage.getItem(KEY)) apply(e.matches ? 'dark' : 'light');
  };
  dark.addEventListener('change', onChange);
  return () => dark.removeEventListener('change', onChange);
}

export function useTheme(): [Theme, (t: Theme) => void] {
  const theme = useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    current,
    () => 'light' as Theme,
  );
  return [theme, setTheme];
}
