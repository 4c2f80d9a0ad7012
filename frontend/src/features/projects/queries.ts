import { queryOptions } from '@tanstack/react-query';
import { getProject, listProjects } from '@/client';

export const projectKeys = {
  all: ['projects'] as const,
  detail: (id: string) => ['projects', id] as const,
};

export const projectsQuery = () =>
  queryOptions({
    queryKey: projectKeys.all,
    queryFn: async () => (await listProjects({ query: { limit: 500 } })).data!,
  });

export const projectQuery = (id: string) =>
  queryOptions({
    queryKey: projectKeys.detail(id),
    queryFn: async () => (await getProject({ path: { project_id: id } })).data!,
  });
