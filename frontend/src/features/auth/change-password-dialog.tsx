import { CheckCircle2, Loader2 } from 'lucide-react';
import { useEffect, useState } from 'react';
import { Button } from '@/components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogTitle } from '@/components/ui/dialog';
import { useChangePassword } from './mutations';
import { newPasswordProblem } from './password';
import { PasswordChangeFields, type PasswordChangeValues } from './password-fields';

const EMPTY: PasswordChangeValues = { current: '', next: '', confirm: '' };

export const PASSWORD_CHANGED = 'Password changed; your other logins are signed out.';

/** The user's own password: the current one, the new one twice. This browser stays signed in. */
export function ChangePasswordDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (o: boolean) => void }) {
  const change = useChangePassword();
  const { reset } = change;
  const [values, setValues] = useState<PasswordChangeValues>(EMPTY);
  const { current, next, confirm } = values;
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    if (!open) return;
    setValues(EMPTY);
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
              <PasswordChangeFields idPrefix="" currentLabel="Current password" values={values} onChange={setValues} />
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
