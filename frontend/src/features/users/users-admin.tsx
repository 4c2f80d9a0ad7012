import { useQuery } from '@tanstack/react-query';
import { Ban, CircleCheck, KeyRound, Plus, ShieldMinus, ShieldPlus } from 'lucide-react';
import type * as React from 'react';
import { useState } from 'react';
import type { UserOut, UserProjectOut } from '@/client';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { Badge } from '@/components/ui/badge';
import { GuardedButton } from '@/components/guarded-button';
import { LoadState, Notice, type NoticeText } from '@/components/notice';
import { Button } from '@/components/ui/button';
import { RoleBadge, withArticle } from '@/features/projects/role';
import { cn, formatDate } from '@/lib/utils';
import { InvitesList } from './invites-list';
import { useUpdateUser } from './mutations';
import { usersQuery } from './queries';
import { CreateUserDialog, ResetPasswordDialog } from './user-dialogs';

/** Why the administrator's own row cannot do something: the server refuses it too (409 cannot_change_self). */
export const OWN_ACCOUNT = {
  disable: 'You cannot disable your own account; another administrator can.',
  demote: 'You cannot remove your own administrator role; another administrator can.',
  reset: 'Change your own password from your account menu (Change password…).',
} as const;

type Dialogs = { kind: 'create' } | { kind: 'disable'; user: UserOut } | { kind: 'reset'; user: UserOut } | null;

const day = (iso: string) => new Date(iso).toLocaleDateString(undefined, { dateStyle: 'medium' });

function DateCell({ label, iso, none }: { label: string; iso: string | null | undefined; none: string }) {
  return (
    <td className="px-3 py-2.5 whitespace-nowrap text-muted-foreground max-md:p-0">
      <span className="block text-xs md:hidden">{label}</span>
      {iso ? (
        <time dateTime={iso} title={formatDate(iso)} className="max-md:text-foreground">
          {day(iso)}
        </time>
      ) : (
        <span className="max-md:text-foreground">{none}</span>
      )}
    </td>
  );
}

/** A row's action; on the administrator's own row it is disabled, saying why on hover. */
function RowAction({ pending, ...props }: React.ComponentProps<typeof GuardedButton> & { pending?: boolean }) {
  return <GuardedButton size="sm" variant="outline" disabled={pending} {...props} />;
}

/** The projects a user is a member of, each with their role there. */
export function UserProjects({ email, projects }: { email: string; projects: UserProjectOut[] }) {
  if (projects.length === 0) return <span className="text-muted-foreground">None</span>;
  return (
    <ul className="flex max-w-56 flex-wrap gap-1" aria-label="Projects" data-testid="user-projects">
      {projects.map((p) => (
        <li key={p.id} className="inline-flex max-w-full items-center gap-1 rounded-md border bg-background px-1.5 py-0.5 text-xs" data-project={p.name}>
          <span className="truncate" title={p.name}>
            {p.name}
          </span>
          <RoleBadge role={p.role} className="px-1" title={`${email} is ${withArticle(p.role)} of ${p.name}`} />
        </li>
      ))}
    </ul>
  );
}

