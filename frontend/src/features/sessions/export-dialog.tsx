import { useQuery } from '@tanstack/react-query';
import { AlertCircle, Loader2 } from 'lucide-react';
import { type KeyboardEvent, useState } from 'react';
import type { RunOut, SessionOut } from '@/client';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';
import { runsQuery } from '@/features/runs/queries';
import { cn } from '@/lib/utils';
import { EXPORT_FORMATS, type ExportFormat, defaultExportRuns, useExportSession } from './export';

const STATUS: Record<RunOut['status'], { label: string; variant: 'success' | 'error' | 'warning' | 'running' }> = {
  succeeded: { label: 'Answered', variant: 'success' },
  failed: { label: 'Failed', variant: 'error' },
  cancelled: { label: 'Stopped', variant: 'warning' },
  queued: { label: 'Running', variant: 'running' },
  running: { label: 'Running', variant: 'running' },
  waiting_input: { label: 'Waiting', variant: 'running' },
  waiting_approval: { label: 'Waiting', variant: 'running' },
};

const failure = (e: unknown) => (e instanceof Error && e.message ? e.message : 'The export failed.');

/**
 * Export with a choice: the format, and which of the session's questions go in (those answered, to
 * start with: a report is made to send). The file downloads under the name the server gives.
 */
export function ExportDialog({ session, open, onOpenChange }: { session: SessionOut; open: boolean; onOpenChange: (open: boolean) => void }) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      {open && <ExportChoice session={session} onDone={() => onOpenChange(false)} />}
    </Dialog>
  );
}

function ExportChoice({ session, onDone }: { session: SessionOut; onDone: () => void }) {
  const history = useQuery(runsQuery(session.id));
  const runs = history.data?.items ?? [];
  const [format, setFormat] = useState<ExportFormat>('html');
  const [picked, setPicked] = useState<Set<string> | null>(null);
  const chosen = picked ?? new Set(defaultExportRuns(runs));
  const exporting = useExportSession();
  const answered = runs.filter((r) => r.status === 'succeeded');

  const toggle = (id: string) => {
    const next = new Set(chosen);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setPicked(next);
  };
  const start = () =>
    exporting.mutate(
      // A session with no questions yet exports its setup: no runs to name.
      { sessionId: session.id, title: session.title, format, runs: runs.length ? runs.filter((r) => chosen.has(r.id)).map((r) => r.id) : undefined },
      { onSuccess: onDone },
    );
  const extension = EXPORT_FORMATS.find((f) => f.format === format)!.extension;
  const moveFormat = (e: KeyboardEvent<HTMLDivElement>) => {
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
    if (!step) return;
    e.preventDefault();
    const at = EXPORT_FORMATS.findIndex((f) => f.format === format);
    const next = (at + step + EXPORT_FORMATS.length) % EXPORT_FORMATS.length;
    setFormat(EXPORT_FORMATS[next].format);
    (e.currentTarget.children[next] as HTMLElement).focus();
  };

  return (
    <DialogContent className="max-w-lg" data-testid="export-dialog">
      <div className="space-y-1 pr-6">
        <DialogTitle>Export questions</DialogTitle>
        <DialogDescription>Choose the format and the questions that go in. Answered ones are chosen to start with.</DialogDescription>
      </div>
      <div role="radiogroup" aria-label="Format" className="grid grid-cols-3 gap-1 rounded-lg bg-muted p-1" onKeyDown={moveFormat}>
        {EXPORT_FORMATS.map((f) => (
          <button
            key={f.format}
            type="button"
            role="radio"
            aria-checked={format === f.format}
            // One stop for the group, on the format chosen; the arrow keys move between formats.
            tabIndex={format === f.format ? 0 : -1}
            onClick={() => setFormat(f.format)}
            className={cn(
              'rounded-md px-2 py-1.5 text-sm font-medium text-muted-foreground transition-colors',
              format === f.format ? 'bg-card text-foreground shadow-xs' : 'hover:text-foreground',
            )}
          >
            {f.short} <span className="text-xs font-normal text-muted-foreground">{f.extension}</span>
          </button>
        ))}
      </div>
      <div role="group" aria-labelledby="export-questions" className="min-w-0 space-y-2">
        <div className="flex items-center gap-2">
          <span id="export-questions" className="flex-1 text-sm font-medium">
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
          <p className="text-sm text-muted-foreground">No questions yet: the export holds the session's setup only.</p>
        ) : (
          <ul className="max-h-72 divide-y overflow-y-auto rounded-lg border" data-testid="export-runs">
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
      {exporting.isError && (
        <p role="alert" className="flex gap-2 text-sm text-destructive" data-testid="export-error">
          <AlertCircle className="mt-0.5 size-4 shrink-0" />
          <span>Export failed: {failure(exporting.error)}</span>
        </p>
      )}
      <DialogFooter className="flex-wrap items-center">
        <span className="mr-auto text-xs text-muted-foreground">
          {chosen.size} of {runs.length} question{runs.length === 1 ? '' : 's'}
        </span>
        <Button variant="outline" onClick={onDone}>
          Cancel
        </Button>
        <Button onClick={start} disabled={exporting.isPending || history.isPending || (runs.length > 0 && chosen.size === 0)}>
          {exporting.isPending ? <Loader2 className="animate-spin" /> : null}
          {exporting.isPending ? 'Exporting…' : `Export ${extension}`}
        </Button>
      </DialogFooter>
    </DialogContent>
  );
}
