import { Loader2 } from 'lucide-react';
import { Badge } from '@/components/ui/badge';
import { formatDate } from '@/lib/utils';
import { relativeTime } from './schedule-words';

const STATUS: Record<string, { label: string; variant: 'success' | 'error' | 'warning' | 'running' | 'default' }> = {
  queued: { label: 'Queued', variant: 'running' },
  running: { label: 'Running', variant: 'running' },
  succeeded: { label: 'Succeeded', variant: 'success' },
  failed: { label: 'Failed', variant: 'error' },
  skipped: { label: 'Skipped', variant: 'default' },
};

/** A job run's status as a badge. */
export function RunStatusBadge({ status }: { status: string }) {
  const s = STATUS[status] ?? { label: status, variant: 'default' as const };
  return (
    <Badge variant={s.variant} data-testid="run-status" data-status={status}>
      {(status === 'running' || status === 'queued') && <Loader2 className="animate-spin" />}
      {s.label}
    </Badge>
  );
}

/** "in 3 days" with the date and time on hover (a <time> element). */
export function When({ iso, className }: { iso: string; className?: string }) {
  return (
    <time dateTime={iso} title={formatDate(iso)} className={className}>
      {relativeTime(iso)}
    </time>
  );
}

/** Whether the job's checks are written yet: writing (a spinner), ready, partial or failed, with the note. */
export function ChecksState({ checks }: { checks: { status: string; note?: string | null } }) {
  const { status, note } = checks;
  const [variant, label] =
    status === 'writing'
      ? (['running', 'Writing checks…'] as const)
      : status === 'ready'
        ? (['success', 'Checks ready'] as const)
        : status === 'partial'
          ? (['warning', 'Some checks kept'] as const)
          : (['error', 'No checks'] as const);
  return (
    <span className="inline-flex min-w-0 flex-wrap items-center gap-2 text-xs text-muted-foreground" data-testid="job-checks" data-status={status}>
      <Badge variant={variant}>
        {status === 'writing' && <Loader2 className="animate-spin" />}
        {label}
      </Badge>
      {note && <span className="min-w-0 break-words">{note}</span>}
    </span>
  );
}
