import { useMutation } from '@tanstack/react-query';
import { Loader2 } from 'lucide-react';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { acceptInvite } from '@/client';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { Input, Label } from '@/components/ui/input';
import { useAuthStore } from './auth-store';
import { takeFragment } from './fragment';
import { MIN_PASSWORD_LENGTH, newPasswordProblem } from './password';
import { SignInCard } from './sign-in-card';

/** An invite's page: the person chooses their password, and lands in the project they were invited to. */
export function InviteAccept() {
  const signIn = useAuthStore((s) => s.signIn);
  const navigate = useNavigate();
  const [token] = useState(takeFragment);
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const accept = useMutation({
    mutationFn: async () => (await acceptInvite({ path: { token }, body: { password } })).data!,
    onSuccess: (r) => {
      signIn({ token: r.access_token, user: r.user, expiresAt: r.expires_at });
      navigate(r.project_id ? `/projects/${r.project_id}` : '/', { replace: true });
    },
    meta: { silent: true },
  });
  if (!token)
    return (
      <SignInCard subtitle="Your invite">
        <p role="alert" className="text-sm text-destructive">
          This page needs the whole link of your invite; open it again from the message you got.
        </p>
        <Button asChild variant="outline" className="w-full">
          <Link to="/login">Go to sign-in</Link>
        </Button>
      </SignInCard>
    );
  return (
    <SignInCard
      subtitle="You are invited: choose your password"
      onSubmit={() => {
        const p = newPasswordProblem(password, confirm);
        setProblem(p);
        if (!p) accept.mutate();
      }}
    >
      <p className="text-sm text-muted-foreground">You sign in with your email and this password from now on. Nobody else has seen it.</p>
      <div className="grid gap-2">
        <Label htmlFor="invite-password">Password</Label>
        <Input
          id="invite-password"
          type="password"
          autoComplete="new-password"
          aria-describedby="invite-password-hint"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          required
          autoFocus
        />
        <p id="invite-password-hint" className="text-xs text-muted-foreground">
          At least {MIN_PASSWORD_LENGTH} characters.
        </p>
      </div>
      <div className="grid gap-2">
        <Label htmlFor="invite-confirm">Confirm password</Label>
        <Input id="invite-confirm" type="password" autoComplete="new-password" value={confirm} onChange={(e) => setConfirm(e.target.value)} required />
      </div>
      <FormError>{problem ?? accept.error?.message ?? null}</FormError>
      {accept.error && (
        <p className="text-sm">
          <Link to="/login" className="underline underline-offset-2">
            Go to sign-in
          </Link>
        </p>
      )}
      <Button type="submit" className="w-full" disabled={!password || !confirm || accept.isPending}>
        {accept.isPending && <Loader2 className="animate-spin" />}
        Set password and sign in
      </Button>
    </SignInCard>
  );
}
