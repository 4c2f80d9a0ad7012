import { useQuery } from '@tanstack/react-query';
import { AlertTriangle, Check, Copy, Link2, Loader2 } from 'lucide-react';
import { useRef, useState } from 'react';
import type { SessionOut, ShareCreated, ShareOut } from '@/client';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { FormError } from '@/components/form-error';
import { LoadState } from '@/components/notice';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';
import { Input } from '@/components/ui/input';
import { Segmented } from '@/components/ui/segmented';
import { useAuthStore } from '@/features/auth/auth-store';
import { RunPicker, useRunChoice } from '@/features/sessions/run-picker';
import { formatDate } from '@/lib/utils';
import { can, useProjectRole } from '@/features/projects/role';
import { useCreateShare, useReissueShare, useRevokeShare } from './mutations';
import { sharesQuery } from './queries';

/** How long a new link works: the server takes 1 to 365 days. */
export const EXPIRIES = [
  { days: 7, label: '7 days' },
  { days: 30, label: '30 days' },
  { days: 90, label: '90 days' },
  { days: 365, label: '1 year' },
] as const;

const day = (iso: string) => new Date(iso).toLocaleDateString(undefined, { dateStyle: 'medium' });

/** Where a link stands: it works, was revoked, ran out, or died with its author's access. */
export function shareState(share: Pick<ShareOut, 'active' | 'revoked_at' | 'status'>): { label: string; variant: 'success' | 'default' | 'warning' } {
  if (share.status === 'author_lost_access') return { label: 'Author lost access', variant: 'warning' };
  if (share.active) return { label: 'Active', variant: 'success' };
  return share.revoked_at ? { label: 'Revoked', variant: 'default' } : { label: 'Expired', variant: 'warning' };
}

/**
 * Share a session as a read-only report: anyone with the link reads the chosen questions (the
 * answered ones, to start with) without signing in, until it expires or is revoked. The link is
 * shown once, when it is made; the session's links are listed with who made them, and revoked.
 */
export function ShareDialog({ session, open, onOpenChange }: { session: SessionOut; open: boolean; onOpenChange: (open: boolean) => void }) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      {open && <Share session={session} />}
    </Dialog>
  );
}

function Share({ session }: { session: SessionOut }) {
  const [made, setMade] = useState<ShareCreated | null>(null);
  return (
    <DialogContent className="max-h-[calc(100dvh-2rem)] max-w-xl overflow-y-auto" data-testid="share-dialog">
      <div className="space-y-1 pr-6">
        <DialogTitle>Share a read-only report</DialogTitle>
        <DialogDescription>
          Anyone with the link reads the questions you choose, with their answers, charts and tables, without signing in, until the link expires
          or is revoked. Questions asked later are not shown.
        </DialogDescription>
      </div>
      {made ? <MadeLink share={made} onAnother={() => setMade(null)} /> : <NewLink session={session} onMade={setMade} />}
      <Links sessionId={session.id} />
    </DialogContent>
  );
}

function NewLink({ session, onMade }: { session: SessionOut; onMade: (share: ShareCreated) => void }) {
  const choice = useRunChoice(session.id);
  const [days, setDays] = useState<number>(30);
  const create = useCreateShare(session.id);
  return (
    <div className="grid gap-4">
      <div className="grid gap-2">
        <span className="text-sm font-medium" aria-hidden>
          The link works for
        </span>
        <Segmented
          label="The link works for"
          className="grid-cols-4"
          value={days}
          onChange={setDays}
          items={EXPIRIES.map((x) => ({ value: x.days, content: x.label }))}
        />
      </div>
      <RunPicker choice={choice} empty="No questions yet: there is nothing to share." testId="share-runs" />
      <FormError>{create.error?.message ?? null}</FormError>
      <DialogFooter className="flex-wrap items-center">
        <span className="mr-auto text-xs text-muted-foreground">
          {choice.chosen.size} of {choice.runs.length} question{choice.runs.length === 1 ? '' : 's'}
        </span>
        <Button
          onClick={() => create.mutate({ expires_in_days: days, runs: choice.chosenIds }, { onSuccess: onMade })}
          disabled={create.isPending || choice.chosenIds.length === 0}
        >
          {create.isPending ? <Loader2 className="animate-spin" /> : <Link2 />}
          {create.isPending ? 'Creating…' : 'Create link'}
        </Button>
      </DialogFooter>
    </div>
  );
}

