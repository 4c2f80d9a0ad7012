import { useQuery } from '@tanstack/react-query';
import { ChevronDown, ChevronRight } from 'lucide-react';
import { useState } from 'react';
import { LoadState } from '@/components/notice';
import { Badge } from '@/components/ui/badge';
import { formatDate, formatDuration } from '@/lib/utils';
import { runDuration } from './change';
import { jobRunQuery, jobRunsQuery } from './queries';
import { RepairOutcome } from './repairs';
import { RunChecks, RunResults } from './run-results';
import { RunStatusBadge, When } from './status';
import type { Job, JobRun } from './types';

const TRIGGERS: Record<string, string> = { manual: 'Manual', schedule: 'Schedule', api: 'API', cli: 'CLI' };

/** The job's runs, newest first, asked again while one is queued or running. */
export function JobHistory({ job }: { job: Job }) {
  const runs = useQuery(jobRunsQuery(job.id));
  if (!runs.data) return <LoadState query={runs} loading="Loading the history…" />;
  if (!runs.data.length)
    return (
      <p className="text-sm text-muted-foreground" data-testid="history-empty">
        No runs yet.
      </p>
    );
  return (
    <ol className="space-y-3" data-testid="job-history">
      {runs.data.map((run) => (
        <RunCard key={run.id} job={job} run={run} />
      ))}
    </ol>
  );
}

function RunCard({ job, run }: { job: Job; run: JobRun }) {
  const [open, setOpen] = useState(false);
  const when = run.started_at ?? run.created_at;
  const took = runDuration(run.started_at, run.finished_at);
  return (
    <li className="space-y-3 rounded-lg border p-3 sm:p-4" data-testid="job-run" data-status={run.status}>
      <button type="button" className="flex w-full cursor-pointer flex-wrap items-center gap-x-3 gap-y-1 text-left text-sm" onClick={() => setOpen((o) => !o)} aria-expanded={open}>
        {open ? <ChevronDown className="size-4 text-muted-foreground" /> : <ChevronRight className="size-4 text-muted-foreground" />}
        <RunStatusBadge status={run.status} />
        <span className="text-muted-foreground">{TRIGGERS[run.trigger] ?? run.trigger}</span>
        <When iso={when} />
        {took !== null && <span className="text-muted-foreground tabular-nums">{formatDuration(took)}</span>}
        {run.scheduled_for && (
          <span className="text-xs text-muted-foreground" title="The schedule's tick it ran for">
            for {formatDate(run.scheduled_for)}
          </span>
        )}
      </button>
      {run.skipped_reason && (
        <p className="text-sm text-muted-foreground" data-testid="run-skipped">
          {run.skipped_reason}
        </p>
      )}
      {run.error && (
        <p className="text-sm break-words text-destructive" data-testid="run-error">
          {run.error}
        </p>
      )}
      <RunResults names={job.results.map((r) => r.name)} results={run.results} change={run.change} />
      <RunChecks checks={run.checks} />
      {!!run.deliveries?.length && (
        <ul className="flex flex-wrap gap-1.5 text-xs" data-testid="run-deliveries">
          {run.deliveries.map((d, i) => (
            <li key={i}>
              <Badge variant={d.status === 'sent' ? 'success' : d.status === 'failed' ? 'error' : 'default'} title={d.last_error ?? d.target ?? undefined}>
                {d.channel} · {d.status}
                {d.attempts > 1 && ` · ${d.attempts} attempts`}
              </Badge>
            </li>
          ))}
        </ul>
      )}
      {run.repair && <RepairOutcome repair={run.repair} />}
      {open && <RunDetails id={run.id} />}
    </li>
  );
}

/** One run as GET /job-runs/{id} gives it: its parameters, its deliveries' targets and errors, its artifacts. */
function RunDetails({ id }: { id: string }) {
  const run = useQuery(jobRunQuery(id));
  if (!run.data) return <LoadState query={run} loading="Loading the run…" />;
  const { params, deliveries, artifacts } = run.data;
  return (
    <div className="space-y-2 border-t pt-3 text-xs" data-testid="run-details">
      <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1">
        <dt className="text-muted-foreground">Started</dt>
        <dd>{run.data.started_at ? formatDate(run.data.started_at) : '—'}</dd>
        <dt className="text-muted-foreground">Ended</dt>
        <dd>{run.data.finished_at ? formatDate(run.data.finished_at) : '—'}</dd>
        {Object.entries(params).map(([name, value]) => (
          <div key={name} className="contents">
            <dt className="font-mono text-muted-foreground">{name}</dt>
            <dd className="break-all">{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
          </div>
        ))}
        <dt className="text-muted-foreground">Artifacts</dt>
        <dd>{artifacts?.length ? artifacts.map((a) => String(a.name ?? a.kind ?? 'artifact')).join(', ') : 'none'}</dd>
      </dl>
      {!!deliveries?.length && (
        <ul className="space-y-0.5">
          {deliveries.map((d, i) => (
            <li key={i} className="break-words">
              <span className="font-medium">{d.channel}</span> {d.target && <span className="text-muted-foreground">to {d.target}</span>}: {d.status}, {d.attempts}{' '}
              attempt{d.attempts === 1 ? '' : 's'}
              {d.sent_at && `, sent ${formatDate(d.sent_at)}`}
              {d.last_error && <span className="text-destructive"> — {d.last_error}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
