import { useMutation, useQueryClient } from '@tanstack/react-query';
import {
  createSession,
  deleteSession,
  updateSession,
} from '@/client';
import type { Autonomy } from '@/features/attempts/types';
import { sessionKeys } from './queries';

export function useCreateSession(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (title?: string) =>
      (await createSession({ path: { project_id: projectId }, body: { title: title ?? null } }))
        .data!,
    onSuccess: () => qc.invalidateQueries({ queryKey: sessionKeys.project(projectId) }),
  });
}

export function useRenameSession(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, title }: { id: string; title: string }) =>
      (await updateSession({ path: { session_id: id }, body: { title } })).data!,
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
      await deleteSession({ path: { session_id: id } });
    },
    onSuccess: () => qc.invalidateQueries({ queryKey: sessionKeys.project(projectId) }),
  });
}

/**
 * Auto: code runs as soon as it is written; review_repairs: only a repair (after an error) waits for
 * the user's approval; review: each code block waits for it.
 */
export function useSetAutonomy(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, autonomy }: { id: string; autonomy: Autonomy }) =>
      (await updateSession({ path: { session_id: id }, body: { autonomy } })).data!,
    onSuccess: (s) => {
      qc.setQueryData(sessionKeys.detail(s.id), s);
      void qc.invalidateQueries({ queryKey: sessionKeys.project(projectId) });
    },
  });
}
