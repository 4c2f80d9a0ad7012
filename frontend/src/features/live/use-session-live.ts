import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import type { LiveEvent, SessionOut } from '@/client';
import { commentKeys } from '@/features/comments/queries';
import { notificationKeys } from '@/features/notifications/queries';
import { sessionKeys } from '@/features/sessions/queries';
import { followSession } from './live-stream';
import { usePresenceStore } from './presence-store';

/**
 * The one live stream of an open session: a question anyone asks (`onRunCreated`, which follows
 * its run), a new title, comments and who is here reach this tab as they happen, not on a timer.
 * Opened when the session shows, closed when it goes.
 */
export function useSessionLive(sessionId: string, onRunCreated: (runId: string) => void) {
  const qc = useQueryClient();
  const created = useRef(onRunCreated);
  created.current = onRunCreated;
  useEffect(() => {
    const ac = new AbortController();
    const presence = usePresenceStore.getState();
    const onEvent = (e: LiveEvent) => {
      switch (e.event) {
        case 'run.created':
          created.current(e.run_id);
          break;
        case 'presence':
          presence.set(sessionId, e.users);
          break;
        case 'session.updated':
          qc.setQueryData<SessionOut>(sessionKeys.detail(sessionId), (s) => (s ? { ...s, title: e.title } : s));
          void qc.invalidateQueries({ queryKey: sessionKeys.all, refetchType: 'active', exact: false });
          break;
        case 'comment.created':
          // The bell hears of it on its own stream (notifications/live.ts).
          void qc.invalidateQueries({ queryKey: commentKeys.run(e.run_id) });
          break;
        case 'comment.deleted':
          // A deleted comment's notifications go with it.
          void qc.invalidateQueries({ queryKey: commentKeys.run(e.run_id) });
          void qc.invalidateQueries({ queryKey: notificationKeys.all });
          break;
      }
    };
    void followSession(sessionId, onEvent, ac.signal, (open) => {
      if (!open) usePresenceStore.getState().clear(sessionId);
    });
    return () => {
      ac.abort();
      usePresenceStore.getState().clear(sessionId);
    };
  }, [qc, sessionId]);
}
