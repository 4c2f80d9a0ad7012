import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createShare, reissueShare, revokeShare, type ShareCreate } from '@/client';
import { shareKeys } from './queries';

// Errors are the server's sentences: the share dialog shows them where they belong.

/** Editors and owners: a link to the session's report of `runs`, working for `expires_in_days`. Its URL comes back once. */
export function useCreateShare(sessionId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (body: ShareCreate) => (await createShare({ path: { session_id: sessionId }, body })).data!,
    meta: { silent: true },
    onSuccess: () => qc.invalidateQueries({ queryKey: shareKeys.session(sessionId) }),
  });
}

/** Editors and owners: the link opens nothing from now on. */
export function useRevokeShare(sessionId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (shareId: string) => {
      await revokeShare({ path: { share_id: shareId } });
    },
    meta: { silent: true },
    onSettled: () => qc.invalidateQueries({ queryKey: shareKeys.session(sessionId) }),
  });
}

/** Owners: a new link of theirs to a link's questions, the old one revoked (for a link whose author lost access). Its URL comes back once. */
export function useReissueShare(sessionId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (shareId: string) => (await reissueShare({ path: { share_id: shareId } })).data!,
    meta: { silent: true },
    onSettled: () => qc.invalidateQueries({ queryKey: shareKeys.session(sessionId) }),
  });
}
