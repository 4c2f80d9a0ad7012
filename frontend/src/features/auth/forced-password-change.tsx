import { Loader2 } from 'lucide-react';
import { useState } from 'react';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { useAuthStore } from './auth-store';
import { useChangePassword } from './mutations';
import { newPasswordProblem } from './password';
import { PasswordChangeFields, type PasswordChangeValues } from './password-fields';
import { SignInCard } from './sign-in-card';

/**
 * Before anything else, a user whose password an administrator generated chooses their own (the
 * server refuses every other call until then: 403 password_change_required).
 */
export function ForcedPasswordChange() {
  const signOut = useAuthStore((s) => s.signOut);
  const email = useAuthStore((s) => s.auth?.user.email);
  const change = useChangePassword();
  const [values, setValues] = useState<PasswordChangeValues>({ current: '', next: '', confirm: '' });
  const { current, next, confirm } = values;
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <SignInCard
      subtitle="Choose your own password"
      onSubmit={() => {
        const p = newPasswordProblem(next, confirm);
        setProblem(p);
        if (!p) change.mutate({ current_password: current, new_password: next });
      }}
    >
      <p className="text-sm text-muted-foreground" data-testid="must-change-password">
        An administrator gave <span className="font-medium text-foreground">{email}</span> a password. Choose one only you know to go on.
      </p>
      <PasswordChangeFields idPrefix="forced-" currentLabel="Password you were given" values={values} onChange={setValues} />
      <FormError>{problem ?? change.error?.message ?? null}</FormError>
      <div className="grid gap-2">
        <Button type="submit" className="w-full" disabled={!current || !next || !confirm || change.isPending}>
          {change.isPending && <Loader2 className="animate-spin" />}
          Set my password
        </Button>
        <Button type="button" variant="ghost" className="w-full" onClick={() => signOut()}>
          Sign out
        </Button>
      </div>
    </SignInCard>
  );
}
