import { Loader2 } from 'lucide-react';
import { useEffect, useState } from 'react';
import type { UserOut } from '@/client';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';
import { Input, Label } from '@/components/ui/input';
import { MIN_PASSWORD_LENGTH, newPasswordProblem } from '@/features/auth/password';
import { useCreateUser, useUpdateUser } from './mutations';

/** A new account: email, first password, administrator or not. */
export function CreateUserDialog({
  open,
  onOpenChange,
  onCreated,
}: {
  open: boolean;
  onOpenChange: (o: boolean) => void;
  onCreated: (user: UserOut) => void;
}) {
  const create = useCreateUser();
  const { reset } = create;
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [admin, setAdmin] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    if (!open) return;
    setEmail('');
    setPassword('');
    setAdmin(false);
    setProblem(null);
    reset();
  }, [open, reset]);
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogTitle>New user</DialogTitle>
        <DialogDescription>They sign in with this email and password, and can change the password themselves.</DialogDescription>
        <form
          className="grid gap-4"
          onSubmit={(e) => {
            e.preventDefault();
            const p = newPasswordProblem(password);
            setProblem(p);
            if (!p) create.mutate({ email: email.trim(), password, is_admin: admin }, { onSuccess: onCreated });
          }}
        >
          <div className="grid gap-2">
            <Label htmlFor="new-user-email">Email</Label>
            <Input id="new-user-email" type="email" autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} required autoFocus />
          </div>
          <div className="grid gap-2">
            <Label htmlFor="new-user-password">Password</Label>
            <Input
              id="new-user-password"
              type="password"
              autoComplete="new-password"
              aria-describedby="new-user-password-hint"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              required
            />
            <p id="new-user-password-hint" className="text-xs text-muted-foreground">
              At least {MIN_PASSWORD_LENGTH} characters. Tell it to them yourself: the app sends no email.
            </p>
          </div>
          <label className="flex cursor-pointer items-start gap-2 text-sm">
            <input type="checkbox" className="mt-0.5 size-4 cursor-pointer accent-primary" checked={admin} onChange={(e) => setAdmin(e.target.checked)} />
            <span>
              <span className="font-medium">Administrator</span>
              <span className="block text-xs text-muted-foreground">Can manage users, like you.</span>
            </span>
          </label>
          <FormError>{problem ?? create.error?.message ?? null}</FormError>
          <DialogFooter>
            <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
              Cancel
            </Button>
            <Button type="submit" disabled={!email.trim() || !password || create.isPending}>
              {create.isPending && <Loader2 className="animate-spin" />}
              Create user
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}

/** An administrator sets someone's password; their logins end with it. */
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
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const open = !!user;
  useEffect(() => {
    if (!open) return;
    setPassword('');
    setProblem(null);
    reset();
  }, [open, reset]);
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogTitle>Reset password</DialogTitle>
        <DialogDescription>
          A new password for <span className="font-medium text-foreground">{user?.email}</span>. Their logins end at once: they sign in
          again with this password. Their API tokens keep working.
        </DialogDescription>
        <form
          className="grid gap-4"
          onSubmit={(e) => {
            e.preventDefault();
            const p = newPasswordProblem(password);
            setProblem(p);
            if (!p && user) update.mutate({ id: user.id, password }, { onSuccess: onDone });
          }}
        >
          <div className="grid gap-2">
            <Label htmlFor="reset-password">New password</Label>
            <Input
              id="reset-password"
              type="password"
              autoComplete="new-password"
              aria-describedby="reset-password-hint"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              required
              autoFocus
            />
            <p id="reset-password-hint" className="text-xs text-muted-foreground">
              At least {MIN_PASSWORD_LENGTH} characters.
            </p>
          </div>
          <FormError>{problem ?? update.error?.message ?? null}</FormError>
          <DialogFooter>
            <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
              Cancel
            </Button>
            <Button type="submit" disabled={!password || update.isPending}>
              {update.isPending && <Loader2 className="animate-spin" />}
              Set password
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
