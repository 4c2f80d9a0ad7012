import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { InboxEvent, NotificationPage } from '@/client';
import { authFetch, ApiError } from '@/lib/api';
import { readSse, RECONNECT_MAX_MS, sleep } from '@/lib/sse';
import { notificationKeys, setNotificationsLive } from './queries';

/** A notification message as parsed from the wire, or null for one this client does not know. */
export function toInboxEvent(event: string, data: string): InboxEvent | null {
  if (event !== 'notification.created' && event !== 'notification.read') return null;
  try {
    return { ...(JSON.parse(data) as object), event } as InboxEvent;
  } catch {
    return null;
  }
}

/**
 * Follows the user's notification stream (GET /notifications/live) until `signal` aborts: each
 * event goes to `onEvent`; a dropped stream is opened again with Last-Event-ID = the last event's
 * id (after the server's Retry-After when it was full), and `onOpen(false)` says while it is down.
 * A 4xx other than 429 ends it (signed out).
 */
export async function followNotifications(
  onEvent: (e: InboxEvent) => void,
  signal: AbortSignal,
  onOpen: (open: boolean) => void = () => undefined,
): Promise<void> {
  let delay = 500;
  let lastId: string | null = null;
  while (!signal.aborted) {
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream' };
      if (lastId) headers['Last-Event-ID'] = lastId;
      const res = await authFetch('/api/v1/notifications/live', { headers, signal });
      onOpen(true);
      delay = 500;
      if (res.body)
        await readSse(res.body, (m) => {
          if (m.id) lastId = m.id;
          const e = toInboxEvent(m.event, m.data);
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

/** What an event does to the bell's page of notifications (count and list at once). */
export function applyInboxEvent(page: NotificationPage | undefined, e: InboxEvent): NotificationPage | undefined {
  if (!page) return page;
  if (e.event === 'notification.created') {
    const n = e.notification;
    if (page.items.some((i) => i.id === n.id)) return page;
    return { items: [n, ...page.items], total: page.total + 1, unread: page.unread + (n.read_at ? 0 : 1) };
  }
  const now = new Date().toISOString();
  const read = (id: string) => e.ids === null || e.ids.includes(id);
  return { ...page, unread: e.unread, items: page.items.map((i) => (!i.read_at && read(i.id) ? { ...i, read_at: now } : i)) };
}

// One stream per tab, however many components ask for it.
let holders = 0;
let stop: (() => void) | null = null;

function start(qc: QueryClient) {
  const ac = new AbortController();
  let wasOpen = true;
  void followNotifications(
    (e) => qc.setQueryData<NotificationPage>(notificationKeys.all, (page) => applyInboxEvent(page, e)),
    ac.signal,
    (open) => {
      setNotificationsLive(open);
      // Back after a drop (or opened at last): what came meanwhile, once.
      if (open && !wasOpen) void qc.invalidateQueries({ queryKey: notificationKeys.all });
      if (!open) void qc.invalidateQueries({ queryKey: notificationKeys.all });
      wasOpen = open;
    },
  );
  return () => {
    ac.abort();
    setNotificationsLive(false);
  };
}

/** Keeps this tab's one notification stream open while mounted (the signed-in app's layout). */
export function useNotificationsLive() {
  const qc = useQueryClient();
  useEffect(() => {
    holders += 1;
    if (holders === 1) stop = start(qc);
    return () => {
      holders -= 1;
      if (holders === 0) {
        stop?.();
        stop = null;
      }
    };
  }, [qc]);
}

/** Mount once in the signed-in layout: renders nothing. */
export function NotificationsLive() {
  useNotificationsLive();
  return null;
}
