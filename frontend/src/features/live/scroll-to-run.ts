import { useEffect, useRef } from 'react';
import { useLocation } from 'react-router';

/**
 * A link to a run (`?run=<id>`, from search or a notification; `#comment-<id>` for a comment)
 * scrolls the session to it once its history has loaded, and marks it for a moment.
 */
export function useScrollToRun(loaded: boolean) {
  const { search, hash } = useLocation();
  const done = useRef<string | null>(null);
  useEffect(() => {
    const runId = new URLSearchParams(search).get('run');
    const key = `${search}${hash}`;
    if (!loaded || !runId || done.current === key) return;
    let tries = 0;
    // The thread under an answer loads after the run: look again for a little while.
    const t = setInterval(() => {
      const target = (hash && document.getElementById(hash.slice(1))) || document.getElementById(`run-${runId}`);
      if (target || ++tries > 20) clearInterval(t);
      if (!target) return;
      done.current = key;
      target.scrollIntoView({ block: 'start' });
      target.setAttribute('data-highlight', 'true');
      setTimeout(() => target.removeAttribute('data-highlight'), 2000);
    }, 100);
    return () => clearInterval(t);
  }, [loaded, search, hash]);
}
