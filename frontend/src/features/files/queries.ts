import { queryOptions } from '@tanstack/react-query';
import {
  listFiles,
  listVersions,
  previewFile,
  profileFile,
} from '@/client';

export const fileKeys = {
  project: (projectId: string) => ['files', 'project', projectId] as const,
  preview: (fileId: string, sha: string, sheet: string | null = null) => ['files', 'preview', fileId, sha, sheet] as const,
  profile: (fileId: string, sha: string, sheet: string | null = null) => ['files', 'profile', fileId, sha, sheet] as const,
  versions: (fileId: string) => ['files', 'versions', fileId] as const,
  allVersions: ['files', 'versions'] as const,
};

export const filesQuery = (projectId: string) =>
  queryOptions({
    queryKey: fileKeys.project(projectId),
    queryFn: async () =>
      (await listFiles({ path: { project_id: projectId }, query: { limit: 500 } })).data!,
  });

/** The first rows of a file (of one sheet of a workbook: null for the first); the same bytes preview the same. */
export const previewQuery = (fileId: string, sha: string, sheet: string | null = null) =>
  queryOptions({
    queryKey: fileKeys.preview(fileId, sha, sheet),
    queryFn: async () =>
      (await previewFile({ path: { file_id: fileId }, query: sheet === null ? undefined : { sheet } })).data!,
    staleTime: Infinity,
    meta: { silent: true },
  });

/** Each column's type, missing and distinct counts, range or top values (of one sheet of a workbook). */
export const profileQuery = (fileId: string, sha: string, sheet: string | null = null) =>
  queryOptions({
    queryKey: fileKeys.profile(fileId, sha, sheet),
    queryFn: async () =>
      (await profileFile({ path: { file_id: fileId }, query: sheet === null ? undefined : { sheet } })).data!,
    staleTime: Infinity,
    meta: { silent: true },
  });

/** The versions kept of a file, newest (the current one) first. */
export const versionsQuery = (fileId: string) =>
  queryOptions({
    queryKey: fileKeys.versions(fileId),
    queryFn: async () => (await listVersions({ path: { file_id: fileId } })).data!,
  });
