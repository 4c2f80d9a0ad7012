import { useQuery } from '@tanstack/react-query';
import { ChevronLeft, ChevronRight, Loader2 } from 'lucide-react';
import { useId, useState } from 'react';
import type { AuditEventOut } from '@/client';
import { LoadState } from '@/components/notice';
import { Button } from '@/components/ui/button';
import { useAuthStore } from '@/features/auth/auth-store';
import { cn, formatDate, formatNumber } from '@/lib/utils';
import { AUDIT_PAGE, auditQuery } from './queries';

/** What the log records (API.md, "Audit"), grouped for the filter. */
export const ACTION_GROUPS: { label: string; actions: { value: string; label: string }[] }[] = [
  {
    label: 'Project',
    actions: [
      { value: 'project.created', label: 'Project created' },
      { value: 'project.updated', label: 'Project renamed or described' },
      { value: 'project.budget_changed', label: 'Budget changed' },
    ],
  },
  {
    label: 'Members',
    actions: [
      { value: 'member.added', label: 'Member added' },
      { value: 'member.changed', label: 'Role changed' },
      { value: 'member.removed', label: 'Member removed or left' },
    ],
  },
  {
    label: 'Files',
    actions: [
      { value: 'file.uploaded', label: 'File uploaded' },
      { value: 'file.replaced', label: 'File replaced' },
      { value: 'file.deleted', label: 'File deleted' },
      { value: 'file.downloaded', label: 'File downloaded' },
    ],
  },
  {
    label: 'Data sources',
    actions: [
      { value: 'source.added', label: 'Source added' },
      { value: 'source.changed', label: 'Source changed' },
      { value: 'source.deleted', label: 'Source deleted' },
    ],
  },
  {
    label: 'Sessions and questions',
    actions: [
      { value: 'session.created', label: 'Session created' },
      { value: 'session.renamed', label: 'Session renamed' },
      { value: 'session.autonomy_changed', label: 'Review mode changed' },
      { value: 'session.deleted', label: 'Session deleted' },
      { value: 'run.asked', label: 'Question asked' },
      { value: 'run.ended', label: 'Question ended' },
      { value: 'run.stopped', label: 'Question stopped' },
      { value: 'review.decided', label: 'Code reviewed' },
      { value: 'input.answered', label: "Agent's question answered" },
    ],
  },
  {
    label: 'Shares and exports',
    actions: [
      { value: 'share.created', label: 'Link shared' },
      { value: 'share.revoked', label: 'Link revoked' },
      { value: 'share.opened', label: 'Shared link opened' },
      { value: 'export.downloaded', label: 'Session exported' },
    ],
  },
];

