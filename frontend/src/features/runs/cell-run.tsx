import { Database, Loader2, Server, Square, SquareTerminal } from 'lucide-react';
import type { CellOut } from '@/client';
import { CodeBlock } from '@/components/code-block';
import { GuardedButton } from '@/components/guarded-button';
import { Badge } from '@/components/ui/badge';
import { useBlocked } from '@/features/projects/role';
import { formatDate, formatDuration } from '@/lib/utils';
import { ArtifactView } from './artifact-view';
import { groupArtifacts } from './artifacts';
import { isTerminal } from './events';
import type { RunView as RunViewModel } from './run-reducer';
import { ErrorBlock, OutputBlock } from './step-card';
import { StepQueries } from './step-queries';
import { StatusBadge, type Asked } from './run-view';

/** "Python cell", "SQL cell · shop": what a cell was, said where a question would be. */
export function cellLabel(cell: CellOut): string {
  return cell.language === 'sql' ? `SQL cell${cell.source ? ` · ${cell.source}` : ''}` : 'Python cell';
}

/**
 * A cell the user ran (no model): their code with a "cell" mark where a question would stand, then
 * what it printed, the queries it ran, its charts and tables and its error, as they come.
 */
export function CellRun({
  run,
  cell,
  asked,
  onStop,
  stopping,
}: {
  run: RunViewModel;
  cell: CellOut;
  asked?: Asked;
  onStop?: () => void;
  stopping?: boolean;
}) {
  const stopBlocked = useBlocked('editor', 'stop a run');
  const finished = isTerminal(run.status);
  const step = run.steps[0];
  const Icon = cell.language === 'sql' ? Database : SquareTerminal;
  return (
    <section
      id={`run-${run.runId}`}
      className="space-y-3"
      data-testid="run"
      data-kind="cell"
      data-run-id={run.runId}
      data-status={run.status}
      aria-label={`${cellLabel(cell)}: ${run.query}`}
    >
      <div className="ml-auto w-full max-w-[92%] space-y-1" data-testid="cell-code">
        <div className="flex items-center justify-end gap-2 text-[11px] text-muted-foreground">
          <Badge className="gap-1 font-mono" data-testid="cell-mark">
            <Icon className="size-3" /> {cellLabel(cell)}
          </Badge>
          {asked?.by && <span>{asked.by === 'you' ? 'You' : asked.by}</span>}
          {asked?.at && <time dateTime={asked.at}>{formatDate(asked.at)}</time>}
        </div>
        <CodeBlock code={run.query} language={cell.language === 'sql' ? 'sql' : 'python'} className="border-primary/30" />
      </div>
      {run.status === 'running' && run.sandboxStarting && (
        <p className="flex items-center gap-2 text-sm text-muted-foreground" data-testid="sandbox-starting">
          <Server className="size-4 animate-pulse" /> Starting the sandbox…
        </p>
      )}
      {!finished && !run.sandboxStarting && !step?.output && (
        <p className="flex items-center gap-2 text-sm text-muted-foreground">
          <Loader2 className="size-4 animate-spin" /> {run.status === 'queued' ? 'Waiting for a free sandbox…' : 'Running…'}
        </p>
      )}
      {step && <StepQueries queries={step.queries} />}
      {step?.output && <OutputBlock output={step.output} />}
      {groupArtifacts(run.artifacts).map((i) => (
        <ArtifactView key={i.artifact.id} artifact={i.artifact} csv={i.csv} />
      ))}
      {step?.error && <ErrorBlock error={step.error} />}
      <footer className="flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-muted-foreground" data-testid="run-footer">
        <StatusBadge status={run.status} />
        {finished && <span className="tabular-nums">{formatDuration(run.durationMs)}</span>}
        <span>no model</span>
        {!finished && onStop && (
          <GuardedButton variant="outline" size="sm" place="ml-auto" onClick={onStop} disabled={stopping} blockedBecause={stopBlocked}>
            <Square className="fill-current" /> Stop
          </GuardedButton>
        )}
      </footer>
    </section>
  );
}
