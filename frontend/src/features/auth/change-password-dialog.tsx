import { CheckCircle2, Loader2 } from 'lucide-react';
import { useEffect, useState } from 'react';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';
import { Input, Label } from '@/components/ui/input';
import { useChangePassword } from './mutations';
import { MIN_PASSWORD_LENGTH, newPasswordProblem } from './password';

export const PASSWORD_CHANGED = 'Password changed; your other logins are signed out.';

/** The user's own password: the current one, the new one twice. This browser stays signed in. */
export function ChangePasswordDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (o: boolean) => void }) {
  const change = useChangePassword();
  const { reset } = change;
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    if (!open) return;
    setCurrent('');
    setNext('');
    setConfirm('');
    setProblem(null);
    reset();
  }, [open, reset]);
  const error = problem ?? (change.error ? change.error.message : null);

  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogTitle>Change password</DialogTitle>
        {change.isSuccess ? (
          <>
            <DialogDescription className="sr-only">Your password was changed.</DialogDescription>
            <p role="status" className="flex items-start gap-2 text-sm" data-testid="password-changed">
              <CheckCircle2 className="mt-0.5 size-4 shrink-0 text-emerald-600 dark:text-emerald-400" />
              {PASSWORD_CHANGED}
            </p>
            <DialogFooter>
              <Button onClick={() => onOpenChange(false)} autoFocus>
                Done
              </Button>
            </DialogFooter>
          </>
        ) : (
          <>
            <DialogDescription>Your other logins end when it changes; this one stays signed in. API tokens keep working.</DialogDescription>
            <form
              className="grid gap-4"
              noValidate
              onSubmit={(e) => {
                e.preventDefault();
                const p = newPasswordProblem(next, confirm);
                setProblem(p);
                if (!p) change.mutate({ current_password: current, new_password: next });
              }}
            >
              <div className="grid gap-2">
                <Label htmlFor="current-password">Current password</Label>
                <Input
                  id="current-password"
                  type="password"
                  autoComplete="current-password"
                  value={current}
                  onChange={(e) => setCurrent(e.target.value)}
                  required
                  autoFocus
                />
              </div>
              <div className="grid gap-2">
                <Label htmlFor="new-password">New password</Label>
                <Input
                  id="new-password"
                  type="password"
                  autoComplete="new-password"
                  aria-describedby="new-password-hint"
                  value={next}
                  onChange={(e) => setNext(e.target.value)}
                  required
                />
                <p id="new-password-hint" className="text-xs text-muted-foreground">
                  At least {MIN_PASSWORD_LENGTH} characters.
                </p>
              </div>
              <div className="grid gap-2">
                <Label htmlFor="confirm-password">Confirm new password</Label>
                <Input
                  id="confirm-password"
                  type="password"
                  autoComplete="new-password"
                  value={confirm}
                  onChange={(e) => setConfirm(e.target.value)}
                  required
                />
              </div>
              {error && (
                <p role="alert" className="text-sm text-destructive">
                  {error}
                </p>
              )}
              <DialogFooter>
                <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
                  Cancel
                </Button>
                <Button type="submit" disabled={!current || !next || !confirm || change.isPending}>
                  {change.isPending && <Loader2 className="animate-spin" />}
                  Change password
                </Button>
              </DialogFooter>
            </form>
          </>
        )}
      </DialogContent>
    </Dialog>
  );
}