/** A detail's value as a line of text: numbers with separators, objects as JSON. */
function shown(value: unknown): string {
  if (value == null) return '—';
  if (typeof value === 'number') return Number.isInteger(value) ? formatNumber(value) : String(value);
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

function Who({ event, me }: { event: AuditEventOut; me: string | undefined }) {
  if (!event.actor) return <span className="text-muted-foreground">Workbench</span>;
  return (
    <span className="block truncate" title={event.actor.email}>
      {event.actor.user_id === me ? 'You' : event.actor.email}
    </span>
  );
}

/** The event's action ("member.added"), opening onto its particulars when it has any. */
function Action({ action, detail }: { action: string; detail: AuditEventOut['detail'] }) {
  const entries = Object.entries(detail ?? {});
  if (entries.length === 0) return <p className="font-mono text-[11px] text-muted-foreground">{action}</p>;
  return (
    <details className="text-xs text-muted-foreground">
      <summary className="w-fit cursor-pointer font-mono text-[11px] select-none hover:text-foreground" title="Show the details">
        {action}
      </summary>
      <dl className="mt-1 grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5 rounded-md bg-muted/50 px-2 py-1.5">
        {entries.map(([k, v]) => (
          <div key={k} className="contents">
            <dt className="font-mono">{k}</dt>
            <dd className="min-w-0 break-words">{shown(v)}</dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

/**
 * A project's audit log for its owners: who did what, newest first, a page at a time, one action
 * or all of them. The log is the server's: nothing here changes it.
 */
export function ActivityLog({ projectId }: { projectId: string }) {
  const id = useId();
  const me = useAuthStore((s) => s.auth?.user.id);
  const [page, setPage] = useState(0);
  const [action, setAction] = useState<string | null>(null);
  const log = useQuery(auditQuery(projectId, page, action));
  const total = log.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / AUDIT_PAGE));
  const items = log.data?.items ?? [];

  return (
    <div className="space-y-4" data-testid="activity-log">
      <div className="flex flex-wrap items-center gap-3">
        <label htmlFor={`${id}-action`} className="text-sm font-medium">
          Show
        </label>
        <select
          id={`${id}-action`}
          className="h-8 max-w-full cursor-pointer rounded-md border bg-card px-2 text-sm shadow-xs outline-none focus-visible:border-primary focus-visible:ring-2 focus-visible:ring-primary/20"
          value={action ?? ''}
          onChange={(e) => {
            setAction(e.target.value || null);
            setPage(0);
          }}
        >
          <option value="">All activity</option>
          {ACTION_GROUPS.map((g) => (
            <optgroup key={g.label} label={g.label}>
              {g.actions.map((a) => (
                <option key={a.value} value={a.value}>
                  {a.label}
                </option>
              ))}
            </optgroup>
          ))}
        </select>
        {log.data && (
          <span className="text-xs text-muted-foreground tabular-nums" data-testid="activity-total">
            {formatNumber(total)} {total === 1 ? 'event' : 'events'}
          </span>
        )}
        {log.isFetching && !log.isLoading && <Loader2 className="size-4 animate-spin text-muted-foreground" aria-label="Loading" />}
      </div>

      <LoadState query={log} loading="Loading the activity…" />
      {log.data && items.length === 0 && (
        <p className="rounded-lg border border-dashed px-4 py-6 text-center text-sm text-muted-foreground">
          {action ? 'Nothing of this kind has happened here.' : 'Nothing has happened here yet.'}
        </p>
      )}
      {items.length > 0 && (
        <div className={cn('md:rounded-xl md:border md:bg-card', log.isPlaceholderData && 'opacity-60')}>
          <table className="w-full text-sm max-md:block" aria-label="Activity">
            <thead className="text-left text-xs text-muted-foreground max-md:sr-only">
              <tr className="border-b">
                <th scope="col" className="w-40 px-3 py-2 font-medium">
                  When
                </th>
                <th scope="col" className="w-52 px-3 py-2 font-medium">
                  Who
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  What happened
                </th>
              </tr>
            </thead>
            <tbody className="max-md:grid max-md:gap-2">
              {items.map((e) => (
                <tr
                  key={e.id}
                  data-testid="activity-row"
                  data-action={e.action}
                  className="border-b align-top last:border-b-0 max-md:grid max-md:grid-cols-2 max-md:gap-x-3 max-md:gap-y-1 max-md:rounded-lg max-md:border max-md:bg-card max-md:p-3 max-md:last:border-b"
                >
                  <td className="px-3 py-2 whitespace-nowrap text-muted-foreground tabular-nums max-md:p-0 max-md:text-xs">
                    <time dateTime={e.at}>{formatDate(e.at)}</time>
                  </td>
                  <td className="max-w-52 px-3 py-2 max-md:max-w-none max-md:p-0 max-md:text-right max-md:text-xs">
                    <Who event={e} me={me} />
                  </td>
                  <td className="px-3 py-2 max-md:col-span-2 max-md:p-0">
                    <p className="break-words" data-testid="activity-summary">
                      {e.summary}
                    </p>
                    <Action action={e.action} detail={e.detail} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pages > 1 && (
        <nav className="flex items-center justify-end gap-2 text-sm" aria-label="Pages">
          <span className="mr-auto text-xs text-muted-foreground tabular-nums" data-testid="activity-page">
            Page {page + 1} of {pages}
          </span>
          <Button variant="outline" size="sm" disabled={page === 0} onClick={() => setPage(page - 1)}>
            <ChevronLeft /> Newer
          </Button>
          <Button variant="outline" size="sm" disabled={page + 1 >= pages || log.isPlaceholderData} onClick={() => setPage(page + 1)}>
            Older <ChevronRight />
          </Button>
        </nav>
      )}
    </div>
  );
}
