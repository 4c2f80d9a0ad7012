import { CheckCircle2, CircleAlert, Loader2, XCircle } from 'lucide-react';
import { Link } from 'react-router';
import { Badge } from '@/components/ui/badge';
import { formatCost, formatDate, formatDuration, formatNumber } from '@/lib/utils';
import { accuracyChange, accuracyText, doneCount, expectedText, isGoing } from './checks';
import type { CheckResult, CheckRun, ProjectCheck } from './types';

export function ResultBadge({ status }: { status: CheckResult['status'] }) {
  if (status === 'passed')
    return (
      <Badge variant="success">
        <CheckCircle2 /> Pass
      </Badge>
    );
  if (status === 'failed')
    return (
      <Badge variant="error">
        <XCircle /> Fail
      </Badge>
    );
  if (status === 'error')
    return (
      <Badge variant="warning">
        <CircleAlert /> Error
      </Badge>
    );
  return (
    <Badge variant="running">
      <Loader2 className="animate-spin" /> Waiting
    </Badge>
  );
}

const durationOf = (r: CheckRun) => (r.started_at && r.finished_at ? Date.parse(r.finished_at) - Date.parse(r.started_at) : null);

/** A check run: its progress while it goes, then accuracy, tokens, cost and time, and each check's result with a link to its run. */
export function CheckRunView({ run, checks, projectId }: { run: CheckRun; checks: ProjectCheck[]; projectId: string }) {
  const going = isGoing(run.status);
  const questionOf = (r: CheckResult) => r.question ?? checks.find((c) => c.id === r.check_id)?.question ?? 'A deleted check';
  return (
    <div className="space-y-3 rounded-lg border bg-card p-4" data-testid="check-run" data-status={run.status}>
      <div className="flex flex-wrap items-baseline gap-x-4 gap-y-1">
        {going ? (
          <p className="flex items-center gap-2 text-sm font-medium" data-testid="check-run-progress">
            <Loader2 className="size-4 animate-spin" /> {run.status === 'queued' ? 'Waiting to start…' : `Checked ${doneCount(run)} of ${run.total}…`}
          </p>
        ) : (
          <p className="text-sm font-medium" data-testid="check-run-summary">
            <span className="text-lg font-semibold tabular-nums">{accuracyText(run.accuracy)}</span> · {run.passed} of {run.total} passed
            {run.failed > 0 && ` · ${run.failed} failed`}
            {run.errors > 0 && ` · ${run.errors} with errors`}
          </p>
        )}
        <p className="text-xs text-muted-foreground tabular-nums">
          {run.model && <span className="font-mono">{run.model} · </span>}
          {formatNumber(run.tokens_in)} in · {formatNumber(run.tokens_out)} out tokens
          {run.cost_usd != null && ` · ${formatCost(run.cost_usd)}`}
          {!going && durationOf(run) != null && ` · ${formatDuration(durationOf(run))}`}
        </p>
      </div>
      {going && run.total > 0 && (
        <div className="h-1.5 overflow-hidden rounded-full bg-muted" role="progressbar" aria-valuemin={0} aria-valuemax={run.total} aria-valuenow={doneCount(run)}>
          <div className="h-full bg-primary transition-all" style={{ width: `${(doneCount(run) / run.total) * 100}%` }} />
        </div>
      )}
      {run.status === 'failed' && run.error && (
        <p role="alert" className="text-sm text-destructive">
          {run.error}
        </p>
      )}
      {!!run.results?.length && (
        <ul className="divide-y rounded-md border">
          {run.results.map((r, i) => (
            <li key={r.check_id ?? i} className="space-y-1 px-3 py-2 text-sm" data-testid="check-result" data-status={r.status}>
              <div className="flex items-start gap-2">
                <ResultBadge status={r.status} />
                <span className="min-w-0 flex-1 break-words">{questionOf(r)}</span>
                {r.run_id && run.session_id && (
                  <Link className="shrink-0 text-xs text-primary underline-offset-4 hover:underline" to={`/projects/${projectId}/sessions/${run.session_id}#run-${r.run_id}`}>
                    Open its run
                  </Link>
                )}
              </div>
              {r.answer && (
                <p className="line-clamp-3 pl-1 text-xs break-words whitespace-pre-wrap text-muted-foreground" data-testid="check-answer">
                  {r.answer}
                </p>
              )}
              {r.detail && <p className="pl-1 text-xs text-destructive">{r.detail}</p>}
              {r.status === 'failed' && r.expected && !r.detail && <p className="pl-1 text-xs text-muted-foreground">Expected {expectedText(r.expected)}</p>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The project's check runs, newest first, each with its change from the one before it. */
export function CheckHistory({ runs, selected, onSelect }: { runs: CheckRun[]; selected: string | null; onSelect: (id: string) => void }) {
  return (
    <table className="w-full text-sm" data-testid="check-history">
      <thead className="text-left text-xs text-muted-foreground">
        <tr>
          <th className="py-1.5 pr-3 font-medium">When</th>
          <th className="py-1.5 pr-3 font-medium">Accuracy</th>
          <th className="py-1.5 pr-3 font-medium">Passed</th>
          <th className="py-1.5 pr-3 font-medium">Tokens</th>
          <th className="py-1.5 pr-3 font-medium">Cost</th>
          <th className="py-1.5 font-medium">Time</th>
        </tr>
      </thead>
      <tbody className="divide-y">
        {runs.map((r, i) => {
          const change = accuracyChange(r, runs[i + 1]);
          return (
            <tr
              key={r.id}
              className={`cursor-pointer tabular-nums hover:bg-muted/50 ${selected === r.id ? 'bg-muted/60' : ''}`}
              onClick={() => onSelect(r.id)}
              data-testid="check-history-row"
            >
              <td className="py-1.5 pr-3">
                <button type="button" className="cursor-pointer text-left hover:underline" onClick={() => onSelect(r.id)}>
                  {formatDate(r.started_at ?? r.created_at ?? '')}
                </button>
              </td>
              <td className="py-1.5 pr-3">
                {isGoing(r.status) ? 'running…' : accuracyText(r.accuracy)}
                {change && <span className="ml-1.5 text-xs text-muted-foreground">({change})</span>}
              </td>
              <td className="py-1.5 pr-3">
                {r.passed}/{r.total}
              </td>
              <td className="py-1.5 pr-3">{formatNumber(r.tokens_in + r.tokens_out)}</td>
              <td className="py-1.5 pr-3">{formatCost(r.cost_usd)}</td>
              <td className="py-1.5">{formatDuration(durationOf(r))}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
