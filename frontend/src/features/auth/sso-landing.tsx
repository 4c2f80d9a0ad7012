import { useMutation } from '@tanstack/react-query';
import { Loader2 } from 'lucide-react';
import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { oidcExchange } from '@/client';
import { Button } from '@/components/ui/button';
import { useAuthStore } from './auth-store';
import { parseSsoFragment, takeFragment } from './fragment';
import { SignInCard } from './sign-in-card';

/** Where single sign-on comes back: the one-time code of the fragment is traded for a login (or its error is said). */
export function SsoLanding() {
  const signIn = useAuthStore((s) => s.signIn);
  const navigate = useNavigate();
  // Read once: the fragment is wiped as it is read (a re-render must not lose it).
  const [found] = useState(() => parseSsoFragment(takeFragment()));
  const exchange = useMutation({
    mutationFn: async (code: string) => (await oidcExchange({ body: { code } })).data!,
    onSuccess: (r) => {
      signIn({ token: r.access_token, user: r.user, expiresAt: r.expires_at });
      navigate('/', { replace: true });
    },
    meta: { silent: true },
  });
  const { mutate } = exchange;
  useEffect(() => {
    if (found && 'code' in found) mutate(found.code);
  }, [found, mutate]);
  const error = found === null ? 'This page finishes a single sign-on; start one from the sign-in page.' : 'error' in found ? found.error : exchange.error?.message;
  return (
    <SignInCard subtitle="Single sign-on">
      {error ? (
        <>
          <p role="alert" className="text-sm text-destructive" data-testid="sso-error">
            {error}
          </p>
          <Button asChild className="w-full">
            <Link to="/login">Back to sign-in</Link>
          </Button>
        </>
      ) : (
        <p role="status" className="flex items-center gap-2 text-sm text-muted-foreground">
          <Loader2 className="size-4 animate-spin" /> Signing you in…
        </p>
      )}
    </SignInCard>
  );
}
