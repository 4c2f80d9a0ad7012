import { useMutation } from '@tanstack/react-query';
import { BarChart3, Loader2 } from 'lucide-react';
import { useState } from 'react';
import { login as requestLogin } from '@/client';
import { Button } from '@/components/ui/button';
import { Input, Label } from '@/components/ui/input';
import { ApiError } from '@/lib/api';
import { useAuthStore } from './auth-store';

export function LoginForm() {
  const signIn = useAuthStore((s) => s.signIn);
  const notice = useAuthStore((s) => s.notice);
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
  return (
    <div className="flex min-h-dvh w-full items-center justify-center bg-sidebar p-4">
      <form
        className="w-full max-w-sm space-y-5 rounded-2xl border bg-card p-8 shadow-sm"
        onSubmit={(e) => {
          e.preventDefault();
          login.mutate();
        }}
      >
        <div className="flex items-center gap-2">
          <div className="flex size-9 items-center justify-center rounded-lg bg-primary text-primary-foreground">
            <BarChart3 className="size-5" />
          </div>
          <div>
            <h1 className="text-lg font-semibold">Workbench</h1>
            <p className="text-xs text-muted-foreground">Sign in to analyse your data</p>
          </div>
        </div>
        {notice && !error && (
          <p role="status" data-testid="login-notice" className="rounded-md bg-amber-500/10 px-3 py-2 text-sm text-amber-700 dark:text-amber-400">
            {notice}
          </p>
        )}
        <div className="grid gap-2">
          <Label htmlFor="email">Email</Label>
          <Input id="email" type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required autoFocus />
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
      </form>
    </div>
  );
}
