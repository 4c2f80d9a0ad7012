import { useQuery } from '@tanstack/react-query';
import { X } from 'lucide-react';
import { useId } from 'react';
import type { InviteOut } from '@/client';
import { LoadState } from '@/components/notice';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { useRevokeInvite } from './mutations';
import { invitesQuery } from './queries';

const STATUS: Record<InviteOut['status'], { label: string; variant: 'success' | 'default' | 'warning' | 'running' }> = {
  pending: { label: 'Waiting', variant: 'running' },
  accepted: { label: 'Accepted', variant: 'success' },
  revoked: { label: 'Revoked', variant: 'default' },
  expired: { label: 'Expired', variant: 'warning' },
};

/** How the invite's email went, in a few words (its error on hover). */
function emailLabel(invite: InviteOut): string {
  switch (invite.email_status) {
    case 'sent':
      return 'Emailed';
    case 'sending':
      return 'Emailing…';
    case 'failed':
      return 'Email failed';
    default:
      return 'Link passed on by hand';
  }
}

const day = (iso: string) => new Date(iso).toLocaleDateString(undefined, { dateStyle: 'medium' });

/**
 * The invites one manages (an administrator: all; an owner: their project's), with revoke for those
 * still waiting. `pendingOnly` (the members dialog) leaves out the accepted, revoked and expired ones.
 */
export function InvitesList({ projectId, pendingOnly = false, compact = false }: { projectId?: string; pendingOnly?: boolean; compact?: boolean }) {
  const invites = useQuery(invitesQuery(projectId));
  const revoke = useRevokeInvite();
  const all = invites.data?.items ?? [];
  const items = pendingOnly ? all.filter((i) => i.status === 'pending') : all;
  const headingId = useId();
  return (
    <section className="space-y-3" aria-labelledby={headingId}>
      <h2 id={headingId} className={compact ? 'text-sm font-medium' : 'text-lg font-semibold'}>
        {pendingOnly ? 'Pending invites' : 'Invites'}
      </h2>
      <LoadState query={invites} loading="Loading invites…" />
      {invites.isSuccess && items.length === 0 && (
        <p className="text-sm text-muted-foreground" data-testid="invites-empty">
          {pendingOnly ? 'No invites waiting.' : 'No invites yet.'}
        </p>
      )}
      {revoke.error && (
        <p role="alert" className="text-sm text-destructive">
          {revoke.error.message}
        </p>
      )}
      {items.length > 0 && (
      <ul className="divide-y rounded-xl border bg-card" aria-label={pendingOnly ? 'Pending invites' : 'Invites'}>
        {items.map((i) => (
          <li key={i.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 px-3 py-2.5 text-sm" data-testid="invite-row" data-email={i.email}>
            <span className="min-w-0 flex-1 basis-40 truncate font-medium" title={i.email}>
              {i.email}
            </span>
            {/* Within one project (the members dialog) its name goes without saying; the role does not. */}
            {projectId
              ? i.role && <span className="text-xs text-muted-foreground">as {i.role}</span>
              : i.project_name && (
                  <span className="truncate text-xs text-muted-foreground">
                    {i.project_name} · {i.role}
                  </span>
                )}
            <Badge variant={STATUS[i.status].variant}>{STATUS[i.status].label}</Badge>
            <span className={i.email_status === 'failed' ? 'text-xs text-destructive' : 'text-xs text-muted-foreground'} title={i.email_error ?? undefined}>
              {emailLabel(i)}
            </span>
            <span className="text-xs whitespace-nowrap text-muted-foreground">until {day(i.expires_at)}</span>
            {i.status === 'pending' && (
              <Button size="sm" variant="outline" disabled={revoke.isPending} onClick={() => revoke.mutate(i.id)}>
                <X /> Revoke
              </Button>
            )}
            {i.email_error && <p className="w-full text-xs text-destructive">{i.email_error}</p>}
          </li>
        ))}
      </ul>
      )}
    </section>
  );
}
