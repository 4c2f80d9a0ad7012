import { queryOptions } from '@tanstack/react-query';
import { getProjectApiV1ProjectsProjectIdGet, listProjectsApiV1ProjectsGet } from '@/client';

export const projectKeys = {
  all: ['projects'] as const,
  detail: (id: string) => ['projects', id] as const,
};

export const projectsQuery = () =>
  queryOptions({
    queryKey: projectKeys.all,
    queryFn: async () => (await listProjectsApiV1ProjectsGet({ query: { limit: 500 } })).data!,
  });

export const projectQuery = (id: string) =>
  queryOptions({
    queryKey: projectKeys.detail(id),
    queryFn: async () => (await getProjectApiV1ProjectsProjectIdGet({ path: { project_id: id } })).data!,
  });
