import { afterEach, describe, expect, it } from 'vitest';
import { fakeMatchMedia } from '@/test/media';
import { followSystemTheme, setTheme } from './theme';

const DARK = '(prefers-color-scheme: dark)';
const isDark = () => document.documentElement.classList.contains('dark');

describe('the system theme', () => {
  afterEach(() => {
    localStorage.clear();
    document.documentElement.classList.remove('dark');
  });

  it('is followed without a reload while the user has chosen none, and no longer once they have', () => {
    const media = fakeMatchMedia(() => false);
    const stop = followSystemTheme();
    media.change(DARK, true);
    expect(isDark()).toBe(true);
    media.change(DARK, false);
    expect(isDark()).toBe(false);

    setTheme('light');
    media.change(DARK, true);
    expect(isDark()).toBe(false);
    stop();
    media.restore();
  });
});
