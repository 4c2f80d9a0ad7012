import { AlertCircle, Check, Loader2, Wrench, X } from 'lucide-react';
import { useId } from 'react';
import { toast } from 'sonner';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Switch } from '@/components/ui/switch';
import { cn } from '@/lib/utils';
import { useDecideRepair, useUpdateJob } from './mutations';
import { When } from './status';
import type { Job, Repair } from './types';

const failure = (e: unknown) => (e instanceof Error && e.message ? e.message : 'That did not work.');

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
  const repair = job.pending_repair;
  if (!repair || repair.status !== 'proposed') return null;
  const go = (decision: 'approve' | 'reject') =>
    decide.mutate({ repairId: repair.id, decision }, { onSuccess: () => toast.success(decision === 'approve' ? 'Repair approved.' : 'Repair rejected.') });
  return (
    <section className="space-y-3 rounded-lg border border-amber-500/40 bg-amber-500/5 p-4" data-testid="repair-banner" aria-label="Proposed repair">
      <div className="flex flex-wrap items-start gap-2">
        <Wrench className="mt-0.5 size-4 shrink-0 text-amber-600" />
        <div className="min-w-0 flex-1 space-y-1">
          <p className="text-sm font-medium">A repair of this job's code waits for approval</p>
          <p className="text-sm break-words text-muted-foreground" data-testid="repair-reason">
            {repair.reason}
          </p>
          <p className="text-xs text-muted-foreground">
            Proposed <When iso={repair.proposed_at} />
          </p>
        </div>
      </div>
      <DiffView diff={repair.diff} />
      <RepairChecks repair={repair} />
      {decide.isError && (
        <p role="alert" className="flex gap-2 text-sm text-destructive">
          <AlertCircle className="mt-0.5 size-4 shrink-0" /> {failure(decide.error)}
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

const OUTCOME: Record<Repair['status'], { label: string; variant: 'warning' | 'success' | 'error' | 'default' }> = {
  proposed: { label: 'Repair proposed', variant: 'warning' },
  approved: { label: 'Repair approved', variant: 'success' },
  applied: { label: 'Repair applied', variant: 'success' },
  rejected: { label: 'Repair rejected', variant: 'default' },
  failed: { label: 'Repair failed', variant: 'error' },
};

/** In the history: what became of the repair a failed run led to, and who decided. */
export function RepairOutcome({ repair }: { repair: Repair }) {
  const o = OUTCOME[repair.status] ?? OUTCOME.proposed;
  return (
    <details className="text-xs" data-testid="repair-outcome" data-status={repair.status}>
      <summary className="flex cursor-pointer flex-wrap items-center gap-2">
        <Badge variant={o.variant}>
          <Wrench /> {o.label}
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
        <DiffView diff={repair.diff} />
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
