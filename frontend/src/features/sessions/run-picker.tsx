import { useQuery } from '@tanstack/react-query';
import { Loader2 } from 'lucide-react';
import { useState } from 'react';
import type { RunOut } from '@/client';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { runsQuery } from '@/features/runs/queries';
import { defaultExportRuns } from './export';

const STATUS: Record<RunOut['status'], { label: string; variant: 'success' | 'error' | 'warning' | 'running' }> = {
  succeeded: { label: 'Answered', variant: 'success' },
  failed: { label: 'Failed', variant: 'error' },
  cancelled: { label: 'Stopped', variant: 'warning' },
  queued: { label: 'Running', variant: 'running' },
  running: { label: 'Running', variant: 'running' },
  waiting_input: { label: 'Waiting', variant: 'running' },
  waiting_approval: { label: 'Waiting', variant: 'running' },
};

const failure = (e: unknown) => (e instanceof Error && e.message ? e.message : 'The questions could not be loaded.');

/**
 * The session's questions and which of them are chosen (those answered, to start with: what goes
 * out of the workbench is made to be read). `chosen` holds ids in the session's order.
 */
export function useRunChoice(sessionId: string) {
  const history = useQuery(runsQuery(sessionId));
  const runs = history.data?.items ?? [];
  const [picked, setPicked] = useState<Set<string> | null>(null);
  const chosen = picked ?? new Set(defaultExportRuns(runs));
  return { history, runs, chosen, setPicked, chosenIds: runs.filter((r) => chosen.has(r.id)).map((r) => r.id) };
}

export type RunChoice = ReturnType<typeof useRunChoice>;

/** The questions of a session with a box each, and shortcuts to choose the answered ones or all. */
export function RunPicker({ choice, empty, testId }: { choice: RunChoice; empty: string; testId: string }) {
  const { history, runs, chosen, setPicked } = choice;
  const answered = runs.filter((r) => r.status === 'succeeded');
  const toggle = (id: string) => {
    const next = new Set(chosen);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setPicked(next);
  };
  return (
    <div role="group" aria-labelledby={`${testId}-label`} className="min-w-0 space-y-2">
      <div className="flex items-center gap-2">
        <span id={`${testId}-label`} className="flex-1 text-sm font-medium">
          Questions
        </span>
        <Button variant="ghost" size="sm" onClick={() => setPicked(new Set(answered.map((r) => r.id)))} disabled={!answered.length}>
          Answered only
        </Button>
        <Button variant="ghost" size="sm" onClick={() => setPicked(new Set(runs.map((r) => r.id)))} disabled={!runs.length}>
          All
        </Button>
      </div>
      {history.isPending ? (
        <p className="flex items-center gap-2 text-sm text-muted-foreground">
          <Loader2 className="size-4 animate-spin" /> Loading the questions…
        </p>
      ) : history.isError ? (
        <p role="alert" className="text-sm text-destructive">
          The questions could not be loaded: {failure(history.error)}
        </p>
      ) : runs.length === 0 ? (
        <p className="text-sm text-muted-foreground">{empty}</p>
      ) : (
        <ul className="max-h-72 divide-y overflow-y-auto rounded-lg border" data-testid={testId}>
          {runs.map((run, i) => (
            <li key={run.id}>
              <label className="flex cursor-pointer items-center gap-3 px-3 py-2 text-sm hover:bg-muted/60">
                <input type="checkbox" className="size-4 shrink-0 accent-primary" checked={chosen.has(run.id)} onChange={() => toggle(run.id)} />
                <span className="w-5 shrink-0 text-right text-muted-foreground tabular-nums">{i + 1}.</span>
                <span className="min-w-0 flex-1 truncate" title={run.query}>
                  {run.query}
                </span>
                <Badge variant={STATUS[run.status].variant}>{STATUS[run.status].label}</Badge>
              </label>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
