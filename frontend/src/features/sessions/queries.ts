import { queryOptions } from '@tanstack/react-query';
import { getSession, listSessions } from '@/client';

export const sessionKeys = {
  all: ['sessions'] as const,
  project: (projectId: string) => ['sessions', 'project', projectId] as const,
  detail: (id: string) => ['sessions', id] as const,
};

export const sessionsQuery = (projectId: string) =>
  queryOptions({
    queryKey: sessionKeys.project(projectId),
    queryFn: async () =>
      (await listSessions({ path: { project_id: projectId }, query: { limit: 500 } }))
        .data!,
  });

export const sessionQuery = (id: string) =>
  queryOptions({
    queryKey: sessionKeys.detail(id),
    queryFn: async () => (await getSession({ path: { session_id: id } })).data!,
  });
