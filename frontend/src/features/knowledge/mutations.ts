import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createKnowledge, deleteKnowledge, updateKnowledge, verifyRun, type KnowledgeChange, type KnowledgeDraft } from './api';
import { knowledgeKeys } from './queries';

// Errors are the server's sentences (422 with what was wrong, 403 for a viewer): the forms show them where they belong.

export function useAddItem(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: KnowledgeDraft) => createKnowledge(projectId, body),
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: knowledgeKeys.project(projectId) }),
  });
}

/** Edits an item, approves or rejects a proposal (with its edits, if any). */
export function useChangeItem(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, ...body }: KnowledgeChange & { id: string }) => updateKnowledge(id, body),
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: knowledgeKeys.project(projectId) }),
  });
}

export function useDeleteItem(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => deleteKnowledge(id),
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: knowledgeKeys.project(projectId) }),
  });
}

/** "Save as verified": the run becomes an `example` item of its project. */
export function useVerifyRun(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (runId: string) => verifyRun(runId),
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: knowledgeKeys.project(projectId) }),
  });
}
