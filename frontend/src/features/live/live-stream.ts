import type { LiveEvent } from '@/client';
import { authFetch, ApiError } from '@/lib/api';
import { readSse, RECONNECT_MAX_MS, sleep } from '@/lib/sse';

/** A live message as parsed from the wire, or null for one this client does not know. */
export function toLiveEvent(event: string, data: string): LiveEvent | null {
  const known = ['run.created', 'presence', 'session.updated', 'comment.created', 'comment.deleted'];
  if (!known.includes(event)) return null;
  try {
    return { ...(JSON.parse(data) as object), event } as LiveEvent;
  } catch {
    return null;
  }
}

/**
 * Follows one session's live stream (GET /sessions/{id}/live, fetch-based SSE with the bearer
 * token) until `signal` aborts: each event goes to `onEvent`; a dropped stream is opened again
 * (after the server's Retry-After when it said it was full), and `onOpen(false)` says while it is down.
 * A 4xx other than 429 ends it: the session is gone or no longer this user's.
 */
export async function followSession(
  sessionId: string,
  onEvent: (e: LiveEvent) => void,
  signal: AbortSignal,
  onOpen: (open: boolean) => void = () => undefined,
): Promise<void> {
  let delay = 500;
  while (!signal.aborted) {
    try {
      const res = await authFetch(`/api/v1/sessions/${sessionId}/live`, { headers: { Accept: 'text/event-stream' }, signal });
      onOpen(true);
      delay = 500;
      if (res.body)
        await readSse(res.body, (m) => {
          const e = toLiveEvent(m.event, m.data);
          if (e) onEvent(e);
        });
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 429) return;
      if (e instanceof ApiError && e.retryAfter !== null) delay = Math.max(delay, e.retryAfter * 1000);
    }
    if (signal.aborted) return;
    onOpen(false);
    await sleep(delay, signal);
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  }
}
