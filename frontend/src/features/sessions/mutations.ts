import { useMutation, useQueryClient } from '@tanstack/react-query';
import {
  createSessionApiV1ProjectsProjectIdSessionsPost,
  deleteSessionApiV1SessionsSessionIdDelete,
  updateSessionApiV1SessionsSessionIdPatch,
} from '@/client';
import type { SessionOut } from '@/client';
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

/** Auto: code runs as soon as it is written; review: each code block waits for the user's approval. */
export function useSetAutonomy(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, autonomy }: { id: string; autonomy: SessionOut['autonomy'] }) =>
      (await updateSessionApiV1SessionsSessionIdPatch({ path: { session_id: id }, body: { autonomy } })).data!,
    onSuccess: (s) => {
      qc.setQueryData(sessionKeys.detail(s.id), s);
      void qc.invalidateQueries({ queryKey: sessionKeys.project(projectId) });
    },
  });
}
