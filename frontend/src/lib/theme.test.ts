import { readFileSync } from 'node:fs';
import path from 'node:path';
import { act, renderHook } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeMatchMedia } from '@/test/media';
import { followSystemTheme, setThemeChoice, useThemeChoice } from './theme';

const DARK = '(prefers-color-scheme: dark)';
const isDark = () => document.documentElement.classList.contains('dark');

// What a reload runs before the app draws: public/theme.js, on a page drawn light.
const THEME_JS = readFileSync(path.resolve(import.meta.dirname, '../../public/theme.js'), 'utf8');
const reload = () => {
  document.documentElement.classList.remove('dark');
  new Function(THEME_JS)();
};

/** A system in light (or dark), followed as the app does from its start. */
function system(dark: boolean) {
  const media = fakeMatchMedia((q) => q === DARK && dark);
  const stop = followSystemTheme();
  return {
    change: (now: boolean) => media.change(DARK, now),
    done: () => {
      stop();
      media.restore();
    },
  };
}

let cleanup: (() => void) | undefined;
const start = (dark: boolean) => {
  const s = system(dark);
  cleanup = s.done;
  return s;
};

afterEach(() => {
  cleanup?.();
  cleanup = undefined;
  localStorage.clear();
  document.documentElement.classList.remove('dark');
});

describe('the theme choice', () => {
  it("is the system's for a new user, drawn before the app and followed without a reload", () => {
    const os = start(true);
    reload();
    expect(isDark()).toBe(true);
    const { result } = renderHook(() => useThemeChoice());
    expect(result.current[0]).toBe('system');

    act(() => os.change(false));
    expect(isDark()).toBe(false);
    act(() => os.change(true));
    expect(isDark()).toBe(true);
    expect(result.current[0]).toBe('system');
  });

  it('dark or light is kept across a reload, whatever the system does', () => {
    const os = start(false);
    const { result } = renderHook(() => useThemeChoice());
    act(() => result.current[1]('dark'));
    expect(isDark()).toBe(true);
    expect(result.current[0]).toBe('dark');
    reload();
    expect(isDark()).toBe(true);
    os.change(false);
    expect(isDark()).toBe(true);

    act(() => result.current[1]('light'));
    os.change(true);
    expect(isDark()).toBe(false);
    reload();
    expect(isDark()).toBe(false);
    expect(result.current[0]).toBe('light');
  });

  it("goes back to the system's: drawn at once, followed again, and kept across a reload", () => {
    const os = start(true);
    setThemeChoice('light');
    expect(isDark()).toBe(false);

    const { result } = renderHook(() => useThemeChoice());
    act(() => result.current[1]('system'));
    expect(result.current[0]).toBe('system');
    expect(isDark()).toBe(true);
    os.change(false);
    expect(isDark()).toBe(false);
    reload();
    expect(isDark()).toBe(false);
    os.change(true);
    reload();
    expect(isDark()).toBe(true);
  });

  it("takes a value it does not know (an older app's) as the system's, in the app and before it", () => {
    start(true);
    localStorage.setItem('wb.theme', 'sepia');
    reload();
    expect(isDark()).toBe(true);
    const { result } = renderHook(() => useThemeChoice());
    expect(result.current[0]).toBe('system');
  });
});