/** The users screen: every account, creating one, and per account its role, whether it may log in, and a new password. */
export function UsersAdmin({ me }: { me: UserOut }) {
  const users = useQuery(usersQuery());
  const update = useUpdateUser();
  const [dialog, setDialog] = useState<Dialogs>(null);
  const [notice, setNotice] = useState<NoticeText | null>(null);
  const close = () => setDialog(null);

  const change = (user: UserOut, body: { is_admin?: boolean; disabled?: boolean }, done: string) => {
    setNotice(null);
    update.mutate(
      { id: user.id, ...body },
      {
        onSuccess: () => setNotice({ tone: 'ok', text: done }),
        onError: (e) => setNotice({ tone: 'error', text: e.message }),
        onSettled: () => setDialog((d) => (d?.kind === 'disable' ? null : d)),
      },
    );
  };
  const busy = (user: UserOut) => update.isPending && update.variables?.id === user.id;

  return (
    <div className="h-full overflow-y-auto">
      <div className="mx-auto max-w-6xl space-y-6 px-4 py-8 md:px-6">
        <header className="flex flex-wrap items-end justify-between gap-4">
          <div>
            <h1 className="text-2xl font-semibold tracking-tight">Users</h1>
            <p className="text-sm text-muted-foreground">Everyone who can sign in to this Workbench. Disabling an account deletes nothing.</p>
          </div>
          <Button onClick={() => setDialog({ kind: 'create' })}>
            <Plus /> New user
          </Button>
        </header>

        {notice && <Notice notice={notice} onDismiss={() => setNotice(null)} testId="users-notice" />}

        <LoadState query={users} loading="Loading users…" />
        {users.data && (
          <div className="md:overflow-x-auto md:rounded-xl md:border md:bg-card">
            <table className="w-full text-sm max-md:block" aria-label="Users">
              <thead className="text-left text-xs text-muted-foreground max-md:sr-only">
                <tr className="border-b">
                  <th scope="col" className="px-3 py-2 font-medium whitespace-nowrap">
                    Email
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium whitespace-nowrap">
                    Role
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium whitespace-nowrap">
                    Status
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium whitespace-nowrap">
                    Projects
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium whitespace-nowrap">
                    Created
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium whitespace-nowrap">
                    Password changed
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium whitespace-nowrap">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody className="max-md:grid max-md:gap-3">
                {users.data.items.map((u) => {
                  const self = u.id === me.id;
                  return (
                    <tr
                      key={u.id}
                      data-testid="user-row"
                      data-email={u.email}
                      className="border-b last:border-b-0 max-md:grid max-md:grid-cols-2 max-md:gap-x-4 max-md:gap-y-3 max-md:rounded-xl max-md:border max-md:bg-card max-md:p-4 max-md:last:border-b"
                    >
                      <td className="px-3 py-2.5 max-md:col-span-2 max-md:p-0">
                        <span className="flex min-w-0 items-center gap-2">
                          <span className={cn('truncate font-medium', u.disabled && 'text-muted-foreground')}>
                            {u.email}
                          </span>
                          {self && <Badge>You</Badge>}
                        </span>
                      </td>
                      <td className="px-3 py-2.5 max-md:p-0">
                        <span className="block text-xs text-muted-foreground md:hidden">Role</span>
                        {u.is_admin ? <Badge variant="running">Administrator</Badge> : <Badge>User</Badge>}
                      </td>
                      <td className="px-3 py-2.5 max-md:p-0">
                        <span className="block text-xs text-muted-foreground md:hidden">Status</span>
                        {u.disabled ? (
                          <Badge variant="error">Disabled</Badge>
                        ) : u.must_change_password ? (
                          <Badge variant="warning" title="They sign in with a generated password and must choose their own">
                            Must change password
                          </Badge>
                        ) : (
                          <Badge variant="success">Active</Badge>
                        )}
                      </td>
                      <td className="px-3 py-2.5 max-md:col-span-2 max-md:p-0">
                        <span className="block text-xs text-muted-foreground md:hidden">Projects</span>
                        <UserProjects email={u.email} projects={u.projects ?? []} />
                      </td>
                      <DateCell label="Created" iso={u.created_at} none="—" />
                      <DateCell label="Password changed" iso={u.password_changed_at} none="Never" />
                      <td className="px-3 py-2.5 max-md:col-span-2 max-md:p-0">
                        <div className="flex flex-wrap justify-end gap-1.5 max-md:justify-start 2xl:flex-nowrap">
                          {u.disabled ? (
                            <RowAction pending={busy(u)} onClick={() => change(u, { disabled: false }, `${u.email} can sign in again.`)}>
                              <CircleCheck /> Enable
                            </RowAction>
                          ) : (
                            <RowAction
                              blockedBecause={self ? OWN_ACCOUNT.disable : undefined}
                              pending={busy(u)}
                              onClick={() => setDialog({ kind: 'disable', user: u })}
                            >
                              <Ban /> Disable
                            </RowAction>
                          )}
                          {u.is_admin ? (
                            <RowAction
                              blockedBecause={self ? OWN_ACCOUNT.demote : undefined}
                              pending={busy(u)}
                              onClick={() => change(u, { is_admin: false }, `${u.email} is no longer an administrator.`)}
                            >
                              <ShieldMinus /> Remove admin
                            </RowAction>
                          ) : (
                            <RowAction pending={busy(u)} onClick={() => change(u, { is_admin: true }, `${u.email} is now an administrator.`)}>
                              <ShieldPlus /> Make admin
                            </RowAction>
                          )}
                          <RowAction
                            blockedBecause={self ? OWN_ACCOUNT.reset : undefined}
                            pending={busy(u)}
                            onClick={() => setDialog({ kind: 'reset', user: u })}
                          >
                            <KeyRound /> Reset password
                          </RowAction>
                        </div>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        <InvitesList />
      </div>

      <CreateUserDialog
        open={dialog?.kind === 'create'}
        onOpenChange={(o) => !o && close()}
        onCreated={() => close()}
      />
      <ResetPasswordDialog
        user={dialog?.kind === 'reset' ? dialog.user : null}
        onOpenChange={(o) => !o && close()}
        onDone={(u) => {
          close();
          setNotice({ tone: 'ok', text: `New password generated for ${u.email}. Their logins have ended; they choose their own at their next sign-in.` });
        }}
      />
      <ConfirmDialog
        open={dialog?.kind === 'disable'}
        onOpenChange={(o) => !o && close()}
        title="Disable this account?"
        description={
          dialog?.kind === 'disable'
            ? `${dialog.user.email} will be signed out everywhere and cannot sign in or use their API tokens until an administrator enables the account again. Nothing of theirs is deleted.`
            : ''
        }
        confirmLabel="Disable"
        pending={update.isPending}
        onConfirm={() =>
          dialog?.kind === 'disable' &&
          change(dialog.user, { disabled: true }, `${dialog.user.email} is disabled: their logins and API tokens are refused.`)
        }
      />
    </div>
  );
}