/** The new link, shown this once, with a button to copy it. */
function MadeLink({ share, onAnother, another = 'Make another link' }: { share: ShareCreated; onAnother: () => void; another?: string }) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'yes' | 'select' | null>(null);
  const copy = () => {
    input.current?.select();
    if (!navigator.clipboard) return setCopied('select');
    navigator.clipboard.writeText(share.url).then(
      () => setCopied('yes'),
      () => setCopied('select'),
    );
  };
  return (
    <div className="grid gap-3 rounded-lg border border-emerald-500/30 bg-emerald-500/5 p-3" data-testid="share-made">
      <p className="text-sm font-medium text-emerald-800 dark:text-emerald-300">Link created. It works until {day(share.expires_at)}.</p>
      <div className="flex gap-2">
        <Input
          ref={input}
          readOnly
          aria-label="The link"
          value={share.url}
          className="font-mono text-xs"
          onFocus={(e) => e.currentTarget.select()}
          data-testid="share-url"
        />
        <Button variant="outline" onClick={copy}>
          {copied === 'yes' ? <Check /> : <Copy />} {copied === 'yes' ? 'Copied' : 'Copy'}
        </Button>
      </div>
      <p className="flex items-start gap-2 text-xs text-amber-800 dark:text-amber-300" role="note">
        <AlertTriangle className="mt-px size-3.5 shrink-0" />
        <span>
          {copied === 'select' ? 'Press Ctrl+C (⌘C) to copy the selected link. ' : ''}
          This link will not be shown again: copy it now. Later you can revoke it, but not see it.
        </span>
      </p>
      <div>
        <Button variant="ghost" size="sm" onClick={onAnother}>
          {another}
        </Button>
      </div>
    </div>
  );
}

/** The session's links: who made each and when, how long it works, a Revoke while it does,
 * and (owners) a Re-issue for one that died when its author lost access. */
function Links({ sessionId }: { sessionId: string }) {
  const shares = useQuery(sharesQuery(sessionId));
  const revoke = useRevokeShare(sessionId);
  const reissue = useReissueShare(sessionId);
  const owner = can(useProjectRole(), 'owner');
  const me = useAuthStore((s) => s.auth?.user.id);
  const [toRevoke, setToRevoke] = useState<ShareOut | null>(null);
  const items = shares.data?.items ?? [];
  return (
    <section aria-labelledby="share-links" className="grid gap-2 border-t pt-4">
      <h3 id="share-links" className="text-sm font-medium">
        Links to this session
      </h3>
      <LoadState query={shares} loading="Loading the links…" />
      {shares.data && items.length === 0 && <p className="text-sm text-muted-foreground">No links yet.</p>}
      {items.length > 0 && (
        <ul className="divide-y rounded-lg border" aria-label="Links" data-testid="share-list">
          {items.map((s) => {
            const state = shareState(s);
            const by = s.created_by ? (s.created_by.user_id === me ? 'you' : s.created_by.email) : 'a former user';
            return (
              <li key={s.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 px-3 py-2 text-sm" data-testid="share-row" data-state={state.label.toLowerCase()}>
                <Badge variant={state.variant}>{state.label}</Badge>
                <div className="min-w-0 flex-1 basis-56">
                  <p className="truncate">
                    By <span className="font-medium">{by}</span> · {formatDate(s.created_at)}
                  </p>
                  <p className="text-xs text-muted-foreground">
                    {s.runs.length} question{s.runs.length === 1 ? '' : 's'} ·{' '}
                    {s.revoked_at ? `revoked ${formatDate(s.revoked_at)}` : `${s.status === 'expired' ? 'expired' : 'expires'} ${day(s.expires_at)}`}
                  </p>
                  {s.status === 'author_lost_access' && (
                    <p className="text-xs text-amber-800 dark:text-amber-300">
                      It opens nothing: whoever made it is no longer an editor of this project.{owner ? ' Re-issue it to make it yours.' : ' An owner can re-issue it.'}
                    </p>
                  )}
                </div>
                {s.status === 'author_lost_access' && owner && (
                  <Button variant="outline" size="sm" onClick={() => reissue.mutate(s.id)} disabled={reissue.isPending && reissue.variables === s.id}>
                    Re-issue
                  </Button>
                )}
                {s.active && (
                  <Button variant="outline" size="sm" onClick={() => setToRevoke(s)} disabled={revoke.isPending && revoke.variables === s.id}>
                    Revoke
                  </Button>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {reissue.data && <MadeLink share={reissue.data} onAnother={() => reissue.reset()} another="Done" />}
      <FormError>{revoke.error?.message ?? reissue.error?.message ?? null}</FormError>
      <ConfirmDialog
        open={!!toRevoke}
        onOpenChange={(o) => !o && setToRevoke(null)}
        title="Revoke this link?"
        description="Whoever opens it from now on reads that it no longer works. This cannot be undone; make a new link to share again."
        confirmLabel="Revoke"
        pending={revoke.isPending}
        onConfirm={() => toRevoke && revoke.mutate(toRevoke.id, { onSettled: () => setToRevoke(null) })}
      />
    </section>
  );
}
