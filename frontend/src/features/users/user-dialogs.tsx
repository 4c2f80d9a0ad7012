import { useQuery } from '@tanstack/react-query';
import { Loader2, Mail } from 'lucide-react';
import { useEffect, useState } from 'react';
import type { InviteCreated, UserOut, UserWithPassword } from '@/client';
import { CopyField } from '@/components/copy-field';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';
import { Input, Label } from '@/components/ui/input';
import { Segmented } from '@/components/ui/segmented';
import { RoleSelect } from '@/features/members/role-select';
import { projectsQuery } from '@/features/projects/queries';
import type { Role } from '@/features/projects/role';
import { useCreateInvite, useCreateUser, useUpdateUser } from './mutations';

type Way = 'invite' | 'generate';

const day = (iso: string) => new Date(iso).toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' });

/** What an invite's maker sees once: the link, and whether it was emailed. */
export function InviteMade({ invite }: { invite: InviteCreated }) {
  return (
    <div className="grid gap-3 rounded-lg border border-emerald-500/30 bg-emerald-500/5 p-3" data-testid="invite-made">
      <p className="text-sm font-medium text-emerald-800 dark:text-emerald-300">
        Invite made for {invite.email}. The link works once, until {day(invite.expires_at)}.
      </p>
      <CopyField value={invite.url} label="The invite link" testId="invite-url" />
      <p className="flex items-start gap-2 text-xs text-muted-foreground">
        <Mail className="mt-px size-3.5 shrink-0" />
        {invite.email_status === 'sending'
          ? 'It is being emailed to them too; the list of invites says when it was sent.'
          : 'This server sends no email: pass the link on yourself. It is shown only now.'}
      </p>
    </div>
  );
}

/** A generated password, shown once, for the administrator to pass on. */
function PasswordMade({ user }: { user: UserWithPassword }) {
  return (
    <div className="grid gap-3 rounded-lg border border-emerald-500/30 bg-emerald-500/5 p-3" data-testid="password-made">
      <p className="text-sm font-medium text-emerald-800 dark:text-emerald-300">Password generated for {user.email}.</p>
      <CopyField value={user.generated_password ?? ''} label="The generated password" testId="generated-password" />
      <p className="text-xs text-muted-foreground">
        It is shown only now. They must choose their own password when they first sign in with it.
      </p>
    </div>
  );
}

