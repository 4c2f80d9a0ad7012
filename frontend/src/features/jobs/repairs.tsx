import { AlertCircle, Check, Loader2, Wrench, X } from 'lucide-react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId } from 'react';
import { toast } from 'sonner';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Switch } from '@/components/ui/switch';
import { ApiError } from '@/lib/api';
import { cn } from '@/lib/utils';
import { useDecideRepair, useUpdateJob } from './mutations';
import { jobKeys, jobRunsQuery } from './queries';
import { When } from './status';
import type { Job, Repair, RepairStatus } from './types';

const failure = (e: unknown) => (e instanceof Error && e.message ? e.message : 'That did not work.');

/** Why a decision was refused, said for the editor (409 repair_stale / repair_not_pending). */
export function decisionFailure(e: unknown) {
  if (e instanceof ApiError && e.code === 'repair_stale')
    return "The job's code changed since this repair was proposed, so it cannot be applied any more. Reject it, then run the job again for a new repair.";
  if (e instanceof ApiError && e.code === 'repair_not_pending')
    return 'This repair is no longer waiting for a decision: someone decided first, or it ended. The history shows what became of it.';
  return failure(e);
}

/** A unified diff, its added lines green and removed lines red. */
export function DiffView({ diff }: { diff: string }) {
  return (
    <pre className="max-h-80 overflow-auto rounded-md border bg-code p-2 font-mono text-xs leading-relaxed" data-testid="repair-diff">
      {diff.split('\n').map((line, i) => (
        <div
          key={i}
          className={cn(
            'whitespace-pre',
            line.startsWith('+') && !line.startsWith('+++') && 'bg-emerald-500/10 text-emerald-700 dark:text-emerald-400',
            line.startsWith('-') && !line.startsWith('---') && 'bg-destructive/10 text-destructive',
            line.startsWith('@@') && 'text-muted-foreground',
          )}
        >
          {line || ' '}
        </div>
      ))}
    </pre>
  );
}

/**
 * The repair waiting for an editor: why it was proposed, its diff, the checks it passed, and
 * Approve / Reject (editors; viewers read it). Nothing when the job has none.
 */
export function RepairBanner({ job, editor }: { job: Job; editor: boolean }) {
  const decide = useDecideRepair(job);
  const making = useRepairUnderWay(job);
  const repair = job.pending_repair;
  if (!repair || repair.status !== 'proposed') return making ? <RepairUnderWay repair={making} auto={job.autonomy === 'auto'} /> : null;
  const go = (decision: 'approve' | 'reject') =>
    decide.mutate(
      { repairId: repair.id, decision },
      {
        onSuccess: () => toast.success(decision === 'approve' ? 'Repair approved: the job runs the new code from now on.' : 'Repair rejected: the job keeps its code.'),
        // The banner goes when the repair was decided elsewhere: the toast still says why.
        onError: (e) => e instanceof ApiError && e.code === 'repair_not_pending' && toast.error(decisionFailure(e)),
      },
    );
  return (
    <section className="space-y-3 rounded-lg border border-amber-500/40 bg-amber-500/5 p-4" data-testid="repair-banner" aria-label="Proposed repair">
      <div className="flex flex-wrap items-start gap-2">
        <Wrench className="mt-0.5 size-4 shrink-0 text-amber-600" />
        <div className="min-w-0 flex-1 space-y-1">
          <p className="text-sm font-medium">A repair of this job's code waits for approval</p>
          <p className="text-sm break-words text-muted-foreground" data-testid="repair-reason">
            {repair.reason}
          </p>
          {repair.note && (
            <p className="text-sm break-words" data-testid="repair-note">
              {repair.note}
            </p>
          )}
          {repair.proposed_at && (
            <p className="text-xs text-muted-foreground">
              Proposed <When iso={repair.proposed_at} />
            </p>
          )}
        </div>
      </div>
      <DiffView diff={repair.diff} />
      <RepairChecks repair={repair} />
      {decide.isError && (
        <p role="alert" className="flex gap-2 text-sm text-destructive">
          <AlertCircle className="mt-0.5 size-4 shrink-0" /> {decisionFailure(decide.error)}
        </p>
      )}
      {editor && (
        <div className="flex gap-2">
          <Button size="sm" onClick={() => go('approve')} disabled={decide.isPending}>
            {decide.isPending && decide.variables?.decision === 'approve' ? <Loader2 className="animate-spin" /> : <Check />} Approve
          </Button>
          <Button size="sm" variant="outline" onClick={() => go('reject')} disabled={decide.isPending}>
            <X /> Reject
          </Button>
        </div>
      )}
    </section>
  );
}

/**
 * The repair being made after a failed run (status `repairing`, seen on the run in the history),
 * if any. When the newest repair changes (made, then proposed or ended), the job is asked again
 * so its `pending_repair` shows.
 */
