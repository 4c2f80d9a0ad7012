import { queryOptions } from '@tanstack/react-query';
import { listMembers } from '@/client';

export const memberKeys = {
  project: (projectId: string) => ['members', projectId] as const,
};

/** A project's members (`{items, total}`, the first 500), owners first, each with what their questions here have spent (any member may read it). */
export const membersQuery = (projectId: string) =>
  queryOptions({
    queryKey: memberKeys.project(projectId),
    queryFn: async () => (await listMembers({ path: { project_id: projectId }, query: { limit: 500 } })).data!,
  });
