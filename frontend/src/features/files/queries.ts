import { queryOptions } from '@tanstack/react-query';
import { listFilesApiV1ProjectsProjectIdFilesGet, listVersionsApiV1FilesFileIdVersionsGet, previewFileApiV1FilesFileIdPreviewGet } from '@/client';

export const fileKeys = {
  project: (projectId: string) => ['files', 'project', projectId] as const,
  preview: (fileId: string, sha: string) => ['files', 'preview', fileId, sha] as const,
  versions: (fileId: string) => ['files', 'versions', fileId] as const,
  allVersions: ['files', 'versions'] as const,
};

export const filesQuery = (projectId: string) =>
  queryOptions({
    queryKey: fileKeys.project(projectId),
    queryFn: async () =>
      (await listFilesApiV1ProjectsProjectIdFilesGet({ path: { project_id: projectId }, query: { limit: 500 } })).data!,
  });

export const previewQuery = (fileId: string, sha: string) =>
  queryOptions({
    queryKey: fileKeys.preview(fileId, sha),
    queryFn: async () => (await previewFileApiV1FilesFileIdPreviewGet({ path: { file_id: fileId } })).data!,
    staleTime: Infinity,
    meta: { silent: true },
  });

/** The versions kept of a file, newest (the current one) first. */
export const versionsQuery = (fileId: string) =>
  queryOptions({
    queryKey: fileKeys.versions(fileId),
    queryFn: async () => (await listVersionsApiV1FilesFileIdVersionsGet({ path: { file_id: fileId } })).data!,
  });