function useRepairUnderWay(job: Job) {
  const qc = useQueryClient();
  const runs = useQuery(jobRunsQuery(job.id));
  const newest = runs.data?.find((r) => r.repair)?.repair;
  const key = newest ? `${newest.id}:${newest.status}` : '';
  useEffect(() => {
    if (key) void qc.invalidateQueries({ queryKey: jobKeys.job(job.id) });
  }, [key, job.id, qc]);
  return newest?.status === 'repairing' ? newest : null;
}

function RepairUnderWay({ repair, auto }: { repair: Repair; auto: boolean }) {
  return (
    <section className="flex items-start gap-2 rounded-lg border border-sky-500/40 bg-sky-500/5 p-4" data-testid="repair-repairing" aria-label="Repair under way" aria-live="polite">
      <Loader2 className="mt-0.5 size-4 shrink-0 animate-spin text-sky-600" />
      <div className="min-w-0 flex-1 space-y-1">
        <p className="text-sm font-medium">The agent is repairing this job's code</p>
        <p className="text-sm break-words text-muted-foreground">
          The last run failed: <span data-testid="repair-reason">{repair.reason}</span>
        </p>
        <p className="text-xs text-muted-foreground">
          It tries new code against today's data until the job's checks pass;{' '}
          {auto ? 'the repair is then used at once (the history shows it).' : 'the repair then shows here for an editor to approve.'}
        </p>
      </div>
    </section>
  );
}

function RepairChecks({ repair }: { repair: Repair }) {
  if (!repair.checks.length) return null;
  return (
    <ul className="space-y-0.5 text-xs" data-testid="repair-checks">
      {repair.checks.map((c) => (
        <li key={c.name} className="flex items-start gap-1.5">
          {c.passed ? <Check className="mt-px size-3.5 shrink-0 text-emerald-600" /> : <X className="mt-px size-3.5 shrink-0 text-destructive" />}
          <span className="min-w-0 break-words">
            <span className="font-mono">{c.name}</span>
            {!c.passed && c.message && <span className="text-destructive"> — {c.message}</span>}
          </span>
        </li>
      ))}
    </ul>
  );
}

const OUTCOME: Record<RepairStatus, { label: string; variant: 'warning' | 'success' | 'error' | 'default' | 'running' }> = {
  repairing: { label: 'Repairing…', variant: 'running' },
  proposed: { label: 'Repair proposed', variant: 'warning' },
  approved: { label: 'Repair approved', variant: 'success' },
  applied: { label: 'Repair applied', variant: 'success' },
  rejected: { label: 'Repair rejected', variant: 'default' },
  failed: { label: 'Repair failed', variant: 'error' },
};

/** In the history: what became of the repair a failed run led to, and who decided. */
export function RepairOutcome({ repair }: { repair: Repair }) {
  const o = OUTCOME[repair.status as RepairStatus] ?? { label: repair.status, variant: 'default' as const };
  return (
    <details className="text-xs" data-testid="repair-outcome" data-status={repair.status}>
      <summary className="flex cursor-pointer flex-wrap items-center gap-2">
        <Badge variant={o.variant}>
          {repair.status === 'repairing' ? <Loader2 className="animate-spin" /> : <Wrench />} {o.label}
        </Badge>
        {repair.decided_by_name && (
          <span className="text-muted-foreground" data-testid="repair-decided-by">
            by {repair.decided_by_name}
            {repair.decided_at && (
              <>
                {' '}
                <When iso={repair.decided_at} />
              </>
            )}
          </span>
        )}
        <span className="min-w-0 break-words text-muted-foreground">{repair.reason}</span>
      </summary>
      <div className="mt-2 space-y-2">
        {repair.note && (
          <p className="break-words text-muted-foreground" data-testid="repair-note">
            {repair.note}
          </p>
        )}
        {repair.diff && <DiffView diff={repair.diff} />}
        <RepairChecks repair={repair} />
      </div>
    </details>
  );
}

/** "Apply repairs automatically" (PATCH autonomy auto | review): editors switch it, viewers read it. */
export function RepairAutonomy({ job, editor }: { job: Job; editor: boolean }) {
  const id = useId();
  const update = useUpdateJob(job);
  const auto = update.isPending ? update.variables.autonomy === 'auto' : job.autonomy === 'auto';
  return (
    <div className="flex items-start gap-3 text-sm">
      <Switch
        id={id}
        checked={auto}
        disabled={!editor || update.isPending}
        onCheckedChange={(on) => update.mutate({ autonomy: on ? 'auto' : 'review' }, { onError: (e) => toast.error(failure(e)) })}
        data-testid="repair-autonomy"
      />
      <label htmlFor={id} className="space-y-0.5">
        <span className="block font-medium">Apply repairs automatically</span>
        <span className="block text-xs text-muted-foreground">
          {auto
            ? 'When a run fails and the agent repairs the code so its checks pass again, the repair is used at once; the history shows it.'
            : 'A repair the agent proposes waits here for an editor to approve it before the job uses it.'}
        </span>
      </label>
    </div>
  );
}
