import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { SessionOut } from '@/client';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';
import { sessionKeys } from '@/features/sessions/queries';
import { ApiError } from '@/lib/api';
import type { BranchesOnDelete } from './api';
import { useDeleteSessionTree } from './mutations';

/** The ids of a session and every branch below it, from the project's session list. */
export function subtreeOf(id: string, sessions: SessionOut[]): string[] {
  const out = [id];
  for (let i = 0; i < out.length; i++) for (const s of sessions) if (s.parent_session_id === out[i] && !out.includes(s.id)) out.push(s.id);
  return out;
}

/**
 * "Delete session?": a session with branches asks what becomes of them — kept as sessions of their
 * own, or deleted too. A branch made since the list was read (the server answers `has_branches`)
 * turns the plain question into that choice.
 */
export function DeleteSessionDialog({
  session,
  branches,
  onClose,
  onDeleted,
}: {
  session: SessionOut | null;
  /** Its direct branches, as the list knows them. */
  branches: number;
  onClose: () => void;
  /** The ids that are gone (the session, and its branches when they went too). */
  onDeleted: (ids: string[]) => void;
}) {
  const qc = useQueryClient();
  const del = useDeleteSessionTree(session?.project_id ?? '');
  const [told, setTold] = useState<{ id: string; detail: string } | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const title = session?.title || 'Untitled session';
  const choose = !!session && (branches > 0 || told?.id === session.id);
  const n = branches || 1;
  const close = () => {
    setTold(null);
    setFailed(null);
    onClose();
  };
  const run = (mode: BranchesOnDelete | null) => {
    if (!session) return;
    const listed = qc.getQueryData<{ items: SessionOut[] }>(sessionKeys.project(session.project_id))?.items ?? [];
    const gone = mode === 'delete' ? subtreeOf(session.id, listed) : [session.id];
    setFailed(null);
    del.mutate(
      { id: session.id, branches: mode, gone },
      {
        onSuccess: () => {
          close();
          onDeleted(gone);
        },
        onError: (e) => {
          if (e instanceof ApiError && e.code === 'has_branches') setTold({ id: session.id, detail: e.message });
          else setFailed(e instanceof Error ? e.message : 'The session could not be deleted.');
        },
      },
    );
  };
  return (
    <Dialog open={!!session} onOpenChange={(o) => !o && close()}>
      <DialogContent data-testid="delete-session-dialog">
        <DialogTitle>Delete session?</DialogTitle>
        <DialogDescription>
          {choose
            ? `“${title}” and its history will be deleted. It has ${branches > 0 ? `${n} branch${n === 1 ? '' : 'es'}` : 'branches'}: keep them as separate sessions (each keeps its past), or delete them too. This cannot be undone.`
            : `“${title}” and its history will be deleted. This cannot be undone.`}
        </DialogDescription>
        {told?.id === session?.id && branches === 0 && <p className="text-sm text-muted-foreground">{told?.detail}</p>}
        {failed && (
          <p role="alert" className="text-sm text-destructive">
            {failed}
          </p>
        )}
        <DialogFooter className="flex-wrap">
          <Button variant="outline" onClick={close}>
            Cancel
          </Button>
          {choose ? (
            <>
              <Button variant="outline" onClick={() => run('keep')} disabled={del.isPending} data-testid="delete-keep-branches">
                {branches > 0 ? `Keep its ${n} branch${n === 1 ? '' : 'es'} as separate sessions` : 'Keep its branches as separate sessions'}
              </Button>
              <Button variant="destructive" onClick={() => run('delete')} disabled={del.isPending} data-testid="delete-with-branches">
                Delete them too
              </Button>
            </>
          ) : (
            <Button variant="destructive" onClick={() => run(null)} disabled={del.isPending}>
              Delete
            </Button>
          )}
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
