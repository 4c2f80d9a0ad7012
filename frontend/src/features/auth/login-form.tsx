import { useMutation, useQuery } from '@tanstack/react-query';
import { KeyRound, Loader2 } from 'lucide-react';
import { useState } from 'react';
import { login as requestLogin } from '@/client';
import { Button } from '@/components/ui/button';
import { Input, Label } from '@/components/ui/input';
import { ApiError } from '@/lib/api';
import { useAuthStore } from './auth-store';
import { authConfigQuery } from './queries';
import { SignInCard } from './sign-in-card';

/** Where the single sign-on button goes: the server redirects the browser to the provider. */
export const OIDC_LOGIN_URL = '/api/v1/auth/oidc/login';

export function LoginForm() {
  const signIn = useAuthStore((s) => s.signIn);
  const notice = useAuthStore((s) => s.notice);
  const config = useQuery(authConfigQuery());
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const login = useMutation({
    mutationFn: async () => (await requestLogin({ body: { email, password } })).data!,
    onSuccess: (r) => signIn({ token: r.access_token, user: r.user, expiresAt: r.expires_at }),
    meta: { silent: true },
  });
  // A disabled account gets the server's own sentence; any other 401 is a wrong email or password.
  const error =
    login.error instanceof ApiError
      ? login.error.status === 401 && login.error.code !== 'account_disabled'
        ? 'Wrong email or password.'
        : login.error.message
      : login.error
        ? 'Could not sign in.'
        : null;
  // Until the server said otherwise, the form is there (an older server has no /auth/config).
  const passwords = config.data?.password_login ?? true;
  const oidc = config.data?.oidc ?? null;
  return (
    <SignInCard subtitle="Sign in to analyse your data" onSubmit={passwords ? () => login.mutate() : undefined}>
      {notice && !error && (
        <p role="status" data-testid="login-notice" className="rounded-md bg-amber-500/10 px-3 py-2 text-sm text-amber-700 dark:text-amber-400">
          {notice}
        </p>
      )}
      {oidc && (
        <Button asChild variant={passwords ? 'outline' : 'default'} className="w-full" data-testid="oidc-login">
          <a href={OIDC_LOGIN_URL}>
            <KeyRound /> Sign in with {oidc.name}
          </a>
        </Button>
      )}
      {oidc && passwords && (
        <div className="flex items-center gap-3 text-xs text-muted-foreground" aria-hidden>
          <span className="h-px flex-1 bg-border" /> or with your password <span className="h-px flex-1 bg-border" />
        </div>
      )}
      {passwords ? (
        <>
          <div className="grid gap-2">
            <Label htmlFor="email">Email</Label>
            <Input id="email" type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required autoFocus={!oidc} />
          </div>
          <div className="grid gap-2">
            <Label htmlFor="password">Password</Label>
            <Input
              id="password"
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              required
            />
          </div>
          {error && (
            <p role="alert" className="text-sm text-destructive">
              {error}
            </p>
          )}
          <Button type="submit" className="w-full" disabled={login.isPending}>
            {login.isPending && <Loader2 className="animate-spin" />}
            Sign in
          </Button>
        </>
      ) : (
        !oidc &&
        config.isSuccess && (
          <p role="alert" className="text-sm text-muted-foreground">
            Signing in is not set up here yet; ask your administrator.
          </p>
        )
      )}
    </SignInCard>
  );
}