/** A new account: by an invite link (they choose their password) or with a generated one (changed at first sign-in). */
export function CreateUserDialog({
  open,
  onOpenChange,
  onCreated,
}: {
  open: boolean;
  onOpenChange: (o: boolean) => void;
  onCreated: (email: string) => void;
}) {
  const create = useCreateUser();
  const invite = useCreateInvite();
  const { reset: resetCreate } = create;
  const { reset: resetInvite } = invite;
  const [email, setEmail] = useState('');
  const [way, setWay] = useState<Way>('invite');
  const [admin, setAdmin] = useState(false);
  const [projectId, setProjectId] = useState('');
  const [role, setRole] = useState<Role>('editor');
  const projects = useQuery({ ...projectsQuery(), enabled: open && way === 'invite' });
  useEffect(() => {
    if (!open) return;
    setEmail('');
    setWay('invite');
    setAdmin(false);
    setProjectId('');
    setRole('editor');
    resetCreate();
    resetInvite();
  }, [open, resetCreate, resetInvite]);
  const done = invite.data ?? create.data;
  const pending = create.isPending || invite.isPending;
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogTitle>New user</DialogTitle>
        {done ? (
          <>
            <DialogDescription className="sr-only">The new user's way in, shown once.</DialogDescription>
            {invite.data ? <InviteMade invite={invite.data} /> : create.data && <PasswordMade user={create.data} />}
            <DialogFooter>
              <Button onClick={() => onCreated(done.email)} autoFocus>
                Done
              </Button>
            </DialogFooter>
          </>
        ) : (
          <>
            <DialogDescription>Nobody types a password for someone else: they choose their own.</DialogDescription>
            <form
              className="grid gap-4"
              onSubmit={(e) => {
                e.preventDefault();
                if (way === 'invite') invite.mutate(projectId ? { email: email.trim(), project_id: projectId, role } : { email: email.trim() });
                else create.mutate({ email: email.trim(), is_admin: admin });
              }}
            >
              <div className="grid gap-2">
                <Label htmlFor="new-user-email">Email</Label>
                <Input id="new-user-email" type="email" autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} required autoFocus />
              </div>
              <div className="grid gap-2">
                <span className="text-sm font-medium">How they get in</span>
                <Segmented
                  label="How they get in"
                  className="grid-cols-2"
                  value={way}
                  onChange={setWay}
                  items={[
                    { value: 'invite', content: 'Invite link' },
                    { value: 'generate', content: 'Generated password' },
                  ]}
                />
                <p className="text-xs text-muted-foreground">
                  {way === 'invite'
                    ? 'A one-time link with which they set their password (emailed when this server has SMTP).'
                    : 'A password made for them, shown once; they must change it at their first sign-in.'}
                </p>
              </div>
              {way === 'invite' && (
                <div className="grid gap-2">
                  <Label htmlFor="new-user-project">Project (optional)</Label>
                  <div className="flex flex-wrap gap-2">
                    <select
                      id="new-user-project"
                      className="h-8 min-w-0 flex-1 cursor-pointer rounded-md border bg-card px-2 text-sm shadow-xs outline-none focus-visible:border-primary focus-visible:ring-2 focus-visible:ring-primary/20"
                      value={projectId}
                      onChange={(e) => setProjectId(e.target.value)}
                    >
                      <option value="">No project: they start with none</option>
                      {projects.data?.items.map((p) => (
                        <option key={p.id} value={p.id}>
                          {p.name}
                        </option>
                      ))}
                    </select>
                    {projectId && <RoleSelect label="Their role in the project" value={role} onChange={setRole} />}
                  </div>
                </div>
              )}
              {way === 'generate' && (
                <label className="flex cursor-pointer items-start gap-2 text-sm">
                  <input type="checkbox" className="mt-0.5 size-4 cursor-pointer accent-primary" checked={admin} onChange={(e) => setAdmin(e.target.checked)} />
                  <span>
                    <span className="font-medium">Administrator</span>
                    <span className="block text-xs text-muted-foreground">Can manage users, like you.</span>
                  </span>
                </label>
              )}
              <FormError>{(invite.error ?? create.error)?.message ?? null}</FormError>
              <DialogFooter>
                <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
                  Cancel
                </Button>
                <Button type="submit" disabled={!email.trim() || pending}>
                  {pending && <Loader2 className="animate-spin" />}
                  {way === 'invite' ? 'Make invite' : 'Create user'}
                </Button>
              </DialogFooter>
            </form>
          </>
        )}
      </DialogContent>
    </Dialog>
  );
}

/** An administrator gives someone a new generated password; their logins end with it. */
export function ResetPasswordDialog({
  user,
  onOpenChange,
  onDone,
}: {
  user: UserOut | null;
  onOpenChange: (o: boolean) => void;
  onDone: (user: UserOut) => void;
}) {
  const update = useUpdateUser();
  const { reset } = update;
  const open = !!user;
  useEffect(() => {
    if (open) reset();
  }, [open, reset]);
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogTitle>Reset password</DialogTitle>
        {update.data ? (
          <>
            <DialogDescription className="sr-only">The new password, shown once.</DialogDescription>
            <PasswordMade user={update.data} />
            <DialogFooter>
              <Button onClick={() => onDone(update.data)} autoFocus>
                Done
              </Button>
            </DialogFooter>
          </>
        ) : (
          <>
            <DialogDescription>
              A new password is generated for <span className="font-medium text-foreground">{user?.email}</span> and shown to you once.
              Their logins end at once; they sign in with it and then choose their own. Their API tokens are revoked.
            </DialogDescription>
            <FormError>{update.error?.message ?? null}</FormError>
            <DialogFooter>
              <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
                Cancel
              </Button>
              <Button disabled={update.isPending} onClick={() => user && update.mutate({ id: user.id, generate_password: true })}>
                {update.isPending && <Loader2 className="animate-spin" />}
                Generate new password
              </Button>
            </DialogFooter>
          </>
        )}
      </DialogContent>
    </Dialog>
  );
}
