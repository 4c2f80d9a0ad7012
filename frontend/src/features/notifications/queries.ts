import { queryOptions } from '@tanstack/react-query';
import { listNotifications } from '@/client';

export const notificationKeys = { all: ['notifications'] as const };

/**
 * How often the bell looks again, only while its live stream (GET /notifications/live, see
 * live.ts) is down; while it is open every change arrives on it at once.
 */
export const NOTIFICATIONS_FALLBACK_MS = 120_000;

let live = false;
/** The live stream says whether it is open (read by the fallback refetch below). */
export const setNotificationsLive = (open: boolean) => {
  live = open;
};

/** The user's latest notifications (`{items, total, unread}`). */
export const notificationsQuery = () =>
  queryOptions({
    queryKey: notificationKeys.all,
    queryFn: async () => (await listNotifications({ query: { limit: 20 } })).data!,
    refetchInterval: () => (live ? false : NOTIFICATIONS_FALLBACK_MS),
  });
