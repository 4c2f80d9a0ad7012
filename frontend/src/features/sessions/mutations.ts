import { useMutation, useQueryClient } from '@tanstack/react-query';
import {
  createSessionApiV1ProjectsProjectIdSessionsPost,
  deleteSessionApiV1SessionsSessionIdDelete,
  updateSessionApiV1SessionsSessionIdPatch,
} from '@/client';
import { sessionKeys } from './queries';

export function useCreateSession(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (title?: string) =>
      (await createSessionApiV1ProjectsProjectIdSessionsPost({ path: { project_id: projectId }, body: { title: title ?? null } }))
        .data!,
    onSuccess: () => qc.invalidateQueries({ queryKey: sessionKeys.project(projectId) }),
  });
}

export function useRenameSession(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, title }: { id: string; title: string }) =>
      (await updateSessionApiV1SessionsSessionIdPatch({ path: { session_id: id }, body: { title } })).data!,
    onSuccess: (s) => {
      void qc.invalidateQueries({ queryKey: sessionKeys.project(projectId) });
      void qc.invalidateQueries({ queryKey: sessionKeys.detail(s.id) });
    },
  });
}

export function useDeleteSession(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) => {
      await deleteSessionApiV1SessionsSessionIdDelete({ path: { session_id: id } });
    },
    onSuccess: () => qc.invalidateQueries({ queryKey: sessionKeys.project(projectId) }),
  });
}
