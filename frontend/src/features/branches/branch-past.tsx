import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Columns2, DatabaseBackup, GitBranch, History, Info } from 'lucide-react';
import { useEffect } from 'react';
import { Link } from 'react-router';
import type { RunOut, SessionOut } from '@/client';
import { sessionKeys, sessionQuery } from '@/features/sessions/queries';
import { FilePinsNote } from './file-pins';

/** How many steps a replay ran: the past's steps whose code ran without an error (what the server replays). */
export function replayedSteps(past: RunOut[]): number {
  return past.reduce((n, r) => n + r.steps.filter((s) => s.code && !s.error).length, 0);
}

/** "Variables restored from the snapshot at …" / "Rebuilt by replaying N steps", with the server's notes. */
export function RestoredNote({ restored, at, past }: { restored: SessionOut['restored']; at: string | null; past: RunOut[] }) {
  if (!restored) return null;
  const n = replayedSteps(past);
  const headline =
    restored.from === 'snapshot'
      ? `Variables restored from the snapshot at “${at ?? 'the branch point'}”.`
      : `Rebuilt by replaying ${n} step${n === 1 ? '' : 's'} of the past's code in a fresh sandbox.`;
  return (
    <div className="mt-2 rounded-md bg-background/60 px-3 py-2 text-xs" data-testid="branch-restored" data-from={restored.from}>
      <p className="flex items-center gap-1.5 font-medium text-foreground">
        <DatabaseBackup className="size-3.5 shrink-0 text-primary" /> {headline}
      </p>
      {!!restored.notes?.length && (
        <ul className="mt-1 list-disc space-y-0.5 pl-5 text-muted-foreground">
          {restored.notes.map((note) => (
            <li key={note}>{note}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Above a branch's past: that what follows was asked in another session, and is read-only here. */
export function PastHeader({ count }: { count: number }) {
  return (
    <p className="flex items-center gap-2 text-xs font-medium tracking-wide text-muted-foreground uppercase" data-testid="branch-past-header">
      <History className="size-3.5" /> The branch's past · {count} question{count === 1 ? '' : 's'}, read-only here
    </p>
  );
}

/**
 * Where a branch parts from its parent: "Branched from <parent> after: <question>", a link to the
 * parent, Compare, and how its variables came back once its first run has them.
 */
export function BranchDivider({ session, past, canEdit = true }: { session: SessionOut; past: RunOut[]; canEdit?: boolean }) {
  const parentId = session.parent_session_id;
  const parent = useQuery({ ...sessionQuery(parentId ?? ''), enabled: !!parentId, meta: { silent: true } });
  const at = past.find((r) => r.id === session.branched_after_run_id) ?? past[past.length - 1] ?? null;
  const parentUrl = parentId && `/projects/${session.project_id}/sessions/${parentId}`;
  return (
    <div className="rounded-lg border border-dashed border-primary/40 bg-primary/5 px-3 py-2.5 text-sm" role="note" data-testid="branch-divider">
      <p className="flex flex-wrap items-center gap-x-1.5 gap-y-1">
        <GitBranch className="size-4 shrink-0 text-primary" />
        <span>Branched from</span>
        {parentUrl ? (
          <Link to={parentUrl} className="font-medium underline underline-offset-4 hover:no-underline" data-testid="branch-parent-link">
            {parent.data?.title || (parent.error ? 'a deleted session' : 'its parent')}
          </Link>
        ) : (
          <span className="font-medium">a session that was deleted</span>
        )}
        {at && (
          <span className="min-w-0 text-muted-foreground">
            after: <q className="text-foreground">{at.query}</q>
          </span>
        )}
        {parentId && (
          <Link
            to={`/projects/${session.project_id}/compare/${parentId}/${session.id}`}
            className="ml-auto inline-flex items-center gap-1 rounded-md px-2 py-0.5 text-xs font-medium text-primary hover:bg-primary/10"
            data-testid="branch-compare-link"
          >
            <Columns2 className="size-3.5" /> Compare with parent
          </Link>
        )}
      </p>
      <RestoredNote restored={session.restored} at={at?.query ?? null} past={past} />
      <FilePinsNote session={session} canEdit={canEdit} />
    </div>
  );
}

/** Why the user is where they are after an action took them here (an edited first question: a new session). */
export function ArrivalNote({ text }: { text: string }) {
  return (
    <p className="flex items-start gap-2 rounded-lg bg-muted/60 px-3 py-2 text-xs text-muted-foreground" role="note" data-testid="arrival-note">
      <Info className="mt-px size-3.5 shrink-0" /> <span>{text}</span>
    </p>
  );
}

/**
 * A branch learns how its variables came back when its first run has them: from the run's live
 * `state.restored` event as it arrives (the note shows at once), and by reading the session again
 * as each run ends.
 */
export function useRestoredRefresh(branch: SessionOut | null, running: boolean, live?: SessionOut['restored']) {
  const qc = useQueryClient();
  const waiting = !!branch && !branch.restored;
  const id = branch?.id;
  useEffect(() => {
    if (waiting && id && live) qc.setQueryData<SessionOut>(sessionKeys.detail(id), (s) => (s && !s.restored ? { ...s, restored: live } : s));
  }, [qc, waiting, id, live]);
  useEffect(() => {
    if (waiting && id) void qc.invalidateQueries({ queryKey: sessionKeys.detail(id) });
  }, [qc, waiting, id, running]);
}
