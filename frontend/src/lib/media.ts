import { useSyncExternalStore } from 'react';

/** Whether a media query matches now, following its changes (false where the browser has no matchMedia). */
export function useMediaQuery(query: string): boolean {
  return useSyncExternalStore(
    (onChange) => {
      if (typeof window.matchMedia !== 'function') return () => undefined;
      const list = window.matchMedia(query);
      list.addEventListener('change', onChange);
      return () => list.removeEventListener('change', onChange);
    },
    () => typeof window.matchMedia === 'function' && window.matchMedia(query).matches,
    () => false,
  );
}

/** A phone: a narrow screen, or a touch screen with no fine pointer (no Enter key to speak of). */
export const PHONE = '(max-width: 639px), (pointer: coarse)';
