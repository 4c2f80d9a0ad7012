import { useQuery, useQueryClient } from '@tanstack/react-query';
import { LogOut, UserMinus, UserPlus } from 'lucide-react';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import type { MemberOut, ProjectOut } from '@/client';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { LoadState, Notice, type NoticeText } from '@/components/notice';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogTitle } from '@/components/ui/dialog';
import { useAuthStore } from '@/features/auth/auth-store';
import { projectKeys } from '@/features/projects/queries';
import { blockedFor, roleLabel, withArticle } from '@/features/projects/role';
import { InvitesList } from '@/features/users/invites-list';
import { formatUsage } from '@/lib/utils';
import { EmailRoleForm } from './email-role-form';
import { InviteMember } from './invite-member';
import { useAddMember, useChangeRole, useRemoveMember } from './mutations';
import { membersQuery } from './queries';
import { RoleSelect } from './role-select';

/** "3 questions · 12,345 tokens · $0.02": what a member's questions in the project have spent. */
export function memberUsage(m: Pick<MemberOut, 'runs' | 'tokens_in' | 'tokens_out' | 'cost_usd'>): string {
  if (m.runs === 0) return 'No questions yet';
  return `${m.runs} ${m.runs === 1 ? 'question' : 'questions'} · ${formatUsage(m)}`;
}

/** Owners add a member by the email they sign in with. */
function AddMember({ projectId, onAdded }: { projectId: string; onAdded: (m: MemberOut) => void }) {
  const add = useAddMember(projectId);
  return (
    <EmailRoleForm
      label="Add a member"
      placeholder="Their sign-in email"
      roleLabel="Role of the new member"
      button="Add"
      icon={<UserPlus />}
      note="For someone with an account; invite the others below."
      pending={add.isPending}
      error={add.error?.message ?? null}
      onSubmit={(email, role, done) =>
        add.mutate(
          { email, role },
          {
            onSuccess: (m) => {
              done();
              onAdded(m);
            },
          },
        )
      }
      onEdit={() => add.reset()}
    />
  );
}

type Confirm = { kind: 'remove' | 'leave'; member: MemberOut } | null;

/**
 * Who is in a project, with each member's role and what their questions have spent. Owners add
 * members, change roles and remove members; anyone can leave (the last owner cannot: the server says so).
 */
export function MembersDialog({ project, open, onOpenChange }: { project: ProjectOut; open: boolean; onOpenChange: (open: boolean) => void }) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      {open && <Members project={project} onClose={() => onOpenChange(false)} />}
    </Dialog>
  );
}

function Members({ project, onClose }: { project: ProjectOut; onClose: () => void }) {
  const me = useAuthStore((s) => s.auth?.user.id);
  const members = useQuery(membersQuery(project.id));
  const change = useChangeRole(project.id);
  const remove = useRemoveMember(project.id);
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [confirm, setConfirm] = useState<Confirm>(null);
  const [notice, setNotice] = useState<NoticeText | null>(null);
  const owner = project.role === 'owner';
  const fail = (e: Error) => setNotice({ tone: 'error', text: e.message });

  const onConfirm = () => {
    if (!confirm) return;
    const { kind, member } = confirm;
    remove.mutate(member.user_id, {
      onSuccess: () => {
        setConfirm(null);
        if (kind === 'leave') {
          onClose();
          void qc.invalidateQueries({ queryKey: projectKeys.all });
          void navigate('/');
        } else setNotice({ tone: 'ok', text: `${member.email} is no longer a member.` });
      },
      onError: (e) => {
        setConfirm(null);
        fail(e);
      },
    });
  };

  return (
    <DialogContent className="max-h-[calc(100dvh-2rem)] max-w-2xl overflow-y-auto" data-testid="members-dialog">
      <div className="space-y-1 pr-6">
        <DialogTitle>Members</DialogTitle>
        <DialogDescription>
          Who works in {project.name}. Viewers read everything; editors also upload, ask and share; owners also manage members, budgets and
          sources.
        </DialogDescription>
      </div>
      {owner ? (
        <>
          <AddMember projectId={project.id} onAdded={(m) => setNotice({ tone: 'ok', text: `${m.email} is now ${withArticle(m.role)}.` })} />
          <InviteMember projectId={project.id} />
        </>
      ) : (
        <p className="text-sm text-muted-foreground" data-testid="members-blocked">
          {blockedFor(project.role, 'owner', 'add or remove members and change their roles')}
        </p>
      )}
      {notice && <Notice notice={notice} testId="members-notice" />}
      <LoadState query={members} loading="Loading the members…" />
      {members.data && (
        <ul className="divide-y rounded-lg border" aria-label="Members">
          {members.data.items.map((m) => {
            const self = m.user_id === me;
            const busy = (change.isPending && change.variables?.userId === m.user_id) || (remove.isPending && remove.variables === m.user_id);
            return (
              <li key={m.user_id} className="flex flex-wrap items-center gap-x-3 gap-y-1.5 px-3 py-2.5" data-testid="member-row" data-email={m.email}>
                <div className="min-w-0 flex-1 basis-48">
                  <p className="flex min-w-0 items-center gap-2 text-sm">
                    <span className="truncate font-medium" title={m.email}>
                      {m.email}
                    </span>
                    {self && <Badge>You</Badge>}
                  </p>
                  <p className="text-xs text-muted-foreground tabular-nums" data-testid="member-usage">
                    {memberUsage(m)}
                  </p>
                </div>
                {owner ? (
                  <RoleSelect
                    label={`Role of ${m.email}`}
                    value={change.isPending && change.variables?.userId === m.user_id ? change.variables.role : m.role}
                    disabled={busy}
                    onChange={(role) => {
                      setNotice(null);
                      change.mutate(
                        { userId: m.user_id, role },
                        { onSuccess: (saved) => setNotice({ tone: 'ok', text: `${saved.email} is now ${withArticle(saved.role)}.` }), onError: fail },
                      );
                    }}
                  />
                ) : (
                  <Badge variant={m.role === 'owner' ? 'running' : 'default'} data-testid="member-role">
                    {roleLabel(m.role)}
                  </Badge>
                )}
                {self ? (
                  <Button variant="outline" size="sm" disabled={busy} onClick={() => setConfirm({ kind: 'leave', member: m })}>
                    <LogOut /> Leave
                  </Button>
                ) : (
                  owner && (
                    <Button variant="ghost" size="sm" disabled={busy} aria-label={`Remove ${m.email}`} onClick={() => setConfirm({ kind: 'remove', member: m })}>
                      <UserMinus /> Remove
                    </Button>
                  )
                )}
              </li>
            );
          })}
        </ul>
      )}
      {members.data && members.data.total > members.data.items.length && (
        <p className="text-xs text-muted-foreground" data-testid="members-more">
          The first {members.data.items.length} of {members.data.total} members are shown.
        </p>
      )}
      {owner && <InvitesList projectId={project.id} pendingOnly compact />}
      <ConfirmDialog
        open={!!confirm}
        onOpenChange={(o) => !o && setConfirm(null)}
        title={confirm?.kind === 'leave' ? 'Leave this project?' : 'Remove this member?'}
        description={
          confirm?.kind === 'leave'
            ? `You will no longer see ${project.name}, its datasets or its sessions, until an owner adds you again.`
            : `${confirm?.member.email ?? ''} will no longer see ${project.name}. What they asked stays in its sessions.`
        }
        confirmLabel={confirm?.kind === 'leave' ? 'Leave' : 'Remove'}
        pending={remove.isPending}
        onConfirm={onConfirm}
      />
    </DialogContent>
  );
}
