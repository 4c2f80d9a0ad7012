import { queryOptions } from '@tanstack/react-query';
import { listShares } from '@/client';

export const shareKeys = {
  session: (sessionId: string) => ['shares', sessionId] as const,
};

/** A session's read-only links, newest first, revoked and expired ones too (never their token). */
export const sharesQuery = (sessionId: string) =>
  queryOptions({
    queryKey: shareKeys.session(sessionId),
    queryFn: async () => (await listShares({ path: { session_id: sessionId }, query: { limit: 100 } })).data!,
  });
