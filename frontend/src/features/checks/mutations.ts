import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createCheck, deleteCheck, startCheckRun, updateCheck, type CheckDraft } from './api';
import { checkKeys } from './queries';

export function useAddCheck(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: Partial<CheckDraft>) => createCheck(projectId, body),
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: checkKeys.checks(projectId) }),
  });
}

export function useChangeCheck(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, ...body }: Partial<CheckDraft> & { id: string }) => updateCheck(id, body),
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: checkKeys.checks(projectId) }),
  });
}

export function useDeleteCheck(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => deleteCheck(id),
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: checkKeys.checks(projectId) }),
  });
}

export function useRunChecks(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (model: string | null) => startCheckRun(projectId, { model }),
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: checkKeys.runs(projectId) }),
  });
}
