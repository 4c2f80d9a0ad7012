import { Loader2 } from 'lucide-react';
import { useState } from 'react';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { Input, Label } from '@/components/ui/input';
import { useAuthStore } from './auth-store';
import { useChangePassword } from './mutations';
import { MIN_PASSWORD_LENGTH, newPasswordProblem } from './password';
import { SignInCard } from './sign-in-card';

/**
 * Before anything else, a user whose password an administrator generated chooses their own (the
 * server refuses every other call until then: 403 password_change_required).
 */
export function ForcedPasswordChange() {
  const signOut = useAuthStore((s) => s.signOut);
  const email = useAuthStore((s) => s.auth?.user.email);
  const change = useChangePassword();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
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
      <div className="grid gap-2">
        <Label htmlFor="forced-current">Password you were given</Label>
        <Input id="forced-current" type="password" autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} required autoFocus />
      </div>
      <div className="grid gap-2">
        <Label htmlFor="forced-new">New password</Label>
        <Input
          id="forced-new"
          type="password"
          autoComplete="new-password"
          aria-describedby="forced-new-hint"
          value={next}
          onChange={(e) => setNext(e.target.value)}
          required
        />
        <p id="forced-new-hint" className="text-xs text-muted-foreground">
          At least {MIN_PASSWORD_LENGTH} characters.
        </p>
      </div>
      <div className="grid gap-2">
        <Label htmlFor="forced-confirm">Confirm new password</Label>
        <Input id="forced-confirm" type="password" autoComplete="new-password" value={confirm} onChange={(e) => setConfirm(e.target.value)} required />
      </div>
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
