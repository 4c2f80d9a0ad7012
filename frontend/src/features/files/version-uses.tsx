import { useQueries, useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { runsQuery } from '@/features/runs/queries';
import { usedFiles } from '@/features/runs/run-files';
import { sessionsQuery } from '@/features/sessions/queries';

/** A question that read a file at some version: where it was asked, to go and look. */
export type VersionUse = { runId: string; query: string; sessionId: string; sessionTitle: string };

const SHOWN = 3;

/**
 * Which questions of the project read each version of a file (version → questions, oldest first):
 * each run says the version of every file its workspace had, and which it read.
 */
export function useVersionUses(projectId: string, fileId: string): { uses: Map<number, VersionUse[]>; loading: boolean } {
  const sessions = useQuery(sessionsQuery(projectId));
  const runs = useQueries({ queries: (sessions.data?.items ?? []).map((s) => runsQuery(s.id)) });
  const uses = new Map<number, VersionUse[]>();
  sessions.data?.items.forEach((session, i) => {
    for (const run of runs[i]?.data?.items ?? []) {
      for (const f of usedFiles(run).filter((f) => f.file_id === fileId)) {
        const use = { runId: run.id, query: run.query, sessionId: session.id, sessionTitle: session.title || 'Untitled session' };
        uses.set(f.version, [...(uses.get(f.version) ?? []), use]);
      }
    }
  });
  return { uses, loading: sessions.isLoading || runs.some((r) => r.isLoading) };
}

/** Under a version of a file: the questions that read it (links to their sessions), or that none did. */
export function VersionUses({ projectId, uses, loading }: { projectId: string; uses: VersionUse[]; loading: boolean }) {
  if (loading) return <p className="text-xs text-muted-foreground">Looking for the questions that read it…</p>;
  if (!uses.length) return <p className="text-xs text-muted-foreground" data-testid="version-uses">No question has read this version.</p>;
  return (
    <p className="text-xs text-muted-foreground" data-testid="version-uses">
      Read by{' '}
      {uses.slice(0, SHOWN).map((u, n) => (
        <span key={u.runId}>
          {n > 0 && (n === Math.min(uses.length, SHOWN) - 1 && uses.length <= SHOWN ? ' and ' : ', ')}
          <Link
            to={`/projects/${projectId}/sessions/${u.sessionId}`}
            className="font-medium text-foreground underline-offset-4 hover:underline"
            title={`In “${u.sessionTitle}”`}
          >
            “{u.query.length > 60 ? `${u.query.slice(0, 57).trimEnd()}…` : u.query}”
          </Link>
        </span>
      ))}
      {uses.length > SHOWN && ` and ${uses.length - SHOWN} more question${uses.length - SHOWN === 1 ? '' : 's'}`}
    </p>
  );
}
