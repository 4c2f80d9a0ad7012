import { queryOptions } from '@tanstack/react-query';
import { getSessionApiV1SessionsSessionIdGet, listSessionsApiV1ProjectsProjectIdSessionsGet } from '@/client';

export const sessionKeys = {
  all: ['sessions'] as const,
  project: (projectId: string) => ['sessions', 'project', projectId] as const,
  detail: (id: string) => ['sessions', id] as const,
};

export const sessionsQuery = (projectId: string) =>
  queryOptions({
    queryKey: sessionKeys.project(projectId),
    queryFn: async () =>
      (await listSessionsApiV1ProjectsProjectIdSessionsGet({ path: { project_id: projectId }, query: { limit: 500 } }))
        .data!,
  });

export const sessionQuery = (id: string) =>
  queryOptions({
    queryKey: sessionKeys.detail(id),
    queryFn: async () => (await getSessionApiV1SessionsSessionIdGet({ path: { session_id: id } })).data!,
  });
