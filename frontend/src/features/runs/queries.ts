import { queryOptions } from '@tanstack/react-query';
import { listRuns } from '@/client';
import { authFetch } from '@/lib/api';

export const runKeys = {
  session: (sessionId: string) => ['runs', 'session', sessionId] as const,
};

export const runsQuery = (sessionId: string) =>
  queryOptions({
    queryKey: runKeys.session(sessionId),
    queryFn: async () =>
      (await listRuns({ path: { session_id: sessionId }, query: { limit: 500 } })).data!,
  });

/** Artifact bytes need the Bearer header, so they are fetched, not linked. */
export const artifactJsonQuery = <T,>(url: string) =>
  queryOptions({
    queryKey: ['artifact', url, 'json'] as const,
    queryFn: async () => (await (await authFetch(url)).json()) as T,
    staleTime: Infinity,
  });

/** The bytes only: each component showing them makes (and revokes) its own URL, see useObjectUrl. */
export const artifactBlobQuery = (url: string) =>
  queryOptions({
    queryKey: ['artifact', url, 'blob'] as const,
    queryFn: async () => (await authFetch(url)).blob(),
    staleTime: Infinity,
  });
