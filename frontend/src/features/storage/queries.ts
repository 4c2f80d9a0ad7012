import { queryOptions } from '@tanstack/react-query';
import { myUsage, projectUsage } from '@/client';

export const storageKeys = {
  // Under the project's files: whatever refreshes its file list refreshes its storage too.
  project: (projectId: string) => ['files', 'project', projectId, 'storage'] as const,
  mine: ['files', 'storage', 'me'] as const,
};

/** What a project keeps in storage, against its quota. */
export const projectStorageQuery = (projectId: string) =>
  queryOptions({
    queryKey: storageKeys.project(projectId),
    queryFn: async () => (await projectUsage({ path: { project_id: projectId } })).data!,
  });

/** What the signed-in user keeps in storage in every project, against their quota. */
export const myStorageQuery = () =>
  queryOptions({
    queryKey: storageKeys.mine,
    queryFn: async () => (await myUsage()).data!,
  });
