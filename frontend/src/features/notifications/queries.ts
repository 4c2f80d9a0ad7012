import { queryOptions } from '@tanstack/react-query';
import { listNotifications } from '@/client';

export const notificationKeys = { all: ['notifications'] as const };

/** How often the bell looks again when nothing told it (a comment in an open session tells it at once). */
export const NOTIFICATIONS_REFRESH_MS = 60_000;

/** The user's latest notifications (`{items, total, unread}`). */
export const notificationsQuery = () =>
  queryOptions({
    queryKey: notificationKeys.all,
    queryFn: async () => (await listNotifications({ query: { limit: 20 } })).data!,
    refetchInterval: NOTIFICATIONS_REFRESH_MS,
  });
